import type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  us_listen_socket,
  us_socket_context_t,
  WebSocket,
} from 'uWebSockets.js';
import { STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { GatewayError } from '../errors.js';
import { type CallTimes, serverTiming } from '../server-timing.js';
import { drainable, tooLarge } from './body-limit.js';
import type {
  EngineServer,
  Exchange,
  ExchangeHandler,
  ListenOptions,
  MessageSocket,
  OutgoingHeaders,
  UpgradeHandler,
  WebSocketUpgrade,
} from './exchange.js';
import { framingError, framingProblem } from './framing.js';
import { normaliseIp } from './remote-address.js';
import { StreamedBody } from './streamed-body.js';

type UwsModule = typeof import('uWebSockets.js');

/**
 * Loads the native uWS binary directly. The package's own entry silently swaps in a slow JS fallback when
 * the binary does not match; we want to know, so that the engine choice falls back to node:http with one
 * clear log line instead.
 */
export function loadUws(): UwsModule {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve('uWebSockets.js/package.json');
  const binary = `${pkgJson.slice(0, -'package.json'.length)}binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  return require(binary) as UwsModule;
}

const decoder = new TextDecoder();

/** Target of `collectHeader` during one synchronous `req.forEach` (no closure per request). */
let collecting: Record<string, string> = {};
/** Content-Length and Host fields seen by the current `req.forEach` (repeats are joined in `collecting`). */
let contentLengths = 0;
let hosts = 0;
function collectHeader(k: string, v: string): void {
  if (k === 'content-length') contentLengths++;
  else if (k === 'host') hosts++;
  const prev = collecting[k];
  collecting[k] = prev === undefined ? v : `${prev}, ${v}`;
}

/**
 * uWebSockets.js adapter. Rules from the uWS examples: everything is copied from `req` synchronously,
 * `onAborted` (and `onData` when a body is announced) are registered before the handler returns, every
 * write happens inside `res.cork()`, and `onWritable` signals that buffered data drained.
 */
class UwsExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: Record<string, string> = {};
  readonly remoteAddress: string;
  aborted = false;
  headWritten = false;
  statusCode = 0;
  timing: CallTimes | undefined = undefined;
  ended = false;
  readonly refusal: GatewayError | undefined;
  private statusLine = '200 OK';
  private head: OutgoingHeaders = {};
  headSent = false;
  private closeAfter = false;
  /** A framing refusal's answer waits for the next turn of the loop (see the constructor). */
  private deferEnd = false;
  private abortCbs: (() => void)[] | undefined;
  private drainCbs: (() => void)[] | undefined;
  // body collection (started in the constructor, because uWS drops data that arrives with no onData)
  private bodyChunks: Buffer[] = [];
  private bodyBytes = 0;
  private bodyDone = true;
  private bodyOverflow = false;
  private bodyWaiter:
    | { limit: number; resolve: (b: Buffer) => void; reject: (e: unknown) => void }
    | undefined;
  /** Set by `streamBody`: the body's chunks go there instead of `bodyChunks`. */
  private streamed: StreamedBody | undefined;

  constructor(
    private readonly res: HttpResponse,
    req: HttpRequest,
    private readonly maxBodyBytes: number,
  ) {
    res.onAborted(() => {
      this.aborted = true;
      this.ended = true;
      const waiter = this.bodyWaiter;
      this.bodyWaiter = undefined;
      waiter?.reject(new GatewayError('invalid_request', { message: 'The client closed the connection' }));
      this.streamed?.clientGone();
      const cbs = this.abortCbs;
      this.abortCbs = undefined;
      if (cbs) for (const cb of cbs) cb();
    });
    this.method = req.getMethod().toUpperCase();
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    collecting = this.headers;
    contentLengths = 0;
    hosts = 0;
    req.forEach(collectHeader);
    this.remoteAddress = normaliseIp(decoder.decode(res.getRemoteAddressAsText()));
    const headers = this.headers;
    const problem = framingProblem({
      contentLengths,
      hosts,
      transferEncoding: headers['transfer-encoding'],
      contentLength: headers['content-length'],
    });
    if (problem !== undefined) {
      // No body is read (its end is unknowable) and the answer closes the connection. It is sent after uWS
      // finished parsing what it has already read: a request it parsed from the refused one's body in the
      // same read would otherwise be answered too (answering resets uWS's close flag), while with the
      // refusal still pending uWS closes the connection without serving it.
      this.refusal = framingError(problem);
      this.closeAfter = true;
      this.deferEnd = true;
      if (headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined) {
        res.onData(ignoreData);
      }
      return;
    }
    const declared = headers['content-length'];
    if ((declared !== undefined && declared !== '0') || headers['transfer-encoding'] !== undefined) {
      this.bodyDone = false;
      if (Number(declared) > maxBodyBytes) this.bodyOverflow = true;
      res.onData((ab, isLast) => this.onBodyData(ab, isLast));
    }
  }

  private onBodyData(ab: ArrayBuffer, isLast: boolean): void {
    const streamed = this.streamed;
    if (streamed !== undefined) {
      // uWS neuters the ArrayBuffer when this callback returns: copy.
      streamed.chunk(Buffer.from(new Uint8Array(ab).slice()));
      if (isLast) {
        this.bodyDone = true;
        streamed.end();
      }
      return;
    }
    this.bodyBytes += ab.byteLength;
    if (!this.bodyOverflow) {
      if (this.bodyBytes > this.maxBodyBytes) {
        this.bodyOverflow = true;
        this.bodyChunks = [];
      } else {
        // uWS neuters the ArrayBuffer when this callback returns: copy.
        this.bodyChunks.push(Buffer.from(new Uint8Array(ab).slice()));
      }
    }
    if (isLast) this.bodyDone = true;
    this.settleBody();
  }

  /**
   * Resolves the waiting `readBody` once the body ended. An oversize body is read to its end and discarded
   * before the 413 (core/http/body-limit.ts), unless it is too large to: then the 413 goes at once and the
   * connection closes.
   */
  private settleBody(): void {
    const w = this.bodyWaiter;
    if (w === undefined) return;
    if (this.bodyOverflow || this.bodyBytes > w.limit) {
      this.bodyChunks = [];
      const cut = !drainable(Math.max(this.bodyBytes, this.declaredBytes()), w.limit);
      // A declared Content-Length over the limit is answered at once (the client learns before it uploads);
      // uWS goes on reading and dropping the rest of the body (`onBodyData`) after the answer.
      // Not when the request said `Connection: close`: uWS closes the connection as the answer ends, and a client
      // still sending would receive a reset instead of the answer (node's engine lingers; this build cannot).
      const declaredOver =
        this.declaredBytes() > w.limit && !/\bclose\b/i.test(this.headers.connection ?? '');
      if (!this.bodyDone && !cut && !declaredOver) return;
      this.bodyWaiter = undefined;
      if (cut) this.closeAfter = true;
      w.reject(tooLarge(w.limit));
    } else if (this.bodyDone) {
      this.bodyWaiter = undefined;
      const chunks = this.bodyChunks;
      this.bodyChunks = [];
      w.resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.bodyBytes));
    }
  }

  private declaredBytes(): number {
    return Number(this.headers['content-length'] ?? 0) || 0;
  }

  readBody(limit: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.bodyWaiter = { limit: Math.min(limit, this.maxBodyBytes), resolve, reject };
      this.settleBody();
    });
  }

  streamBody(limit: number): Readable {
    // uWS drops a response's pause/resume once it ended or was aborted (then the body no longer matters).
    const res = this.res;
    const source = {
      pause: () => {
        if (!this.ended) res.pause();
      },
      resume: () => {
        if (!this.ended) res.resume();
      },
    };
    const declared = this.headers['content-length'];
    const body = new StreamedBody(source, limit, declared === undefined ? undefined : Number(declared));
    this.streamed = body;
    // Called in the exchange's first turn (exchange.ts), so no chunk was collected or dropped yet.
    for (const chunk of this.bodyChunks) body.chunk(chunk);
    this.bodyChunks = [];
    if (this.aborted) body.clientGone();
    else if (this.bodyDone) body.end();
    return body.stream;
  }

  async discardBody(): Promise<void> {
    if (this.streamed !== undefined && (await this.streamed.discard())) this.closeAfter = true;
  }

  onAborted(cb: () => void): void {
    if (this.aborted) return;
    this.abortCbs ??= [];
    this.abortCbs.push(cb);
  }

  writeHead(status: number, headers: OutgoingHeaders): void {
    if (this.timing !== undefined) headers['server-timing'] = serverTiming(this.timing, performance.now());
    this.statusCode = status;
    this.statusLine = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    this.head = headers;
    this.headWritten = true;
  }

  /** Must run inside cork. Content-Length is left to uWS: `end(body)` adds it, `write` goes chunked. */
  private sendHead(): void {
    this.headSent = true;
    const res = this.res;
    res.writeStatus(this.statusLine);
    for (const name in this.head) {
      // uWS writes Content-Length itself, and `Connection: close` when `end` is asked to close.
      if (name === 'content-length' || (name === 'connection' && this.closeAfter)) continue;
      const v = this.head[name]!;
      if (typeof v === 'string') res.writeHeader(name, v);
      else for (const item of v) res.writeHeader(name, item);
    }
  }

  write(chunk: Uint8Array | string): boolean {
    if (this.ended) return true;
    let ok = true;
    this.res.cork(() => {
      if (!this.headSent) this.sendHead();
      ok = this.res.write(chunk);
    });
    return ok;
  }

  onDrain(cb: () => void): void {
    if (this.ended) return;
    if (this.drainCbs === undefined) {
      this.drainCbs = [];
      this.res.onWritable(() => {
        const cbs = this.drainCbs;
        this.drainCbs = [];
        if (cbs) for (const c of cbs) c();
        return true;
      });
    }
    this.drainCbs.push(cb);
  }

  end(chunk?: Uint8Array | string): void {
    if (this.ended) return;
    this.ended = true;
    if (this.deferEnd) {
      setImmediate(() => {
        if (!this.aborted) this.finish(chunk);
      });
      return;
    }
    this.finish(chunk);
  }

  private finish(chunk: Uint8Array | string | undefined): void {
    this.res.cork(() => {
      if (!this.headSent) this.sendHead();
      if (this.method === 'HEAD') {
        // A HEAD answer announces the GET body's length but carries no bytes.
        this.res.endWithoutBody(chunk === undefined ? 0 : Buffer.byteLength(chunk), this.closeAfter);
      } else {
        this.res.end(chunk, this.closeAfter);
      }
    });
  }

  destroy(): void {
    if (this.ended) return;
    this.ended = true;
    this.res.close();
  }
}

/** What a uWS WebSocket carries from its upgrade to its `open` and on (`getUserData`). */
interface SocketData {
  onOpen: (socket: MessageSocket) => void;
  socket: UwsMessageSocket | undefined;
}

/**
 * A WebSocket upgrade on uWS (exchange.ts `WebSocketUpgrade`), taken by the `upgrade` handler of `app.ws`: the
 * request is copied at once (uWS request objects live only in that call) and answered later, corked.
 */
class UwsUpgrade implements WebSocketUpgrade {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: Record<string, string> = {};
  readonly remoteAddress: string;
  aborted = false;
  private answered = false;
  private abortCbs: (() => void)[] = [];

  constructor(
    private readonly res: HttpResponse,
    req: HttpRequest,
    private readonly context: us_socket_context_t,
  ) {
    res.onAborted(() => {
      this.aborted = true;
      if (this.answered) return;
      const cbs = this.abortCbs;
      this.abortCbs = [];
      for (const cb of cbs) cb();
    });
    this.method = req.getMethod().toUpperCase();
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    collecting = this.headers;
    req.forEach(collectHeader);
    this.remoteAddress = normaliseIp(decoder.decode(res.getRemoteAddressAsText()));
  }

  onAborted(cb: () => void): void {
    if (this.aborted) cb();
    else this.abortCbs.push(cb);
  }

  refuse(status: number, headers: OutgoingHeaders, body: string): void {
    if (this.answered || this.aborted) return;
    this.answered = true;
    const res = this.res;
    res.cork(() => {
      res.writeStatus(`${status} ${STATUS_CODES[status] ?? 'Unknown'}`);
      for (const name in headers) {
        if (name === 'content-length' || name === 'connection') continue;
        const v = headers[name]!;
        if (typeof v === 'string') res.writeHeader(name, v);
        else for (const item of v) res.writeHeader(name, item);
      }
      res.end(body, true);
    });
  }

  accept(protocol: string | undefined, onOpen: (socket: MessageSocket) => void): void {
    if (this.answered || this.aborted) return;
    this.answered = true;
    const data: SocketData = { onOpen, socket: undefined };
    const h = this.headers;
    // uWS calls `open` (below) from inside `upgrade`: `onOpen` runs before this returns.
    this.res.cork(() => {
      this.res.upgrade(
        data,
        h['sec-websocket-key'] ?? '',
        protocol ?? '',
        h['sec-websocket-extensions'] ?? '',
        this.context,
      );
    });
  }
}

/**
 * An accepted WebSocket on uWS (exchange.ts `MessageSocket`). uWS 20.30 cannot pause a WebSocket's reading:
 * `pause` only records the wish (the caller bounds what it holds). Sends are corked (one syscall per send made
 * outside a uWS callback) and never dropped: the engine's backpressure limit is far above any caller's bound.
 */
class UwsMessageSocket implements MessageSocket {
  open = true;
  isPaused = false;
  private messageCb: ((data: Buffer, isBinary: boolean) => void) | undefined;
  private closeCbs: ((code: number) => void)[] = [];

  constructor(
    private readonly ws: WebSocket<SocketData>,
    private readonly maxMessageBytes: number,
  ) {}

  get bufferedAmount(): number {
    return this.open ? this.ws.getBufferedAmount() : 0;
  }

  send(data: Uint8Array | string, isBinary: boolean): void {
    if (!this.open) return;
    const ws = this.ws;
    ws.cork(() => {
      ws.send(data, isBinary);
    });
  }

  pause(): void {
    this.isPaused = true;
  }

  resume(): void {
    this.isPaused = false;
  }

  close(code: number, reason: string): void {
    if (this.open) this.ws.end(code, reason);
  }

  terminate(): void {
    if (this.open) this.ws.close();
  }

  onMessage(cb: (data: Buffer, isBinary: boolean) => void): void {
    this.messageCb = cb;
  }

  onClose(cb: (code: number) => void): void {
    if (this.open) this.closeCbs.push(cb);
    else cb(1006);
  }

  /** uWS's `message`: the ArrayBuffer is neutered when the callback returns, so it is copied. */
  delivered(ab: ArrayBuffer, isBinary: boolean): void {
    if (!this.open) return;
    if (ab.byteLength > this.maxMessageBytes) {
      this.ws.end(1009, 'message too big');
      return;
    }
    this.messageCb?.(Buffer.from(ab.slice(0)), isBinary);
  }

  /** uWS's `close`: the WebSocket may not be used after it. */
  closed(code: number): void {
    if (!this.open) return;
    this.open = false;
    const cbs = this.closeCbs;
    this.closeCbs = [];
    for (const cb of cbs) cb(code);
  }
}

/** The `app.ws` behaviour that hands WebSocket upgrades to `onUpgrade`. */
function webSocketRoute(uws: UwsModule, onUpgrade: UpgradeHandler) {
  const max = onUpgrade.maxMessageBytes;
  return {
    // uWS cuts a bigger message without a close frame; up to this it is delivered and closed with 1009 above.
    maxPayloadLength: Math.min(2 * max, 0x7fffffff),
    // Sends are never dropped (the default, 64 KiB, would drop a slow reader's messages): the caller bounds it.
    maxBackpressure: 0x7fffffff,
    closeOnBackpressureLimit: 0,
    // The session's own idle timeout applies (README "Realtime"); no pings, as node's `ws` sends none. Not 0: with
    // no idle timeout uWS gives a closing socket about 4 s to take its close frame before it drops the connection,
    // so a slow reader closed 4008 behind its backlog saw 1006 instead (measured: a client paused 4 s after the
    // close got 1006 with 0, 4008 with this; the grace is then about 16 s). The cost: a WebSocket silent both ways
    // for 960 s (uWS's largest) is dropped, beyond REALTIME_IDLE_TIMEOUT_MS's default 5 minutes.
    idleTimeout: 960,
    sendPingsAutomatically: false,
    compression: uws.DISABLED,
    upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
      onUpgrade.handle(new UwsUpgrade(res, req, context));
    },
    open: (ws: WebSocket<SocketData>) => {
      const data = ws.getUserData();
      data.socket = new UwsMessageSocket(ws, max);
      data.onOpen(data.socket);
    },
    message: (ws: WebSocket<SocketData>, message: ArrayBuffer, isBinary: boolean) => {
      ws.getUserData().socket?.delivered(message, isBinary);
    },
    close: (ws: WebSocket<SocketData>, code: number) => {
      ws.getUserData().socket?.closed(code);
    },
  };
}

function ignoreData(): void {}

export async function listenUws(
  uws: UwsModule,
  handler: ExchangeHandler,
  opts: ListenOptions,
): Promise<EngineServer> {
  const app: TemplatedApp = uws.App();
  // A GET with a WebSocket key goes to the upgrade handler; any other request (an `Upgrade: h2c` one included)
  // falls through to the exchange below.
  if (opts.onUpgrade !== undefined) app.ws<SocketData>('/*', webSocketRoute(uws, opts.onUpgrade));
  app.any('/*', (res, req) => {
    handler(new UwsExchange(res, req, opts.maxBodyBytes));
  });
  const socket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(opts.host, opts.port, (s) => {
      if (s) resolve(s);
      else reject(new Error(`uWebSockets.js could not listen on ${opts.host}:${opts.port}`));
    });
  });
  const port = uws.us_socket_local_port(socket);
  let listening = true;
  return {
    engine: 'uws',
    port,
    stopAccepting(): void {
      if (listening) uws.us_listen_socket_close(socket);
      listening = false;
    },
    async close(): Promise<void> {
      if (listening) uws.us_listen_socket_close(socket);
      listening = false;
      (app as TemplatedApp & { close(): void }).close();
    },
  };
}
