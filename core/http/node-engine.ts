import { createServer, type IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { GatewayError } from '../errors.js';
import { type CallTimes, serverTiming } from '../server-timing.js';
import { drainable, LINGER_IDLE_MS, OVERSIZE_DRAIN_BYTES, tooLarge } from './body-limit.js';
import type {
  EngineServer,
  Exchange,
  ExchangeHandler,
  ListenOptions,
  MessageSocket,
  OutgoingHeaders,
  WebSocketUpgrade,
} from './exchange.js';
import { framingError, framingProblem, originForm } from './framing.js';
import { normaliseIp } from './remote-address.js';
import { StreamedBody } from './streamed-body.js';

/**
 * The node:http adapter: used when `HTTP_ENGINE=node` or when the uWS binary cannot load. Same `Exchange`
 * semantics as the uWS adapter (see exchange.ts).
 */
class NodeExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: Record<string, string>;
  readonly remoteAddress: string;
  aborted = false;
  headWritten = false;
  statusCode = 0;
  timing: CallTimes | undefined = undefined;
  ended = false;
  readonly refusal: GatewayError | undefined;
  private status = 200;
  private head: OutgoingHeaders = {};
  headSent = false;
  private closeAfter = false;
  private abortCbs: (() => void)[] | undefined;
  private streamed: StreamedBody | undefined;
  /** Set when a declared oversize body was refused before it arrived: the answer's end waits for the rest. */
  private linger: { bytes: number } | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly lingerMs: number,
  ) {
    this.method = (req.method ?? 'GET').toUpperCase();
    const url = originForm(req.url ?? '/');
    const q = url.indexOf('?');
    this.path = q === -1 ? url : url.slice(0, q);
    this.rawQuery = q === -1 ? '' : url.slice(q + 1);
    this.headers = stringHeaders(req.headers);
    if (closing.has(req.socket)) {
      // What node's parser read after an answer that closes the connection (the rest of a refused request):
      // never a request. Nothing runs and nothing answers it (`ended`); its bytes are discarded.
      this.refusal = CONNECTION_CLOSING;
      this.ended = true;
      req.resume();
    } else {
      this.refusal = refusalOf(req, this.headers);
      if (this.refusal?.headers?.connection === 'close') this.closeAfter = true;
    }
    this.remoteAddress = normaliseIp(req.socket.remoteAddress ?? '');
    res.once('close', () => {
      if (this.res.writableFinished) return;
      this.aborted = true;
      this.ended = true;
      const cbs = this.abortCbs;
      this.abortCbs = undefined;
      if (cbs) for (const cb of cbs) cb();
    });
  }

  readBody(limit: number): Promise<Buffer> {
    const declared = Number(this.headers['content-length'] ?? Number.NaN);
    if (declared > limit) return this.refuseDeclared(limit, declared);
    if (declared === 0 || (Number.isNaN(declared) && this.headers['transfer-encoding'] === undefined)) {
      return Promise.resolve(Buffer.alloc(0));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let total = 0;
      const onData = (chunk: Buffer) => {
        total += chunk.length;
        if (total > limit) {
          cleanup();
          this.refuseOversize(limit, total).catch(reject);
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = () => {
        cleanup();
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
      };
      const onError = (err: Error) => {
        cleanup();
        reject(
          new GatewayError('invalid_request', { message: 'The request body could not be read', cause: err }),
        );
      };
      const cleanup = () => {
        this.req.off('data', onData);
        this.req.off('end', onEnd);
        this.req.off('error', onError);
      };
      this.req.on('data', onData);
      this.req.on('end', onEnd);
      this.req.on('error', onError);
    });
  }

  streamBody(limit: number): Readable {
    const declared = this.headers['content-length'];
    const body = new StreamedBody(this.req, limit, declared === undefined ? undefined : Number(declared));
    this.streamed = body;
    // node's parser ends a request without Content-Length or Transfer-Encoding at once ('end' with no data).
    this.req.on('data', (chunk: Buffer) => body.chunk(chunk));
    this.req.on('end', () => body.end());
    this.req.on('error', () => body.clientGone());
    this.onAborted(() => body.clientGone());
    return body.stream;
  }

  async discardBody(): Promise<void> {
    if (this.streamed !== undefined && (await this.streamed.discard())) this.closeAfter = true;
  }

  /**
   * The 413 for a declared Content-Length over `limit`: at once, before the client uploads (core/http/body-limit.ts).
   * The answer's bytes go out at once; its end waits while the rest of the body is read and discarded
   * (`lingerThenEnd`), so a client still sending reads it and, when the body was small enough to drain, the
   * connection serves its next request. A body too large to drain is answered with `Connection: close`.
   */
  private refuseDeclared(limit: number, declared: number): Promise<never> {
    const whole = drainable(declared, limit);
    if (!whole) this.closeAfter = true;
    if (!this.req.readableEnded && !this.aborted)
      this.linger = { bytes: whole ? declared : OVERSIZE_DRAIN_BYTES };
    return Promise.reject(tooLarge(limit));
  }

  /**
   * Lingering close (as nginx's): the answer is written now, and `res.end` (which lets node close or reuse the
   * connection) waits until the refused body ended. Bounded: at most `linger.bytes` are read, for at most the
   * body timeout, while data keeps coming (LINGER_IDLE_MS); past a bound, or when the client leaves, the connection is destroyed (the client had the
   * answer all that time).
   */
  private lingerThenEnd(bytes: number, chunk: Uint8Array | string | undefined): void {
    if (!this.headSent) this.sendHead(chunk === undefined ? 0 : Buffer.byteLength(chunk));
    if (chunk !== undefined) this.res.write(chunk);
    const req = this.req;
    let read = 0;
    const idle = setTimeout(() => stop(false), LINGER_IDLE_MS);
    const onData = (c: Buffer) => {
      read += c.length;
      if (read > bytes) return stop(false);
      idle.refresh();
    };
    const stop = (complete: boolean) => {
      clearTimeout(timer);
      clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      if (complete) this.res.end();
      else this.res.destroy();
    };
    const onEnd = () => stop(true);
    const onGone = () => stop(false);
    const timer = setTimeout(onGone, this.lingerMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
  }

  /**
   * The 413 for a body over `limit` (`counted` bytes of it read so far): rejects once the rest was read and
   * discarded (core/http/body-limit.ts), or at once with the connection to close when it is too large to.
   */
  private refuseOversize(limit: number, counted: number): Promise<never> {
    const err = tooLarge(limit);
    const declared = Number(this.headers['content-length'] ?? Number.NaN);
    if (!drainable(Number.isNaN(declared) ? counted : declared, limit)) {
      this.closeAfter = true;
      return Promise.reject(err);
    }
    if (this.req.readableEnded || this.aborted) return Promise.reject(err);
    return new Promise((_resolve, reject) => {
      let total = counted;
      const onData = (chunk: Buffer) => {
        total += chunk.length;
        if (drainable(total, limit)) return;
        this.closeAfter = true;
        stop();
      };
      const stop = () => {
        this.req.off('data', onData);
        this.req.off('end', stop);
        this.req.off('error', stop);
        reject(err);
      };
      this.req.on('data', onData);
      this.req.on('end', stop);
      this.req.on('error', stop);
      this.onAborted(stop);
    });
  }

  onAborted(cb: () => void): void {
    if (this.aborted) return;
    this.abortCbs ??= [];
    this.abortCbs.push(cb);
  }

  writeHead(status: number, headers: OutgoingHeaders): void {
    if (this.timing !== undefined) headers['server-timing'] = serverTiming(this.timing, performance.now());
    this.status = status;
    this.statusCode = status;
    this.head = headers;
    this.headWritten = true;
  }

  private sendHead(contentLength: number | undefined): void {
    this.headSent = true;
    const h = this.head;
    delete h['content-length'];
    if (contentLength !== undefined) h['content-length'] = String(contentLength);
    if (this.closeAfter) {
      h.connection = 'close';
      closing.add(this.req.socket);
    }
    this.res.writeHead(this.status, h);
  }

  write(chunk: Uint8Array | string): boolean {
    if (this.ended) return true;
    if (!this.headSent) this.sendHead(undefined);
    return this.res.write(chunk);
  }

  onDrain(cb: () => void): void {
    if (this.ended) return;
    this.res.once('drain', cb);
  }

  end(chunk?: Uint8Array | string): void {
    if (this.ended) return;
    this.ended = true;
    if (this.linger !== undefined && !this.req.readableEnded && !this.aborted) {
      this.lingerThenEnd(this.linger.bytes, chunk);
      return;
    }
    if (!this.headSent) {
      this.sendHead(chunk === undefined ? 0 : Buffer.byteLength(chunk));
    }
    if (chunk === undefined) this.res.end();
    else this.res.end(chunk);
  }

  destroy(): void {
    if (this.ended) return;
    this.ended = true;
    this.res.destroy();
  }
}

/**
 * Connections answered with `Connection: close` (a framing refusal, an oversize body too large to drain): node
 * closes them once that answer is written, but its parser goes on reading until then, and what it reads there
 * (the refused request's body, when its framing was misread) must not run as a request or be answered.
 */
const closing = new WeakSet<Socket>();
const CONNECTION_CLOSING = new GatewayError('invalid_request', {
  message: 'The connection is closing after a refused request',
  headers: { connection: 'close' },
});

/**
 * The request's headers as strings. node's object already is one but for `set-cookie`, the one field it keeps
 * as an array (joinDuplicateHeaders: false joins or drops the other repeats): used as it is unless that field
 * came, instead of being copied per request (a measurable share of the relay's allocations).
 */
function stringHeaders(h: IncomingMessage['headers']): Record<string, string> {
  if (h['set-cookie'] === undefined) return h as Record<string, string>;
  const out: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Framing and version checks node's parser leaves to us (it keeps the first of repeated Host fields). */
function refusalOf(req: IncomingMessage, headers: Record<string, string>): GatewayError | undefined {
  if (req.httpVersion !== '1.1' && req.httpVersion !== '1.0') {
    return new GatewayError('http_version_not_supported', { headers: { connection: 'close' } });
  }
  let contentLengths = 0;
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 14 && name.toLowerCase() === 'content-length') contentLengths++;
    else if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  if (hosts === 0 && req.httpVersion === '1.1')
    return framingError('An HTTP/1.1 request must have a Host field');
  const problem = framingProblem({
    contentLengths,
    hosts,
    transferEncoding: headers['transfer-encoding'],
    contentLength: headers['content-length'],
  });
  return problem === undefined ? undefined : framingError(problem);
}

/** The envelope for a request node's parser refused before any handler ran (llhttp error codes). */
function parserRefusal(code: string | undefined): GatewayError {
  const close = { connection: 'close' };
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('headers_too_large', { headers: close });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADER_TIMEOUT':
      return new GatewayError('request_timeout', { headers: close });
    default:
      return new GatewayError('invalid_request', {
        message: `The request is not valid HTTP/1.1${code ? ` (${code})` : ''}`,
        headers: close,
      });
  }
}

