import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { type RawResponse, rawRequest } from '../../scripts/fuzz/raw-http.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

/**
 * The hostile-HTTP regression suite: raw bytes over a socket, often in many small segments, with
 * the answer RFC 9110/9112 requires — never an unanswered or held socket. Runs in full on the default engine
 * (node:http). On the opt-in uWS engine (@trufflesuite/uws-js-unofficial 20.30) it runs every case the adapter
 * can see and fix; the cases its C++ parser drops before any JS runs are listed in UWS_KNOWN_LIMITS (and in
 * the README) instead of being asserted.
 */

interface Case {
  name: string;
  bytes: string | Buffer;
  /** Expected status of the (first) answer. */
  status: number;
  /** The answer carries the JSON error envelope with this code. */
  code?: string;
  /** The server must close the connection after answering (framing unknowable). */
  closes?: boolean;
  segments?: number;
  /** Why the uWS build cannot pass this case (it is then not run on uWS). */
  uwsLimit?: string;
}

const H = 'Host: gw.test\r\n';
const big = (n: number) => 'a'.repeat(n);

const CASES: Case[] = [
  { name: 'plain GET', bytes: `GET /v1/info HTTP/1.1\r\n${H}\r\n`, status: 200 },
  {
    name: 'HTTP/1.0 request',
    bytes: 'GET /v1/info HTTP/1.0\r\n\r\n',
    status: 200,
    uwsLimit: 'drops HTTP/1.0',
  },
  {
    name: 'head of 8 KB in 40 segments',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}X-Big: ${big(8_000)}\r\n\r\n`,
    segments: 40,
    status: 200,
    uwsLimit: 'drops a head over ~4 KB that arrives in more than one segment',
  },
  {
    name: 'head of 60 KB in 200 segments',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}X-Big: ${big(60_000)}\r\n\r\n`,
    segments: 200,
    status: 200,
    uwsLimit: 'drops a head over ~4 KB that arrives in more than one segment',
  },
  {
    name: 'head over MAX_HEADER_BYTES',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}X-Big: ${big(70_000)}\r\n\r\n`,
    status: 431,
    code: 'headers_too_large',
    closes: true,
    uwsLimit: 'closes the socket without an answer',
  },
  {
    name: '60 header fields',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}${Array.from({ length: 60 }, (_, i) => `X-F${i}: ${i}\r\n`).join('')}\r\n`,
    status: 200,
    uwsLimit: 'drops a request with more than 48 header fields',
  },
  {
    name: 'two differing Content-Lengths',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}`,
    status: 400,
    code: 'invalid_request',
    closes: true,
  },
  {
    name: 'Content-Length and Transfer-Encoding',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/info HTTP/1.1\r\n${H}\r\n`,
    status: 400,
    code: 'invalid_request',
    closes: true,
    uwsLimit: 'closes the connection without an answer (not forwarded: no smuggling, but no envelope)',
  },
  {
    name: 'Transfer-Encoding not ending in chunked',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    status: 400,
    closes: true,
  },
  {
    name: 'unknown transfer coding',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n{}`,
    status: 400,
    closes: true,
    uwsLimit: 'ignores an unknown transfer coding without chunked and waits',
  },
  {
    name: 'duplicate Host',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}Host: evil.test\r\n\r\n`,
    status: 400,
    code: 'invalid_request',
    closes: true,
  },
  {
    name: 'missing Host (HTTP/1.1)',
    bytes: 'GET /v1/info HTTP/1.1\r\n\r\n',
    status: 400,
    closes: true,
    uwsLimit: 'drops a request without Host',
  },
  {
    name: 'obs-fold',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}X-A: one\r\n two\r\n\r\n`,
    status: 400,
    closes: true,
    uwsLimit: 'drops obs-fold',
  },
  {
    name: 'bare CR in a header',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}X-A: a\rb\r\n\r\n`,
    status: 400,
    closes: true,
    uwsLimit: 'drops a bare CR',
  },
  {
    name: 'NUL in a header',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}X-A: a\u0000b\r\n\r\n`,
    status: 400,
    closes: true,
    uwsLimit: 'drops NUL',
  },
  {
    name: 'space before the colon',
    bytes: `GET /v1/info HTTP/1.1\r\n${H}X-A : b\r\n\r\n`,
    status: 400,
    closes: true,
    uwsLimit: 'drops a space before the colon',
  },
  {
    // RFC 9112 §2.2 lets a recipient recognise a lone LF; node's strict parser does not, and says so.
    name: 'LF-only lines',
    bytes: 'GET /v1/info HTTP/1.1\nHost: gw.test\n\n',
    status: 400,
    closes: true,
    uwsLimit: 'drops LF-only lines',
  },
  {
    name: 'HTTP/2.0 in an HTTP/1 request line',
    bytes: `GET /v1/info HTTP/2.0\r\n${H}\r\n`,
    status: 505,
    closes: true,
    uwsLimit: 'drops an unknown HTTP version',
  },
  {
    name: 'TLS ClientHello on the plain port',
    bytes: Buffer.from('16030100a5010000a10303000102030405060708090a0b0c0d0e0f', 'hex'),
    status: 400,
    closes: true,
    uwsLimit: 'drops a TLS ClientHello',
  },
  {
    name: 'absolute-form target',
    bytes: `GET http://gw.test/v1/info HTTP/1.1\r\n${H}\r\n`,
    status: 200,
    uwsLimit: 'drops absolute-form targets',
  },
  {
    name: 'chunk extension',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=1\r\n{}\r\n0\r\n\r\n`,
    status: 400,
    code: 'validation_failed',
    uwsLimit: 'drops chunk extensions',
  },
  {
    name: 'dot segment out of /v1/ in the catch-all',
    bytes: `GET /v1/../admin/api/settings HTTP/1.1\r\n${H}Authorization: Bearer sk-x\r\n\r\n`,
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'encoded dot segment',
    bytes: `GET /v1/%2e%2e/admin/api/settings HTTP/1.1\r\n${H}Authorization: Bearer sk-x\r\n\r\n`,
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'encoded slashes',
    bytes: `GET /v1/..%2f..%2fsecret HTTP/1.1\r\n${H}Authorization: Bearer sk-x\r\n\r\n`,
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'empty body on a JSON endpoint',
    bytes: `POST /v1/wallet/create HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 0\r\n\r\n`,
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'no body at all on a JSON endpoint',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}\r\n`,
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'wallet/update without a body never clears the allow-list',
    bytes: `POST /v1/wallet/update HTTP/1.1\r\n${H}Authorization: Bearer sk-x\r\nContent-Length: 0\r\n\r\n`,
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'admin settings PATCH without a body',
    bytes: `PATCH /admin/api/settings HTTP/1.1\r\n${H}Cookie: admin_password=x\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n`,
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'out-of-range number',
    bytes: (() => {
      const b = '{"model":"mock-gpt","messages":[{"role":"user","content":"x"}],"max_tokens":1e19}';
      return `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n${b}`;
    })(),
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'child-key balance_limit 1e19',
    bytes: (() => {
      const b = '{"count":1,"balance_limit":1e19}';
      return `POST /v1/balance/child-key HTTP/1.1\r\n${H}Authorization: Bearer sk-x\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n${b}`;
    })(),
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'sub-key validity_date 1e19',
    bytes: (() => {
      const b = '{"validity_date":1e19}';
      return `POST /v1/wallet/create/subkey HTTP/1.1\r\n${H}Authorization: Bearer sk-x\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n${b}`;
    })(),
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'PROPFIND reaches the catch-all',
    bytes: `PROPFIND /v1/containers HTTP/1.1\r\n${H}\r\n`,
    status: 401,
    code: 'missing_credentials',
    uwsLimit: 'drops methods outside its list (PROPFIND, …) without an answer',
  },
];

