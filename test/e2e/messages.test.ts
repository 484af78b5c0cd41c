import Anthropic from '@anthropic-ai/sdk';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, describe, expect, it } from 'vitest';
import { availableAfter } from '../support/balance.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { BOOK_PRICES } from '../support/prices.js';

/**
 * POST /v1/messages (Anthropic's Messages API) with the official @anthropic-ai/sdk as the client (on this
 * Node, 20): authenticated by x-api-key or Bearer, relayed to a provider declared `"api": "anthropic"` (which
 * gets the node's key as x-api-key with anthropic-version), charged from Anthropic's usage — cache reads,
 * 5-minute and 1-hour cache writes apart — exactly, streamed and not; count_tokens free; errors in Anthropic's
 * shape carrying our code.
 *
 * Prices at BTC $100,000, fees 1, no base fee (1 micro-USD = 1 msat): prompt 3 msat per token, completion 15,
 * cache read 0.3, 5-minute cache write 3.75, 1-hour cache write 6. The mock counts 6 input tokens for the
 * message and answers 8 output tokens.
 */
const MODELS = {
  models: [
    {
      id: 'mock-claude',
      context_length: 200000,
      pricing: {
        prompt: '0.000003',
        completion: '0.000015',
        input_cache_read: '0.0000003',
        input_cache_write: '0.00000375',
        input_cache_write_1h: '0.000006',
      },
    },
  ],
};
const UPSTREAM_KEY = 'sk-ant-operator-SECRET-1';
const messages = [{ role: 'user' as const, content: 'Say something, please.' }];
// 6 × 3 + 1,001 × 0.3 + 200 × 3.75 + 100 × 6 + 8 × 15 = 18 + 300.3 + 750 + 600 + 120 = 1,788.3 → 1,789 msat
const CACHE = { cachedTokens: 1001, cacheWriteTokens: 200, cacheWrite1hTokens: 100 };
const CHARGE = 1789;
const DIMENSIONS = {
  prompt: 18,
  input_cache_read: 300,
  input_cache_write: 750,
  input_cache_write_1h: 600,
  completion: 120,
  fees: 1,
};

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field
type Json = Record<string, any>;

