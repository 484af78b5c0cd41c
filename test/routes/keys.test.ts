import { describe, expect, it } from 'vitest';
import { redeemElsewhere } from '../support/dev-mint.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { call, errorCode, expectAnswer } from './http.js';
import { assertDocumented } from './response-schema.js';

/**
 * Key controls through the routes: child keys (fee, 1–50, all or nothing), sub-keys, the IP allow-list
 * (ipaddr.js: IPv4, IPv6, CIDR; X-Forwarded-For only from a trusted proxy), and what an expired key may
 * still do (read, withdraw) and may not (top up). CHILD_KEY_COST_MSATS = 1000. Audit after every test.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

describe.each<PaidStore>(['sqlite', 'redis'])('key controls on %s', (store) => {
  const h = paidGatewayPerSuite({
    store,
    env: { CHILD_KEY_COST_MSATS: '1000', TRUSTED_PROXIES: '127.0.0.1' },
  });
  const req = <T = Json>(method: string, path: string, opts = {}) =>
    call<T>(h.gateway.url, method, path, opts);

  const newKey = async (sats: number) => (await h.createKey(sats)).apiKey;

  it('child keys: all or nothing — 50 refused when the parent can pay 49, then 49 created and paid', async () => {
    const parent = await newKey(49);
    const fifty = await req('POST', '/v1/balance/child-key', { auth: parent, body: { count: 50 } });
    expect(fifty.status).toBe(402);
    expect(fifty.body.error.details).toMatchObject({ balance: 49_000, required: 50_000, shortfall: 1_000 });
    let info = await req('GET', '/v1/balance/info', { auth: parent });
    expect(info.body.child_keys).toEqual([]);
    expect(info.body.balance).toBe(49_000);

    const ok = await req('POST', '/v1/balance/child-key', {
      auth: parent,
      body: { count: 49, balance_limit: 5_000, balance_limit_reset: 'daily' },
    });
    expectAnswer(ok, 201, {
      count: 49,
      cost_msats: 49_000,
      cost_sats: 49,
      parent_balance: 0,
      parent_balance_sats: 0,
    });
    const keys = ok.body.api_keys as string[];
    expect(new Set(keys).size).toBe(49);
    for (const k of keys) expect(k).toMatch(/^sk-[A-Za-z0-9_-]{29}$/);
    info = await req('GET', '/v1/balance/info', { auth: parent });
    expect(info.body.child_keys).toHaveLength(49);
    expect(info.body.child_keys[0]).toMatchObject({
      total_requests: 0,
      total_spent: 0,
      balance_limit: 5_000,
      balance_limit_reset: 'daily',
      validity_date: null,
    });
    for (const k of keys) expect(info.text).not.toContain(k);
    const tx = await req('GET', '/v1/wallet/transactions', { auth: parent, query: { limit: 1 } });
    expect(tx.body.transactions[0]).toMatchObject({
      type: 'child_key_fee',
      amount: -49_000,
      balance_after: 0,
    });
  });

  it('child keys: count outside 1–50 is 400; a child cannot create children, top up or withdraw', async () => {
    const parent = await newKey(20);
    for (const count of [0, 51]) {
      const r = await req('POST', '/v1/balance/child-key', { auth: parent, body: { count } });
      expect(r.status).toBe(400);
    }
    const made = await req('POST', '/v1/balance/child-key', {
      auth: parent,
      body: { count: 1, validity_date: Math.floor(Date.now() / 1000) + 3600 },
    });
    expect(made.status).toBe(201);
    const child = made.body.api_keys[0] as string;
    const info = await req('GET', '/v1/balance/info', { auth: child });
    expect(info.body).toMatchObject({ is_child: true, balance: 19_000, child_keys: [] });
    expect(typeof info.body.parent_key).toBe('string');
    expect(info.body.validity_date).toBeGreaterThan(Date.now() / 1000);

    const grand = await req('POST', '/v1/balance/child-key', { auth: child, body: { count: 1 } });
    expect(grand.status).toBe(403);
    expect(errorCode(grand)).toBe('child_key_forbidden');
    const token = await h.mintToken(7);
    const topup = await req('POST', '/v1/wallet/topup', { auth: child, body: { cashu_token: token } });
    expect(topup.status).toBe(403);
    // Refused before redeeming: the token is still the caller's.
    expect(await redeemElsewhere(h.mint.url, token)).toBe(7);
    const withdraw = await req('POST', '/v1/wallet/withdraw', { auth: child, body: { amount: 1 } });
    expect(withdraw.status).toBe(403);
    expect((await req('GET', '/v1/wallet/balance', { auth: parent })).body.balance).toBe(19_000);
  });

  it('sub-keys: name, limit, allowed models and expiry; the child fee is charged', async () => {
    const parent = await newKey(10);
    const before = Date.now();
    const r = await req('POST', '/v1/wallet/create/subkey', {
      auth: parent,
      body: { name: 'ci-bot', balance_limit: 4_000, allowed_models: ['mock-gpt'], expires_in_hours: 2 },
    });
    expectAnswer(r, 201, {
      name: 'ci-bot',
      balance_limit: 4_000,
      allowed_models: ['mock-gpt'],
      cost_msats: 1_000,
      parent_balance: 9_000,
    });
    expect(r.body.api_key).toMatch(/^sk-/);
    const exp = Date.parse(r.body.expires_at);
    expect(exp).toBeGreaterThanOrEqual(before + 2 * 3_600_000);
    expect(exp).toBeLessThanOrEqual(Date.now() + 2 * 3_600_000);
    const sub = await req('GET', '/v1/wallet/balance', { auth: r.body.api_key });
    expect(sub.status).toBe(200);
    expect(sub.body.key_info).toMatchObject({ name: 'ci-bot', key_id: r.body.key_id });
    const acct = await req('GET', '/v1/wallet/', { auth: r.body.api_key });
    expect(acct.body).toMatchObject({ is_child: true, expires_at: r.body.expires_at });
    const fromSub = await req('POST', '/v1/wallet/create/subkey', { auth: r.body.api_key, body: {} });
    expect(fromSub.status).toBe(403);
  });

  it('update: allowed IPs validated and normalised (IPv4, IPv6, CIDR); outside the list → 403 ip_not_allowed', async () => {
    const key = await newKey(5);
    const set = await req('POST', '/v1/wallet/update', {
      auth: key,
      body: { allowed_ips: ['127.0.0.1', '10.0.0.0/8', '::1', '2001:DB8::/32'] },
    });
    expect(set.status).toBe(200);
    expect(set.body.allowed_ips).toEqual(['127.0.0.1', '10.0.0.0/8', '::1', '2001:db8::/32']);
    expect((await req('GET', '/v1/wallet/balance', { auth: key })).status).toBe(200);
    for (const bad of ['300.1.1.1', '10.0.0.0/33', 'abc', '1.2.3']) {
      const r = await req('POST', '/v1/wallet/update', { auth: key, body: { allowed_ips: [bad] } });
      expect(r.status).toBe(400);
    }
    const cleared = await req('POST', '/v1/wallet/update', { auth: key, body: { allowed_ips: [] } });
    expect(cleared.body.allowed_ips).toEqual([]);

    const locked = await newKey(5);
    const only = await req('POST', '/v1/wallet/update', {
      auth: locked,
      body: { allowed_ips: ['10.0.0.0/8'] },
    });
    expect(only.status).toBe(200);
    const refused = await req('GET', '/v1/wallet/balance', { auth: locked });
    expect(refused.status).toBe(403);
    expect(errorCode(refused)).toBe('ip_not_allowed');
    // The peer (127.0.0.1) is a trusted proxy here, so its X-Forwarded-For names the client.
    const forwarded = await req('GET', '/v1/wallet/balance', {
      auth: locked,
      headers: { 'x-forwarded-for': '10.1.2.3' },
    });
    expect(forwarded.status).toBe(200);
    const forwardedOut = await req('GET', '/v1/wallet/balance', {
      auth: locked,
      headers: { 'x-forwarded-for': '10.1.2.3, 192.0.2.1' },
    });
    expect(forwardedOut.status).toBe(403);
    const v6 = await newKey(5);
    await req('POST', '/v1/wallet/update', { auth: v6, body: { allowed_ips: ['2001:db8::/32'] } });
    const v6ok = await req('GET', '/v1/wallet/balance', {
      auth: v6,
      headers: { 'x-forwarded-for': '2001:db8::42' },
    });
    expect(v6ok.status).toBe(200);
  });

  it('every success answer matches the schema openapi.yaml documents for it', async () => {
    const check = async (
      method: string,
      template: string,
      status: number,
      opts: object = {},
      path = template,
    ) => {
      const r = await req(method, path, opts);
      expect(r.status, r.text).toBe(status);
      assertDocumented(method, template, status, r.body);
      return r.body;
    };
    const created = await check('POST', '/v1/wallet/create', 201, {
      body: { cashu_token: await h.mintToken(40) },
    });
    const auth = { auth: created.api_key as string };
    await check('GET', '/v1/wallet/', 200, auth);
    await check('GET', '/v1/wallet/balance', 200, auth);
    await check('POST', '/v1/wallet/topup', 200, { ...auth, body: { cashu_token: await h.mintToken(5) } });
    await check('POST', '/v1/balance/child-key', 201, { ...auth, body: { count: 2, balance_limit: 1_000 } });
    await check('POST', '/v1/wallet/create/subkey', 201, {
      ...auth,
      body: { name: 's', expires_in_hours: 1 },
    });
    await check('GET', '/v1/balance/info', 200, auth);
    await check('POST', '/v1/wallet/update', 200, { ...auth, body: { allowed_ips: ['127.0.0.0/8'] } });
    await check('GET', '/v1/wallet/transactions', 200, { ...auth, query: { limit: 2, offset: 1 } });
    const w = await check('POST', '/v1/wallet/withdraw', 200, { ...auth, body: { amount: 3 } });
    await redeemElsewhere(h.mint.url, w.cashu_token, w.unit);
    const r = await check('POST', '/v1/wallet/refund', 200, auth);
    await redeemElsewhere(h.mint.url, r.cashu_token, r.unit);
    const bearer = await h.mintToken(4);
    await check('GET', '/v1/balance/info', 200, { auth: bearer });
    const b = await check('POST', '/v1/balance/refund', 200, { body: { cashu_token: bearer } });
    await redeemElsewhere(h.mint.url, b.cashu_token, b.unit);
    await check('POST', '/v1/estimate', 200, {
      body: { model: 'mock-gpt', prompt_tokens: 10, max_tokens: 10 },
    });
  });

  it('an expired key can read its balance and withdraw, but not top up (401 key_expired)', async () => {
    // A key that expired a second ago, funded by a really redeemed token (solvency stays exact).
    const receipt = await h.wallet.receive(await h.mintToken(30));
    const made = await h.ledger.createKeyFromDeposit({
      tokenHash: receipt.tokenHash,
      amountMsat: receipt.amountMsat,
      expiresAtMs: Date.now() - 1_000,
    });
    expect(made.ok).toBe(true);
    if (!made.ok) return;
    const key = made.apiKey;
    const bal = await req('GET', '/v1/wallet/balance', { auth: key });
    expect(bal.status).toBe(200);
    expect(bal.body.balance).toBe(30_000);
    expect(Date.parse(bal.body.expires_at)).toBeLessThan(Date.now());
    const token = await h.mintToken(5);
    const topup = await req('POST', '/v1/wallet/topup', { auth: key, body: { cashu_token: token } });
    expect(topup.status).toBe(401);
    expect(errorCode(topup)).toBe('key_expired');
    expect(typeof topup.body.error.details.expired_at).toBe('string');
    expect(await redeemElsewhere(h.mint.url, token)).toBe(5);
    const w = await req('POST', '/v1/wallet/withdraw', { auth: key, body: { amount: 30 } });
    expect(w.status).toBe(200);
    expect(w.body.balance).toBe(0);
    expect(await redeemElsewhere(h.mint.url, w.body.cashu_token, w.body.unit)).toBe(
      w.body.unit === 'sat' ? 30 : 30_000,
    );
  });
});
