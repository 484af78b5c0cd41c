import { afterEach, describe, expect, it } from 'vitest';
import { ledgerOverriding, refusedWhile } from '../support/fakes.js';
import { changeOf, type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * What a call costs when it does not go to plan: a client that leaves mid-stream pays for what was produced
 * (not the reservation); an upstream failure before the first byte costs nothing (X-Cashu: the whole token
 * comes back as change); an upstream that ignores max_tokens is charged up to what the account holds.
 */
const PRICING = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '0',
  FIXED_PER_1K_INPUT_TOKENS: '1',
  FIXED_PER_1K_OUTPUT_TOKENS: '100',
  // Calls name no max_tokens on small balances: the old clamp, not the 402 naming affordable tokens.
  CLAMP_MAX_TOKENS: 'true',
  // A client that leaves: its stream is not read on for the usage (test/e2e/abandoned-calls.test.ts does).
  ABANDONED_DRAIN_MS: '0',
};
/** Independent of the production formula: 1 msat per prompt token + 100 per completion token. */
const cost = (p: number, c: number) => p + 100 * c;
const messages = [{ role: 'user' as const, content: 'Say something, please.' }];

describe.each<PaidStore>(['sqlite', 'redis'])('failures on %s', (store) => {
  const h = paidGatewayPerSuite({ store, env: PRICING });
  // Before the fixture's audit (after-hooks run last registered first).
  afterEach(() => {
    h.upstream.setBehaviour({ chunks: 8, chunkDelayMs: 0, error: undefined, ignoreMaxTokens: false });
  });

  it('a streamed call the client abandons is charged for what was produced, not the reservation', async () => {
    h.upstream.setBehaviour({ chunks: 200, chunkDelayMs: 10 });
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const ac = new AbortController();
    const stream = await h
      .openai(apiKey)
      .chat.completions.create(
        { model: 'mock-gpt', messages, stream: true, max_tokens: 200 },
        { signal: ac.signal },
      );
    let seen = 0;
    const aborted = h.upstream.waitForAborted(undefined, 10_000);
    try {
      for await (const c of stream) {
        if (c.choices[0]?.delta?.content) seen++;
        if (seen === 5) ac.abort();
      }
    } catch {
      // the SDK reports the abort
    }
    await aborted;
    // Settlement happens in the final hook once the gateway saw the disconnect.
    await until('the settlement', async () => (await h.available(apiKey)) !== balanceMsat, 2_500, 50);
    const charged = balanceMsat - (await h.available(apiKey))!;
    expect(charged).toBeGreaterThan(cost(0, 4)); // at least the tokens the client saw
    expect(charged).toBeLessThan(cost(100, 100)); // far below the 200-token production it left early
    const txs = await h.ledger.listTransactions({ apiKey });
    expect(txs!.transactions[0]).toMatchObject({ type: 'usage', estimated: true });
    // Nothing stays reserved.
    const info = await h.ledger.getKeyInfo({ apiKey });
    expect(info!.usage.reservedMsat).toBe(0);
  });

  it('an upstream 500 before the first byte costs nothing', async () => {
    h.upstream.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
    const { apiKey, balanceMsat } = await h.fundKey(10);
    const res = await h.post(
      '/chat/completions',
      { model: 'mock-gpt', messages, stream: true },
      { authorization: `Bearer ${apiKey}` },
    );
    expect(res.status).toBe(502);
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect(await h.available(apiKey)).toBe(balanceMsat);
  });

  it('X-Cashu + upstream failure: the whole token value comes back as change', async () => {
    h.upstream.setBehaviour({ error: { status: 500, body: '{"error":{"message":"boom"}}' } });
    const token = await h.mintToken(12);
    const res = await h.post('/chat/completions', { model: 'mock-gpt', messages }, { 'x-cashu': token });
    const change = changeOf(res, 502);
    expect(await h.redeem(change)).toBe(12);
    expect(await h.available(token)).toBe(0);
  });

  it('an upstream that ignores max_tokens is charged up to what the account holds (overrun counted)', async () => {
    h.upstream.setBehaviour({ chunks: 20, ignoreMaxTokens: true });
    const { apiKey, balanceMsat } = await h.fundKey(1);
    const r = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 2 });
    expect(r.usage?.completion_tokens).toBe(20);
    expect(cost(6, 20)).toBeGreaterThan(balanceMsat);
    expect(await h.available(apiKey)).toBe(0);
    const info = await h.ledger.getKeyInfo({ apiKey });
    expect(info!.usage.totalSpentMsat).toBe(balanceMsat);
  });
});

describe.each<PaidStore>(['sqlite', 'redis'])('a store that refuses settlements on %s', (store) => {
  /** Settlements the store refuses before it answers again. */
  let refusals = 0;
  const h = paidGatewayPerSuite({
    store,
    // Without credit leases the settle stage's ledger.settle is the store's step, where the fault is.
    env: { ...PRICING, LEDGER_LEASES: 'off' },
    money: {
      createLedger: ledgerOverriding((real) => ({
        settle: refusedWhile(() => refusals > 0 && refusals-- > 0, real.settle.bind(real)),
      })),
    },
  });

  it('a settlement the store refuses after the answer is retried in the background and charged once', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    refusals = 3; // the end hook, the final hook and the first background retry all fail
    const done = await h
      .openai(apiKey)
      .chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 8 });
    const u = done.usage!;
    const expected = balanceMsat - cost(u.prompt_tokens, u.completion_tokens);
    await until('the retried settlement', async () => (await h.available(apiKey)) === expected, 5_000, 50);
    expect(refusals).toBe(0);
    expect(await h.available(apiKey)).toBe(expected);
    const info = await h.ledger.getKeyInfo({ apiKey });
    expect(info?.account.reservedMsat).toBe(0);
    expect(info?.usage.totalRequests).toBe(1);
  });
});
