import { afterEach, describe, expect, it } from 'vitest';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { bookPricedGatewayPerSuite } from '../support/models-file.js';
import type { PaidStore } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * A call that reached the provider is never free (issue 34, item 6), end to end on both stores.
 *
 * Prices (models.json) at BTC $100,000, fees 1, no base fee: 1 msat per prompt token, 2 per completion token.
 * The mock provider counts ceil(characters / 4) prompt tokens and answers `chunks` completion tokens.
 */
const MODELS = {
  models: [
    { id: 'mock-mini', context_length: 100_000, pricing: { prompt: '0.000001', completion: '0.000002' } },
  ],
};
/** 8,000 characters: 2,000 prompt tokens at the mock provider. */
const LONG = 'abcd'.repeat(2_000);

describe.each<PaidStore>(['sqlite', 'redis'])('abandoned calls on %s', (store) => {
  const h = bookPricedGatewayPerSuite(store, MODELS, { ABANDONED_DRAIN_MS: '400' });
  afterEach(() => {
    h.upstream.setBehaviour({ latencyMs: 0, chunks: 8, chunkDelayMs: 0, stallAfterChunks: undefined });
  });

  const lastTx = async (apiKey: string) => (await h.ledger.listTransactions({ apiKey }))!.transactions[0];

  /**
   * A streamed call whose provider stalls after the role event and 3 token events; the client leaves after 3
   * chunks, and this waits until the gateway gave up on the provider (after the drain). Answers the body sent.
   */
  async function leaveStalled(apiKey: string, fields: Record<string, unknown>) {
    h.upstream.setBehaviour({ chunks: 50, chunkDelayMs: 1, stallAfterChunks: 3 });
    const body = {
      model: 'mock-mini',
      messages: [{ role: 'user', content: 'Say something, please.' }],
      stream: true,
      ...fields,
    };
    const aborted = h.upstream.waitForAborted(undefined, 10_000);
    await leaveAfterFirstBytes(apiKey, body, 3);
    await aborted;
    return body;
  }

  /** Waits until nothing is reserved for the key any more, then answers what it was charged. */
  async function chargedWhenSettled(apiKey: string, from: number): Promise<number> {
    await until(
      'the reservation settled or released',
      async () => (await h.ledger.getKeyInfo({ apiKey }))!.usage.reservedMsat === 0,
      10_000,
      25,
    );
    return from - (await h.available(apiKey))!;
  }

  it('non-streamed, the client leaves after the provider has the request: charged from the provider usage', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    // The provider takes 1.5 s to answer; the client leaves as soon as the provider has the request.
    h.upstream.setBehaviour({ latencyMs: 1_500, chunks: 8 });
    const before = h.upstream.stats.requests;
    const ac = new AbortController();
    const call = fetch(`${h.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({
        model: 'mock-mini',
        messages: [{ role: 'user', content: LONG }],
        max_tokens: 50,
      }),
      signal: ac.signal,
    }).catch(() => undefined);
    await until('the provider has the request', () => h.upstream.stats.requests > before, 5_000, 5);
    ac.abort();
    await call;
    // 2,000 prompt tokens × 1 + 8 completion tokens × 2 = 2,016 msat, from the provider's usage.
    expect(await chargedWhenSettled(apiKey, balanceMsat)).toBe(2_016);
    expect(await lastTx(apiKey)).toMatchObject({ type: 'usage', estimated: false });
    expect(h.upstream.stats.completed).toBeGreaterThan(0);
  });

  it('streamed, the client leaves and the usage arrives within ABANDONED_DRAIN_MS: charged from it', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    // 20 tokens, 5 ms apart: the rest of the stream (about 100 ms) ends well within the 400 ms drain.
    h.upstream.setBehaviour({ chunks: 20, chunkDelayMs: 5 });
    await leaveAfterFirstBytes(apiKey, {
      model: 'mock-mini',
      messages: [{ role: 'user', content: LONG }],
      stream: true,
      max_tokens: 50,
    });
    // 2,000 × 1 + 20 × 2 = 2,040 msat, the provider's usage.
    expect(await chargedWhenSettled(apiKey, balanceMsat)).toBe(2_040);
    expect(await lastTx(apiKey)).toMatchObject({ type: 'usage', estimated: false });
  });

  it('streamed, no usage within ABANDONED_DRAIN_MS: charged the prompt bound plus the output seen', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    // The role event and 3 token events, then the provider stalls: 3 "tok " deltas = 4 o200k tokens of output.
    const body = await leaveStalled(apiKey, { max_tokens: 50 });
    // The prompt bound of this body (what the reservation counted for the prompt): 161 tokens × 1 msat; output
    // 4 × 2 msat (not the 50 × 2 reserved).
    expect(promptTokensUpperBound(body, Buffer.byteLength(JSON.stringify(body)))).toBe(161);
    expect(await chargedWhenSettled(apiKey, balanceMsat)).toBe(161 + 8);
    expect(await lastTx(apiKey)).toMatchObject({ type: 'usage', estimated: true });
  });

  it('streamed call of a model that reasons, no usage within ABANDONED_DRAIN_MS: charged its reservation', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const body = await leaveStalled(apiKey, { reasoning_effort: 'high', max_tokens: 100 });
    // The reservation: the prompt bound (182 tokens with the reasoning field) × 1 + 100 output tokens × 2,
    // whatever the 4 tokens seen.
    expect(promptTokensUpperBound(body, Buffer.byteLength(JSON.stringify(body)))).toBe(182);
    expect(await chargedWhenSettled(apiKey, balanceMsat)).toBe(182 + 200);
    expect(await lastTx(apiKey)).toMatchObject({ type: 'usage', estimated: true });
  });

  /** Opens a stream, reads until `events` data events passed, and leaves. */
  async function leaveAfterFirstBytes(apiKey: string, body: object, events = 1): Promise<void> {
    const ac = new AbortController();
    const res = await fetch(`${h.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify(body),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let seen = '';
    while ((seen.match(/"tok "/g) ?? []).length < events) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += Buffer.from(value!).toString();
    }
    ac.abort();
  }
});
