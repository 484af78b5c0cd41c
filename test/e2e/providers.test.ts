import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_MODELS,
  type MockBehaviour,
  type MockUpstream,
  startMockUpstream,
} from '../../bench/upstream/mock-upstream.js';
import type { HttpEngine } from '../../core/config.js';
import { call } from '../routes/http.js';
import { assertDocumented } from '../routes/response-schema.js';
import { freePort } from '../support/global-setup.js';
import { lateBound } from '../support/late-bound.js';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';
import { BOOK_PRICES } from '../support/prices.js';
import { withTempDir } from '../support/temp-dir.js';
import { until } from '../support/until.js';

/**
 * Several providers: three mock providers behind one gateway, from a providers file. A provider
 * that answers 500, hangs past its timeout or refuses connections is skipped before the first byte and the
 * call is served by the next, charged once (fixed price); a failure after the first byte is not retried; the
 * breaker opens (the provider shows `down` and gets no calls), then a probe closes it again. Both stores.
 */

const messages = [{ role: 'user' as const, content: 'hi' }];
const PRICE_MSAT = 5000;

/** Fixed pricing: every call costs PRICE_MSAT. */
const FIXED = { FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: String(PRICE_MSAT / 1000) };

interface Rig {
  a: MockUpstream;
  b: MockUpstream;
  h: PaidGateway;
  /** Closes the gateway, then both providers. */
  close(): Promise<void>;
}

/**
 * Two mock providers, `a` and `b` (started with `mocks`), and a paid gateway whose providers file is what
 * `providers` makes of them (and of `refused`, a loopback port nothing listens on: connections are refused),
 * with the price book `modelsFile` if given.
 */
async function startRig(opts: {
  store: PaidStore;
  engine?: HttpEngine;
  env: Record<string, string>;
  providers: (a: MockUpstream, b: MockUpstream, refused: number) => object;
  mocks?: [Partial<MockBehaviour>, Partial<MockBehaviour>];
  modelsFile?: object;
}): Promise<Rig> {
  const a = await startMockUpstream(opts.mocks?.[0]);
  const b = await startMockUpstream(opts.mocks?.[1]);
  const refused = await freePort();
  const h = await startPaidGateway({
    store: opts.store,
    ...(opts.engine ? { engine: opts.engine } : {}),
    env: opts.env,
    providersFile: () => opts.providers(a, b, refused),
    ...(opts.modelsFile ? { modelsFile: opts.modelsFile } : {}),
  });
  return {
    a,
    b,
    h,
    async close() {
      await h.close();
      await a.close();
      await b.close();
    },
  };
}

type RigOptions = Parameters<typeof startRig>[0];

/**
 * A rig for the enclosing describe block: started before its tests, the ledger audited after each (unless
 * `auditEachTest` is false), closed after all. `a`, `b` and `h` stand for the started ones.
 */
function rigPerSuite(opts: RigOptions, { auditEachTest = true } = {}): Omit<Rig, 'close'> {
  let rig: Rig | undefined;
  beforeAll(async () => {
    rig = await startRig(opts);
  });
  if (auditEachTest) {
    afterEach(async () => {
      await rig!.h.auditOk();
    });
  }
  afterAll(async () => {
    await rig?.close();
  });
  return {
    a: lateBound(() => rig?.a, 'provider alpha'),
    b: lateBound(() => rig?.b, 'provider beta'),
    h: lateBound(() => rig?.h, 'the paid gateway'),
  };
}

/** The charge block (`x-node-cost`) the SDK puts on an answer. */
const costOf = (res: unknown) =>
  (res as Record<string, { msats: number; provider: string } | undefined>)['x-node-cost'];

/** The text of a streamed chat answer, read to its end. */
async function streamText(
  stream: AsyncIterable<{ choices: Array<{ delta?: { content?: string | null } }> }>,
) {
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}

