import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpEngine } from '../../core/config.js';
import { listen } from '../../core/http/engine.js';
import type { EngineServer, Exchange } from '../../core/http/exchange.js';

/**
 * A streamed request body whose reader falls behind makes the engine stop reading the socket
 * (core/http/streamed-body.ts). When that happened at the body's last chunk, nothing read the socket again on
 * uWS: the answer went out, but the next request on the same keep-alive connection was never read, and uWS
 * reset the connection at its idle timeout (about 10 s later). The OpenAI SDK saw that as a connection error on
 * its next upload. Over a raw socket, on both engines: a slow reader, then a refusal that stops reading; each
 * time the next request on the same connection is answered at once.
 */

const BODY = 2 * 1024 * 1024;

/** POST /slow reads the body slowly and answers its length; POST /refuse stops at 64 KiB and answers 400. */
async function handle(ex: Exchange): Promise<void> {
  if (ex.method !== 'POST') {
    ex.writeHead(200, {});
    ex.end('get');
    return;
  }
  const body = ex.streamBody(64 * 1024 * 1024);
  let bytes = 0;
  if (ex.path === '/refuse') {
    for await (const chunk of body) {
      bytes += (chunk as Buffer).length;
      if (bytes >= 64 * 1024) break;
    }
    await ex.discardBody();
    ex.writeHead(400, { 'content-type': 'text/plain' });
    ex.end('refused');
    return;
  }
  // Behind the engine from the first chunk to the last: every chunk it delivers finds the buffer full.
  await sleep(100);
  for await (const chunk of body) {
    bytes += (chunk as Buffer).length;
    await sleep(2);
  }
  ex.writeHead(200, { 'content-type': 'text/plain' });
  ex.end(String(bytes));
}

/** Reads HTTP/1.1 answers with a Content-Length from one socket, in order. */
class RawClient {
  private buf = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed = false;
  constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  /** The next answer's status and body; rejects when the connection closes first or after `ms`. */
  async answer(ms: number): Promise<{ status: number; body: string }> {
    const deadline = Date.now() + ms;
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.buf.subarray(0, end).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (this.buf.length >= end + 4 + length) {
          const body = this.buf.subarray(end + 4, end + 4 + length).toString();
          this.buf = this.buf.subarray(end + 4 + length);
          return { status: Number(head.split(' ')[1]), body };
        }
      }
      if (this.closed) throw new Error('the connection closed before the answer');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no answer within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

function post(path: string, bytes: number): Buffer {
  const head = `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Length: ${bytes}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), Buffer.alloc(bytes, 0x61)]);
}

describe.each<HttpEngine>(['node', 'uws'])('streamed body then keep-alive (%s engine)', (engine) => {
  let server: EngineServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function client(): Promise<RawClient> {
    server = await listen(engine, (ex) => void handle(ex), {
      host: '127.0.0.1',
      port: 0,
      maxBodyBytes: 1024,
      maxHeaderBytes: 65536,
    });
    expect(server.engine).toBe(engine);
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    return new RawClient(socket);
  }

  it('a body read slowly to its end: the next request on the connection is answered at once', async () => {
    const c = await client();
    for (let i = 0; i < 3; i++) {
      c.socket.write(post('/slow', BODY));
      expect(await c.answer(5_000)).toEqual({ status: 200, body: String(BODY) });
      c.socket.write('GET /next HTTP/1.1\r\nHost: t\r\n\r\n');
      expect(await c.answer(3_000)).toEqual({ status: 200, body: 'get' });
    }
    c.socket.destroy();
  });

  it('a body refused while it streams: the rest is read, the 400 arrives, the next request is answered', async () => {
    const c = await client();
    for (let i = 0; i < 3; i++) {
      c.socket.write(post('/refuse', BODY));
      expect(await c.answer(5_000)).toEqual({ status: 400, body: 'refused' });
      c.socket.write('GET /next HTTP/1.1\r\nHost: t\r\n\r\n');
      expect(await c.answer(3_000)).toEqual({ status: 200, body: 'get' });
    }
    c.socket.destroy();
  });
});
