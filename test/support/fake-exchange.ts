import { Readable } from 'node:stream';
import { RequestContext, runnerAccess } from '../../core/context.js';
import { GatewayError } from '../../core/errors.js';
import type { Exchange, OutgoingHeaders } from '../../core/http/exchange.js';
import type { UpstreamResponse, UpstreamSink } from '../../core/upstream/upstream-response.js';

/** An in-memory Exchange for runner unit tests: records what the pipeline writes. */
export class FakeExchange implements Exchange {
  method = 'POST';
  path = '/v1/chat/completions';
  rawQuery = '';
  headers: Record<string, string> = {};
  remoteAddress = '127.0.0.1';
  aborted = false;
  headWritten = false;
  statusCode = 0;
  timing = undefined;
  headSent = false;
  ended = false;
  destroyed = false;
  refusal: GatewayError | undefined = undefined;
  status: number | undefined;
  head: OutgoingHeaders | undefined;
  /** Everything written, in order; `end(chunk)` adds its chunk too. */
  writes: string[] = [];
  /** Number of write() calls made before end. */
  writeCalls = 0;
  /** When true, write() reports backpressure. */
  slow = false;
  private abortCbs: (() => void)[] = [];
  private drainCbs: (() => void)[] = [];

  readBody(): Promise<Buffer> {
    return Promise.resolve(Buffer.alloc(0));
  }
  streamBody(): Readable {
    return Readable.from([]);
  }
  discardBody(): Promise<void> {
    return Promise.resolve();
  }
  onAborted(cb: () => void): void {
    this.abortCbs.push(cb);
  }
  writeHead(status: number, headers: OutgoingHeaders): void {
    this.status = status;
    this.statusCode = status;
    this.head = { ...headers };
    this.headWritten = true;
  }
  write(chunk: Uint8Array | string): boolean {
    if (this.ended) return true;
    this.headSent = true;
    this.writeCalls++;
    this.writes.push(Buffer.from(chunk).toString());
    return !this.slow;
  }
  onDrain(cb: () => void): void {
    this.drainCbs.push(cb);
  }
  end(chunk?: Uint8Array | string): void {
    if (this.ended) return;
    this.headSent = true;
    this.ended = true;
    if (chunk !== undefined && chunk.length > 0) this.writes.push(Buffer.from(chunk).toString());
  }
  destroy(): void {
    this.ended = true;
    this.destroyed = true;
  }
  get body(): string {
    return this.writes.join('');
  }
  /** Simulates the client going away. */
  abort(): void {
    this.aborted = true;
    this.ended = true;
    for (const cb of this.abortCbs.splice(0)) cb();
  }
  drain(): void {
    this.slow = false;
    for (const cb of this.drainCbs.splice(0)) cb();
  }
}

export function contextFor(ex: FakeExchange, headers: Record<string, string> = {}): RequestContext {
  ex.headers = headers;
  const ctx = new RequestContext({
    requestId: 'req-test',
    method: ex.method,
    path: ex.path,
    rawQuery: ex.rawQuery,
    headers,
    clientIp: ex.remoteAddress,
    baseHeaders: { 'x-request-id': 'req-test' },
  });
  ex.onAborted(() => {
    runnerAccess.markClientAborted(ctx);
    ctx.abort.abort();
  });
  return ctx;
}

export interface FakeUpstreamScript {
  status?: number;
  headers?: Record<string, string>;
  chunks: string[];
  /** Fail with this error after the chunks instead of ending. */
  failWith?: GatewayError;
  /** Stop after the chunks and never end (until aborted). */
  hold?: boolean;
}

/** An UpstreamResponse that delivers scripted chunks, one per macrotask. */
export class FakeUpstream implements UpstreamResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  finished = false;
  aborted = false;
  pauses = 0;
  resumes = 0;
  private paused = false;
  private sink: UpstreamSink | undefined;
  private next = 0;

  constructor(private readonly script: FakeUpstreamScript) {
    this.status = script.status ?? 200;
    this.headers = script.headers ?? { 'content-type': 'application/json' };
  }
  pipe(sink: UpstreamSink): void {
    this.sink = sink;
    this.schedule();
  }
  pause(): void {
    this.paused = true;
    this.pauses++;
  }
  resume(): void {
    this.resumes++;
    if (this.paused) {
      this.paused = false;
      this.schedule();
    }
  }
  abort(): void {
    if (this.finished) return;
    this.finished = true;
    this.aborted = true;
    this.sink?.onError(new GatewayError('upstream_error', { message: 'cancelled' }));
  }
  private schedule(): void {
    setImmediate(() => this.step());
  }
  private step(): void {
    if (this.finished || this.paused || this.sink === undefined) return;
    const chunks = this.script.chunks;
    if (this.next < chunks.length) {
      this.sink.onData(Buffer.from(chunks[this.next++]!));
      this.schedule();
      return;
    }
    if (this.script.hold) return;
    this.finished = true;
    if (this.script.failWith) this.sink.onError(this.script.failWith);
    else this.sink.onEnd();
  }
}