describe.each<PaidStore>(['sqlite', 'redis'])('/v1/messages on %s', (store) => {
  const h = paidGatewayPerSuite({
    store,
    modelsFile: MODELS,
    env: BOOK_PRICES,
    providersFile: (url) => ({
      providers: [{ name: 'anthropic-mock', base_url: url, api: 'anthropic', api_key: UPSTREAM_KEY }],
    }),
  });
  // Before the fixture's audit (after-hooks run last registered first).
  afterEach(() => {
    h.upstream.setBehaviour({
      usage: {},
      chunkDelayMs: 0,
      stallAfterChunks: undefined,
      chunks: 8,
      recordResponses: false,
    });
  });
  const client = (apiKey: string) =>
    new Anthropic({ apiKey, baseURL: h.gateway.url, maxRetries: 0, timeout: 20_000 });

  it('not streamed, through the SDK with x-api-key: cache reads, 5m and 1h writes charged exactly; body untouched', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: CACHE });
    const { data, response } = await client(apiKey)
      .messages.create({ model: 'mock-claude', max_tokens: 100, messages })
      .withResponse();
    expect(data.content[0]).toEqual({ type: 'text', text: 'tok '.repeat(8) });
    expect(data.usage).toMatchObject({
      input_tokens: 6,
      cache_read_input_tokens: 1001,
      cache_creation_input_tokens: 300,
      output_tokens: 8,
    });
    expect(response.headers.get('x-node-cost')).toBe(String(CHARGE));
    expect((data as unknown as Json)['x-node-cost']).toBeUndefined(); // relayed byte for byte
    expect(await h.available(apiKey)).toBe(balanceMsat - CHARGE);
    // The provider got the node's key as x-api-key with anthropic-version, never the caller's key.
    const sent = h.upstream.stats.lastHeaders!;
    expect(sent['x-api-key']).toBe(UPSTREAM_KEY);
    expect(sent['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/); // the SDK's own, passed on
    expect(sent.authorization).toBeUndefined();
    expect(JSON.stringify(sent)).not.toContain(apiKey);
  });

  it('streamed, through the SDK with a Bearer token: input and cache counts from message_start, output from message_delta', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: CACHE });
    const stream = await new Anthropic({
      authToken: apiKey,
      apiKey: null,
      baseURL: h.gateway.url,
      maxRetries: 0,
    }).messages.create({ model: 'mock-claude', max_tokens: 100, messages, stream: true });
    let text = '';
    for await (const ev of stream) {
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    expect(text).toBe('tok '.repeat(8));
    expect(await h.available(apiKey)).toBe(balanceMsat - CHARGE);
  });

  it('streamed, raw: the events as the provider sent them, then the cost as the last SSE comment', async () => {
    const { apiKey } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: CACHE });
    const res = await fetch(`${h.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ model: 'mock-claude', max_tokens: 100, messages, stream: true }),
    });
    const text = await res.text();
    // A caller that names no anthropic-version: the node sends the one it speaks.
    expect(h.upstream.stats.lastHeaders!['anthropic-version']).toBe('2023-06-01');
    const events = text.split('\n\n').filter((e) => e !== '');
    expect(events[0]).toMatch(/^event: message_start\n/);
    expect(events.at(-2)).toBe('event: message_stop\ndata: {"type":"message_stop"}');
    const m = /^: x-node-cost (\{.*\})$/.exec(events.at(-1)!);
    expect(JSON.parse(m![1]!)).toMatchObject({
      msats: CHARGE,
      breakdown: { dimensions: DIMENSIONS },
      estimated: false,
    });
  });

  it('a balance that cannot cover max_tokens and the prompt bound: 402 in the Anthropic shape, nothing relayed', async () => {
    // The bound: the prompt bound of {"model","max_tokens":10,"messages"} (153, core/metering/prompt-bound.ts)
    // at the dearest input rate (1-hour cache write, 6 msat) + 10 tokens at the completion rate (15 msat):
    // 918 + 150 = 1,068 msat, more than the 1,000 msat of the key. (max_tokens below the minimal answer of 16
    // tokens: the bound is also the least the ledger admits.)
    const { apiKey, balanceMsat } = await h.fundKey(1);
    const before = h.upstream.stats.requests;
    const err = await client(apiKey)
      .messages.create({ model: 'mock-claude', max_tokens: 10, messages })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    const api = err as InstanceType<typeof Anthropic.APIError>;
    expect(api.status).toBe(402);
    expect(api.error).toEqual({
      type: 'error',
      error: {
        type: 'billing_error',
        code: 'payment_required',
        message: expect.any(String),
        details: { balance: 1000, required: 1068, shortfall: 68 },
      },
    });
    expect(h.upstream.stats.requests).toBe(before);
    expect(await h.available(apiKey)).toBe(balanceMsat);
    expect((await h.ledger.getKeyInfo({ apiKey }))!.usage.reservedMsat).toBe(0);
  });

  it('not streamed: the body reaches the client byte for byte as the provider sent it', async () => {
    const { apiKey } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: CACHE, recordResponses: true });
    const res = await fetch(`${h.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ model: 'mock-claude', max_tokens: 100, messages }),
    });
    expect(res.status).toBe(200);
    const got = Buffer.from(await res.arrayBuffer());
    const sent = h.upstream.stats.lastResponse!;
    expect(sent.length).toBeGreaterThan(100);
    expect(got.equals(sent)).toBe(true);
    expect(res.headers.get('x-node-cost')).toBe(String(CHARGE));
  });

  it('streamed: the events reach the client byte for byte as the provider sent them, then only the cost comment', async () => {
    const { apiKey } = await h.fundKey(100);
    // One write per event: the relay sees the stream in pieces, as from a real provider.
    h.upstream.setBehaviour({ usage: CACHE, recordResponses: true, chunkDelayMs: 1 });
    const res = await fetch(`${h.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ model: 'mock-claude', max_tokens: 100, messages, stream: true }),
    });
    const got = Buffer.from(await res.arrayBuffer());
    const sent = h.upstream.stats.lastResponse!;
    expect(sent.toString()).toContain('event: message_stop');
    expect(got.subarray(0, sent.length).equals(sent)).toBe(true);
    const rest = got.subarray(sent.length).toString();
    expect(rest).toMatch(/^: x-node-cost \{[^\n]*\}\n\n$/);
    expect(JSON.parse(rest.slice(': x-node-cost '.length))).toMatchObject({
      msats: CHARGE,
      estimated: false,
    });
  });

  it('count_tokens through the SDK is relayed and free', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(10);
    const r = await client(apiKey).messages.countTokens({ model: 'mock-claude', messages });
    expect(r.input_tokens).toBe(6);
    expect(await h.available(apiKey)).toBe(balanceMsat);
  });

  it("errors come in Anthropic's shape with our code: the SDK raises its matching error classes", async () => {
    const bad = await client('sk-not-a-key-of-this-node-00000000')
      .messages.create({ model: 'mock-claude', max_tokens: 10, messages })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((bad as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error', code: 'invalid_api_key' },
    });
    const { apiKey } = await h.fundKey(1);
    const invalid = await client(apiKey)
      .messages.create({ model: 'mock-claude', messages } as never)
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
    expect((invalid as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', code: 'validation_failed', message: 'max_tokens: is required' },
    });
  });

  it('a client that leaves mid-stream pays what the provider reported (input, cache) plus the output that passed', async () => {
    // message_start, content_block_start and 3 text deltas, then the provider stalls; the client reads the
    // three deltas and leaves. The provider reported 6 input + the cache counts; "tok tok tok " passed, which
    // o200k counts as 4 tokens (the trailing space is one).
    expect(encode('tok '.repeat(3)).length).toBe(4);
    h.upstream.setBehaviour({ usage: CACHE, chunks: 50, chunkDelayMs: 1, stallAfterChunks: 4 });
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const ac = new AbortController();
    const aborted = h.upstream.waitForAborted(undefined, 10_000);
    const res = await fetch(`${h.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ model: 'mock-claude', max_tokens: 50, messages, stream: true }),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while ((seen.match(/text_delta/g) ?? []).length < 3) {
      const { value } = await reader.read();
      seen += Buffer.from(value!).toString();
    }
    ac.abort();
    await aborted;
    // 18 + 300.3 + 750 + 600 + 4 × 15 = 1,728.3 → 1,729 msat
    expect(balanceMsat - (await availableAfter(h, apiKey, balanceMsat))).toBe(1729);
    const txs = await h.ledger.listTransactions({ apiKey });
    expect(txs!.transactions[0]).toMatchObject({ type: 'usage', estimated: true });
  });
});
