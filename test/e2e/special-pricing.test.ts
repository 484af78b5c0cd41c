import { readFileSync } from 'node:fs';
import { toFile } from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { changeOf, type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';

/**
 * Every call pays what it costs: images per image returned (size × quality), audio in by the
 * measured duration of the upload, speech by characters of input — model-priced from models.json at a pinned
 * BTC price, with the fee multipliers — and X-Node-Cost on every charged answer. Real clients: the openai SDK
 * (images.generate, audio.transcriptions.create with a WAV upload, audio.speech.create) on both stores.
 *
 * Expected msats are worked out by hand, independent of the production formula: BTC_USD_PRICE 100,000 →
 * 10^6 msat per USD; fees 1.005 × 1.05 = 1.05525; base fee FIXED_COST_PER_REQUEST = 1 sat = 1,000 msat.
 */
const ENV = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '1',
  BTC_USD_PRICE: '100000',
  EXCHANGE_FEE: '1.005',
  UPSTREAM_PROVIDER_FEE: '1.05',
};
const MODELS = {
  models: [
    {
      id: 'dall-e-3',
      pricing: {
        image: '0.02',
        image_sizes: {
          '1024x1024': { standard: '0.04', hd: '0.08' },
          '1792x1024': { standard: '0.08', hd: '0.12' },
          '256x256': { standard: '0.016' },
        },
      },
    },
    { id: 'whisper-1', pricing: { audio_minute: '0.006' } },
    { id: 'tts-1', pricing: { speech_1k_chars: '0.015' } },
    { id: 'mock-gpt', pricing: { prompt: '0.000001', completion: '0.000002' } },
    { id: 'embed-small', pricing: { prompt: '0.0001' } },
    { id: 'blind-gpt', supports_vision: false, pricing: { prompt: '0.000001', completion: '0.000002' } },
  ],
};
/** 0.08 USD × 10^6 × 1.05525 = 84,420 msat per HD 1024×1024 image. */
const HD_1024 = 84_420;
const BASE = 1_000;

/** What the OpenAI client threw for a refused call. */
const refusal = (e: unknown) => e as { status: number; error: { code: string; message: string } };

