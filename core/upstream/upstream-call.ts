import { type Dispatcher, util } from 'undici';
import type { GatewayError } from '../errors.js';
import type { UpstreamResponse, UpstreamSink } from './upstream-response.js';

/** Something that can be cancelled once, e.g. the request context (`ctx.cancel()`). */
export interface CancelSource {
  readonly cancelled: boolean;
  /** Calls `cb` once on cancel; at once when already cancelled. */
  onCancel(cb: () => void): void;
  offCancel(cb: () => void): void;
}

/** The reason an upstream call is cancelled because the client went away or the request ended. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError';
  constructor() {
    super('The request was cancelled');
  }
}

/**
 * One upstream call: undici's dispatch handler and the `UpstreamResponse` the pipeline reads, in one object.
 *
 * It implements undici's callback handler API (`onConnect`/`onHeaders`/`onData`/`onComplete`/`onError`),
 * which undici 7 runs natively: the controller API (`onRequestStart`…) is adapted onto it per request by an
 * extra wrapper and controller object. One object with methods instead of a dozen closures per call.
 *
 * Pausing: `onHeaders` returns false, so the body waits until `pipe` (after the response-head hooks);
 * `pause()` during `onData` makes it return false, `resume()` calls undici's resume function.
 */
export class UpstreamCall implements UpstreamResponse, Dispatcher.DispatchHandler {
  status = 0;
  headers: Record<string, string | string[]> = {};
  private abortFn: ((err?: Error) => void) | undefined;
  private resumeFn: (() => void) | undefined;
  private paused = false;
  private aborted = false;
  private done = false;
  private headDone = false;
  private sink: UpstreamSink | undefined;
  private queued: Buffer[] | undefined;
  private ended = false;
  private failure: GatewayError | undefined;
  /** All of the request's bytes went to the provider (undici's onRequestSent). */
  private sent = false;
  /** Bound once: registered with the cancel source. Ignored once sent when the call is kept (keepOnceSent). */
  private readonly onCancelled = (): void => {
    if (!(this.keepOnceSent && this.sent)) this.abort();
  };

  constructor(
    private readonly resolve: (r: UpstreamResponse) => void,
    private readonly reject: (e: GatewayError) => void,
    private readonly mapError: (err: unknown) => GatewayError,
    private readonly cancelSource: CancelSource | undefined,
    private readonly keepOnceSent = false,
  ) {}

  get finished(): boolean {
    return this.done;
  }

  // --- UpstreamResponse ---

  pipe(s: UpstreamSink): void {
    this.sink = s;
    const q = this.queued;
    this.queued = undefined;
    if (q) for (const c of q) s.onData(c);
    if (this.failure) s.onError(this.failure);
    else if (this.ended) s.onEnd();
    else this.resume();
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resumeFn?.();
  }

  abort(): void {
    if (this.done || this.aborted) return;
    // Before onConnect there is nothing to abort yet; onConnect checks the cancel source.
    if (this.abortFn === undefined) return;
    this.aborted = true;
    this.abortFn(new ClientGoneError());
  }

  // --- undici dispatch handler ---

  onConnect(abort: (err?: Error) => void): void {
    this.abortFn = abort;
    if (this.cancelSource?.cancelled) this.abort();
    else this.cancelSource?.onCancel(this.onCancelled);
  }

  onRequestSent(): void {
    this.sent = true;
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.headDone = true;
    this.status = status;
    this.headers = util.parseHeaders(rawHeaders) as Record<string, string | string[]>;
    this.resumeFn = resume;
    // Hold the body until the pipeline attaches its sink (after the response-head hooks).
    this.paused = true;
    this.resolve(this);
    return false;
  }

  onData(chunk: Buffer): boolean {
    if (this.sink) this.sink.onData(chunk);
    else {
      this.queued ??= [];
      this.queued.push(chunk);
    }
    return !this.paused;
  }

  onComplete(): void {
    this.finish();
    if (this.sink) this.sink.onEnd();
    else this.ended = true;
  }

  onError(err: Error): void {
    this.finish();
    const ge = this.mapError(err);
    if (!this.headDone) this.reject(ge);
    else if (this.sink) this.sink.onError(ge);
    else this.failure = ge;
  }

  private finish(): void {
    this.done = true;
    this.cancelSource?.offCancel(this.onCancelled);
  }
}
