import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../core/errors.js';
import { callUnits } from '../../core/metering/call-units.js';

/**
 * What a unit-priced call asks for is read from its body before anything is reserved; what the provider will
 * read must be exactly what was priced: a field or file named twice, or a body cut off at the parser's limits,
 * is refused (400 invalid_request), never priced on one value and relayed with another.
 */

/** A multipart body built the way clients build it (undici's FormData encoder). */
async function form(
  parts: [string, string | { data: Buffer; filename: string; type: string }][],
): Promise<{ contentType: string; rawBody: Buffer; body: null }> {
  const f = new FormData();
  for (const [name, v] of parts) {
    if (typeof v === 'string') f.append(name, v);
    else f.append(name, new Blob([v.data], { type: v.type }), v.filename);
  }
  const req = new Request('http://x/', { method: 'POST', body: f });
  return {
    contentType: req.headers.get('content-type')!,
    rawBody: Buffer.from(await req.arrayBuffer()),
    body: null,
  };
}

/** PCM WAV of `ms` milliseconds of silence (8 kHz mono 16 bit). */
function wav(ms: number): Buffer {
  const data = Buffer.alloc(((8000 * ms) / 1000) * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(8000, 24);
  h.writeUInt32LE(16000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

const audio = (ms: number) => ({ data: wav(ms), filename: 'a.wav', type: 'audio/wav' });
const json = (body: unknown) => ({ contentType: 'application/json', rawBody: Buffer.alloc(0), body });

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  expect((err as GatewayError).code).toBe('invalid_request');
  return (err as GatewayError).message;
}

describe('callUnits', () => {
  it('images (JSON): model, n, size and quality; n bounded 1..10; no model → 400', async () => {
    expect(
      await callUnits('images', json({ model: 'dall-e-3', n: 3, size: '1792x1024', quality: 'hd' }), true),
    ).toEqual({ model: 'dall-e-3', units: 3, variant: { size: '1792x1024', quality: 'hd' } });
    expect(await callUnits('images', json({ model: 'm' }), true)).toEqual({
      model: 'm',
      units: 1,
      variant: {},
    });
    expect(await refusal(callUnits('images', json({ model: 'm', n: 11 }), true))).toMatch(/n must be/);
    expect(await refusal(callUnits('images', json({ model: 'm', n: 1.5 }), true))).toMatch(/n must be/);
    expect(await refusal(callUnits('images', json({ prompt: 'x' }), true))).toMatch(/model is required/);
  });

  it('images: stream true is refused, in JSON and in a form', async () => {
    expect(await refusal(callUnits('images', json({ model: 'm', stream: true }), true))).toMatch(/stream/);
    const f = await form([
      ['model', 'm'],
      ['stream', 'true'],
    ]);
    expect(await refusal(callUnits('images', f, true))).toMatch(/stream/);
  });

  it('image edits (multipart): the form fields are read like the JSON ones', async () => {
    const f = await form([
      ['model', 'dall-e-2'],
      ['n', '2'],
      ['size', '512x512'],
      ['image', { data: Buffer.from('png'), filename: 'i.png', type: 'image/png' }],
    ]);
    expect(await callUnits('images', f, true)).toEqual({
      model: 'dall-e-2',
      units: 2,
      variant: { size: '512x512' },
    });
  });

  it('speech: units are Unicode code points of input', async () => {
    expect(await callUnits('speech', json({ model: 'tts-1', input: 'añ😀' }), true)).toEqual({
      model: 'tts-1',
      units: 3,
    });
    expect(await refusal(callUnits('speech', json({ model: 'tts-1' }), true))).toMatch(/input is required/);
  });

  it('audio: the file is measured to the millisecond; not measured under flat pricing; a JSON body or no file → 400', async () => {
    const f = await form([
      ['model', 'whisper-1'],
      ['file', audio(2500)],
    ]);
    expect(await callUnits('audio', f, true)).toEqual({ model: 'whisper-1', units: 2500 });
    expect(await callUnits('audio', f, false)).toEqual({ model: 'whisper-1', units: 0 });
    expect(await refusal(callUnits('audio', json({ model: 'whisper-1' }), true))).toMatch(/multipart/);
    expect(await refusal(callUnits('audio', await form([['model', 'whisper-1']]), true))).toMatch(
      /file is required/,
    );
    const junk = await form([
      ['model', 'whisper-1'],
      ['file', { data: Buffer.from('not audio at all'), filename: 'x.wav', type: 'audio/wav' }],
    ]);
    expect(await refusal(callUnits('audio', junk, true))).toMatch(/Could not read the duration/);
  });

  it('a field or a file part named twice is refused (the provider could read the other one)', async () => {
    const twoModels = await form([
      ['model', 'whisper-cheap'],
      ['model', 'whisper-dear'],
      ['file', audio(100)],
    ]);
    expect(await refusal(callUnits('audio', twoModels, true))).toMatch(/"model" appears more than once/);
    // A short file priced, a long one transcribed: refused.
    const twoFiles = await form([
      ['model', 'whisper-1'],
      ['file', audio(100)],
      ['file', audio(5000)],
    ]);
    expect(await refusal(callUnits('audio', twoFiles, true))).toMatch(/"file" appears more than once/);
  });

  it('a body cut off at the parser limits (fields, files, field size) or malformed is refused, not read in part', async () => {
    const many = await form([
      ['model', 'whisper-1'],
      ...Array.from({ length: 70 }, (_, i): [string, string] => [`f${i}`, 'x']),
      ['file', audio(100)],
    ]);
    expect(await refusal(callUnits('audio', many, true))).toMatch(/More than 64 form fields/);
    const files = await form([
      ['model', 'dall-e-2'],
      ...Array.from({ length: 9 }, (_, i): [string, { data: Buffer; filename: string; type: string }] => [
        `image${i}`,
        { data: Buffer.from('x'), filename: `${i}.png`, type: 'image/png' },
      ]),
    ]);
    expect(await refusal(callUnits('images', files, true))).toMatch(/More than 8 files/);
    const long = await form([
      ['model', 'whisper-1'],
      ['prompt', 'x'.repeat(1024 * 1024 + 1)],
      ['file', audio(100)],
    ]);
    expect(await refusal(callUnits('audio', long, true))).toMatch(/"prompt" is too long/);
    const broken = { contentType: 'multipart/form-data', rawBody: Buffer.from('--x\r\n'), body: null };
    expect(await refusal(callUnits('audio', broken, true))).toMatch(/Malformed multipart body/);
  });
});
