import { randomUUID } from 'node:crypto';
import { createWriteStream, openAsBlob, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Busboy } from '@fastify/busboy';
import { FormData } from 'undici';
import {
  BatchInputChecker,
  type BatchInputSummary,
  type CheckBatchInputOptions,
} from '../batches/batch-input.js';
import { GatewayError } from '../errors.js';
import { FileTextCheck } from '../objects/stored-file.js';

/**
 * A `POST /v1/files` upload received as it streams, never held whole: the multipart body is parsed with
 * @fastify/busboy and its `file` part spooled to a temporary file (os.tmpdir(), mode 0600, removed in every
 * outcome) while, for `purpose: "batch"`, each JSONL line is checked and priced (core/batches/batch-input.ts). The
 * provider then gets a multipart body made of the fields and the spooled file, read from disk as it is sent, with
 * its length computed (undici's FormData). Memory per upload: a few chunks and the line being checked.
 *
 * The purpose may come before or after the file (the OpenAI SDKs send the file first): the check runs on the file
 * as it streams unless a purpose other than `batch` was read already, and its verdict counts only when the purpose
 * is `batch`. A refusal known while the body still streams (a bad line of a batch file, a purpose not enabled, a
 * repeated or unexpected part) stops reading at once; the transport discards the rest before the 400.
 */

/** Spooled files are `${tmpdir()}/${SPOOL_PREFIX}${pid}-${uuid}`. */
export const SPOOL_PREFIX = 'gw-upload-';

const MAX_FIELDS = 64;
const MAX_FIELD_BYTES = 1024 * 1024;

export interface Upload {
  /** The text fields in the order they came (`purpose` among them). */
  fields: [string, string][];
  purpose: string;
  /** `text`: its size bounds its tokens (core/objects/stored-file.ts). */
  file: { filename: string; mimeType: string; bytes: number; text: boolean };
  /** `purpose: "batch"`: the checked file's priced summary. */
  batch: BatchInputSummary | undefined;
  /** The provider's request body: the fields, then the spooled file (streamed from disk when sent). */
  providerBody(): Promise<FormData>;
}

export interface UploadOptions {
  contentType: string;
  /** How a batch input file is checked. */
  batch: CheckBatchInputOptions;
  /** FILES_OTHER_PURPOSES: purposes other than `batch` are accepted. */
  otherPurposes: boolean;
}

function bad(message: string): GatewayError {
  return new GatewayError('invalid_request', { message });
}

function notEnabled(purpose: string): GatewayError {
  return bad(`Uploads with purpose "${purpose}" are not enabled on this node (FILES_OTHER_PURPOSES)`);
}

