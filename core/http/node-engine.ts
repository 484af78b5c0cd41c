import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../errors.js';
import type { EngineServer, ExchangeHandler, ListenOptions } from './engine.js';
import type { Exchange, OutgoingHeaders } from './exchange.js';
import { normaliseIp } from './remote-address.js';

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
  ended = false;
  private status = 200;
  private head: OutgoingHeaders = {};
  headSent = false;
  private closeAfter = false;
  private abortCbs: (() => void)[] | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    this.method = (req.method ?? 'GET').toUpperCase();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.path = q === -1 ? url : url.slice(0, q);
    this.rawQuery = q === -1 ? '' : url.slice(q + 1);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    this.headers = headers;
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
    if (declared > limit) {
      this.closeAfter = true;
      return Promise.reject(tooLarge(limit));
    }
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
          this.closeAfter = true;
          this.req.pause();
          reject(tooLarge(limit));
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

  onAborted(cb: () => void): void {
    if (this.aborted) return;
    this.abortCbs ??= [];
    this.abortCbs.push(cb);
  }

  writeHead(status: number, headers: OutgoingHeaders): void {
    this.status = status;
    this.head = headers;
    this.headWritten = true;
  }

  private sendHead(contentLength: number | undefined): void {
    this.headSent = true;
    const h = this.head;
    delete h['content-length'];
    if (contentLength !== undefined) h['content-length'] = String(contentLength);
    if (this.closeAfter) h.connection = 'close';
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

function tooLarge(limit: number): GatewayError {
  return new GatewayError('payload_too_large', {
    message: `The request body is larger than ${limit} bytes`,
    details: { limit },
  });
}

export async function listenNode(handler: ExchangeHandler, opts: ListenOptions): Promise<EngineServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handler(new NodeExchange(req, res));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
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
