import { GatewayError } from '../errors.js';
import type { Exchange, OutgoingHeaders } from './exchange.js';
import { acceptsGzip, GZIP_MIN_BYTES, isCompressible, sendComplete } from './respond.js';

/**
 * Writes a relayed response body to the client: the part of relaying that knows bytes, not plugins. The
 * pipeline runner (core/pipeline.ts) runs the hooks and hands every chunk that survived them to `write`.
 *
 * Two modes, chosen once when the head is known (`planBody`):
 * - streaming: the head goes out at once, every chunk is written as it comes, `write` returning false asks the
 *   producer to pause until `onDrain` (back-pressure);
 * - held whole: chunks are collected (bounded by MAX_BUFFERED_BYTES) and sent with one write, a Content-Length
 *   and gzip when the client accepts it; the head is written last, so end hooks may still edit it.
 * Either way ONE trailing `data: [DONE]` event of an SSE stream can be held back (`holdSseDone`) so that bytes
 * appended by end hooks go before it.
 */

/** A held body larger than this fails (bounded memory); streams are never held. */
export const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** A non-SSE response whose Content-Length is at most this is sent whole. */
export const HOLD_WHOLE_MAX_BYTES = 1024 * 1024;
const DONE_EVENT = Buffer.from('data: [DONE]');

export interface ResponseHeadRef {
  status: number;
  headers: OutgoingHeaders;
}

export interface BodyPlan {
  /** Hold the whole body and send it with one write (see above). */
  hold: boolean;
  /** Hold a trailing `data: [DONE]` event until the end (SSE only). */
  holdSseDone: boolean;
  /** The client accepts gzip. */
  gzipOk: boolean;
}

/**
 * Decides how a relayed body is written. `requested`: a plugin asked to hold it (`ctx.bufferResponse`);
 * `declaredLength`: the upstream's Content-Length (NaN when none).
 */
export function planBody(opts: {
  requestHeaders: Readonly<Record<string, string>>;
  contentType: string | string[] | undefined;
  isSse: boolean;
  declaredLength: number;
  requested: boolean;
  holdSseDone: boolean;
}): BodyPlan {
  const gzipOk = acceptsGzip(opts.requestHeaders);
  let hold = opts.requested;
  if (!opts.isSse && !hold) {
    const declared = opts.declaredLength;
    // Gzip needs the whole body; only worth holding it when it may exceed the threshold.
    if (gzipOk && isCompressible(opts.contentType) && !(declared <= GZIP_MIN_BYTES)) hold = true;
    // A small body of announced length goes out in one write with Content-Length: relaying it chunk by
    // chunk costs a chunked write plus a separate terminating write (two syscalls) for nothing.
    if (declared <= HOLD_WHOLE_MAX_BYTES) hold = true;
  }
  return { hold, holdSseDone: opts.holdSseDone && opts.isSse, gzipOk };
}

export class ResponseBodyWriter {
  private readonly parts: Uint8Array[] = [];
  private size = 0;
  private heldDone: Uint8Array | undefined;

  constructor(
    private readonly ex: Exchange,
    private readonly head: ResponseHeadRef,
    readonly plan: BodyPlan,
  ) {
    if (!plan.hold) ex.writeHead(head.status, head.headers);
  }

  /**
   * Writes (or holds) one chunk. Returns false when the producer should pause until `onDrain`. Throws
   * `upstream_error` when a held body passes MAX_BUFFERED_BYTES.
   */
  write(chunk: Uint8Array): boolean {
    let c = chunk;
    if (this.plan.holdSseDone) {
      const cut = doneEventStart(c);
      if (cut !== -1) {
        this.heldDone = c.subarray(cut);
        c = c.subarray(0, cut);
        if (c.length === 0) return true;
      }
    }
    if (this.plan.hold) {
      this.size += c.length;
      if (this.size > MAX_BUFFERED_BYTES) {
        throw new GatewayError('upstream_error', { message: 'The upstream response is too large to buffer' });
      }
      this.parts.push(c);
      return true;
    }
    return this.ex.write(c);
  }

  onDrain(cb: () => void): void {
    this.ex.onDrain(cb);
  }

  /** Writes the bytes end hooks appended, then the held `[DONE]`, and ends the response. */
  async finish(tail: Uint8Array[] | undefined): Promise<void> {
    if (this.plan.hold) {
      const parts = this.parts;
      if (tail) for (const t of tail) parts.push(t);
      if (this.heldDone) parts.push(this.heldDone);
      const body = parts.length === 1 && Buffer.isBuffer(parts[0]) ? parts[0] : Buffer.concat(parts);
      await sendComplete(this.ex, this.head.status, this.head.headers, body, this.plan.gzipOk);
      return;
    }
    if (tail) for (const t of tail) this.ex.write(t);
    this.ex.end(this.heldDone);
  }
}

/** Index where a trailing `data: [DONE]` event starts in `c`, or -1 (only trailing whitespace may follow). */
function doneEventStart(c: Uint8Array): number {
  const buf = Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.length);
  const from = Math.max(0, buf.length - 32);
  const idx = buf.indexOf(DONE_EVENT, from);
  if (idx === -1) return -1;
  for (let i = idx + DONE_EVENT.length; i < buf.length; i++) {
    const b = buf[i];
    if (b !== 0x0a && b !== 0x0d && b !== 0x20) return -1;
  }
  return idx;
}
