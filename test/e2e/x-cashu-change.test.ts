import { afterEach, describe, expect, it } from 'vitest';
import { expectRefundedAll } from '../support/balance.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { TOKEN_PRICES } from '../support/prices.js';
import { until } from '../support/until.js';

/**
 * Honest X-Cashu change, on both stores with the dev mint:
 * - one rule for sub-unit remainders: an X-Cashu call is charged in whole units of its token (a sat token's
 *   charge rounded up to whole sats, stated as `unit_rounding` in x-node-cost), the change is all the rest, and
 *   nothing stays on the spent token's identity; an msat token gets exact change;
 * - change the mint cannot make (its outage switch flipped while the call runs) is announced in
 *   `X-Cashu-Change: pending;msat=…;claim="POST /v1/balance/refund"` (streams: an SSE comment), stays on the
 *   token's identity, and is claimed with the same token at /v1/balance/refund once the mint is back.
 */
const PRICING = {
  ...TOKEN_PRICES,
  // The streamed calls name no max_tokens on a 20-sat token: the old clamp, not the 402 naming affordable tokens.
  CLAMP_MAX_TOKENS: 'true',
};
const messages = [{ role: 'user' as const, content: 'Say something, please.' }]; // 6 prompt tokens
/** 2 sats + 7 msat × 6 prompt tokens + 13 msat × 4 completion tokens. */
const COST_4 = 2094;
/** The same with the 8 completion tokens of a stream. */
const COST_8 = 2146;
const PENDING_17 = 'pending;msat=17000;claim="POST /v1/balance/refund"';

describe.each<PaidStore>(['sqlite', 'redis'])('X-Cashu change on %s', (store) => {
  const h = paidGatewayPerSuite({ store, env: PRICING, upstream: { chunks: 8 } });
  // Before the fixture's audit (after-hooks run last registered first).
  afterEach(() => {
    h.mint.setOutage(null);
    h.upstream.setBehaviour({ latencyMs: 0, chunkDelayMs: 0 });
  });

  const call = (token: string, body: Record<string, unknown>) =>
    h.post('/chat/completions', { model: 'mock-gpt', messages, ...body }, { 'x-cashu': token });

  it('an msat token is charged exactly and gets every other msat back', async () => {
    const token = await h.mintToken(20_000, 'msat');
    const res = await call(token, { max_tokens: 4 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, { msats: number; breakdown: Record<string, number> }>;
    expect(body['x-node-cost']?.msats).toBe(COST_4);
    expect(body['x-node-cost']?.breakdown.unit_rounding).toBeUndefined();
    expect(await h.redeem(res.headers.get('x-cashu')!, 'msat')).toBe(20_000 - COST_4);
    expect(await h.available(token)).toBe(0);
  });

  it('a sat token is charged in whole sats; the streamed change is all the rest', async () => {
    const token = await h.mintToken(20);
    const res = await call(token, { stream: true });
    const text = await res.text();
    const block = JSON.parse(/\n: x-node-cost (\{.*\})\n/.exec(text)![1]!) as {
      msats: number;
      breakdown: Record<string, number>;
    };
    expect(block.msats).toBe(3000);
    expect(block.breakdown.unit_rounding).toBe(3000 - COST_8);
    expect(await h.redeem(/\n: x-cashu (cashu\S+)\n/.exec(text)![1]!)).toBe(17);
    expect(await h.available(token)).toBe(0);
  });

  it('the mint down while the change is made: X-Cashu-Change pending, then claimed with the same token', async () => {
    const token = await h.mintToken(20);
    h.upstream.setBehaviour({ latencyMs: 300 });
    const seen = h.upstream.stats.requests;
    const answer = call(token, { max_tokens: 4 });
    // The token was redeemed (the upstream is being asked); now the mint goes away.
    await until('the upstream call', () => h.upstream.stats.requests > seen, 5_000, 10);
    h.mint.setOutage(503);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.headers.get('x-cashu')).toBeNull();
    expect(res.headers.get('x-cashu-change')).toBe(PENDING_17);
    const body = (await res.json()) as Record<string, { msats: number }>;
    expect(body['x-node-cost']?.msats).toBe(3000);
    // The change stays on the token's identity, claimable.
    expect(await h.available(token)).toBe(17_000);

    h.mint.setOutage(null);
    const claim = await fetch(`${h.gateway.url}/v1/balance/refund`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cashu_token: token }),
    });
    await expectRefundedAll(h, claim, token, 17);
  });

  it('the mint down at the end of a stream: the pending notice is an SSE comment; an msat token claims every msat', async () => {
    const token = await h.mintToken(20_000, 'msat');
    h.upstream.setBehaviour({ chunkDelayMs: 40 });
    const res = await call(token, { stream: true });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    h.mint.setOutage(503);
    let text = Buffer.from(first.value!).toString('utf8');
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      text += Buffer.from(r.value).toString('utf8');
    }
    expect(text).not.toContain(': x-cashu cashu');
    expect(text).toMatch(
      new RegExp(
        `\n: x-cashu-change pending;msat=${20_000 - COST_8};claim="POST /v1/balance/refund"\n\ndata: \\[DONE\\]\n\n$`,
      ),
    );
    expect(await h.available(token)).toBe(20_000 - COST_8);

    h.mint.setOutage(null);
    const claim = await fetch(`${h.gateway.url}/v1/balance/refund`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(claim.status).toBe(200);
    const refund = (await claim.json()) as { cashu_token: string; unit: string; balance: number };
    expect(refund).toMatchObject({ unit: 'msat', balance: 0 });
    expect(await h.redeem(refund.cashu_token, 'msat')).toBe(20_000 - COST_8);
  });
});