/** Receives the upload from `body`, runs `use` with it, and removes the spooled file whatever happened. */
export async function withUpload<T>(
  body: Readable,
  opts: UploadOptions,
  use: (upload: Upload) => Promise<T>,
): Promise<T> {
  const path = join(tmpdir(), `${SPOOL_PREFIX}${process.pid}-${randomUUID()}`);
  try {
    return await use(await receive(body, path, opts));
  } finally {
    await rm(path, { force: true });
  }
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: busboy's event handlers share the upload's state (limits, digest, open file) and must settle one promise once
async function receive(body: Readable, path: string, opts: UploadOptions): Promise<Upload> {
  let parser: ReturnType<typeof Busboy>;
  try {
    parser = Busboy({
      headers: { 'content-type': opts.contentType },
      limits: { fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES },
    });
  } catch (err) {
    throw bad(`Malformed multipart body: ${(err as Error).message}`);
  }
  const fields: [string, string][] = [];
  let purpose: string | undefined;
  let file: Upload['file'] | undefined;
  /** Where the file part is spooled; aborting `spooling` stops that (its streams are destroyed). */
  let sink: WriteStream | undefined;
  const spooling = new AbortController();
  let written: Promise<void> | undefined;
  let checker: BatchInputChecker | undefined;
  let summary: BatchInputSummary | undefined;
  /** The batch check's refusal while the purpose is not known yet. */
  let checkRefusal: unknown;
  /** The first refusal: what the request is answered with, whatever error stopping caused. */
  let refusal: unknown;
  const stop = (err: unknown): void => {
    refusal ??= err;
    parser.destroy(err as Error);
    spooling.abort();
  };
  const checkFailed = (err: unknown): void => {
    checker = undefined;
    if (purpose === 'batch') stop(err);
    else checkRefusal = err;
  };
  const seen = new Set<string>();
  // What the provider reads must be what was checked: a part named twice (the provider may read the other one),
  // a file part other than `file`, or anything busboy would cut at its limits, is refused.
  const once = (name: string): boolean => {
    if (!seen.has(name)) {
      seen.add(name);
      return true;
    }
    stop(bad(`The form field "${name}" appears more than once`));
    return false;
  };

  parser.on('field', (name, value, nameTruncated, valueTruncated) => {
    if (!once(name)) return;
    if (nameTruncated || valueTruncated) return stop(bad(`The form field "${name}" is too long`));
    fields.push([name, value]);
    if (name !== 'purpose') return;
    purpose = value;
    if (value === 'batch') {
      if (checkRefusal !== undefined) stop(checkRefusal);
      return;
    }
    checker = undefined;
    checkRefusal = undefined;
    if (value !== '' && !opts.otherPurposes) stop(notEnabled(value));
  });

  parser.on('file', (name, stream, filename, _encoding, mimeType) => {
    if (!once(name) || name !== 'file') {
      stream.resume();
      if (name !== 'file') stop(bad(`Unexpected file part "${name}": the upload is the part named "file"`));
      return;
    }
    const f = { filename, mimeType, bytes: 0, text: false };
    file = f;
    if (purpose === undefined || purpose === 'batch') checker = new BatchInputChecker(opts.batch);
    const textCheck = new FileTextCheck(filename);
    const check = new Transform({
      transform(chunk: Buffer, _enc, done) {
        f.bytes += chunk.length;
        textCheck.push(chunk);
        try {
          checker?.push(chunk);
        } catch (err) {
          checkFailed(err);
        }
        done(null, chunk);
      },
      flush(done) {
        f.text = textCheck.end();
        try {
          summary = checker?.end();
        } catch (err) {
          checkFailed(err);
        }
        done();
      },
    });
    sink = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    written = pipeline(stream, check, sink, { signal: spooling.signal }).catch(stop);
  });
  parser.on('fieldsLimit', () => stop(bad(`More than ${MAX_FIELDS} form fields`)));
  parser.on('partsLimit', () => stop(bad('Too many parts in the multipart body')));

  try {
    await pipeline(body, parser);
    await written;
  } catch (err) {
    spooling.abort();
    throw (
      refusal ??
      (err instanceof GatewayError ? err : bad(`Malformed multipart body: ${(err as Error).message}`))
    );
  } finally {
    // The spooled file is removed after this: its descriptor must be closed (and the file made) by then.
    const s = sink;
    if (s !== undefined && !s.closed) await new Promise<void>((resolve) => s.once('close', () => resolve()));
  }
  if (refusal !== undefined) throw refusal;
  if (purpose === undefined || purpose === '') throw bad('purpose is required');
  if (file === undefined) throw bad('file is required');
  if (purpose === 'batch') {
    if (checkRefusal !== undefined) throw checkRefusal;
    if (summary === undefined) throw new Error('the batch input check did not run');
  } else if (!opts.otherPurposes) {
    throw notEnabled(purpose);
  }
  const upload = file;
  return {
    fields,
    purpose,
    file: upload,
    batch: purpose === 'batch' ? summary : undefined,
    async providerBody() {
      const form = new FormData();
      for (const [name, value] of fields) form.append(name, value);
      form.append('file', await openAsBlob(path, { type: upload.mimeType }), upload.filename);
      return form;
    },
  };
}
