import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import type { Plugin } from '../../core/plugin.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { freePort } from '../support/global-setup.js';

/**
 * The relay path end to end, on both engines: the official openai SDK → gateway ([relay] pipeline, no
 * payment) → mock upstream.
 */
describe.each(['uws', 'node'] as const)('foundation relay (%s engine)', (engine) => {
  let up: MockUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  const messages = [{ role: 'user' as const, content: 'Say something' }];

  beforeAll(async () => {
    up = await startMockUpstream();
    gw = await startTestGateway({
      engine,
      pipeline: ['relay'],
      upstreamUrl: up.url,
      env: {
        UPSTREAM_API_KEY: 'upstream-secret-key',
        UPSTREAM_TIMEOUT_MS: '800',
        RELAY_PATHS: 'DELETE /v1/containers/*=0',
      },
    });
    client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'sk-caller-key', maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close(1000);
    await up?.close();
  });
  beforeEach(() => {
    up.setBehaviour({
      chunks: 8,
      chunkDelayMs: 0,
      error: undefined,
      hang: false,
      reset: false,
      latencyMs: 0,
    });
    up.setBehaviour({ stallAfterChunks: undefined });
  });

  it('serves the requested engine', () => {
    expect(gw.engine).toBe(engine);
  });

  it('relays a non-streamed completion', async () => {
    const r = await client.chat.completions.create({ model: 'mock-gpt', messages });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0]?.message.content).toBe('tok '.repeat(8));
    expect(r.usage).toEqual({ prompt_tokens: 4, completion_tokens: 8, total_tokens: 12 });
    expect(up.stats.lastPath).toBe('/v1/chat/completions');
  });

  it('never forwards the caller credentials; sends the upstream key', async () => {
    await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-caller-key',
        'x-cashu': 'cashuAsecret',
        cookie: 'admin_password=pw',
      },
      body: JSON.stringify({ model: 'mock-gpt', messages }),
    }).then((r) => r.arrayBuffer());
    const h = up.stats.lastHeaders!;
    expect(h.authorization).toBe('Bearer upstream-secret-key');
    expect(h['x-cashu']).toBeUndefined();
    expect(h.cookie).toBeUndefined();
  });

  it('streams a completion chunk by chunk with usage in the final chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'mock-gpt',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    let events = 0;
    for await (const chunk of stream) {
      events++;
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('tok '.repeat(8));
    expect(events).toBe(11);
    expect(usage).toEqual({ prompt_tokens: 4, completion_tokens: 8, total_tokens: 12 });
  });

  it('streams slow chunks as they arrive (no buffering)', async () => {
    up.setBehaviour({ chunks: 5, chunkDelayMs: 30 });
    const completedBefore = up.stats.completed;
    const stream = await client.chat.completions.create({ model: 'mock-gpt', messages, stream: true });
    const seen: number[] = [];
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) seen.push(up.stats.completed);
    }
    // The first content chunk reached the client while the upstream response was still open.
    expect(seen.length).toBe(5);
    expect(seen[0]).toBe(completedBefore);
  });

  it('aborts the upstream call when the client disconnects mid-stream', async () => {
    up.setBehaviour({ chunks: 200, chunkDelayMs: 20 });
    const aborted = up.stats.aborted;
    const ac = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'mock-gpt', messages, stream: true },
      { signal: ac.signal },
    );
    let got = 0;
    // The SDK ends the iteration quietly when its signal aborts.
    await (async () => {
      for await (const _ of stream) {
        if (++got === 3) ac.abort();
      }
    })().catch(() => undefined);
    expect(got).toBeLessThan(200);
    await up.waitForAborted(aborted + 1, 5000);
    expect(up.stats.aborted).toBe(aborted + 1);
  });

  it('maps an upstream 500 to 502 upstream_error', async () => {
    up.setBehaviour({ error: { status: 500, body: '{"error":{"message":"model crashed"}}' } });
    const err = await client.chat.completions
      .create({ model: 'mock-gpt', messages })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(502);
    expect((err as APIError).code).toBe('upstream_error');
    expect((err as APIError).error).toMatchObject({
      type: 'upstream_error',
      details: { upstream_status: 500, upstream_message: 'model crashed' },
    });
  });

  it('passes an upstream 4xx JSON error through with its status', async () => {
    up.setBehaviour({
      error: { status: 404, body: '{"error":{"message":"no such model","code":"model_not_found"}}' },
    });
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'nope', messages }),
    });
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: { message: 'no such model', code: 'model_not_found' } });
  });

  it('maps a non-JSON upstream error to 502 upstream_error', async () => {
    up.setBehaviour({ error: { status: 400, body: '<html>bad gateway</html>', contentType: 'text/html' } });
    const res = await postChat(gw);
    expect(res.status).toBe(502);
    const body = await json(res);
    expect(body.error.code).toBe('upstream_error');
    expect(body.error.message).toMatch(/400 \(non-JSON body\)/);
  });

  it('maps an upstream connection reset to 502 upstream_error', async () => {
    up.setBehaviour({ reset: true });
    const res = await postChat(gw);
    expect(res.status).toBe(502);
    expect((await json(res)).error).toMatchObject({ code: 'upstream_error', type: 'upstream_error' });
  });

  it('answers 504 upstream_timeout when the upstream hangs', async () => {
    up.setBehaviour({ hang: true });
    const aborted = up.stats.aborted;
    const err = await client.chat.completions
      .create({ model: 'mock-gpt', messages })
      .catch((e: unknown) => e);
    expect((err as APIError).status).toBe(504);
    expect((err as APIError).code).toBe('upstream_timeout');
    await up.waitForAborted(aborted + 1, 5000);
  });

  it('ends a stream whose upstream goes idle with an SSE error event', async () => {
    up.setBehaviour({ stallAfterChunks: 2, chunkDelayMs: 5 });
    const stream = await client.chat.completions.create({ model: 'mock-gpt', messages, stream: true });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('tok tok ');
    expect(err).toBeInstanceOf(APIError);
    expect(String((err as Error).message)).toMatch(/stopped sending/);
  });

  it('relays the catch-all (any method, query without api_key) upstream', async () => {
    const res = await fetch(`${gw.baseURL}/containers/abc?purpose=x&api_key=sk-secret`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      echo: { method: 'DELETE', path: '/v1/containers/abc', query: 'purpose=x' },
    });
  });

  it('relays other paid routes (embeddings)', async () => {
    const r = await client.embeddings.create({ model: 'mock-embed', input: 'hello world' });
    expect(r.data[0]?.embedding).toEqual([0.1, 0.2, 0.3]);
    expect(r.usage.prompt_tokens).toBe(3);
  });
});

