import { Readable } from 'node:stream';
import { GatewayError } from '../errors.js';
import { OVERSIZE_DRAIN_BYTES, tooLarge } from './body-limit.js';

/**
 * A request body handed to its route as it arrives instead of whole (RouteOptions `streamBody`, e.g. uploads far
 * above MAX_BODY_BYTES), the same on both engines. The engine feeds it the chunks it reads; when the reader falls
 * behind (the stream's buffer is full) the engine stops reading the socket until it reads again, so one request
 * holds a few chunks whatever the body's size. Past `limit` bytes the stream fails with 413 `payload_too_large`;
 * a client that goes away fails it too.
 *
 * Before an answer is sent, `discard` reads and drops what the reader left (a refusal found early, a 413), so a
 * client still sending reads the answer instead of a reset (core/http/body-limit.ts): up to OVERSIZE_DRAIN_BYTES
 * more; beyond that the answer closes the connection.
 */

/** What the engine gives the body to throttle the client: stop and restart reading its socket. */
export interface BodySource {
  pause(): void;
  resume(): void;
}

const CHUNKS_HELD = 64 * 1024;

export class StreamedBody {
  /** What the route reads. */
  readonly stream: Readable;
  private counted = 0;
  /** The source is paused (resumed only then: uWS loses the body when a response never paused is resumed). */
  private paused = false;
  /** The engine saw the end of the body, or the client left. */
  private done = false;
  /** After `discard`: every chunk is dropped; `dropLeft` bytes may still be read before the answer. */
  private dropping = false;
  private dropLeft = 0;
  private settleDiscard: ((close: boolean) => void) | undefined;

  constructor(
    private readonly source: BodySource,
    private readonly limit: number,
    /** The declared Content-Length, when there is one. */
    private readonly declared: number | undefined,
  ) {
    this.stream = new Readable({ highWaterMark: CHUNKS_HELD, read: () => this.resume() });
    // The reader learns of a failure (413, the client gone) through its own read, which rejects with it. A body
    // no one reads (the route refused the request first) must not turn that failure into an uncaught 'error'
    // event: that ends the process.
    this.stream.on('error', () => {});
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.source.pause();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.source.resume();
  }

  /** Engine: the next chunk of the body (kept by the stream: the engine must not reuse its memory). */
  chunk(chunk: Buffer): void {
    this.counted += chunk.length;
    if (this.dropping) {
      this.dropLeft -= chunk.length;
      if (this.dropLeft < 0) this.settle(true);
      return;
    }
    if (this.stream.destroyed) {
      // The reader gave up (a refusal); nothing more is read until `discard`.
      this.pause();
      return;
    }
    if (this.counted > this.limit) {
      this.pause();
      this.stream.destroy(tooLarge(this.limit));
      return;
    }
    if (!this.stream.push(chunk)) this.pause();
  }

  /**
   * Engine: the body ended. The socket is read again if the last chunk paused it: nothing would resume it (the
   * reader asks for no more after the end), and on uWS a connection left paused never reads its next request
   * (its idle timeout resets it).
   */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.resume();
    if (this.dropping) this.settle(false);
    else if (!this.stream.destroyed) this.stream.push(null);
  }

  /** Engine: the client went away before the body ended. */
  clientGone(): void {
    if (this.done) return;
    this.done = true;
    this.settle(false);
    if (!this.stream.destroyed) {
      this.stream.destroy(
        new GatewayError('invalid_request', { message: 'The client closed the connection' }),
      );
    }
  }

  /**
   * Reads and drops the rest of the body; resolves once it ended, with `true` when the answer must close the
   * connection instead (more than OVERSIZE_DRAIN_BYTES left, declared or counted). Never rejects.
   */
  discard(): Promise<boolean> {
    if (!this.stream.destroyed) this.stream.destroy();
    if (this.done) return Promise.resolve(false);
    if (this.dropping) return Promise.resolve(this.dropLeft < 0);
    this.dropping = true;
    this.dropLeft = OVERSIZE_DRAIN_BYTES;
    // Reading goes on (and drops) while a closing answer is written: a paused socket may hold the answer back.
    this.resume();
    if (this.declared !== undefined && this.declared - this.counted > OVERSIZE_DRAIN_BYTES) {
      this.dropLeft = -1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      this.settleDiscard = resolve;
    });
  }

  private settle(close: boolean): void {
    const s = this.settleDiscard;
    this.settleDiscard = undefined;
    s?.(close);
  }
}
