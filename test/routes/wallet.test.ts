import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redeemElsewhere } from '../support/dev-mint.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { call, errorCode, expectAnswer } from './http.js';

/**
 * The wallet and balance endpoints end to end: dev mint over HTTP, tokens minted and redeemed with cashu-ts,
 * the gateway built from configuration on each store. The ledger audit and the wallet's solvency are
 * checked after every test.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

describe.each<PaidStore>(['sqlite', 'redis'])('wallet endpoints on %s', (store) => {
  const h = paidGatewayPerSuite({ store });
  const req = <T = Json>(method: string, path: string, opts = {}) =>
    call<T>(h.gateway.url, method, path, opts);

  it('creates a key from a token (201, variant A) and a retry with the same token returns the same key', async () => {
    const token = await h.mintToken(100);
    const first = await req('POST', '/v1/wallet/create', { body: { cashu_token: token } });
    expect(first.status).toBe(201);
    expect(first.body.api_key).toMatch(/^sk-[A-Za-z0-9_-]{29}$/);
    expect(first.body.balance).toBe(100_000);
    expect(typeof first.body.key_id).toBe('string');
    expect(new Date(first.body.created_at).toISOString()).toBe(first.body.created_at);
    const retry = await req('POST', '/v1/wallet/create', { body: { cashu_token: token } });
    expect(retry.status).toBe(201);
    expect(retry.body.api_key).toBe(first.body.api_key);
    expect(retry.body.balance).toBe(100_000);
    const bal = await req('GET', '/v1/wallet/balance', { auth: first.body.api_key });
    expect(bal.body.balance).toBe(100_000);
    expect(bal.body.total_deposited).toBe(100_000);
  });

  it('refuses malformed tokens and bodies', async () => {
    const bad = await req('POST', '/v1/wallet/create', { body: { cashu_token: 'cashuBnotatoken' } });
    expect(bad.status).toBe(400);
    expect(errorCode(bad)).toBe('invalid_token');
    const none = await req('POST', '/v1/wallet/create', { body: {} });
    expect(none.status).toBe(400);
    expect(errorCode(none)).toBe('validation_failed');
  });

  it('reads balance, account and info; 401 without or with a wrong credential', async () => {
    const { apiKey: key, keyId } = await h.createKey(64);
    const bal = await req('GET', '/v1/wallet/balance', { auth: key });
    expectAnswer(bal, 200, {
      balance: 64_000,
      reserved: 0,
      total_deposited: 64_000,
      total_spent: 0,
      last_used: null,
      expires_at: null,
      key_info: { key_id: keyId },
    });
    const viaQuery = await req('GET', '/v1/wallet/balance', { query: { api_key: key } });
    expect(viaQuery.body.balance).toBe(64_000);
    for (const path of ['/v1/wallet/', '/v1/wallet']) {
      const acct = await req('GET', path, { auth: key });
      expectAnswer(acct, 200, {
        key_id: keyId,
        balance: 64_000,
        reserved: 0,
        total_deposited: 64_000,
        total_spent: 0,
        total_requests: 0,
        is_child: false,
        expires_at: null,
      });
    }
    const info = await req('GET', '/v1/balance/info', { auth: key });
    expectAnswer(info, 200, {
      balance: 64_000,
      reserved: 0,
      is_child: false,
      parent_key: null,
      total_requests: 0,
      total_spent: 0,
      balance_limit: null,
      balance_limit_reset: null,
      validity_date: null,
      child_keys: [],
    });
    // The key is shown shortened, never in full after creation.
    expect(info.text).not.toContain(key);
    expect(bal.text + viaQuery.text).not.toContain(key);

    const missing = await req('GET', '/v1/wallet/balance');
    expect(missing.status).toBe(401);
    expect(errorCode(missing)).toBe('missing_credentials');
    const wrong = await req('GET', '/v1/balance/info', {
      auth: `sk-${randomBytes(20).toString('hex').slice(0, 29)}`,
    });
    expect(wrong.status).toBe(401);
    expect(errorCode(wrong)).toBe('invalid_api_key');
    const noQueryOnPost = await req('POST', '/v1/wallet/refund', { query: { api_key: key } });
    expect(errorCode(noQueryOnPost)).toBe('missing_credentials');
  });

  it('tops up from the body or the query (exactly one), credits a token once, refuses a token of another key', async () => {
    const { apiKey: key } = await h.createKey(100);
    const body = await req('POST', '/v1/wallet/topup', {
      auth: key,
      body: { cashu_token: await h.mintToken(50) },
    });
    expectAnswer(body, 200, { old_balance: 100_000, added_amount: 50_000, new_balance: 150_000 });
    expect(typeof body.body.transaction_id).toBe('string');
    const qToken = await h.mintToken(25);
    const query = await req('POST', '/v1/wallet/topup', { auth: key, query: { cashu_token: qToken } });
    expectAnswer(query, 200, { old_balance: 150_000, added_amount: 25_000, new_balance: 175_000 });
    // The same token again: no second credit.
    const again = await req('POST', '/v1/wallet/topup', { auth: key, query: { cashu_token: qToken } });
    expect(again.status).toBe(200);
    expect(again.body.new_balance).toBe(175_000);
    const other = await h.createKey(10);
    const elsewhere = await req('POST', '/v1/wallet/topup', {
      auth: other.apiKey,
      body: { cashu_token: qToken },
    });
    expect(elsewhere.status).toBe(409);
    expect((await req('GET', '/v1/wallet/balance', { auth: other.apiKey })).body.balance).toBe(10_000);

    const both = await req('POST', '/v1/wallet/topup', {
      auth: key,
      body: { cashu_token: await h.mintToken(1) },
      query: { cashu_token: qToken },
    });
    expect(both.status).toBe(400);
    const neither = await req('POST', '/v1/wallet/topup', { auth: key });
    expect(neither.status).toBe(400);
    expect((await req('GET', '/v1/wallet/balance', { auth: key })).body.balance).toBe(175_000);
  });

  it('lists transactions newest first with balance_after, limit/offset pagination, has_more and total', async () => {
    const { apiKey: key } = await h.createKey(10);
    for (const sats of [20, 30]) {
      const r = await req('POST', '/v1/wallet/topup', {
        auth: key,
        body: { cashu_token: await h.mintToken(sats) },
      });
      expect(r.status).toBe(200);
    }
    const all = await req('GET', '/v1/wallet/transactions', { auth: key });
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.has_more).toBe(false);
    const txs = all.body.transactions as Json[];
    expect(txs.map((t) => t.amount)).toEqual([30_000, 20_000, 10_000]);
    expect(txs.map((t) => t.balance_after)).toEqual([60_000, 30_000, 10_000]);
    for (const t of txs) {
      expect(t.type).toBe('deposit');
      expect(typeof t.id).toBe('string');
      expect(new Date(t.timestamp).toISOString()).toBe(t.timestamp);
    }
    const p1 = await req('GET', '/v1/wallet/transactions', { auth: key, query: { limit: 2 } });
    expect((p1.body.transactions as Json[]).map((t) => t.amount)).toEqual([30_000, 20_000]);
    expect(p1.body.has_more).toBe(true);
    const p2 = await req('GET', '/v1/wallet/transactions', { auth: key, query: { limit: 2, offset: 2 } });
    expect((p2.body.transactions as Json[]).map((t) => t.amount)).toEqual([10_000]);
    expect(p2.body.has_more).toBe(false);
    expect(p2.body.total).toBe(3);
    const bad = await req('GET', '/v1/wallet/transactions', { auth: key, query: { limit: 0 } });
    expect(bad.status).toBe(400);
    const bad2 = await req('GET', '/v1/wallet/transactions', { auth: key, query: { limit: 101 } });
    expect(bad2.status).toBe(400);
  });

  it('a paid call shows up as a usage transaction and in the balance totals', async () => {
    const { apiKey: key } = await h.createKey(10);
    const completion = await h.openai(key).chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 5,
    });
    expect(completion.choices.length).toBeGreaterThan(0);
    const tx = await req('GET', '/v1/wallet/transactions', { auth: key });
    expect(tx.body.total).toBe(2);
    const usage = tx.body.transactions[0] as Json;
    // Fixed pricing (the default): 1 sat per call.
    expect(usage).toMatchObject({ type: 'usage', amount: -1_000, balance_after: 9_000 });
    expect(usage.description).toContain('mock-gpt');
    const bal = await req('GET', '/v1/wallet/balance', { auth: key });
    expect(bal.body).toMatchObject({
      balance: 9_000,
      reserved: 0,
      total_spent: 1_000,
      total_deposited: 10_000,
    });
    expect(typeof bal.body.last_used).toBe('string');
    const info = await req('GET', '/v1/balance/info', { auth: key });
    expect(info.body).toMatchObject({ total_requests: 1, total_spent: 1_000 });
  });

  it('withdraws an amount as a token another wallet redeems; refuses more than the balance and untrusted mints', async () => {
    const { apiKey: key } = await h.createKey(100);
    const w = await req('POST', '/v1/wallet/withdraw', { auth: key, body: { amount: 30 } });
    expectAnswer(w, 200, { amount: 30, mint: h.mint.url, balance: 70_000 });
    expect(await redeemElsewhere(h.mint.url, w.body.cashu_token, w.body.unit)).toBe(
      w.body.unit === 'sat' ? 30 : 30_000,
    );
    const tooMuch = await req('POST', '/v1/wallet/withdraw', { auth: key, body: { amount: 71 } });
    expect(tooMuch.status).toBe(402);
    expect(tooMuch.body.error.details).toMatchObject({ balance: 70_000, required: 71_000, shortfall: 1_000 });
    const untrusted = await req('POST', '/v1/wallet/withdraw', {
      auth: key,
      body: { amount: 1, mint: 'http://127.0.0.1:9/' },
    });
    expect(untrusted.status).toBe(400);
    expect(errorCode(untrusted)).toBe('mint_not_trusted');
    const tx = await req('GET', '/v1/wallet/transactions', { auth: key, query: { limit: 1 } });
    expect(tx.body.transactions[0]).toMatchObject({
      type: 'withdrawal',
      amount: -30_000,
      balance_after: 70_000,
    });
    // No amount: every whole sat.
    const rest = await req('POST', '/v1/wallet/withdraw', { auth: key, body: {} });
    expectAnswer(rest, 200, { amount: 70, balance: 0 });
    expect(await redeemElsewhere(h.mint.url, rest.body.cashu_token, rest.body.unit)).toBe(
      rest.body.unit === 'sat' ? 70 : 70_000,
    );
  });

  it('a failing mint debits nothing: the hold is aborted and the balance is intact', async () => {
    const { apiKey: key } = await h.createKey(20);
    h.mint.setOutage(500);
    try {
      const r = await req('POST', '/v1/wallet/withdraw', { auth: key, body: { amount: 5 } });
      expect(r.status).toBe(503);
    } finally {
      h.mint.setOutage(null);
    }
    const bal = await req('GET', '/v1/wallet/balance', { auth: key });
    expect(bal.body).toMatchObject({ balance: 20_000, reserved: 0 });
  });

  it('refunds the whole balance (sub-sat remainder stays); refunding nothing is 402', async () => {
    const created = await req('POST', '/v1/wallet/create', {
      body: { cashu_token: await h.mintToken(2_500, 'msat') },
    });
    expect(created.status).toBe(201);
    const key = created.body.api_key as string;
    expect(created.body.balance).toBe(2_500);
    const r = await req('POST', '/v1/wallet/refund', { auth: key });
    expectAnswer(r, 200, { amount: 2, balance: 500 });
    expect(await redeemElsewhere(h.mint.url, r.body.cashu_token, r.body.unit)).toBe(
      r.body.unit === 'sat' ? 2 : 2_000,
    );
    const again = await req('POST', '/v1/wallet/refund', { auth: key });
    expect(again.status).toBe(402);
    expect(errorCode(again)).toBe('payment_required');
    const tx = await req('GET', '/v1/wallet/transactions', { auth: key, query: { limit: 1 } });
    expect(tx.body.transactions[0]).toMatchObject({ type: 'refund', amount: -2_000, balance_after: 500 });
  });

  it('refunds raced 5× pay out the balance once (the others 402), nothing lost or doubled', async () => {
    const { apiKey: key } = await h.createKey(50);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => req('POST', '/v1/wallet/refund', { auth: key })),
    );
    const paid = results.filter((r) => r.status === 200);
    expect(paid).toHaveLength(1);
    for (const r of results) if (r.status !== 200) expect(r.status).toBe(402);
    const t = paid[0]!.body;
    expect(t).toMatchObject({ amount: 50, balance: 0 });
    expect(await redeemElsewhere(h.mint.url, t.cashu_token, t.unit)).toBe(t.unit === 'sat' ? 50 : 50_000);
    expect((await req('GET', '/v1/wallet/balance', { auth: key })).body).toMatchObject({
      balance: 0,
      reserved: 0,
    });
  });

  it('a token used as bearer holds its balance; /v1/balance/refund by the original token pays it out once', async () => {
    const token = await h.mintToken(40);
    const bal = await req('GET', '/v1/wallet/balance', { auth: token });
    expect(bal.status).toBe(200);
    expect(bal.body.balance).toBe(40_000);
    const r = await req('POST', '/v1/balance/refund', { body: { cashu_token: token } });
    expectAnswer(r, 200, { amount: 40, balance: 0 });
    expect(await redeemElsewhere(h.mint.url, r.body.cashu_token, r.body.unit)).toBe(
      r.body.unit === 'sat' ? 40 : 40_000,
    );
    const again = await req('POST', '/v1/balance/refund', { body: { cashu_token: token } });
    expect(again.status).toBe(402);
    // Authorization as the alternative identity works the same way.
    const t2 = await h.mintToken(12);
    expect((await req('GET', '/v1/balance/info', { auth: t2 })).body.balance).toBe(12_000);
    const viaAuth = await req('POST', '/v1/balance/refund', { auth: t2 });
    expect(viaAuth.body).toMatchObject({ amount: 12, balance: 0 });
    const unknown = await req('POST', '/v1/balance/refund', { body: { cashu_token: await h.mintToken(3) } });
    expect(unknown.status).toBe(401);
  });

  it('an X-Cashu call whose change could not be minted: the original token refunds the remainder', async () => {
    // Fixed pricing (default): 1 sat per call. The mint goes down while the upstream answers, so the
    // change token cannot be made and the remainder stays on the token's hash identity.
    const token = await h.mintToken(10);
    h.upstream.setBehaviour({ latencyMs: 800 });
    const seen = h.upstream.stats.requests;
    const pending = h.post(
      '/chat/completions',
      { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
      { 'x-cashu': token },
    );
    try {
      await until('the call reached the provider', () => h.upstream.stats.requests > seen, 5_000, 10);
      expect(h.upstream.stats.requests).toBeGreaterThan(seen);
      h.mint.setOutage(500);
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.headers.get('x-cashu')).toBeNull();
      await res.text();
    } finally {
      h.mint.setOutage(null);
      h.upstream.setBehaviour({ latencyMs: 0 });
    }
    // The failed change send left its proofs journalled (the wallet cannot know whether the mint saw it);
    // the recovery pass an operator runs (and every start runs) settles them before they can be spent.
    await h.wallet.recover();
    const r = await req('POST', '/v1/balance/refund', { body: { cashu_token: token } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ amount: 9, balance: 0 });
    expect(await redeemElsewhere(h.mint.url, r.body.cashu_token, r.body.unit)).toBe(
      r.body.unit === 'sat' ? 9 : 9_000,
    );
    const again = await req('POST', '/v1/balance/refund', { body: { cashu_token: token } });
    expect(again.status).toBe(402);
  });

  it('alerts and webhooks are served (test/events covers them end to end)', async () => {
    const { apiKey: key } = await h.createKey(5);
    const alerts = await req('POST', '/v1/wallet/alerts', { auth: key, body: { low_balance_threshold: 10 } });
    expect(alerts.status, alerts.text).toBe(200);
    expect(alerts.body).toEqual({ low_balance_threshold: 10, daily_spend_limit: null, webhook_url: null });
    const hooks = await req('GET', '/v1/webhooks', { auth: key });
    expect(hooks.status).toBe(200);
    expect(hooks.body).toEqual({ data: [], has_more: false });
    const noAuth = await req('POST', '/v1/webhooks', {
      body: {
        url: 'https://example.com/hook',
        events: ['balance.low'],
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      },
    });
    expect(noAuth.status).toBe(401);
  });
});