/** A PCM WAV of `ms` milliseconds of silence (8 kHz, mono, 16 bit): music-metadata reads its exact duration. */
function wav(ms: number): Buffer {
  const samples = (8000 * ms) / 1000;
  const data = Buffer.alloc(samples * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVE', 8);
  h.write('fmt ', 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(8000, 24);
  h.writeUInt32LE(16000, 28); // byte rate
  h.writeUInt16LE(2, 32); // block align
  h.writeUInt16LE(16, 34); // bits
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

describe.each<PaidStore>(['sqlite', 'redis'])('special pricing on %s', (store) => {
  const h = paidGatewayPerSuite({
    store,
    modelsFile: MODELS,
    // The catch-all call below, listed at the base fee.
    env: { ...ENV, RELAY_PATHS: `GET /v1/evals=${BASE}` },
  });
  beforeEach(() => {
    h.upstream.setBehaviour({ error: undefined, maxImages: undefined });
  });

  /**
   * A key funded with `sats` and the provider's request count then (`before`); `untouched()` checks that nothing
   * was relayed since and that the key still holds all it was funded with.
   */
  async function watchedKey(
    sats: number,
  ): Promise<{ apiKey: string; before: number; untouched(): Promise<void> }> {
    const { apiKey, balanceMsat } = await h.fundKey(sats);
    const before = h.upstream.stats.requests;
    const untouched = async () => {
      expect(h.upstream.stats.requests).toBe(before);
      expect(await h.available(apiKey)).toBe(balanceMsat);
    };
    return { apiKey, before, untouched };
  }

  it('images: n=2 HD 1024×1024 at $0.08 is charged 2 × 84,420 msat + the base fee, shown in X-Node-Cost and the body', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(500);
    const { data, response } = await h
      .openai(apiKey)
      .images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', n: 2, size: '1024x1024', quality: 'hd' })
      .withResponse();
    expect(data.data).toHaveLength(2);
    const expected = 2 * HD_1024 + BASE;
    expect(response.headers.get('x-node-cost')).toBe(String(expected));
    expect((data as unknown as Record<string, { msats: number }>)['x-node-cost']?.msats).toBe(expected);
    expect(await h.available(apiKey)).toBe(balanceMsat - expected);
  });

  it('images: charged for the images actually returned; a size without its own price falls back to `image`', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(500);
    h.upstream.setBehaviour({ maxImages: 1 });
    const r = await h
      .openai(apiKey)
      .images.generate({ model: 'dall-e-3', prompt: 'x', n: 3, size: '1024x1024', quality: 'hd' });
    expect(r.data).toHaveLength(1);
    expect(await h.available(apiKey)).toBe(balanceMsat - (HD_1024 + BASE));
    // 512x512 is not in image_sizes: $0.02 × 10^6 × 1.05525 = 21,105 per image.
    h.upstream.setBehaviour({ maxImages: undefined });
    await h.openai(apiKey).images.generate({ model: 'dall-e-3', prompt: 'x', n: 2, size: '512x512' });
    expect(await h.available(apiKey)).toBe(balanceMsat - (HD_1024 + BASE) - (2 * 21_105 + BASE));
  });

  it('images: no size is priced as the default 1024x1024; a quality its size does not list falls back to `image`', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(500);
    // No size, no quality: 1024x1024 standard at $0.04 → 0.04 × 10^6 × 1.05525 = 42,210 msat.
    const r = await h.openai(apiKey).images.generate({ model: 'dall-e-3', prompt: 'a kite' }).withResponse();
    expect(r.response.headers.get('x-node-cost')).toBe(String(42_210 + BASE));
    expect(await h.available(apiKey)).toBe(balanceMsat - (42_210 + BASE));
    // 256x256 lists only `standard`: hd there is priced at `image` ($0.02 → 21,105).
    await h
      .openai(apiKey)
      .images.generate({ model: 'dall-e-3', prompt: 'x', size: '256x256', quality: 'hd' });
    expect(await h.available(apiKey)).toBe(balanceMsat - (42_210 + BASE) - (21_105 + BASE));
    // 256x256 standard has its own price: $0.016 → 16,884 msat.
    await h.openai(apiKey).images.generate({ model: 'dall-e-3', prompt: 'x', size: '256x256' });
    expect(await h.available(apiKey)).toBe(balanceMsat - (42_210 + BASE) - (21_105 + BASE) - (16_884 + BASE));
  });

  it('images: stream: true is refused with 400 before anything is reserved or relayed (cannot be charged per image)', async () => {
    const { apiKey, untouched } = await watchedKey(500);
    const res = await h.post(
      '/images/generations',
      { model: 'dall-e-3', prompt: 'x', stream: true },
      { authorization: `Bearer ${apiKey}` },
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toMatch(/stream/);
    await untouched();
  });

  it('embeddings on a model priced by `prompt` only are charged per input token; its chat calls are refused as unpriced', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    // "hello world!" = 12 characters → 3 prompt tokens (mock) × $0.0001 × 10^6 × 1.05525 = 316.575 → 317.
    const r = await h
      .openai(apiKey)
      .embeddings.create({ model: 'embed-small', input: 'hello world!' })
      .withResponse();
    expect(r.data.usage.prompt_tokens).toBe(3);
    expect(await h.available(apiKey)).toBe(balanceMsat - (317 + BASE));
    const before = h.upstream.stats.requests;
    const err = await h
      .openai(apiKey)
      .chat.completions.create({ model: 'embed-small', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e as { status: number; error: { code: string } });
    expect(err).toMatchObject({ status: 400, error: { code: 'model_not_priced' } });
    expect(h.upstream.stats.requests).toBe(before);
    expect(await h.available(apiKey)).toBe(balanceMsat - (317 + BASE));
  });

  it('audio: response_format text and verbose_json are relayed as the upstream sent them and charged by the measured duration', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const text = await fetch(`${h.baseURL}/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: (() => {
        const f = new FormData();
        f.set('model', 'whisper-1');
        f.set('response_format', 'text');
        f.set('file', new Blob([wav(2500)], { type: 'audio/wav' }), 'a.wav');
        return f;
      })(),
    });
    expect(text.status).toBe(200);
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    // A plain-text answer gets the cost in the header only: its body is not touched.
    expect(await text.text()).toBe('mock transcript');
    expect(text.headers.get('x-node-cost')).toBe(String(264 + BASE));
    const verbose = await h.openai(apiKey).audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(wav(1000), 'b.wav', { type: 'audio/wav' }),
      response_format: 'verbose_json',
    });
    expect(verbose).toMatchObject({ text: 'mock transcript', language: 'english' });
    // 2,500 ms → 264; 1,000 ms → 106 (each rounded up once, each with the base fee).
    expect(await h.available(apiKey)).toBe(balanceMsat - (264 + BASE) - (106 + BASE));
  });

  it('image edits (multipart) are priced by the same rule from their form fields', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(500);
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const r = await h.openai(apiKey).images.edit({
      model: 'dall-e-3',
      image: await toFile(png, 'in.png', { type: 'image/png' }),
      prompt: 'add a hat',
      n: 2,
      size: '1024x1024',
    });
    expect(r.data).toHaveLength(2);
    // standard quality (none named): 0.04 × 10^6 × 1.05525 = 42,210 per image.
    expect(await h.available(apiKey)).toBe(balanceMsat - (2 * 42_210 + BASE));
    // The upstream got the multipart body as sent.
    expect(h.upstream.stats.lastRaw!.includes(png)).toBe(true);
  });

  it('image variations (multipart) too: 3 × 1792x1024 standard at $0.08, X-Node-Cost = the charge', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(500);
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const { data, response } = await h
      .openai(apiKey)
      .images.createVariation({
        model: 'dall-e-3',
        image: await toFile(png, 'in.png', { type: 'image/png' }),
        n: 3,
        size: '1792x1024' as '1024x1024',
      })
      .withResponse();
    expect(data.data).toHaveLength(3);
    // 0.08 × 10^6 × 1.05525 = 84,420 per image; 3 images + the base fee = 254,260.
    expect(response.headers.get('x-node-cost')).toBe('254260');
    expect(await h.available(apiKey)).toBe(balanceMsat - 254_260);
    expect(h.upstream.stats.lastRaw!.includes(png)).toBe(true);
  });

  it('images: a body the price cannot be read from is 400 before anything is reserved (JSON by its schema, edit forms by the reserve stage)', async () => {
    const { apiKey, untouched } = await watchedKey(100);
    const bodies: [Record<string, unknown>, RegExp][] = [
      [{ n: 11 }, /\bn\b/],
      [{ n: 0 }, /\bn\b/],
      [{ n: 1.5 }, /\bn\b/],
      [{ size: 1024 }, /size/],
      [{ quality: 'ultra' }, /quality/],
    ];
    for (const [extra, message] of bodies) {
      const res = await h.post(
        '/images/generations',
        { model: 'dall-e-3', prompt: 'x', ...extra },
        { authorization: `Bearer ${apiKey}` },
      );
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('validation_failed');
      expect(error.message).toMatch(message);
    }
    // Edits are multipart (no schema check): the reserve stage reads n itself.
    for (const n of ['11', '0', 'two']) {
      const form = new FormData();
      form.set('model', 'dall-e-3');
      form.set('prompt', 'x');
      form.set('n', n);
      form.set('image', new Blob([Buffer.from('png')], { type: 'image/png' }), 'a.png');
      const res = await fetch(`${h.baseURL}/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
        body: form,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: { code: 'invalid_request', message: 'n must be an integer from 1 to 10' },
      });
    }
    await untouched();
  });

  it('a model with no price for the endpoint is refused before anything is reserved (never free)', async () => {
    const { apiKey, untouched } = await watchedKey(100);
    const err = await h.openai(apiKey).images.generate({ model: 'mock-gpt', prompt: 'x' }).catch(refusal);
    expect(err).toMatchObject({ status: 400, error: { code: 'model_not_priced' } });
    expect((err as { error: { message: string } }).error.message).toMatch(/mock-gpt/);
    // A chat call on a model that only has an image price is refused the same way.
    await expect(
      h
        .openai(apiKey)
        .chat.completions.create({ model: 'dall-e-3', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 400, error: { code: 'model_not_priced' } });
    await untouched();
  });

  it('audio: charged by the measured duration (2.5 s at $0.006/min → 264 msat + base); the upload reaches the upstream byte for byte', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const file = wav(2500);
    const { data, response } = await h
      .openai(apiKey)
      .audio.transcriptions.create({
        model: 'whisper-1',
        file: await toFile(file, 'speech.wav', { type: 'audio/wav' }),
      })
      .withResponse();
    expect(data.text).toBe('mock transcript');
    // 2,500 ms × 0.0000001 USD × 10^6 × 1.05525 = 263.8125 → 264 (rounded up once, with the base fee).
    const expected = 264 + BASE;
    expect(response.headers.get('x-node-cost')).toBe(String(expected));
    expect(await h.available(apiKey)).toBe(balanceMsat - expected);
    const raw = h.upstream.stats.lastRaw!;
    expect(raw.includes(file)).toBe(true);
    expect(String(h.upstream.stats.lastHeaders?.['content-type'])).toMatch(
      /^multipart\/form-data; boundary=/,
    );
    // Translations are priced the same way.
    await h.openai(apiKey).audio.translations.create({
      model: 'whisper-1',
      file: await toFile(wav(1000), 'a.wav', { type: 'audio/wav' }),
    });
    // 1,000 ms → 105.525 → 106.
    expect(await h.available(apiKey)).toBe(balanceMsat - expected - (106 + BASE));
  });

  it('audio: mp3, m4a, webm, ogg and flac uploads are measured and charged by their duration', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    // Fixtures: 1.5 s of a 440 Hz tone encoded by ffmpeg (test/fixtures/audio); durations as the containers
    // state them (encoder padding included): ms × 0.105525 msat, + the base fee, rounded up once.
    const cases: [string, string, number][] = [
      ['tone.mp3', 'audio/mpeg', 1168], // 1,584 ms → 167.15 + 1,000
      ['tone.m4a', 'audio/mp4', 1166], // 1,564 ms
      ['tone.webm', 'audio/webm', 1160], // 1,508 ms
      ['tone.ogg', 'audio/ogg', 1159], // 1,500 ms
      ['tone.flac', 'audio/flac', 1159], // 1,500 ms
    ];
    let spent = 0;
    for (const [name, type, msats] of cases) {
      const data = readFileSync(new URL(`../fixtures/audio/${name}`, import.meta.url));
      const { response } = await h
        .openai(apiKey)
        .audio.transcriptions.create({ model: 'whisper-1', file: await toFile(data, name, { type }) })
        .withResponse();
      expect(response.headers.get('x-node-cost'), name).toBe(String(msats));
      spent += msats;
      expect(await h.available(apiKey), name).toBe(balanceMsat - spent);
    }
  });

  it('audio: a file whose duration cannot be read is refused with 400 and never relayed', async () => {
    const { apiKey, untouched } = await watchedKey(100);
    const err = await h
      .openai(apiKey)
      .audio.transcriptions.create({
        model: 'whisper-1',
        file: await toFile(Buffer.from('not audio at all'), 'notes.txt', { type: 'text/plain' }),
      })
      .catch(refusal);
    expect(err).toMatchObject({ status: 400, error: { code: 'invalid_request' } });
    expect((err as { error: { message: string } }).error.message).toMatch(/duration/);
    await untouched();
  });

  it('audio: an unknown model read from the multipart body is 404 before anything is reserved or relayed', async () => {
    const { apiKey, untouched } = await watchedKey(100);
    const err = await h
      .openai(apiKey)
      .audio.transcriptions.create({ model: 'whisper-9', file: await toFile(wav(500), 'a.wav') })
      .catch(refusal);
    expect(err).toMatchObject({
      status: 404,
      error: { code: 'not_found', message: 'Unknown model: whisper-9' },
    });
    await untouched();
  });

  it('X-Cashu: a special call refused before the upstream (unreadable audio) returns the whole token', async () => {
    const token = await h.mintToken(7);
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([Buffer.from('not audio at all')], { type: 'text/plain' }), 'notes.txt');
    const res = await fetch(`${h.baseURL}/audio/transcriptions`, {
      method: 'POST',
      headers: { 'x-cashu': token },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    expect(await h.redeem(res.headers.get('x-cashu')!)).toBe(7);
    expect(await h.available(token)).toBe(0);
  });

  it('X-Cashu speech: the change is in the head and the binary answer streams (not held); change + charge = the token', async () => {
    h.upstream.setBehaviour({ chunkDelayMs: 250 });
    try {
      const token = await h.mintToken(7);
      const res = await h.post(
        '/audio/speech',
        { model: 'tts-1', input: 'Hello, wörld! 😀', voice: 'alloy' },
        { 'x-cashu': token },
      );
      const change = changeOf(res, 200);
      // 238 + 1,000 msat, charged in whole sats of the sat token: 2,000 (nothing is left below a sat).
      expect(238 + BASE).toBe(1238);
      expect(res.headers.get('x-node-cost')).toBe('2000');
      // Four chunks 250 ms apart upstream: streamed, the first arrives well before the last.
      const reader = res.body!.getReader();
      let bytes = 0;
      let firstAt = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (bytes === 0) firstAt = Date.now();
        bytes += value.byteLength;
      }
      expect(bytes).toBe(64 * 1024);
      expect(Date.now() - firstAt).toBeGreaterThan(400);
      // 7,000 − 2,000 = 5 whole sats of change; nothing stays on the token.
      expect(await h.redeem(change)).toBe(5);
      expect(await h.available(token)).toBe(0);
    } finally {
      h.upstream.setBehaviour({ chunkDelayMs: 0 });
    }
  });

  it('audio: allowed_models applies to multipart calls (403 naming the model)', async () => {
    const { apiKey } = await h.fundKey(100);
    const sub = await h.post(
      '/wallet/create/subkey',
      { allowed_models: ['tts-1'] },
      { authorization: `Bearer ${apiKey}` },
    );
    expect(sub.status).toBe(201);
    const subKey = ((await sub.json()) as { api_key: string }).api_key;
    const err = await h
      .openai(subKey)
      .audio.transcriptions.create({ model: 'whisper-1', file: await toFile(wav(500), 'a.wav') })
      .catch((e: unknown) => e as { status: number; error: { code: string; details?: unknown } });
    expect(err).toMatchObject({
      status: 403,
      error: { code: 'model_not_allowed', details: { model: 'whisper-1' } },
    });
  });

  it('speech: charged by code points of input; the binary answer streams through with X-Node-Cost in the head', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const input = 'Hello, wörld! 😀'; // 15 code points (16 UTF-16 units)
    const res = await h.openai(apiKey).audio.speech.create({ model: 'tts-1', input, voice: 'alloy' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    // 15 × 0.000015 USD × 10^6 × 1.05525 = 237.43125 → 238.
    expect(res.headers.get('x-node-cost')).toBe(String(238 + BASE));
    expect((await res.arrayBuffer()).byteLength).toBe(64 * 1024);
    expect(await h.available(apiKey)).toBe(balanceMsat - (238 + BASE));
  });

  it('supports_vision: false refuses image parts with 400 before any charge; text still works', async () => {
    const { apiKey, before, untouched } = await watchedKey(100);
    const image = {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'what is this?' },
        { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    };
    const err = await h
      .openai(apiKey)
      .chat.completions.create({ model: 'blind-gpt', messages: [image] })
      .catch(refusal);
    expect(err).toMatchObject({ status: 400, error: { code: 'invalid_request' } });
    expect((err as { error: { message: string } }).error.message).toMatch(/does not accept images/);
    await untouched();
    // The same parts on a model that does not say it is blind go through.
    await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages: [image], max_tokens: 1 });
    await h.openai(apiKey).chat.completions.create({
      model: 'blind-gpt',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 1,
    });
    expect(h.upstream.stats.requests).toBe(before + 2);
  });

  it('an upstream failure releases the reservation: nothing charged', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(500);
    h.upstream.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
    await expect(
      h
        .openai(apiKey)
        .images.generate({ model: 'dall-e-3', prompt: 'x', n: 2, size: '1024x1024', quality: 'hd' }),
    ).rejects.toMatchObject({ status: 502 });
    await expect(
      h.openai(apiKey).audio.speech.create({ model: 'tts-1', input: 'hi', voice: 'alloy' }),
    ).rejects.toMatchObject({ status: 502 });
    await expect(
      h.openai(apiKey).audio.transcriptions.create({
        model: 'whisper-1',
        file: await toFile(wav(1500), 'c.wav', { type: 'audio/wav' }),
      }),
    ).rejects.toMatchObject({ status: 502 });
    expect(await h.available(apiKey)).toBe(balanceMsat);
  });

  it('X-Node-Cost on catch-all calls (their RELAY_PATHS price) and, for metered streams, a final x-node-cost SSE comment', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const other = await fetch(`${h.baseURL}/evals`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(other.status).toBe(200);
    expect(other.headers.get('x-node-cost')).toBe(String(BASE));
    await other.arrayBuffer();
    const stream = await fetch(`${h.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'mock-gpt',
        stream: true,
        messages: [{ role: 'user', content: 'hi there' }],
      }),
    });
    const text = await stream.text();
    const m = /\n: x-node-cost (\{[^\n]*\})\n\ndata: \[DONE\]\n\n$/.exec(text);
    expect(m, text.slice(-300)).not.toBeNull();
    const block = JSON.parse(m![1]!) as { msats: number };
    // 2 prompt tokens ("hi there" → ceil(8/4)) × 1.05525 + 8 completion × 2.1105 + 1,000 = 1,018.9945 → 1,019.
    expect(block.msats).toBe(1019);
    expect(await h.available(apiKey)).toBe(balanceMsat - BASE - 1019);
  });
});

/** The same special prices through the opt-in uWS engine (its own body and head handling), SQLite store. */
describe('special pricing on uWS (sqlite)', () => {
  const h = paidGatewayPerSuite({ store: 'sqlite', engine: 'uws', modelsFile: MODELS, env: ENV });

  it('images, audio (multipart, relayed byte for byte) and speech (binary) are charged exactly, X-Node-Cost in each head', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(500);
    const client = h.openai(apiKey);
    const img = await client.images
      .generate({ model: 'dall-e-3', prompt: 'a lighthouse', n: 2, size: '1024x1024', quality: 'hd' })
      .withResponse();
    expect(img.data.data).toHaveLength(2);
    expect(img.response.headers.get('x-node-cost')).toBe(String(2 * HD_1024 + BASE));
    const file = wav(2500);
    const audio = await client.audio.transcriptions
      .create({ model: 'whisper-1', file: await toFile(file, 'speech.wav', { type: 'audio/wav' }) })
      .withResponse();
    expect(audio.data.text).toBe('mock transcript');
    expect(audio.response.headers.get('x-node-cost')).toBe(String(264 + BASE));
    expect(h.upstream.stats.lastRaw!.includes(file)).toBe(true);
    const speech = await client.audio.speech.create({
      model: 'tts-1',
      input: 'Hello, wörld! 😀',
      voice: 'alloy',
    });
    expect(speech.headers.get('x-node-cost')).toBe(String(238 + BASE));
    expect((await speech.arrayBuffer()).byteLength).toBe(64 * 1024);
    expect(await h.available(apiKey)).toBe(balanceMsat - (2 * HD_1024 + BASE) - (264 + BASE) - (238 + BASE));
  });
});
