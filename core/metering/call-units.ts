import { Busboy } from '@fastify/busboy';
import { GatewayError } from '../errors.js';
import type { ImageVariant, UnitEndpoint } from '../pricing/types.js';

/**
 * What a unit-priced call (images, audio in, speech) asks for, read from its request before anything is
 * reserved: the model (so allow-lists, unknown-model 404 and pricing work for multipart calls too), the units
 * to reserve (images asked for, milliseconds of audio, characters of speech input) and the image variant.
 *
 * Multipart bodies (audio uploads, image edits and variations) are parsed with @fastify/busboy from the body
 * the transport already holds within MAX_BODY_BYTES; the bytes forwarded upstream are the original ones. Audio
 * duration is read with music-metadata (wav, mp3, m4a/mp4, webm, ogg, flac …): a file whose duration cannot
 * be read is refused with 400 `invalid_request` — never relayed free.
 */

export interface MultipartFile {
  field: string;
  filename: string;
  mimeType: string;
  data: Buffer;
}

export interface Multipart {
  fields: Record<string, string>;
  files: MultipartFile[];
}

export interface CallUnits {
  model: string;
  /** Units to reserve; images: asked for (`n`); audio: milliseconds; speech: code points of `input`. */
  units: number;
  variant?: ImageVariant;
}

const MAX_FIELDS = 64;
const MAX_FILES = 8;

function bad(message: string): GatewayError {
  return new GatewayError('invalid_request', { message });
}

/** Parses a multipart/form-data body held in memory. Throws 400 on a malformed body. */
export function parseMultipart(body: Buffer, contentType: string): Promise<Multipart> {
  return new Promise((resolve, reject) => {
    const out: Multipart = { fields: {}, files: [] };
    // What the provider reads must be what was priced and checked: a field or file part named twice (the
    // provider may read the other one), or anything busboy would cut off at its limits, is refused.
    let refused: GatewayError | undefined;
    const refuse = (message: string) => {
      refused ??= bad(message);
    };
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: { 'content-type': contentType },
        limits: { fields: MAX_FIELDS, files: MAX_FILES, fieldSize: 1024 * 1024 },
      });
    } catch (err) {
      reject(bad(`Malformed multipart body: ${(err as Error).message}`));
      return;
    }
    const seen = new Set<string>();
    const once = (name: string) => {
      if (seen.has(name)) refuse(`The form field "${name}" appears more than once`);
      seen.add(name);
    };
    parser.on('field', (name, value, nameTruncated, valueTruncated) => {
      once(name);
      if (nameTruncated || valueTruncated) refuse(`The form field "${name}" is too long`);
      out.fields[name] = value;
    });
    parser.on('file', (field, stream, filename, _enc, mimeType) => {
      once(field);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        out.files.push({ field, filename, mimeType, data: Buffer.concat(chunks) });
      });
    });
    parser.on('fieldsLimit', () => refuse(`More than ${MAX_FIELDS} form fields`));
    parser.on('filesLimit', () => refuse(`More than ${MAX_FILES} files`));
    parser.on('partsLimit', () => refuse('Too many parts in the multipart body'));
    parser.on('error', (err: Error) => reject(bad(`Malformed multipart body: ${err.message}`)));
    parser.on('finish', () => (refused ? reject(refused) : resolve(out)));
    parser.end(body);
  });
}

/**
 * Milliseconds of audio in `file`, rounded up; throws 400 when no duration can be read. music-metadata is
 * loaded on the first audio call, not at start: its import is ≈ 180 ms of CPU that every process and every
 * start paid before, and most never meter audio by its length.
 */
export async function audioDurationMs(file: MultipartFile): Promise<number> {
  const { parseBuffer } = await import('music-metadata');
  let seconds: number | undefined;
  try {
    const meta = await parseBuffer(
      file.data,
      { mimeType: file.mimeType || undefined, path: file.filename || undefined, size: file.data.length },
      { duration: true, skipCovers: true },
    );
    seconds = meta.format.duration;
  } catch {
    seconds = undefined;
  }
  if (seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) {
    throw bad(
      `Could not read the duration of the audio file "${file.filename || file.field}": send wav, mp3, m4a/mp4, webm, ogg or flac`,
    );
  }
  // Rounded to the microsecond first, so float noise (1.564 × 1000 = 1564.0000000000002) never adds a ms.
  return Math.ceil(Math.round(seconds * 1_000_000) / 1000);
}

function intField(value: unknown, name: string, def: number, min: number, max: number): number {
  if (value === undefined || value === null || value === '') return def;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw bad(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

function strField(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Reads the model, units and variant of a unit-priced call. `measure`: also measure what only pricing needs
 * (audio duration); false under flat pricing, where the units do not change the price.
 */
export async function callUnits(
  endpoint: UnitEndpoint,
  req: { contentType: string | undefined; rawBody: Buffer; body: unknown },
  measure: boolean,
): Promise<CallUnits> {
  const multipart = (req.contentType ?? '').toLowerCase().startsWith('multipart/form-data');
  let fields: Record<string, unknown>;
  let files: MultipartFile[] = [];
  if (!multipart && endpoint === 'audio') throw bad('Send the audio as multipart/form-data');
  if (multipart) {
    const m = await parseMultipart(req.rawBody, req.contentType!);
    fields = m.fields;
    files = m.files;
  } else if (req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body)) {
    fields = req.body as Record<string, unknown>;
  } else {
    throw bad('The request body must be a JSON object');
  }
  const model = strField(fields.model);
  if (model === undefined) throw bad('model is required');
  switch (endpoint) {
    case 'images': {
      // A streamed image answer (gpt-image-1 partial images over SSE) cannot be counted per image returned,
      // nor carry its cost: refused before anything is reserved rather than charged blind.
      if (fields.stream === true || fields.stream === 'true') {
        throw bad('Streamed image generation (stream: true) is not supported: send the call without stream');
      }
      const variant: ImageVariant = {};
      const size = strField(fields.size);
      const quality = strField(fields.quality);
      if (size !== undefined) variant.size = size;
      if (quality !== undefined) variant.quality = quality;
      return { model, units: intField(fields.n, 'n', 1, 1, 10), variant };
    }
    case 'speech': {
      const input = fields.input;
      if (typeof input !== 'string') throw bad('input is required (the text to speak)');
      // Code points, not UTF-16 units: "😀" is one character.
      let chars = 0;
      for (const _ of input) chars++;
      return { model, units: chars };
    }
    case 'audio': {
      const file = files.find((f) => f.field === 'file');
      if (file === undefined) throw bad('file is required (the audio to transcribe)');
      return { model, units: measure ? await audioDurationMs(file) : 0 };
    }
  }
}