describe.each<PaidStore>(['sqlite', 'redis'])('providers and failover on %s', (store) => {
  beforeAll(() => {
    process.env.BETA_KEY_FOR_TEST = 'sk-beta-secret-key';
  });
  const { a, b, h } = rigPerSuite({
    store,
    providers: (a, b, refused) => ({
      providers: [
        { name: 'gone', base_url: `http://127.0.0.1:${refused}/v1`, models: ['mock-mini'], priority: 0 },
        { name: 'alpha', base_url: a.url, api_key: 'sk-alpha-secret-key', priority: 1, timeout_ms: 400 },
        { name: 'beta', base_url: b.url, api_key_env: 'BETA_KEY_FOR_TEST', priority: 2 },
      ],
    }),
    env: { ...FIXED, PROVIDER_BREAKER_FAILURES: '4', PROVIDER_BREAKER_COOLDOWN_MS: '4000' },
  });
  beforeEach(() => {
    for (const m of [a, b]) {
      m.setBehaviour({
        error: undefined,
        hang: false,
        reset: false,
        stallAfterChunks: undefined,
        chunkDelayMs: 0,
      });
      m.resetStats();
    }
  });

  const metric = async (series: string): Promise<number> => {
    const text = (await call(h.gateway.url, 'GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.split(' ')[1]) : 0;
  };
  it('the first provider answers 500: the next serves the call, charged once, x-node-cost names it', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    a.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
    const res = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(costOf(res)).toMatchObject({ msats: PRICE_MSAT, provider: 'beta' });
    expect(a.stats.requests).toBe(1);
    expect(b.stats.requests).toBe(1);
    // The same body bytes reached the second provider, with its own key (never the caller's, never alpha's).
    expect(b.stats.lastBody).toMatchObject({ model: 'mock-gpt', messages });
    expect(b.stats.lastHeaders?.authorization).toBe('Bearer sk-beta-secret-key');
    expect(a.stats.lastHeaders?.authorization).toBe('Bearer sk-alpha-secret-key');
    expect(await h.available(apiKey)).toBe(balanceMsat - PRICE_MSAT);
  });

  it('a provider that hangs past its timeout_ms, or answers 429, is skipped the same way', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    a.setBehaviour({ hang: true });
    const res = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(costOf(res)?.provider).toBe('beta');
    a.setBehaviour({ hang: false, error: { status: 429, body: '{"error":{"message":"slow down"}}' } });
    const again = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(costOf(again)?.provider).toBe('beta');
    expect(await h.available(apiKey)).toBe(balanceMsat - 2 * PRICE_MSAT);
  });

  it('refused connections: a model the dead provider lists first goes on to the next', async () => {
    const { apiKey } = await h.fundKey(100);
    const refusedBefore = await metric('gateway_provider_requests_total{provider="gone",outcome="error"}');
    const res = await h.openai(apiKey).chat.completions.create({ model: 'mock-mini', messages });
    expect(costOf(res)?.provider).toBe('alpha');
    expect(await metric('gateway_provider_requests_total{provider="gone",outcome="error"}')).toBe(
      refusedBefore + 1,
    );
  });

  it('every provider failing: the last failure is answered and nothing is charged', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    a.setBehaviour({ error: { status: 503, body: '{"error":{"message":"a down"}}' } });
    b.setBehaviour({ error: { status: 502, body: '{"error":{"message":"b down"}}' } });
    const r = await call(h.gateway.url, 'POST', '/v1/chat/completions', {
      auth: apiKey,
      body: { model: 'mock-gpt', messages },
    });
    expect(r.status).toBe(502);
    expect(
      (r.body as { error: { details: { upstream_status: number } } }).error.details.upstream_status,
    ).toBe(502);
    // PROVIDER_MAX_ATTEMPTS=2: two providers asked, not three.
    expect(a.stats.requests + b.stats.requests).toBe(2);
    expect(await h.available(apiKey)).toBe(balanceMsat);
  });

  it('a failure after the first byte is not retried on another provider', async () => {
    const { apiKey } = await h.fundKey(100);
    a.setBehaviour({ stallAfterChunks: 2, chunks: 8, chunkDelayMs: 5 });
    const ac = new AbortController();
    const stream = await h
      .openai(apiKey)
      .chat.completions.create({ model: 'mock-gpt', messages, stream: true }, { signal: ac.signal });
    let got = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) got++;
      if (got === 2) break;
    }
    ac.abort();
    expect(got).toBe(2);
    // A negative: no failover call reaches beta. Nothing happens to wait on, so give it a moment.
    await new Promise((r) => setTimeout(r, 200));
    expect(b.stats.requests).toBe(0);
  });

  it('the breaker opens after consecutive failures (down, no calls), then a probe closes it', async () => {
    const { apiKey } = await h.fundKey(100);
    a.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
    for (let i = 0; i < 4; i++)
      await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    // Open: alpha is not asked at all. Right after the fourth failure, well inside the cool-down (4 s: with 1.5 s
    // and this call after the reads below, a CI run at 2,046 s found the cool-down already over).
    const before = a.stats.requests;
    await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(a.stats.requests).toBe(before);
    const list = await call(h.gateway.url, 'GET', '/v1/providers');
    assertDocumented('GET', '/v1/providers', 200, list.body);
    const status = (name: string) =>
      (list.body as { providers: Array<{ name: string; status: string }> }).providers.find(
        (p) => p.name === name,
      )?.status;
    expect(status('alpha')).toBe('down');
    expect(status('beta')).toBe('active');
    const detail = await call(h.gateway.url, 'GET', '/v1/providers/alpha');
    assertDocumented('GET', '/v1/providers/{provider_name}', 200, detail.body);
    expect(detail.body).toMatchObject({ name: 'alpha', status: 'down', priority: 1 });
    // After the cool-down alpha works again: the probe goes to it and closes the breaker.
    a.setBehaviour({ error: undefined });
    await until(
      "alpha's cool-down over",
      async () => (await call(h.gateway.url, 'GET', '/v1/providers/alpha')).body.status === 'degraded',
      15_000,
      250, // /v1/providers/{name} is limited per client IP: a few reads a second
    );
    const res = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(costOf(res)?.provider).toBe('alpha');
    const after = await call(h.gateway.url, 'GET', '/v1/providers/alpha');
    expect(after.body).toMatchObject({ status: 'active' });
  });

  it('/v1/providers, /v1/models and /metrics show no key and no URL credentials; metrics count per provider', async () => {
    const texts = [
      (await call(h.gateway.url, 'GET', '/v1/providers')).text,
      (await call(h.gateway.url, 'GET', '/v1/providers/beta')).text,
      (await call(h.gateway.url, 'GET', '/v1/models')).text,
      (await call(h.gateway.url, 'GET', '/metrics')).text,
    ];
    for (const t of texts) {
      expect(t).not.toContain('sk-alpha-secret-key');
      expect(t).not.toContain('sk-beta-secret-key');
    }
    const names = (JSON.parse(texts[0]!) as { providers: Array<{ name: string }> }).providers.map(
      (p) => p.name,
    );
    expect(names).toEqual(['gone', 'alpha', 'beta']);
    expect(texts[3]).toMatch(/gateway_provider_requests_total\{provider="beta",outcome="ok"\} [1-9]/);
    expect(texts[3]).toMatch(/gateway_provider_failovers_total\{provider="alpha"\} [1-9]/);
    expect(texts[3]).toMatch(/gateway_provider_requests_total\{provider="gone",outcome="error"\} [1-9]/);
    // The catalogue is the union: mock-mini (listed by the dead provider's entry and the others) and mock-gpt.
    const models = (JSON.parse(texts[2]!) as { data: Array<{ id: string }> }).data.map((m) => m.id);
    expect(models).toEqual(expect.arrayContaining(['mock-gpt', 'mock-mini']));
  });
});