/** A WebSocket upgrade on node:http (exchange.ts `WebSocketUpgrade`): `ws` answers the handshake. */
class NodeUpgrade implements WebSocketUpgrade {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: Record<string, string>;
  readonly remoteAddress: string;
  aborted = false;
  private answered = false;
  private abortCbs: (() => void)[] = [];

  constructor(
    private readonly wss: WebSocketServer,
    private readonly protocols: WeakMap<IncomingMessage, string>,
    private readonly req: IncomingMessage,
    private readonly socket: Socket,
    private readonly head: Buffer,
  ) {
    this.method = (req.method ?? 'GET').toUpperCase();
    const url = originForm(req.url ?? '/');
    const q = url.indexOf('?');
    this.path = q === -1 ? url : url.slice(0, q);
    this.rawQuery = q === -1 ? '' : url.slice(q + 1);
    this.headers = stringHeaders(req.headers);
    this.remoteAddress = normaliseIp(req.socket.remoteAddress ?? '');
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (!this.answered) this.abort();
    });
  }

  private abort(): void {
    this.aborted = true;
    const cbs = this.abortCbs;
    this.abortCbs = [];
    for (const cb of cbs) cb();
  }

  onAborted(cb: () => void): void {
    if (this.aborted) cb();
    else this.abortCbs.push(cb);
  }

  refuse(status: number, headers: OutgoingHeaders, body: string): void {
    if (this.answered || this.aborted) return;
    this.answered = true;
    if (this.socket.destroyed) return;
    let head = '';
    for (const [k, v] of Object.entries(headers)) {
      for (const item of typeof v === 'string' ? [v] : v) head += `${k}: ${item}\r\n`;
    }
    this.socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head}` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }

  accept(protocol: string | undefined, onOpen: (socket: MessageSocket) => void): void {
    if (this.answered || this.aborted) return;
    this.answered = true;
    if (protocol !== undefined) this.protocols.set(this.req, protocol);
    let opened = false;
    // ws calls back synchronously, or never: it destroyed a socket the client had closed (or whose handshake
    // was not valid), and that is an abort.
    this.wss.handleUpgrade(this.req, this.socket, this.head, (ws) => {
      opened = true;
      onOpen(new NodeMessageSocket(ws));
    });
    if (!opened) this.abort();
  }
}

/** An accepted WebSocket on node:http (exchange.ts `MessageSocket`). */
class NodeMessageSocket implements MessageSocket {
  constructor(private readonly ws: WebSocket) {
    ws.on('error', () => undefined);
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  get isPaused(): boolean {
    return this.ws.isPaused;
  }

  send(data: Uint8Array | string, isBinary: boolean): void {
    if (this.open) this.ws.send(data, { binary: isBinary });
  }

  pause(): void {
    this.ws.pause();
  }

  resume(): void {
    this.ws.resume();
  }

  close(code: number, reason: string): void {
    if (this.open) this.ws.close(code, reason);
  }

  terminate(): void {
    this.ws.terminate();
  }

  onMessage(cb: (data: Buffer, isBinary: boolean) => void): void {
    this.ws.on('message', (data: RawData, isBinary: boolean) => cb(rawBuffer(data), isBinary));
  }

  onClose(cb: (code: number) => void): void {
    this.ws.once('close', (code: number) => cb(code));
  }
}

function rawBuffer(data: RawData): Buffer {
  return Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

export async function listenNode(handler: ExchangeHandler, opts: ListenOptions): Promise<EngineServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer(
    {
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? 65_000,
      // A head slower than this (slowloris), or a body slower than the rest, gets 408 and the socket closes.
      headersTimeout: opts.headersTimeoutMs ?? 60_000,
      requestTimeout: (opts.headersTimeoutMs ?? 60_000) + (opts.bodyTimeoutMs ?? 240_000),
      // How often node checks those timeouts (its default, 30 s, would let a slow client hold a socket that long).
      connectionsCheckingInterval: Math.max(
        250,
        Math.min(5_000, Math.floor((opts.headersTimeoutMs ?? 60_000) / 4)),
      ),
      maxHeaderSize: opts.maxHeaderBytes,
      // Checked by refusalOf, so that the answer carries the error envelope.
      requireHostHeader: false,
      joinDuplicateHeaders: false,
      insecureHTTPParser: false,
    },
    (req, res) => {
      handler(new NodeExchange(req, res, opts.bodyTimeoutMs ?? 240_000));
    },
  );
  // Parser rejections (malformed heads, oversize heads, unknown versions, TLS on the plain port …) get the
  // error envelope instead of node's empty-bodied default answer.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (closing.has(socket)) {
      // The parser failed on what followed a refused request: the refusal is the answer; close after it.
      if (socket.writable) socket.end();
      return;
    }
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const ge = parserRefusal(err.code);
    const body = JSON.stringify(ge.toEnvelope());
    socket.end(
      `HTTP/1.1 ${ge.status} ${STATUS_CODES[ge.status] ?? ''}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  const onUpgrade = opts.onUpgrade;
  if (onUpgrade !== undefined) {
    // With an 'upgrade' listener node hands every request that asks for an upgrade here; only WebSocket ones
    // are taken over, any other (`Upgrade: h2c` from curl --http2 …) is answered as the plain request it also
    // is, on a connection that closes after it.
    const protocols = new WeakMap<IncomingMessage, string>();
    const wss = new WebSocketServer({
      noServer: true,
      maxPayload: onUpgrade.maxMessageBytes,
      perMessageDeflate: false,
      clientTracking: false,
      handleProtocols: (_offered, req) => protocols.get(req) ?? false,
    });
    server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      if (req.headers.upgrade?.toLowerCase() === 'websocket') {
        onUpgrade.handle(new NodeUpgrade(wss, protocols, req, socket, head));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      const res = new ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket);
      res.once('finish', () => socket.end());
      handler(new NodeExchange(req, res, opts.bodyTimeoutMs ?? 240_000));
    });
  }
  if (opts.maxConnections) server.maxConnections = opts.maxConnections;
  const silentMs = opts.headersTimeoutMs ?? 60_000;
  server.on('connection', (s: Socket) => {
    // node's head timeout starts with the first byte: a connection that never sends one is closed here.
    const silent = setTimeout(() => s.destroy(), silentMs);
    silent.unref();
    s.once('data', () => clearTimeout(silent));
    s.once('close', () => clearTimeout(silent));
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue (the kernel caps it at net.core.somaxconn): bursts of new connections are accepted,
    // not dropped with the client believing it is connected.
    server.listen({ port: opts.port, host: opts.host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return {
    engine: 'node',
    port,
    stopAccepting(): void {
      if (server.listening) server.close();
    },
    async close(): Promise<void> {
      const closed = !server.listening
        ? Promise.resolve()
        : new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