/**
 * Refused framing followed by more bytes: the refused request's body must never be read as a
 * second request and answered. Exactly one answer (the 400), then the connection closes.
 */
const SMUGGLED = `GET /v1/info HTTP/1.1\r\n${H}\r\n`;
const AFTER_REFUSAL: { name: string; bytes: string; uwsLimit?: string }[] = [
  {
    name: 'Transfer-Encoding xchunked with a request after its last chunk',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
    uwsLimit: 'closes without the 400 when the request arrives in the same read (never answers the request)',
  },
  {
    name: 'Transfer-Encoding xchunked with a request as its body',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: xchunked\r\n\r\n${SMUGGLED}`,
    uwsLimit: 'closes without the 400 (its parser reads the body as chunked and fails)',
  },
  {
    name: 'duplicate Host with a pipelined request',
    bytes: `GET /v1/estimate HTTP/1.1\r\n${H}${H}\r\n${SMUGGLED}`,
    uwsLimit: 'closes without the 400 when the request arrives in the same read (never answers the request)',
  },
  {
    name: 'two Content-Lengths covering a request',
    bytes: `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${SMUGGLED.length}\r\nContent-Length: ${SMUGGLED.length}\r\n\r\n${SMUGGLED}`,
  },
];

/** What the uWS engine cannot do, by case: the README's uWS section lists each. */
const UWS_KNOWN_LIMITS = [
  ...CASES.filter((c) => c.uwsLimit !== undefined).map((c) => `${c.name}: ${c.uwsLimit}`),
  ...AFTER_REFUSAL.filter((c) => c.uwsLimit !== undefined).map((c) => `${c.name}: ${c.uwsLimit}`),
  'pipelined HEAD then GET: answers neither',
];

/** Pipelined HEAD then GET on one connection: two answers, the first without a body. */
const PIPELINED = `HEAD /v1/info HTTP/1.1\r\n${H}\r\nGET /v1/info HTTP/1.1\r\n${H}Connection: close\r\n\r\n`;

function envelopeCode(res: RawResponse): string | undefined {
  try {
    return (JSON.parse(res.body.toString('utf8')) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

describe('uWS known limits', () => {
  it('the README lists every case the uWS engine cannot pass', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const limit of UWS_KNOWN_LIMITS) expect(readme).toContain(limit.split(':')[0]!);
  });
});

describe.each(['node', 'uws'] as const)('hostile HTTP (%s engine)', (engine) => {
  let gw: TestGateway;
  let up: MockUpstream;
  beforeAll(async () => {
    up = await startMockUpstream();
    gw = await startTestGateway({ engine, upstreamUrl: up.url, env: { RELAY_PATHS: '* /v1/containers=0' } });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  // Cases the uWS build cannot pass are not registered on uWS (see UWS_KNOWN_LIMITS); none is skipped.
  for (const c of CASES.filter((x) => engine === 'node' || x.uwsLimit === undefined)) {
    it(`${c.name} → ${c.status}`, async () => {
      const res = await rawRequest(c.bytes, {
        port: gw.port,
        segments: c.segments ?? 3,
        segmentDelayMs: 3,
        timeoutMs: 5_000,
        endAfterWrite: false,
        stopAfterAnswer: true,
      });
      expect(res.timedOut, 'the socket was held without an answer').toBe(false);
      expect(res.status).toBe(c.status);
      if (c.status >= 400) {
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        const code = envelopeCode(res);
        expect(code).toBeTypeOf('string');
        if (c.code) expect(code).toBe(c.code);
      }
      if (c.closes) expect(res.headers.connection).toBe('close');
      // Never an upstream call for a request the front door refused.
      if (c.status === 400) expect(up.stats.lastPath ?? '').not.toMatch(/admin|secret/);
    });
  }

  for (const c of AFTER_REFUSAL) {
    it.each([1, 3])(`${c.name}, in %i segment(s): one 400, then the connection closes`, async (segments) => {
      const res = await rawRequest(c.bytes, {
        port: gw.port,
        segments,
        segmentDelayMs: 3,
        timeoutMs: 5_000,
        endAfterWrite: false,
      });
      expect(res.timedOut, 'the connection was kept open').toBe(false);
      expect(res.closed).toBe(true);
      const answers = res.raw.toString('latin1').match(/HTTP\/1\.1 \d{3}/g) ?? [];
      if (engine === 'uws' && c.uwsLimit !== undefined) {
        // The door closes; the 400 may be lost (UWS_KNOWN_LIMITS), the smuggled request is never answered.
        expect(['HTTP/1.1 400'].slice(0, answers.length)).toEqual(answers);
        return;
      }
      expect(answers).toEqual(['HTTP/1.1 400']);
      expect(envelopeCode(res)).toBe('invalid_request');
      expect(res.headers.connection).toBe('close');
    });
  }

  if (engine === 'node') {
    it('pipelined HEAD then GET: two answers, the HEAD one without a body', async () => {
      const res = await rawRequest(PIPELINED, { port: gw.port, timeoutMs: 5_000, endAfterWrite: false });
      const text = res.raw.toString('latin1');
      expect(text.match(/HTTP\/1\.1 200/g) ?? []).toHaveLength(2);
      // The HEAD answer announces a length but carries no body: the GET answer follows its head directly.
      const firstHeadEnd = text.indexOf('\r\n\r\n');
      expect(text.slice(firstHeadEnd + 4, firstHeadEnd + 12)).toBe('HTTP/1.1');
    });
  }

  it.each([1, 4])(
    'a client that declares a body over MAX_BODY_BYTES and sends none of it gets its 413 at once (%i segment(s))',
    async (segments) => {
      // 11 MiB declared (the limit is 10 MiB), nothing sent: the answer must not wait for the upload (the body
      // timeout is minutes). The connection stays open for the body the client announced.
      const head = `POST /v1/chat/completions HTTP/1.1\r\n${H}Authorization: Bearer sk-x\r\nContent-Type: application/json\r\nContent-Length: ${11 * 1024 * 1024}\r\n\r\n`;
      const res = await rawRequest(head, {
        port: gw.port,
        segments,
        segmentDelayMs: 3,
        timeoutMs: 5_000,
        endAfterWrite: false,
        stopAfterAnswer: true,
      });
      expect(res.timedOut, 'no answer before the upload').toBe(false);
      expect(res.status).toBe(413);
      expect(envelopeCode(res)).toBe('payload_too_large');
      expect(up.stats.lastPath ?? '').not.toBe('/v1/chat/completions');
    },
  );

  it('413 is readable by the client: the body is drained before the connection closes', async () => {
    const limit = 10 * 1024 * 1024;
    const body = Buffer.alloc(limit + 100_000, 0x61);
    const head = `POST /v1/estimate HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const res = await rawRequest(Buffer.concat([Buffer.from(head), body]), {
      port: gw.port,
      segments: 20,
      timeoutMs: 10_000,
      endAfterWrite: false,
    });
    expect(res.status).toBe(413);
    expect(envelopeCode(res)).toBe('payload_too_large');
  });
});