describe.each<PaidStore>(['sqlite', 'redis'])('the circuit breaker skips an open provider on %s', (store) => {
  const { a, b, h } = rigPerSuite(
    {
      store,
      // mock-mini is served by alpha alone; mock-gpt by alpha, then beta.
      providers: (a, b) => ({
        providers: [
          { name: 'alpha', base_url: a.url, priority: 1, timeout_ms: 3000 },
          { name: 'beta', base_url: b.url, priority: 2, models: ['mock-gpt'] },
        ],
      }),
      env: {
        ...FIXED,
        PROVIDER_BREAKER_FAILURES: '2',
        PROVIDER_BREAKER_COOLDOWN_MS: '800',
        // The test polls /v1/providers/{name} (per-IP limited) every 20 ms while it waits for the breaker.
        RATE_LIMIT_IP_PER_MINUTE: '1000000',
        RATE_LIMIT_IP_PER_HOUR: '1000000',
        RATE_LIMIT_IP_PER_DAY: '1000000',
      },
    },
    { auditEachTest: false },
  );

  const chat = (apiKey: string, model: string) =>
    call(h.gateway.url, 'POST', '/v1/chat/completions', { auth: apiKey, body: { model, messages } });
  const errorOf = (r: { body: unknown }) =>
    (r.body as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
  const statusOf = async (name: string) =>
    ((await call(h.gateway.url, 'GET', `/v1/providers/${name}`)).body as { status: string }).status;

  it('open: nothing is sent to it; all of a model\u2019s providers open → 502 at once, nothing charged; one probe at a time', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    a.resetStats(); // the catalogue's model-list fetches at start
    b.resetStats();
    a.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
    for (let i = 0; i < 2; i++) {
      const r = await chat(apiKey, 'mock-mini');
      expect(r.status).toBe(502);
      expect(errorOf(r).details).toMatchObject({ upstream_status: 500 });
    }
    expect(a.stats.requests).toBe(2);
    expect(await statusOf('alpha')).toBe('down');

    // Every provider of mock-mini is open: answered at once, nothing sent, nothing charged.
    const fast = await chat(apiKey, 'mock-mini');
    expect(fast.status).toBe(502);
    expect(errorOf(fast)).toMatchObject({ code: 'upstream_error', details: { providers: ['alpha'] } });
    expect(errorOf(fast).message).toMatch(/All providers of model mock-mini are unavailable/);
    expect(a.stats.requests).toBe(2);

    // mock-gpt: alpha is skipped (no request, no timeout), beta serves and is charged.
    const served = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(costOf(served)?.provider).toBe('beta');
    expect(a.stats.requests).toBe(2);
    expect(b.stats.requests).toBe(1);
    expect(await h.available(apiKey)).toBe(balanceMsat - PRICE_MSAT);

    // After the cool-down exactly one call probes alpha. It hangs; the calls meanwhile skip alpha.
    a.setBehaviour({ error: undefined, hang: true });
    await until('alpha\u2019s cool-down ended', async () => (await statusOf('alpha')) === 'degraded');
    const probe = chat(apiKey, 'mock-mini');
    await until('the probe reached alpha', () => a.stats.requests === 3);
    const during = await Promise.all([1, 2, 3].map(() => chat(apiKey, 'mock-mini')));
    for (const r of during) {
      expect(r.status).toBe(502);
      expect(errorOf(r).message).toMatch(/All providers of model mock-mini are unavailable/);
    }
    expect(a.stats.requests).toBe(3);
    // The probe times out (alpha's timeout_ms): a failure, so the breaker opens again.
    expect((await probe).status).toBe(504);
    expect(await statusOf('alpha')).toBe('down');

    // The next probe succeeds and closes the breaker.
    a.setBehaviour({ hang: false });
    await until('alpha\u2019s cool-down ended again', async () => (await statusOf('alpha')) === 'degraded');
    const ok = await h.openai(apiKey).chat.completions.create({ model: 'mock-mini', messages });
    expect(costOf(ok)?.provider).toBe('alpha');
    expect(await statusOf('alpha')).toBe('active');
    expect(a.stats.requests).toBe(4);
    // Charged: the beta call and the successful probe only.
    expect(await h.available(apiKey)).toBe(balanceMsat - 2 * PRICE_MSAT);
    await h.auditOk();
  });
});

