import { connect } from 'node:net';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { LINGER_IDLE_MS, OVERSIZE_DRAIN_BYTES } from '../../core/http/body-limit.js';
import { rawRequest } from '../../scripts/fuzz/raw-http.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

/**
 * A body over MAX_BODY_BYTES sent by a client that is still sending when the gateway decides:
 * the 413 must reach it, never an EPIPE/ECONNRESET that makes the OpenAI SDK retry a call that cannot succeed.
 * The gateway reads and discards the rest of the body (core/http/body-limit.ts) before answering, on both
 * engines; 20 tries each, none may fail.
 */

const LIMIT = 64 * 1024;
/** Four times the limit: the client is still sending long after the gateway counted past the limit. */
const SIZE = 1024 * 1024;
const TRIES = 20;

describe.each(['node', 'uws'] as const)('oversize body (%s engine)', (engine) => {
  let up: MockUpstream;
  let gw: TestGateway;
  beforeAll(async () => {
    up = await startMockUpstream();
    gw = await startTestGateway({ engine, upstreamUrl: up.url, env: { MAX_BODY_BYTES: String(LIMIT) } });
  });
  afterAll(async () => {
    await gw?.close(1000);
    await up?.close();
  });

  it(`fetch with a declared Content-Length reads the 413, ${TRIES} of ${TRIES}`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      outcomes.push(await fetchOutcome(() => 'x'.repeat(SIZE)));
    }
    expect(outcomes).toEqual(Array(TRIES).fill('413 payload_too_large'));
  });

  it(`fetch with a streamed (chunked) body reads the 413, ${TRIES} of ${TRIES}`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < TRIES; i++) outcomes.push(await fetchOutcome(() => streamOf(SIZE)));
    expect(outcomes).toEqual(Array(TRIES).fill('413 payload_too_large'));
  });

  it(`the OpenAI SDK gets an APIError 413 (not retried), ${TRIES} of ${TRIES}`, async () => {
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'sk-x', maxRetries: 2 });
    const outcomes: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      try {
        await client.chat.completions.create({
          model: 'mock-gpt',
          messages: [{ role: 'user', content: 'x'.repeat(SIZE) }],
        });
        outcomes.push('answered');
      } catch (err) {
        outcomes.push(
          err instanceof APIError && err.status !== undefined
            ? `${err.status} ${err.code}`
            : `failed: ${(err as Error).message}`,
        );
      }
    }
    // A 413 is not retried by the SDK; an EPIPE would have been (and failed again).
    expect(outcomes).toEqual(Array(TRIES).fill('413 payload_too_large'));
  });

  it.each([
    ['a declared Content-Length', false],
    ['a chunked body', true],
  ])('a client that reads only after sending all of %s still reads the 413', async (_name, chunked) => {
    // Like curl and many simple clients: the answer is read once the request is written. Closing while it
    // still sends makes its kernel receive a reset, which discards the unread 413.
    const res = await sendThenRead(gw.port, 4 * 1024 * 1024, chunked);
    expect(res).toEqual({ status: 413, error: undefined });
  });

  it('the connection stays usable after a drained 413: the next request on it is answered', async () => {
    const big = 'x'.repeat(LIMIT + 1000);
    const bytes =
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${big.length}\r\n\r\n${big}GET /v1/info HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n`;
    const res = await rawRequest(bytes, {
      port: gw.port,
      segments: 8,
      timeoutMs: 5_000,
      endAfterWrite: false,
    });
    const statuses = res.raw.toString('latin1').match(/HTTP\/1\.1 \d{3}/g);
    expect(statuses).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200']);
  });

  it('a body too large to drain is answered at once, and the connection closes once the client stops sending', async () => {
    // Declared beyond the drain bound, 1 KB sent: the 413 comes without waiting for the rest, and the
    // connection closes after LINGER_IDLE_MS with nothing more received (node's engine lingers; uWS closes).
    const declared = LIMIT + OVERSIZE_DRAIN_BYTES + 1;
    const bytes = `POST /v1/chat/completions HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${'x'.repeat(1024)}`;
    const res = await rawRequest(bytes, {
      port: gw.port,
      timeoutMs: LINGER_IDLE_MS + 10_000,
      endAfterWrite: false,
    });
    expect(res.timedOut).toBe(false);
    expect(res.status).toBe(413);
    expect(res.elapsedMs).toBeLessThan(LINGER_IDLE_MS);
    expect(res.headers.connection).toBe('close');
    expect(res.closed).toBe(true);
  });

  it('a declared oversize body is answered before it is sent, and the connection then serves the next request', async () => {
    // The 413 arrives while the client has sent only the head; it then sends the body it announced and a
    // second request on the same connection, which is answered (the body was read and discarded).
    const big = 'x'.repeat(LIMIT + 1000);
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n`;
    const sock = connect({ host: '127.0.0.1', port: gw.port });
    let received = '';
    sock.on('data', (d: Buffer) => {
      received += d.toString('latin1');
    });
    try {
      sock.write(head);
      await until('the 413 before the body', () => /HTTP\/1\.1 413/.test(received), 5_000);
      sock.write(`${big}GET /v1/info HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n`);
      await until('the next answer', () => /HTTP\/1\.1 200/.test(received), 5_000);
      expect(received.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200']);
    } finally {
      sock.destroy();
    }
  });

  async function fetchOutcome(body: () => string | ReadableStream<Uint8Array>): Promise<string> {
    try {
      const b = body();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' },
        body: b,
        ...(typeof b === 'string' ? {} : { duplex: 'half' }),
      } as RequestInit);
      const json = (await res.json()) as { error?: { code?: string } };
      return `${res.status} ${json.error?.code}`;
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      return `failed: ${cause?.code ?? (err as Error).message}`;
    }
  }
});

/**
 * Writes a POST with a body of `size` bytes (64 KiB writes, each awaited) while not reading, then reads the
 * answer: the status, or the socket error that lost it.
 */
function sendThenRead(
  port: number,
  size: number,
  chunked: boolean,
): Promise<{ status: number; error: string | undefined }> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.pause();
    const parts: Buffer[] = [];
    let error: string | undefined;
    const timer = setTimeout(() => sock.destroy(new Error('timed out')), 20_000);
    const finish = () => {
      clearTimeout(timer);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(parts).toString('latin1'));
      resolve({ status: m ? Number(m[1]) : 0, error: m ? undefined : error });
    };
    sock.on('data', (d: Buffer) => parts.push(d));
    sock.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    sock.on('close', finish);
    const write = (b: Buffer | string) =>
      new Promise<void>((ok, fail) => sock.write(b, (err) => (err ? fail(err) : ok())));
    sock.on('connect', async () => {
      const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`;
      const piece = Buffer.alloc(64 * 1024, 0x61);
      try {
        await write(
          `POST /v1/chat/completions HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\n${framing}\r\nConnection: close\r\n\r\n`,
        );
        for (let sent = 0; sent < size; sent += piece.length) {
          await write(
            chunked
              ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
              : piece,
          );
        }
        if (chunked) await write('0\r\n\r\n');
      } catch {
        // The answer (or the reset that lost it) is read below.
      }
      sock.resume();
    });
  });
}

/** A body of `size` bytes written in 64 KiB pieces without a Content-Length (chunked). */
function streamOf(size: number): ReadableStream<Uint8Array> {
  const piece = new Uint8Array(64 * 1024).fill(0x61);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) {
        controller.close();
        return;
      }
      sent += piece.length;
      controller.enqueue(piece);
    },
  });
}