describe.each(['uws', 'node'] as const)('relay edge cases (%s engine)', (engine) => {
  it('answers 502 when the upstream refuses connections', async () => {
    const port = await freePort();
    const gw = await startTestGateway({
      engine,
      pipeline: ['relay'],
      upstreamUrl: `http://127.0.0.1:${port}/v1`,
    });
    try {
      const res = await postChat(gw);
      expect(res.status).toBe(502);
      const body = await json(res);
      expect(body.error.code).toBe('upstream_error');
      expect(body.error.message).toMatch(/connection refused/);
    } finally {
      await gw.close(1000);
    }
  });

  it('every answer says the gateway share and the upstream wait in Server-Timing', async () => {
    const up = await startMockUpstream({ latencyMs: 60 });
    const gw = await startTestGateway({ engine, pipeline: ['relay'], upstreamUrl: up.url });
    try {
      const timing = (res: Response) => {
        const v = res.headers.get('server-timing') ?? '';
        const m = /^gw;dur=(\d+\.\d{3})(?:, upstream;dur=(\d+\.\d{3}))?$/.exec(v);
        expect(m, v).not.toBeNull();
        return { gw: Number(m![1]), upstream: m![2] === undefined ? undefined : Number(m![2]) };
      };
      // A relayed answer held whole (small JSON): the upstream's 60 ms are the upstream's, not the gateway's.
      const t0 = performance.now();
      const res = await postChat(gw);
      await res.arrayBuffer();
      const total = performance.now() - t0;
      const held = timing(res);
      expect(held.upstream).toBeGreaterThanOrEqual(59);
      expect(held.gw).toBeLessThan(total - 59);
      expect(held.gw + held.upstream!).toBeLessThanOrEqual(total);
      // A stream: the head goes out when the upstream's head arrived.
      const streamed = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'mock-gpt',
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      expect(streamed.headers.get('content-type')).toMatch(/text\/event-stream/);
      await streamed.text();
      expect(timing(streamed).upstream).toBeGreaterThanOrEqual(59);
      // Answered by the gateway alone (no route): gateway time only.
      const missing = await fetch(`${gw.baseURL.replace(/\/v1$/, '')}/nowhere`);
      await missing.arrayBuffer();
      expect(missing.status).toBe(404);
      expect(timing(missing).upstream).toBeUndefined();
    } finally {
      await gw.close(1000);
      await up.close();
    }
  });

  it('forwards the body a stage modified (re-serialised) and the raw bytes otherwise', async () => {
    const up = await startMockUpstream();
    const lowerMaxTokens: Plugin = {
      name: 'lower-max-tokens',
      onRequest(ctx) {
        const body = ctx.body as { max_tokens?: number };
        if (body.max_tokens === 5) {
          body.max_tokens = 2;
          ctx.markBodyModified();
        }
        return 'continue';
      },
    };
    const gw = await startTestGateway({ engine, pipeline: [lowerMaxTokens, 'relay'], upstreamUrl: up.url });
    try {
      const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
      const r = await client.chat.completions.create({
        model: 'mock-gpt',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 5,
      });
      expect(r.usage?.completion_tokens).toBe(2);
      expect(r.choices[0]?.finish_reason).toBe('length');
      const raw = '{"model":"mock-gpt",  "messages":[{"role":"user","content":"hi"}], "max_tokens": 3}';
      await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: raw,
      }).then((res) => res.arrayBuffer());
      expect(up.stats.lastBody).toEqual(JSON.parse(raw));
    } finally {
      await gw.close(1000);
      await up.close();
    }
  });
});

function postChat(gw: TestGateway): Promise<Response> {
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

/** Response JSON, loosely typed for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
async function json(res: Response): Promise<any> {
  return await res.json();
}