describe.each<PaidStore>(['sqlite', 'redis'])(
  'charged at the serving provider\u2019s own price on %s',
  (store) => {
    const { a, b, h } = rigPerSuite({
      store,
      // The price book: speech at 0.015 USD per 1,000 characters (15 msat per character here).
      modelsFile: { models: [{ id: 'tts-1', pricing: { speech_1k_chars: '0.015' } }] },
      // At BTC = $100,000 and no fees, 1 USD = 1,000,000 msat: alpha 10 + 20 msat per token, beta 20 + 40.
      providers: (a, b) => ({
        providers: [
          {
            name: 'alpha',
            base_url: a.url,
            priority: 1,
            pricing: {
              'mock-gpt': { prompt: '0.00001', completion: '0.00002' },
              // Not in the price book (the mock lists mock-mini without a price): priced by alpha alone.
              'mock-mini': { prompt: '0.00001', completion: '0.00002' },
              'tts-1': { request: '0.000003' },
            },
          },
          {
            name: 'beta',
            base_url: b.url,
            priority: 2,
            pricing: {
              'mock-gpt': { prompt: '0.00002', completion: '0.00004' },
              'tts-1': { request: '0.000007' },
            },
          },
        ],
      }),
      env: BOOK_PRICES,
    });
    beforeEach(() => {
      a.setBehaviour({ error: undefined });
      b.setBehaviour({ error: undefined });
      a.resetStats();
      b.resetStats();
    });
    // The mock's prompt is 1 token (ceil(2 characters / 4)); max_tokens 5 gives 5 completion tokens.
    const ask = (apiKey: string, model: string) =>
      h.openai(apiKey).chat.completions.create({ model, messages, max_tokens: 5 });

    it('alpha serves at alpha\u2019s price; after failover beta serves at beta\u2019s, charged once', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(100);
      const one = await ask(apiKey, 'mock-gpt');
      const p1 = one.usage!.prompt_tokens;
      const c1 = one.usage!.completion_tokens;
      expect(costOf(one)).toMatchObject({ provider: 'alpha', msats: 10 * p1 + 20 * c1 });
      a.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
      const two = await ask(apiKey, 'mock-gpt');
      const p2 = two.usage!.prompt_tokens;
      const c2 = two.usage!.completion_tokens;
      expect(costOf(two)).toMatchObject({ provider: 'beta', msats: 20 * p2 + 40 * c2 });
      expect(await h.available(apiKey)).toBe(balanceMsat - (10 * p1 + 20 * c1) - (20 * p2 + 40 * c2));
    });

    const fail500 = { error: { status: 500, body: '{"error":{"message":"boom"}}' } };

    it('a model only the providers price (none in the price book) is priced from them, also after failover', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(100);
      // 1 prompt token (mock: ceil(2 chars / 4)) × 10 + 5 completion tokens × 20 = 110 msat at alpha's price.
      const one = await ask(apiKey, 'mock-mini');
      expect(costOf(one)).toMatchObject({ provider: 'alpha', msats: 110 });
      // Beta declares no price for it: the call it serves after failover is charged the price the reservation
      // was made at (the dearest declared, alpha's), never free.
      a.setBehaviour(fail500);
      const two = await ask(apiKey, 'mock-mini');
      expect(costOf(two)).toMatchObject({ provider: 'beta', msats: 110 });
      expect(await h.available(apiKey)).toBe(balanceMsat - 220);
    });

    it('/v1/providers/{name} shows what that provider charges: its own prices where it declares them', async () => {
      type Detail = { models: Array<{ id: string; pricing?: Record<string, unknown> }> };
      const priceOf = async (provider: string, model: string) => {
        const r = await call(h.gateway.url, 'GET', `/v1/providers/${provider}`);
        assertDocumented('GET', '/v1/providers/{provider_name}', 200, r.body);
        return (r.body as Detail).models.find((m) => m.id === model)?.pricing;
      };
      // USD per 1k tokens, and msats per 1k tokens (1 USD = 1,000,000 msat here).
      expect(await priceOf('alpha', 'mock-gpt')).toMatchObject({
        prompt: 0.01,
        completion: 0.02,
        prompt_msats: 10_000,
        completion_msats: 20_000,
      });
      expect(await priceOf('beta', 'mock-gpt')).toMatchObject({
        prompt: 0.02,
        completion: 0.04,
        prompt_msats: 20_000,
        completion_msats: 40_000,
      });
      expect(await priceOf('alpha', 'mock-mini')).toMatchObject({ prompt: 0.01, prompt_msats: 10_000 });
      // Beta has no price for mock-mini and neither has the price book: none shown.
      expect(await priceOf('beta', 'mock-mini')).toBeUndefined();
    });

    it('a streamed speech answer: X-Node-Cost in the head is the serving provider\u2019s price and the charge', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(100);
      // "hello": 5 characters × 15 msat = 75, plus the provider's request price (alpha 3, beta 7 msat).
      // The reservation is sized for the dearer (82); the header must show what is charged.
      const one = await h
        .openai(apiKey)
        .audio.speech.create({ model: 'tts-1', input: 'hello', voice: 'alloy' });
      expect(one.headers.get('x-node-cost')).toBe('78');
      expect((await one.arrayBuffer()).byteLength).toBe(64 * 1024);
      expect(await h.available(apiKey)).toBe(balanceMsat - 78);
      a.setBehaviour(fail500);
      const two = await h
        .openai(apiKey)
        .audio.speech.create({ model: 'tts-1', input: 'hello', voice: 'alloy' });
      expect(two.headers.get('x-node-cost')).toBe('82');
      expect((await two.arrayBuffer()).byteLength).toBe(64 * 1024);
      expect(await h.available(apiKey)).toBe(balanceMsat - 78 - 82);
    });

    it('a metered stream: no X-Node-Cost header (unknown when the head goes); the final SSE block is the charge', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(100);
      a.setBehaviour(fail500);
      const r = await h.post(
        '/chat/completions',
        { model: 'mock-gpt', messages, max_tokens: 5, stream: true },
        { authorization: `Bearer ${apiKey}` },
      );
      expect(r.status).toBe(200);
      expect(r.headers.get('x-node-cost')).toBeNull();
      const text = await r.text();
      const block = JSON.parse(/^: x-node-cost (.+)$/m.exec(text)![1]!) as {
        msats: number;
        provider: string;
      };
      // Beta's price: 1 × 20 + 5 × 40 = 220 msat.
      expect(block).toMatchObject({ provider: 'beta', msats: 220 });
      expect(text.indexOf(': x-node-cost')).toBeLessThan(text.indexOf('data: [DONE]'));
      expect(await h.available(apiKey)).toBe(balanceMsat - 220);
    });
  },
);

