import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { expectRefundedAll } from '../support/balance.js';
import { changeOf, type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { TOKEN_PRICES } from '../support/prices.js';

/**
 * The three payment modes end to end (API key, eCash token as bearer, X-Cashu per call), streamed and not,
 * with the official openai SDK against the dev mint and the mock upstream, on both stores. Token pricing
 * (FIXED_PER_1K_* sats) so every balance is checked to the msat against the formula. A call paid with a `sat`
 * token (X-Cashu or bearer) is charged in whole sats of it, an `msat` token to the msat: a refund of the token's
 * identity then leaves nothing behind.
 */
const PRICING = {
  ...TOKEN_PRICES,
  // These calls set no max_tokens on small balances: they test metering, not admission (the 402 naming the
  // affordable tokens is test/e2e/paid-pricing.test.ts), so the gateway lowers max_tokens as before.
  CLAMP_MAX_TOKENS: 'true',
};
/** Independent of the production formula: 2 sats per call + 7 msat per prompt token + 13 per completion token. */
const cost = (p: number, c: number) => 2000 + 7 * p + 13 * c;
const messages = [{ role: 'user' as const, content: 'Say something, please.' }]; // 22 chars → 6 prompt tokens
const PROMPT = 6;

describe.each<PaidStore>(['sqlite', 'redis'])('payment modes on %s', (store) => {
  const h = paidGatewayPerSuite({ store, env: PRICING, upstream: { chunks: 8 } });

  it('API key: non-stream call charged exactly, with the x-node-cost block', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const res = await h
      .openai(apiKey)
      .chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 5 });
    expect(res.usage).toMatchObject({ prompt_tokens: PROMPT, completion_tokens: 5 });
    const block = (res as unknown as Record<string, { msats: number; estimated: boolean }>)['x-node-cost'];
    expect(block).toMatchObject({ msats: cost(PROMPT, 5), estimated: false });
    expect(await h.available(apiKey)).toBe(balanceMsat - cost(PROMPT, 5));
  });

  it('API key: streamed call charged from the upstream usage; usage chunk not passed on unasked', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const stream = await h
      .openai(apiKey)
      .chat.completions.create({ model: 'mock-gpt', messages, stream: true });
    let text = '';
    let sawUsage = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) sawUsage = true;
    }
    expect(text).toBe('tok '.repeat(8));
    expect(sawUsage).toBe(false);
    expect(await h.available(apiKey)).toBe(balanceMsat - cost(PROMPT, 8));
  });

  it('the request-end trace carries what each call was charged (non-stream and stream) and the key id', async () => {
    const { apiKey, keyId } = await h.fundKey(100);
    const ends: Record<string, unknown>[] = [];
    const onEnd = (msg: unknown) => ends.push(msg as Record<string, unknown>);
    subscribe('gateway:request:end', onEnd);
    try {
      const client = h.openai(apiKey);
      await client.chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 5 });
      const s = await client.chat.completions.create({ model: 'mock-gpt', messages, stream: true });
      for await (const _ of s) {
        // drain
      }
      // Refused before any charge: no charge on the event.
      await expect(
        h.openai('sk-not-a-key').chat.completions.create({ model: 'mock-gpt', messages }),
      ).rejects.toMatchObject({ status: 401 });
    } finally {
      unsubscribe('gateway:request:end', onEnd);
    }
    const calls = ends.filter((e) => e.path === '/v1/chat/completions');
    expect(calls).toHaveLength(3);
    expect(calls[0]).toMatchObject({
      status: 200,
      outcome: 'ok',
      keyId,
      charge: {
        msats: cost(PROMPT, 5),
        model: 'mock-gpt',
        promptTokens: PROMPT,
        completionTokens: 5,
        estimated: false,
      },
    });
    expect(calls[1]).toMatchObject({
      keyId,
      charge: { msats: cost(PROMPT, 8), promptTokens: PROMPT, completionTokens: 8, estimated: false },
    });
    expect(calls[2]).toMatchObject({ status: 401, outcome: 'error', charge: undefined });
  });

  it('embeddings are metered by their prompt tokens', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const r = await h.openai(apiKey).embeddings.create({ model: 'mock-gpt', input: 'hello world!' });
    expect(r.usage.prompt_tokens).toBe(3);
    expect(await h.available(apiKey)).toBe(balanceMsat - cost(3, 0));
  });

  it('eCash token as bearer: first use redeems and credits, later uses spend from it, in whole sats of the token', async () => {
    const token = await h.mintToken(50);
    const client = h.openai(token);
    const res = await client.chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 3 });
    // Charged in whole sats of the sat token, as an X-Cashu call is: 2,081 msats rounded up to 3,000.
    expect(cost(PROMPT, 3)).toBe(2081);
    const block = (res as unknown as Record<string, { msats: number; breakdown: Record<string, number> }>)[
      'x-node-cost'
    ];
    expect(block?.msats).toBe(3000);
    expect(block?.breakdown.unit_rounding).toBe(919);
    expect(await h.available(token)).toBe(47_000);
    const s = await client.chat.completions.create({
      model: 'mock-gpt',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const c of s) if (c.usage) usage = c.usage;
    expect(usage).toMatchObject({ completion_tokens: 8 });
    // 2,146 msats → 3,000.
    expect(cost(PROMPT, 8)).toBe(2146);
    expect(await h.available(token)).toBe(44_000);
    // The refund (in the token's unit) takes everything: nothing stays on the identity.
    const refund = await h.post('/balance/refund', {}, { authorization: `Bearer ${token}` });
    await expectRefundedAll(h, refund, token, 44);
  });

  it('an msat token as bearer is charged to the msat and refunded to the msat: nothing stays behind', async () => {
    const token = await h.mintToken(50_000, 'msat');
    const res = await h.openai(token).chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 3 });
    const block = (res as unknown as Record<string, { msats: number; breakdown: Record<string, number> }>)[
      'x-node-cost'
    ];
    expect(block?.msats).toBe(2081);
    expect(block?.breakdown.unit_rounding).toBeUndefined();
    expect(await h.available(token)).toBe(47_919);
    const refund = await h.post('/balance/refund', {}, { authorization: `Bearer ${token}` });
    expect(refund.status).toBe(200);
    const body = (await refund.json()) as { cashu_token: string; unit: string; balance: number };
    expect(body).toMatchObject({ unit: 'msat', balance: 0 });
    expect(await h.redeem(body.cashu_token, 'msat')).toBe(47_919);
    expect(await h.available(token)).toBe(0);
  });

  it('X-Cashu: non-stream change in the X-Cashu header, redeemable by a separate wallet', async () => {
    const token = await h.mintToken(20);
    const raw = await h.post(
      '/chat/completions',
      { model: 'mock-gpt', messages, max_tokens: 4 },
      { 'x-cashu': token },
    );
    const change = changeOf(raw, 200);
    const body = (await raw.json()) as Record<string, { msats: number; breakdown: Record<string, number> }>;
    // Charged in whole sats of the sat token: 2,094 msats rounded up to 3,000, the rounding stated.
    expect(cost(PROMPT, 4)).toBe(2094);
    expect(body['x-node-cost']?.msats).toBe(3000);
    expect(body['x-node-cost']?.breakdown.unit_rounding).toBe(906);
    expect(raw.headers.get('x-node-cost')).toBe('3000');
    expect(await h.redeem(change)).toBe(17);
    // Nothing stays on the spent token's identity.
    expect(await h.available(token)).toBe(0);
  });

  it('X-Cashu: streamed call gets its change as an SSE comment before [DONE]', async () => {
    const token = await h.mintToken(20);
    const raw = await h.post(
      '/chat/completions',
      { model: 'mock-gpt', messages, stream: true },
      { 'x-cashu': token },
    );
    expect(raw.status).toBe(200);
    const text = await raw.text();
    const m = /\n: x-cashu (cashu\S+)\n\ndata: \[DONE\]\n\n$/.exec(text);
    expect(m).not.toBeNull();
    expect(await h.redeem(m![1]!)).toBe(Math.floor((20_000 - cost(PROMPT, 8)) / 1000));
  });
});

describe('racing first uses of one bearer token (redis)', () => {
  const h = paidGatewayPerSuite({ store: 'redis', env: PRICING }, { auditEachTest: false });

  it('redeem and credit once; every call is charged once', async () => {
    const token = await h.mintToken(60);
    const client = h.openai(token);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        client.chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 2 }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    expect(ok).toBeGreaterThan(0);
    // Racers that found the token mid-redemption may be told to retry (409 token_pending); none is charged.
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as { status?: number }).status).toBe(409);
    }
    // Each charged in whole sats of the token: 2,068 msats → 3,000.
    expect(await h.available(token)).toBe(60_000 - ok * 3000);
    const txs = await h.ledger.listTransactions({ tokenHash: h.wallet.tokenHash(token) });
    expect(txs!.transactions.filter((t) => t.type === 'deposit')).toHaveLength(1);
    await h.auditOk();
  });
});
