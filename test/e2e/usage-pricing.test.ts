import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, describe, expect, it } from 'vitest';
import { availableAfter } from '../support/balance.js';
import { mockModels } from '../support/models-file.js';
import { type PaidGateway, type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { BOOK_PRICES } from '../support/prices.js';

/**
 * Every usage dimension charged as the provider bills it, end to end on both stores: the mock provider reports
 * cache reads, cache writes, reasoning, web search calls and a service tier in each API's own usage shape;
 * the balance moves by exactly the literal figure worked below, and the cost block names each dimension.
 *
 * Prices (models.json) at BTC $100,000, fees 1, no base fee, so 1 micro-USD = 1 msat: prompt 1 msat/token,
 * completion 2, cache read 0.1, cache write 1.25, 1-hour cache write 2, reasoning 3, web search $0.01 =
 * 10,000 msat per call, flex tier × 0.5, priority × 2. `mock-mini` has only prompt and completion prices.
 * The mock counts 6 prompt tokens for the message below and answers 8 completion tokens.
 */
const MODELS = mockModels({
  prompt: '0.000001',
  completion: '0.000002',
  input_cache_read: '0.0000001',
  input_cache_write: '0.00000125',
  input_cache_write_1h: '0.000002',
  internal_reasoning: '0.000003',
  web_search: '0.01',
  service_tiers: { flex: '0.5', priority: '2' },
  source: 'test',
  updated_at: '2026-11-25',
});
const messages = [{ role: 'user' as const, content: 'Say something, please.' }];
const input = 'Say something, please.';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field
type Json = Record<string, any>;

function post(h: PaidGateway, path: string, key: string, body: unknown): Promise<Response> {
  return h.post(path, body, { authorization: `Bearer ${key}` });
}

/** The `: x-node-cost {…}` SSE comment of a streamed answer. */
function costComment(text: string): Json {
  const m = /^: x-node-cost (\{.*\})$/m.exec(text);
  if (!m) throw new Error(`no x-node-cost comment in ${text.slice(-300)}`);
  return JSON.parse(m[1]!) as Json;
}

/** A 200 answer charged `msats` (its x-node-cost header) whose cost block names exactly `dimensions`. */
async function expectCharged(
  res: Response,
  msats: string,
  dimensions: Record<string, number>,
): Promise<void> {
  expect(res.status).toBe(200);
  expect(res.headers.get('x-node-cost')).toBe(msats);
  expect(((await res.json()) as Json)['x-node-cost'].breakdown.dimensions).toEqual(dimensions);
}

async function unpricedCount(h: PaidGateway, dimension: string): Promise<number> {
  const text = await (await fetch(`${h.gateway.url}/metrics`)).text();
  const m = new RegExp(`^gateway_unpriced_dimension_total\\{dimension="${dimension}"\\} (\\d+)$`, 'm').exec(
    text,
  );
  return m ? Number(m[1]) : 0;
}

describe.each<PaidStore>(['sqlite', 'redis'])('usage dimensions charged on %s', (store) => {
  const h = paidGatewayPerSuite({
    store,
    modelsFile: MODELS,
    // A client that leaves: its stream is not read on (the stalled provider would send nothing more). The search
    // results a web search adds to the input are left out of the bound here (WEB_SEARCH_CONTENT_TOKENS=0), so the
    // figures below show the search call alone (test/e2e/bound-media.test.ts bounds the results).
    env: {
      ...BOOK_PRICES,
      RATE_LIMIT_IP_PER_MINUTE: '1000',
      ABANDONED_DRAIN_MS: '0',
      WEB_SEARCH_CONTENT_TOKENS: '0',
    },
  });
  // Before the fixture's audit (after-hooks run last registered first).
  afterEach(() => {
    h.upstream.setBehaviour({ usage: {}, chunkDelayMs: 0, stallAfterChunks: undefined, chunks: 8 });
  });

  // 6 prompt + 805 cache reads × 0.1 + 100 cache writes × 1.25 + 8 completion × 2 + 20 reasoning × 3
  // = 6 + 80.5 + 125 + 16 + 60 = 287.5 → 288 msat (the overcharge would have been 911 + 28 × 2 = 967).
  const CHAT_USAGE = { cachedTokens: 805, cacheWriteTokens: 100, reasoningTokens: 20 };
  const CHAT_DIMENSIONS = {
    prompt: 6,
    input_cache_read: 80,
    input_cache_write: 125,
    completion: 16,
    internal_reasoning: 60,
    fees: 1,
  };

  it('chat, not streamed: cache reads, cache writes and reasoning each at their rate (288 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: CHAT_USAGE });
    const res = await post(h, '/chat/completions', apiKey, { model: 'mock-gpt', messages });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-node-cost')).toBe('288');
    const body = (await res.json()) as Json;
    expect(body['x-node-cost']).toMatchObject({
      msats: 288,
      breakdown: { prompt_cost: 211, completion_cost: 76, fees: 1, dimensions: CHAT_DIMENSIONS },
      estimated: false,
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 288);
  });

  it('chat, streamed: the same usage from the usage chunk, the cost as the last SSE comment (288 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: CHAT_USAGE });
    const res = await post(h, '/chat/completions', apiKey, { model: 'mock-gpt', messages, stream: true });
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(costComment(text)).toMatchObject({ msats: 288, breakdown: { dimensions: CHAT_DIMENSIONS } });
    expect(await h.available(apiKey)).toBe(balanceMsat - 288);
  });

  // 6 uncached input + 300 cached × 0.1 + 8 output × 2 = 6 + 30 + 16 = 52 msat
  it('Responses, not streamed and streamed: cached input at the cache read rate (52 msat each)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: { cachedTokens: 300 } });
    const res = await post(h, '/responses', apiKey, { model: 'mock-gpt', input });
    await expectCharged(res, '52', { prompt: 6, input_cache_read: 30, completion: 16, fees: 0 });
    const s = await post(h, '/responses', apiKey, { model: 'mock-gpt', input, stream: true });
    const text = await s.text();
    expect(text).toContain('event: response.completed');
    expect(costComment(text)).toMatchObject({ msats: 52, estimated: false });
    expect(await h.available(apiKey)).toBe(balanceMsat - 2 * 52);
  });

  it('a web search call: each call the provider made at web_search (2 × 10,000 + 22 tokens = 20,022 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: { webSearchCalls: 2 } });
    const res = await post(h, '/responses', apiKey, {
      model: 'mock-gpt',
      input,
      tools: [{ type: 'web_search' }],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 20_022,
      breakdown: { dimensions: { prompt: 6, completion: 16, web_search: 20_000, fees: 0 } },
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 20_022);
    // A model with no web_search price is refused before anything is reserved or relayed.
    const before = h.upstream.stats.requests;
    const refused = await post(h, '/responses', apiKey, {
      model: 'mock-mini',
      input,
      tools: [{ type: 'web_search' }],
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Json).error.code).toBe('model_not_priced');
    expect(h.upstream.stats.requests).toBe(before);
    expect(await h.available(apiKey)).toBe(balanceMsat - 20_022);
  });

  it('a flex-tier answer: the provider-reported tier halves the whole call ((6 + 16) × 0.5 = 11 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: { serviceTier: 'flex' } });
    const res = await post(h, '/chat/completions', apiKey, {
      model: 'mock-gpt',
      messages,
      service_tier: 'flex',
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 11,
      breakdown: { dimensions: { prompt: 3, completion: 8, fees: 0 } },
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 11);
  });

  it('an unpriced dimension is charged at its base rate and counted in the metric', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const writes = await unpricedCount(h, 'input_cache_write');
    const reasoning = await unpricedCount(h, 'internal_reasoning');
    h.upstream.setBehaviour({ usage: { cacheWriteTokens: 100, reasoningTokens: 20 } });
    const res = await post(h, '/chat/completions', apiKey, { model: 'mock-mini', messages });
    // mock-mini prices only prompt (1) and completion (2): 6 + 100 cache writes at the prompt rate + 8 × 2
    // + 20 reasoning at the completion rate = 6 + 100 + 16 + 40 = 162 msat
    expect(((await res.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 162,
      breakdown: {
        dimensions: { prompt: 6, input_cache_write: 100, completion: 16, internal_reasoning: 40, fees: 0 },
      },
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 162);
    expect(await unpricedCount(h, 'input_cache_write')).toBe(writes + 1);
    expect(await unpricedCount(h, 'internal_reasoning')).toBe(reasoning + 1);
  });

  it('a web search reported on a model with no web_search price: at its request price, here 0, and counted', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const searches = await unpricedCount(h, 'web_search');
    // No tool declared (a declared one is refused for this model): the provider searched on its own.
    h.upstream.setBehaviour({ usage: { webSearchCalls: 2 } });
    const res = await post(h, '/responses', apiKey, { model: 'mock-mini', input });
    expect(res.status).toBe(200);
    // mock-mini has no web_search and no request price: the two searches cost 0; 6 + 8 × 2 = 22 msat
    expect(((await res.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 22,
      breakdown: { dimensions: { prompt: 6, completion: 16, web_search: 0, fees: 0 } },
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 22);
    expect(await unpricedCount(h, 'web_search')).toBe(searches + 1);
  });

  it('Responses, streamed, ended by response.incomplete: metered from that terminal event (6 + 3 × 2 = 12 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const s = await post(h, '/responses', apiKey, {
      model: 'mock-gpt',
      input,
      stream: true,
      max_output_tokens: 3,
    });
    const text = await s.text();
    expect(text).toContain('event: response.incomplete');
    expect(costComment(text)).toMatchObject({ msats: 12, estimated: false });
    expect(await h.available(apiKey)).toBe(balanceMsat - 12);
  });

  /**
   * The 402 for a call without max_tokens names the completion tokens the balance affords for THAT call — its
   * tier's multiplier and declared web search call included — counted with the bytes the retry's
   * `max_completion_tokens` field adds to the prompt bound; a retry with that number is reserved in full and
   * settled exactly even when the provider answers every one of those tokens.
   *
   * The bound prices the prompt at the dearest input rate (1-hour cache write, 2 msat) and the answer at the
   * dearest output rate (reasoning, 3 msat). Prompt bounds (core/metering/prompt-bound.ts): the chat body 138
   * bytes-tokens, 158 with `service_tier`, the Responses body with a web_search tool 667; + 22 for
   * `"max_completion_tokens"` and one digit, then the answer's 4 digits: + 25.
   */
  async function namedThenRetried(
    path: string,
    body: Json,
    sats: number,
    named: number,
    field: string,
  ): Promise<{ apiKey: string; balanceMsat: number; retry: Response }> {
    const { apiKey, balanceMsat } = await h.fundKey(sats);
    const before = h.upstream.stats.requests;
    const refused = await post(h, path, apiKey, body);
    expect(refused.status).toBe(402);
    const err = ((await refused.json()) as Json).error;
    expect(err.code).toBe('payment_required');
    expect(err.details.affordable_max_tokens).toBe(named);
    expect(err.message).toContain(`at most ${named} completion tokens`);
    expect(h.upstream.stats.requests).toBe(before);
    expect(await h.available(apiKey)).toBe(balanceMsat);
    // The provider answers as many tokens as it is allowed.
    h.upstream.setBehaviour({ chunks: 100_000 });
    const retry = await post(h, path, apiKey, { ...body, [field]: named });
    expect(retry.status).toBe(200);
    return { apiKey, balanceMsat, retry };
  }

  it('402 without max_tokens names what the balance affords; a retry with it is served and charged exactly', async () => {
    // 10,000 msat: (10,000 − 2 × (138 + 25)) / 3 = 3,224 tokens (3,226 is the retry's bound at one digit).
    const { apiKey, balanceMsat, retry } = await namedThenRetried(
      '/chat/completions',
      { model: 'mock-gpt', messages },
      10,
      3224,
      'max_tokens',
    );
    // 6 prompt + 3,224 × 2 = 6,454 msat
    expect(((await retry.json()) as Json).usage.completion_tokens).toBe(3224);
    expect(retry.headers.get('x-node-cost')).toBe('6454');
    expect(await h.available(apiKey)).toBe(balanceMsat - 6454);
  });

  it('402 with service_tier priority (× 2) names half as many tokens; the retry at that tier fits the balance', async () => {
    // 10,000 msat / 2 = 5,000: (5,000 − 2 × (158 + 25)) / 3 = 1,544 tokens (the multiplier ignored: 3,228).
    h.upstream.setBehaviour({ usage: { serviceTier: 'priority' } });
    const { apiKey, balanceMsat, retry } = await namedThenRetried(
      '/chat/completions',
      { model: 'mock-gpt', messages, service_tier: 'priority' },
      10,
      1544,
      'max_tokens',
    );
    // (6 + 1,544 × 2) × 2 = 6,188 msat (3,228 tokens would have cost 12,924: more than the balance)
    expect(((await retry.json()) as Json)['x-node-cost']).toMatchObject({ msats: 6188, estimated: false });
    expect(await h.available(apiKey)).toBe(balanceMsat - 6188);
  });

  it('402 with a declared web search tool reserves its call: the tokens named leave room for it', async () => {
    // 20,000 msat − 10,000 for the search: (10,000 − 2 × (667 + 25)) / 3 = 2,872 tokens (ignoring it: 6,222).
    h.upstream.setBehaviour({ usage: { webSearchCalls: 1 } });
    const { apiKey, balanceMsat, retry } = await namedThenRetried(
      '/responses',
      { model: 'mock-gpt', input, tools: [{ type: 'web_search' }] },
      20,
      2872,
      'max_output_tokens',
    );
    // 6 + 2,872 × 2 + 10,000 = 15,750 msat
    expect(((await retry.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 15_750,
      breakdown: { dimensions: { prompt: 6, completion: 5744, web_search: 10_000, fees: 0 } },
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 15_750);
  });

  /**
   * Early disconnects: the provider streams 3 tokens and stalls; the client reads them and leaves. Nothing
   * final was reported, so the rule charges the prompt at its bound (what the reservation counted for it,
   * core/metering/prompt-bound.ts) and the output that passed (counted from the text: "tok tok tok " is 4 o200k
   * tokens, the trailing space being one). `mock-mini`: a model that does not reason (`mock-gpt` prices
   * internal reasoning, so a cut stream of it pays its reservation; test/e2e/abandoned-calls.test.ts). A key
   * funded with 100 sats makes the call; what it was charged, once and estimated, is the answer.
   */
  async function chargedForLeaving(
    path: string,
    body: object,
    marker: RegExp,
    stallAfterChunks = 3,
  ): Promise<number> {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ chunks: 50, chunkDelayMs: 1, stallAfterChunks });
    const ac = new AbortController();
    const aborted = h.upstream.waitForAborted(undefined, 10_000);
    const res = await fetch(`${h.baseURL}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify(body),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while ((seen.match(marker) ?? []).length < 3)
      seen += Buffer.from((await reader.read()).value!).toString();
    ac.abort();
    await aborted;
    const left = await availableAfter(h, apiKey, balanceMsat);
    const txs = await h.ledger.listTransactions({ apiKey });
    expect(txs!.transactions[0]).toMatchObject({ type: 'usage', estimated: true });
    expect((await h.ledger.getKeyInfo({ apiKey }))!.usage.reservedMsat).toBe(0);
    return balanceMsat - left;
  }

  it('chat, streamed, client leaves early: charged by the rule (prompt bound + output that passed)', async () => {
    const charged = await chargedForLeaving(
      '/chat/completions',
      { model: 'mock-mini', messages, stream: true },
      /"tok "/g,
    );
    // prompt bound of the body: 149 tokens × 1 msat; output 4 × 2 msat
    expect(encode('tok tok tok ').length).toBe(4);
    expect(charged).toBe(149 + 8);
  });

  it('Responses, streamed, client leaves before the terminal event: charged by the same rule', async () => {
    const charged = await chargedForLeaving(
      '/responses',
      { model: 'mock-mini', input, stream: true },
      /output_text\.delta/g,
    );
    // prompt bound of the body: 115 tokens × 1 msat; output 4 × 2 msat
    expect(charged).toBe(115 + 8);
  });

  it('completions, streamed: metered from the usage chunk the gateway asked for (6 + 8 × 2 = 22 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const res = await post(h, '/completions', apiKey, { model: 'mock-gpt', prompt: input, stream: true });
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text).not.toContain('"usage"'); // asked for on the client's behalf, not passed on
    expect(costComment(text)).toMatchObject({ msats: 22, estimated: false });
    expect(await h.available(apiKey)).toBe(balanceMsat - 22);
  });

  it('completions, streamed, client leaves early: charged by the same rule', async () => {
    // Every event of a legacy completion stream carries text: the mock sends 3 ("tok " each) and stalls.
    const charged = await chargedForLeaving(
      '/completions',
      { model: 'mock-mini', prompt: input, stream: true },
      /"text":"tok "/g,
      2,
    );
    // prompt bound of the body: 116 tokens × 1 msat; output "tok tok tok " 4 × 2 msat
    expect(charged).toBe(116 + 8);
  });

  it('/v1/models shows every priced dimension and what it is charged', async () => {
    const res = await fetch(`${h.baseURL}/models`);
    const gpt = ((await res.json()) as Json).data.find((m: Json) => m.id === 'mock-gpt');
    expect(gpt.pricing).toMatchObject({
      prompt: 0.001,
      completion: 0.002,
      input_cache_read: 0.0001,
      input_cache_write: 0.00125,
      input_cache_write_1h: 0.002,
      internal_reasoning: 0.003,
      web_search: 0.01,
      service_tiers: { flex: 0.5, priority: 2 },
      source: 'test',
      updated_at: '2026-11-25',
      dimension_msats: {
        prompt: 1000,
        input_cache_read: 100,
        input_cache_write: 1250,
        input_cache_write_1h: 2000,
        input_audio: 1000,
        input_image: 1000,
        completion: 2000,
        internal_reasoning: 3000,
        output_audio: 2000,
        web_search: 10_000,
      },
    });
  });
});

/**
 * A provider's own `pricing` (providers file) prices the calls it serves, every dimension and its service tiers
 * included, over the price book's: the book prices mock-gpt at 1 / 2 msat per token with no cache prices and no
 * tiers; the provider at 2 / 4, cache reads 0.2, cache writes 2.5, flex × 0.5. mock-image has no price in the
 * book; the provider sells it at $0.02 an image.
 */
describe.each<PaidStore>(['sqlite', 'redis'])("a provider's own prices on %s", (store) => {
  const h = paidGatewayPerSuite({
    store,
    modelsFile: {
      models: [
        { id: 'mock-gpt', context_length: 8192, pricing: { prompt: '0.000001', completion: '0.000002' } },
        { id: 'mock-image' },
      ],
    },
    providersFile: (url) => ({
      providers: [
        {
          name: 'own-prices',
          base_url: url,
          pricing: {
            'mock-gpt': {
              prompt: '0.000002',
              completion: '0.000004',
              input_cache_read: '0.0000002',
              input_cache_write: '0.0000025',
              service_tiers: { flex: '0.5' },
              source: 'test',
            },
            'mock-image': { image: '0.02' },
          },
        },
      ],
    }),
    env: BOOK_PRICES,
  });
  afterEach(() => {
    h.upstream.setBehaviour({ usage: {} });
  });

  it('a flex chat call with cache reads and writes: each dimension at the provider rate, halved (227 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: { cachedTokens: 800, cacheWriteTokens: 100, serviceTier: 'flex' } });
    const res = await post(h, '/chat/completions', apiKey, {
      model: 'mock-gpt',
      messages,
      service_tier: 'flex',
    });
    // (6 × 2 + 800 × 0.2 + 100 × 2.5 + 8 × 4) × 0.5 = (12 + 160 + 250 + 32) × 0.5 = 227 msat
    // (at the book's prices, with no tier and the cache at the prompt rate: 6 + 800 + 100 + 16 = 922)
    await expectCharged(res, '227', {
      prompt: 6,
      input_cache_read: 80,
      input_cache_write: 125,
      completion: 16,
      fees: 0,
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 227);
  });

  it('an image model only the provider prices: its image price (2 × $0.02 = 40,000 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const res = await post(h, '/images/generations', apiKey, { model: 'mock-image', prompt: 'a cat', n: 2 });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-node-cost')).toBe('40000');
    expect(await h.available(apiKey)).toBe(balanceMsat - 40_000);
  });
});