describe.each<PaidStore>(['sqlite', 'redis'])('routing and failover over real calls on %s', (store) => {
  // At BTC = $100,000 and no fees 1 USD = 1,000,000 msat: "cheap" is 10 + 20 msat per token, "dear" 20 + 40.
  const cheap = { prompt: '0.00001', completion: '0.00002' };
  const dear = { prompt: '0.00002', completion: '0.00004' };
  const { a, b, h } = rigPerSuite({
    store,
    // Different model lists: the catalogue is their union.
    mocks: [
      { models: [...DEFAULT_MODELS, { id: 'mock-nano' }, { id: 'only-alpha' }] },
      { models: [...DEFAULT_MODELS, { id: 'mock-nano' }, { id: 'only-beta' }] },
    ],
    providers: (a, b, refused) => ({
      providers: [
        {
          name: 'gone',
          base_url: `http://127.0.0.1:${refused}/v1`,
          models: ['mock-gpt'],
          priority: 0,
          pricing: { 'mock-gpt': { prompt: '0.000001', completion: '0.000002' } },
        },
        {
          name: 'alpha',
          base_url: a.url,
          priority: 1,
          weight: 3,
          timeout_ms: 400,
          pricing: { 'mock-gpt': cheap, 'mock-mini': cheap, 'mock-nano': dear, 'only-alpha': cheap },
        },
        {
          name: 'beta',
          base_url: b.url,
          priority: 2,
          weight: 1,
          pricing: { 'mock-gpt': dear, 'mock-mini': cheap, 'mock-nano': cheap, 'only-beta': cheap },
        },
      ],
      routing: { 'mock-mini': 'weighted', 'mock-nano': 'cheapest' },
    }),
    env: {
      ...BOOK_PRICES,
      PROVIDER_MAX_ATTEMPTS: '3',
      // The dead provider is asked first on every mock-gpt call: keep its breaker closed for these tests.
      PROVIDER_BREAKER_FAILURES: '1000',
    },
  });
  beforeEach(() => {
    for (const m of [a, b]) {
      m.setBehaviour({ hang: false, stallAfterChunks: undefined, chunkDelayMs: 0 });
      m.resetStats();
    }
  });
  // The mock's prompt is 1 token (ceil(2 characters / 4)); max_tokens 5 gives 5 completion tokens.
  const ask = (apiKey: string, model: string) =>
    h.openai(apiKey).chat.completions.create({ model, messages, max_tokens: 5 });

  it('refused connections, then a hang past timeout_ms: the next provider serves, charged once at its price', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    // gone refuses → alpha: 1 × 10 + 5 × 20 = 110 msat.
    expect(costOf(await ask(apiKey, 'mock-gpt'))).toMatchObject({ provider: 'alpha', msats: 110 });
    expect(await h.available(apiKey)).toBe(balanceMsat - 110);
    // gone refuses, alpha hangs past its 400 ms → beta: 1 × 20 + 5 × 40 = 220 msat.
    a.setBehaviour({ hang: true });
    expect(costOf(await ask(apiKey, 'mock-gpt'))).toMatchObject({ provider: 'beta', msats: 220 });
    expect(a.stats.requests).toBe(2);
    expect(b.stats.requests).toBe(1);
    expect(await h.available(apiKey)).toBe(balanceMsat - 110 - 220);
  });

  it('cheapest: the provider with the lower price serves (not the one of higher priority) and charges its price', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    for (let i = 0; i < 3; i++) {
      expect(costOf(await ask(apiKey, 'mock-nano'))).toMatchObject({ provider: 'beta', msats: 110 });
    }
    expect(a.stats.requests).toBe(0);
    expect(b.stats.requests).toBe(3);
    expect(await h.available(apiKey)).toBe(balanceMsat - 330);
  });

  it('weighted 3:1 over 300 real calls: alpha serves 75 % (± 10 points), every call charged once', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const served: Record<string, number> = { alpha: 0, beta: 0 };
    for (let i = 0; i < 300; i++) {
      const block = costOf(await ask(apiKey, 'mock-mini'));
      expect(block?.msats).toBe(110);
      served[block!.provider]!++;
    }
    // Binomial(300, 0.75): one standard deviation is 2.5 points, so ±10 points fails about once in 15,000 runs.
    expect(Math.abs(served.alpha! / 300 - 0.75)).toBeLessThan(0.1);
    expect(served.alpha! + served.beta!).toBe(300);
    expect(a.stats.requests).toBe(served.alpha);
    expect(b.stats.requests).toBe(served.beta);
    expect(await h.available(apiKey)).toBe(balanceMsat - 300 * 110);
  });

  it('the catalogue is the union of the providers\u2019 different lists', async () => {
    const ids = (
      (await call(h.gateway.url, 'GET', '/v1/models')).body as { data: Array<{ id: string }> }
    ).data
      .map((m) => m.id)
      .sort();
    expect(ids).toEqual(['mock-gpt', 'mock-mini', 'mock-nano', 'only-alpha', 'only-beta']);
    const { apiKey } = await h.fundKey(10);
    expect(costOf(await ask(apiKey, 'only-beta'))?.msats).toBe(110);
    const unknown = await call(h.gateway.url, 'POST', '/v1/chat/completions', {
      auth: apiKey,
      body: { model: 'listed-by-nobody', messages },
    });
    expect(unknown.status).toBe(404);
  });

  it('the provider cuts its stream after the first bytes: not retried elsewhere, charged what was produced', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    // gone refuses; alpha sends 2 tokens, then stalls past its 400 ms timeout (the client keeps reading).
    a.setBehaviour({ stallAfterChunks: 2, chunkDelayMs: 5 });
    const stream = await h
      .openai(apiKey)
      .chat.completions.create({ model: 'mock-gpt', messages, stream: true, max_tokens: 8 });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(text).toBe('tok tok ');
    expect(err).toBeInstanceOf(Error);
    expect(b.stats.requests).toBe(0);
    // The abandoned-stream rule: estimated from what passed, at alpha's price. Prompt 9 tokens (3 reply
    // priming + 3 for the message + "user\nhi" = 3 with gpt-tokenizer) × 10 + completion 3 tokens ("tok tok "
    // = "tok", " tok", " ") × 20 = 150 msat. Settled as the stream ends (bounded wait, not a sleep).
    await until('the cut stream is settled', async () => (await h.available(apiKey)) === balanceMsat - 150);
    expect(await h.available(apiKey)).toBe(balanceMsat - 150);
  });
});

