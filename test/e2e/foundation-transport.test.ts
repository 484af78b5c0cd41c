import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

/** Transport behaviour, the shipped default pipeline and the public endpoints, on both engines. */
describe.each(['uws', 'node'] as const)('foundation transport (%s engine)', (engine) => {
  let up: MockUpstream;
  let relayGw: TestGateway;
  let defaultGw: TestGateway;
  let dir: string;
  const chat = { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] };

  beforeAll(async () => {
    up = await startMockUpstream();
    dir = mkdtempSync(join(tmpdir(), 'gw-models-'));
    const modelsPath = join(dir, 'models.json');
    writeFileSync(
      modelsPath,
      JSON.stringify({
        models: [
          {
            id: 'mock-mini',
            name: 'Mock Mini',
            pricing: { prompt: '0.0000005', completion: '0.0000015', request: '0.001' },
            context_length: 4096,
          },
          { id: 'local-only', name: 'Local', pricing: { prompt: '0', completion: '0', request: '0' } },
        ],
      }),
    );
    // The catch-all relays only what RELAY_PATHS lists: the paths these tests send through it.
    const env = {
      MAX_BODY_BYTES: '4096',
      MODELS_PATH: modelsPath,
      CASHU_MINTS: 'https://mint.example',
      RELAY_PATHS: '* /v1/containers/*=0,* /v1/moderations=0',
    };
    relayGw = await startTestGateway({ engine, pipeline: ['relay'], upstreamUrl: up.url, env });
    defaultGw = await startTestGateway({ engine, upstreamUrl: up.url, env });
  });
  afterAll(async () => {
    await relayGw?.close(1000);
    await defaultGw?.close(1000);
    await up?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('default pipeline refuses unpaid calls', () => {
    it('answers 401 missing_credentials with the error envelope', async () => {
      const before = up.stats.requests;
      const res = await post(defaultGw, '/v1/chat/completions', JSON.stringify(chat));
      expect(res.status).toBe(401);
      expect(await json(res)).toEqual({
        error: {
          type: 'authentication_failed',
          code: 'missing_credentials',
          message: expect.stringContaining('No credentials'),
        },
      });
      expect(up.stats.requests).toBe(before);
    });

    it('answers 401 invalid_api_key to an unknown sk- key (openai SDK)', async () => {
      const client = new OpenAI({ baseURL: defaultGw.baseURL, apiKey: 'sk-unknown', maxRetries: 0 });
      const err = await client.chat.completions
        .create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(401);
      expect((err as APIError).code).toBe('invalid_api_key');
      expect((err as APIError).type).toBe('authentication_failed');
    });

    it('refuses the catch-all without credentials (no free bypass)', async () => {
      const before = up.stats.requests;
      for (const method of ['GET', 'POST', 'DELETE']) {
        const res = await fetch(`${defaultGw.baseURL}/moderations`, { method });
        expect(res.status).toBe(401);
        expect((await json(res)).error.code).toBe('missing_credentials');
      }
      expect(up.stats.requests).toBe(before);
    });

    it('refuses a malformed X-Cashu token before any mint call', async () => {
      const res = await post(defaultGw, '/v1/chat/completions', JSON.stringify(chat), {
        'x-cashu': 'cashuAxyz',
      });
      expect(res.status).toBe(400);
      expect((await json(res)).error.code).toBe('invalid_token');
    });
  });

  describe('request errors', () => {
    it('413 payload_too_large for a declared oversize body', async () => {
      const res = await post(
        relayGw,
        '/v1/chat/completions',
        JSON.stringify({ ...chat, pad: 'x'.repeat(8000) }),
      );
      expect(res.status).toBe(413);
      expect((await json(res)).error).toMatchObject({ code: 'payload_too_large', type: 'invalid_request' });
    });

    it('413 for a chunked body that grows past the limit, without reading it all', async () => {
      const { status, body } = await chunkedPost(relayGw, '/v1/chat/completions', 64, 1024);
      expect(status).toBe(413);
      expect(JSON.parse(body).error.code).toBe('payload_too_large');
    });

    it('400 invalid_json saying where', async () => {
      const res = await post(relayGw, '/v1/chat/completions', '{"model": "mock-gpt",\n "messages": [}');
      expect(res.status).toBe(400);
      const { error } = await json(res);
      expect(error.code).toBe('invalid_json');
      expect(error.type).toBe('invalid_request');
      expect(error.message).toMatch(/position 36 \(line 2, column 15\)/);
      expect(error.details).toEqual({ position: 36, line: 2, column: 15 });
    });

    it('415 unsupported_media_type for a non-JSON body on a JSON route', async () => {
      const res = await post(relayGw, '/v1/chat/completions', JSON.stringify(chat), {
        'content-type': 'text/plain',
      });
      expect(res.status).toBe(415);
      expect((await json(res)).error.code).toBe('unsupported_media_type');
    });

    it('404 not_found for an unknown route, 405 for a wrong method', async () => {
      const res = await fetch(`${relayGw.url}/nope`);
      expect(res.status).toBe(404);
      expect((await json(res)).error).toMatchObject({ code: 'not_found', type: 'not_found' });
      const res2 = await fetch(`${relayGw.baseURL}/chat/completions`);
      expect(res2.status).toBe(405);
      expect(res2.headers.get('allow')).toBe('POST');
    });
  });

  describe('headers', () => {
    it('answers HEAD like GET without a body', async () => {
      const res = await fetch(`${relayGw.baseURL}/info`, { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
      const again = await fetch(`${relayGw.baseURL}/info`);
      expect((await json(again)).name).toEqual(expect.any(String));
    });

    it('echoes X-Request-ID, or generates one, on success and error', async () => {
      const res = await fetch(`${relayGw.baseURL}/models`, { headers: { 'x-request-id': 'req-123' } });
      expect(res.headers.get('x-request-id')).toBe('req-123');
      const res2 = await fetch(`${relayGw.url}/nope`);
      expect(res2.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const res3 = await post(relayGw, '/v1/chat/completions', JSON.stringify(chat), {
        'x-request-id': 'r-9',
      });
      expect(res3.headers.get('x-request-id')).toBe('r-9');
      expect(up.stats.lastHeaders?.['x-request-id']).toBe('r-9');
    });

    it('answers a CORS preflight', async () => {
      const res = await fetch(`${relayGw.baseURL}/chat/completions`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-headers')).toContain('X-Cashu');
      expect(res.headers.get('access-control-max-age')).toBe('86400');
      const res2 = await fetch(`${relayGw.baseURL}/info`, { headers: { origin: 'https://app.example' } });
      expect(res2.headers.get('access-control-allow-origin')).toBe('*');
      expect(res2.headers.get('access-control-expose-headers')).toContain('X-Cashu');
    });

    it('gzips large compressible bodies when asked, not small ones nor SSE', async () => {
      up.setBehaviour({ chunks: 400 });
      try {
        const big = await post(relayGw, '/v1/chat/completions', JSON.stringify(chat), {
          'accept-encoding': 'gzip',
        });
        expect(big.headers.get('content-encoding')).toBe('gzip');
        expect((await json(big)).usage.completion_tokens).toBe(400);
        // On the wire: real gzip bytes that decompress to the same answer a client without gzip gets.
        const wire = await rawPost(relayGw.port, '/v1/chat/completions', JSON.stringify(chat), {
          'accept-encoding': 'gzip',
        });
        expect(wire.headers['content-encoding']).toBe('gzip');
        const unzipped = JSON.parse(gunzipSync(wire.body).toString('utf8'));
        const plain = JSON.parse(
          (await rawPost(relayGw.port, '/v1/chat/completions', JSON.stringify(chat), {})).body.toString(
            'utf8',
          ),
        );
        expect(unzipped.choices).toEqual(plain.choices);
        expect(unzipped.usage).toEqual(plain.usage);
        const sse = await post(relayGw, '/v1/chat/completions', JSON.stringify({ ...chat, stream: true }), {
          'accept-encoding': 'gzip',
        });
        expect(sse.headers.get('content-type')).toContain('text/event-stream');
        expect(sse.headers.get('content-encoding')).toBeNull();
        expect(await sse.text()).toContain('data: [DONE]');
      } finally {
        up.setBehaviour({ chunks: 8 });
      }
      const small = await post(relayGw, '/v1/chat/completions', JSON.stringify(chat), {
        'accept-encoding': 'gzip',
      });
      expect(small.headers.get('content-encoding')).toBeNull();
      await small.arrayBuffer();
    });
  });

  describe('every method reaches the catch-all; models.retrieve is public', () => {
    it('PROPFIND, PATCH, PURGE… get the upstream answer through the relay, or the 401 envelope when unpaid — never an empty reply', async () => {
      // uWS 20.30 drops methods outside its own list without an answer (a known limit, README "HTTP engines",
      // asserted in test/http/hostile-http.test.ts): the default node engine answers them all.
      const methods =
        engine === 'uws'
          ? ['PATCH', 'PUT', 'DELETE']
          : ['PROPFIND', 'PATCH', 'PUT', 'DELETE', 'PURGE', 'MKCOL', 'LOCK', 'SEARCH', 'REPORT'];
      for (const method of methods) {
        const r = await fetch(`${relayGw.baseURL}/containers/f-1`, { method });
        expect(r.status, method).toBe(200);
        expect(((await json(r)) as { echo: { method: string; path: string } }).echo).toMatchObject({
          method,
          path: '/v1/containers/f-1',
        });
        const unpaid = await fetch(`${defaultGw.baseURL}/containers/f-1`, { method });
        expect(unpaid.status, method).toBe(401);
        expect((await json(unpaid)).error.code).toBe('missing_credentials');
      }
    });

    it('GET /v1/models/{id} answers without credentials, like the list (openai SDK models.retrieve)', async () => {
      const client = new OpenAI({ apiKey: 'unused', baseURL: defaultGw.baseURL, maxRetries: 0 });
      const m = await client.models.retrieve('mock-mini');
      expect(m).toMatchObject({ id: 'mock-mini', object: 'model' });
      const list = await client.models.list();
      expect(list.data.find((x) => x.id === 'mock-mini')).toEqual(m);
      await expect(client.models.retrieve('no-such-model')).rejects.toMatchObject({ status: 404 });
    });
  });

  describe('Vary with configured CORS origins and gzip', () => {
    let corsGw: TestGateway;
    beforeAll(async () => {
      corsGw = await startTestGateway({
        engine,
        pipeline: ['relay'],
        upstreamUrl: up.url,
        env: { CORS_ORIGINS: 'https://app.example' },
      });
    });
    afterAll(async () => {
      await corsGw?.close(1000);
    });

    it('carries both Origin and Accept-Encoding, gzipped or not, on relayed and local answers', async () => {
      up.setBehaviour({ chunks: 400 });
      try {
        for (const enc of [{ 'accept-encoding': 'gzip' }, {}] as Record<string, string>[]) {
          const r = await rawPost(corsGw.port, '/v1/chat/completions', JSON.stringify(chat), {
            origin: 'https://app.example',
            ...enc,
          });
          expect(r.headers['access-control-allow-origin']).toBe('https://app.example');
          const vary = String(r.headers.vary)
            .split(',')
            .map((t) => t.trim().toLowerCase());
          expect(vary).toEqual(expect.arrayContaining(['origin', 'accept-encoding']));
          expect(vary.filter((t) => t === 'origin')).toHaveLength(1);
        }
      } finally {
        up.setBehaviour({ chunks: 8 });
      }
      const doc = await fetch(`${corsGw.url}/openapi.json`, {
        headers: { origin: 'https://app.example', 'accept-encoding': 'gzip' },
      });
      await doc.arrayBuffer();
      const vary = (doc.headers.get('vary') ?? '').toLowerCase();
      expect(vary).toContain('origin');
      expect(vary).toContain('accept-encoding');
    });
  });

  describe('public endpoints', () => {
    it('serves the OpenAPI document and the docs pages', async () => {
      const doc = await fetch(`${defaultGw.url}/openapi.json`);
      expect(doc.status).toBe(200);
      expect(doc.headers.get('content-type')).toContain('json');
      expect((await json(doc)).paths['/v1/chat/completions']).toBeDefined();
      for (const page of ['/docs', '/redoc']) {
        const res = await fetch(`${defaultGw.url}${page}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain('text/html');
        await res.arrayBuffer();
      }
    });

    it('GET /v1/models merges the upstream list with models.json (prices per 1k tokens)', async () => {
      const res = await fetch(`${defaultGw.baseURL}/models?api_key=sk-anything`);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.object).toBe('list');
      const byId = Object.fromEntries(body.data.map((m: { id: string }) => [m.id, m]));
      expect(byId['mock-gpt']).toEqual({
        id: 'mock-gpt',
        object: 'model',
        created: 1_700_000_000,
        owned_by: 'mock',
        context_length: 8192,
        // OpenAI's legacy model fields, which some clients still read.
        permission: [],
        root: 'mock-gpt',
        parent: null,
        // The catalogue's USD rates; the charged msats/sats prices sit next to them (docs/endpoints.md).
        pricing: expect.objectContaining({ prompt: 0.001, completion: 0.002, unit: '1k tokens' }),
      });
      expect(byId['mock-mini']).toMatchObject({
        owned_by: 'mock',
        context_length: 4096,
        pricing: { prompt: 0.0005, completion: 0.0015, unit: '1k tokens' },
      });
      expect(byId['local-only']).toMatchObject({ object: 'model', pricing: { prompt: 0, completion: 0 } });
    });

    it('GET /v1/info', async () => {
      const body = await json(await fetch(`${defaultGw.baseURL}/info`));
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
      expect(body).toMatchObject({
        name: expect.any(String),
        description: expect.any(String),
        version: pkg.version,
        npub: expect.any(String),
        mints: ['https://mint.example'],
      });
      expect(Object.keys(body.models).sort()).toEqual(['local-only', 'mock-gpt', 'mock-mini']);
      expect(body.models['mock-gpt'].id).toBe('mock-gpt');
    });

    it('GET /v1/providers and /v1/providers/{name}; unknown provider 404', async () => {
      const list = await json(await fetch(`${defaultGw.baseURL}/providers`));
      expect(list.providers).toHaveLength(1);
      const p = list.providers[0];
      expect(p).toMatchObject({ name: '127.0.0.1', status: 'active' });
      expect(p.models).toContain('mock-gpt');
      expect(p.endpoints).toContain('/v1/chat/completions');
      const detail = await json(await fetch(`${defaultGw.baseURL}/providers/${p.name}`));
      expect(detail).toMatchObject({ name: p.name, display_name: expect.any(String), status: 'active' });
      expect(detail.models.find((m: { id: string }) => m.id === 'mock-gpt')).toEqual({
        id: 'mock-gpt',
        name: 'mock-gpt',
        context_window: 8192,
        pricing: { prompt: 0.001, completion: 0.002, unit: '1k tokens' },
      });
      const missing = await fetch(`${defaultGw.baseURL}/providers/nope`);
      expect(missing.status).toBe(404);
      expect((await json(missing)).error.code).toBe('not_found');
    });
  });
});

function post(
  gw: TestGateway,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

/** Sends a chunked body of `count` chunks of `size` bytes; returns the answer (possibly before all was sent). */
function chunkedPost(
  gw: TestGateway,
  path: string,
  count: number,
  size: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, gw.url);
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', () => {
      // The gateway may close the connection while we still write; the answer already arrived.
    });
    const chunk = 'x'.repeat(size);
    let sent = 0;
    const writeMore = () => {
      while (sent < count) {
        sent++;
        if (!req.write(chunk)) {
          req.once('drain', writeMore);
          return;
        }
      }
      req.end();
    };
    writeMore();
  });
}

/** Response JSON, loosely typed for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
async function json(res: Response): Promise<any> {
  return await res.json();
}

/** A POST through node:http (no automatic decompression), body as the raw bytes received. */
function rawPost(
  port: number,
  path: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(parts) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