describe('failover on the uWebSockets.js engine', () => {
  /** A rig on uWS for one test: funds a key, zeroes the providers' counts, checks the audit and closes after. */
  async function onUws(
    providers: (a: MockUpstream, b: MockUpstream, refused: number) => object,
    env: Record<string, string>,
    test: (rig: Rig, key: { apiKey: string; balanceMsat: number }) => Promise<void>,
  ): Promise<void> {
    const rig = await startRig({ store: 'sqlite', engine: 'uws', providers, env });
    try {
      const key = await rig.h.fundKey(100);
      rig.a.resetStats();
      rig.b.resetStats();
      await test(rig, key);
      await rig.h.auditOk();
    } finally {
      await rig.close();
    }
  }
  const streamed = async (h: PaidGateway, apiKey: string) =>
    streamText(await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages, stream: true }));

  it('the first provider answers 500 (streamed and not): the next serves it, charged once', async () => {
    await onUws(
      (a, b) => ({
        providers: [
          { name: 'alpha', base_url: a.url, priority: 1 },
          { name: 'beta', base_url: b.url, priority: 2 },
        ],
      }),
      FIXED,
      async ({ a, b, h }, { apiKey, balanceMsat }) => {
        a.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
        const res = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
        expect(costOf(res)?.provider).toBe('beta');
        expect(await streamed(h, apiKey)).toBe('tok '.repeat(8));
        expect(a.stats.requests).toBe(2);
        expect(b.stats.requests).toBe(2);
        expect(await h.available(apiKey)).toBe(balanceMsat - 2 * PRICE_MSAT);
      },
    );
  });

  it('refused connections and a hang past timeout_ms (streamed and not): the next serves it, charged once', async () => {
    await onUws(
      (a, b, refused) => ({
        providers: [
          { name: 'gone', base_url: `http://127.0.0.1:${refused}/v1`, priority: 0 },
          { name: 'alpha', base_url: a.url, priority: 1, timeout_ms: 400 },
          { name: 'beta', base_url: b.url, priority: 2 },
        ],
      }),
      { ...FIXED, PROVIDER_MAX_ATTEMPTS: '3', PROVIDER_BREAKER_FAILURES: '1000' },
      async ({ a, b, h }, { apiKey, balanceMsat }) => {
        // gone refuses → alpha serves.
        const one = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
        expect(costOf(one)?.provider).toBe('alpha');
        // gone refuses, alpha hangs past 400 ms → beta serves, streamed and not.
        a.setBehaviour({ hang: true });
        const two = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
        expect(costOf(two)?.provider).toBe('beta');
        expect(await streamed(h, apiKey)).toBe('tok '.repeat(8));
        // Calls only: the catalogue retries the refused provider's model list and reads the others' again.
        expect(a.stats.requests - a.stats.modelLists).toBe(3);
        expect(b.stats.requests - b.stats.modelLists).toBe(2);
        expect(await h.available(apiKey)).toBe(balanceMsat - 3 * PRICE_MSAT);
      },
    );
  });
});

describe('the one-provider shorthand (UPSTREAM_BASE_URL, no providers file)', () => {
  it('its breaker reports down but does not refuse calls: nothing to fail over to', async () => {
    const h = await startPaidGateway({
      store: 'sqlite',
      env: { ...FIXED, PROVIDER_BREAKER_FAILURES: '2', PROVIDER_BREAKER_COOLDOWN_MS: '60000' },
    });
    try {
      const { apiKey, balanceMsat } = await h.fundKey(100);
      h.upstream.resetStats();
      h.upstream.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
      for (let i = 0; i < 3; i++) {
        const r = await call(h.gateway.url, 'POST', '/v1/chat/completions', {
          auth: apiKey,
          body: { model: 'mock-gpt', messages },
        });
        expect(
          (r.body as { error: { details: { upstream_status: number } } }).error.details.upstream_status,
        ).toBe(500);
      }
      expect(h.upstream.stats.requests).toBe(3);
      const list = (await call(h.gateway.url, 'GET', '/v1/providers')).body as {
        providers: Array<{ status: string }>;
      };
      expect(list.providers[0]?.status).toBe('down');
      // Still sent (and, once it answers, closed again) within the cool-down.
      h.upstream.setBehaviour({ error: undefined });
      await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
      expect(h.upstream.stats.requests).toBe(4);
      const after = (await call(h.gateway.url, 'GET', '/v1/providers')).body as {
        providers: Array<{ status: string }>;
      };
      expect(after.providers[0]?.status).toBe('active');
      expect(await h.available(apiKey)).toBe(balanceMsat - PRICE_MSAT);
      await h.auditOk();
    } finally {
      await h.close();
    }
  });
});

describe('a bad providers file stops the start', () => {
  /** Runs the gateway's entry (core/main.ts) as a process; resolves with its exit code and stderr. */
  function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts'], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
  }

  it('the process exits 1 naming the file, the entry and the field (or the unreadable file)', async () => {
    await withTempDir('gw-bad-providers-', async (dir) => {
      const file = join(dir, 'providers.yaml');
      writeFileSync(
        file,
        'providers:\n  - name: a\n    base_url: http://127.0.0.1:9/v1\n  - name: b\n    base_url: http://127.0.0.1:9/v1\n    weight: 0\n',
      );
      const bad = await runMain({ DATA_DIR: dir, PROVIDERS_PATH: file });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(
        `Configuration error: PROVIDERS_PATH (${file}): providers[1] ("b"): "weight" must be an integer from 1 to 1000000`,
      );
      const missing = await runMain({ DATA_DIR: dir, PROVIDERS_PATH: join(dir, 'nope.json') });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain(
        `Configuration error: PROVIDERS_PATH: cannot read ${join(dir, 'nope.json')} (ENOENT)`,
      );
    });
  }, 30_000);
});
