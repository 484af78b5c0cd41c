import { describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { AdminStats } from '../../core/stats/admin-stats.js';
import { SPAN_MS } from '../../core/stats/stats-store.js';
import { chatCalls } from '../support/balance.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { call, errorCode } from './http.js';
import { assertDocumented } from './response-schema.js';

/**
 * The console's JSON endpoints under /admin/api/ on both stores, each answer checked against its OpenAPI
 * schema: the calls/errors/charged-msats series (from real paid calls, literal msats), solvency samples
 * (the console's check records one), the operator actions (confirmation required; recovery, solvency
 * check, Lightning payout at the dev mint), the static assets (fixed list, nothing else reachable), and the
 * cookie on every endpoint. Fixed pricing: 3 sats per call.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const PASSWORD = 'console-pw';
const cookie = { cookie: `admin_password=${PASSWORD}` };
const CALLS = 5;

/** Every JSON endpoint under /admin/api/. */
const ADMIN_API = [
  ['GET', '/admin/api/overview'],
  ['GET', '/admin/api/timeseries'],
  ['GET', '/admin/api/solvency'],
  ['GET', '/admin/api/settings'],
  ['PATCH', '/admin/api/settings'],
  ['GET', '/admin/api/audit'],
  ['GET', '/admin/api/webhooks/deliveries'],
  ['GET', '/admin/api/providers'],
  ['POST', '/admin/api/keys/lookup'],
  ['POST', '/admin/api/actions/recovery'],
  ['POST', '/admin/api/actions/solvency-check'],
  ['POST', '/admin/api/actions/payout'],
] as const;

describe.each<PaidStore>(['sqlite', 'redis'])('admin console API on %s', (store) => {
  const h = paidGatewayPerSuite({
    store,
    env: {
      ADMIN_PASSWORD: PASSWORD,
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '3',
      // Receivers on loopback (never called here: no event fires).
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    },
  });
  const req = <T = Json>(method: string, path: string, opts = {}) =>
    call<T>(h.gateway.url, method, path, opts);
  const admin = <T = Json>(method: string, path: string, opts: Json = {}) =>
    call<T>(h.gateway.url, method, path, { ...opts, headers: cookie });

  it('every /admin/api endpoint needs the cookie', async () => {
    for (const [method, path] of ADMIN_API) {
      const body = path.endsWith('payout')
        ? { confirm: true, invoice: 'x' }
        : path.endsWith('lookup')
          ? { api_key: 'sk-whatever' }
          : method === 'PATCH'
            ? { node_name: 'x' }
            : { confirm: true };
      const r = await req(method, path, method === 'GET' ? {} : { body });
      expect(r.status, path).toBe(401);
      expect(errorCode(r), path).toBe('admin_auth_required');
      assertDocumented(method, path, 401, r.body);
    }
  });

  it('serves its assets itself (fixed list; unknown names and traversal are 404)', async () => {
    const js = await req('GET', '/admin/assets/console.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.text).toContain('/admin/api/timeseries');
    const uplot = await req('GET', '/admin/assets/uPlot.iife.min.js');
    expect(uplot.status).toBe(200);
    expect(uplot.text).toContain('uPlot');
    expect((await req('GET', '/admin/assets/uPlot.min.css')).headers.get('content-type')).toMatch(
      /^text\/css/,
    );
    for (const bad of ['nope.js', 'admin.ts', 'console.js%00', 'console.js.map']) {
      expect((await req('GET', `/admin/assets/${bad}`)).status, bad).toBe(404);
    }
    // Encoded slashes never reach the handler (the front door refuses them).
    for (const bad of ['..%2Fadmin.ts', '%2E%2E%2F%2E%2E%2Fpackage.json']) {
      expect((await req('GET', `/admin/assets/${bad}`)).status, bad).toBe(400);
    }
  });

  it('the series counts the paid calls, the failed ones and the msats charged', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    await chatCalls(h, apiKey, CALLS);
    const refused = await req('POST', '/v1/chat/completions', {
      auth: 'sk-not-a-key',
      body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(refused.status).toBe(401);
    expect(balanceMsat - ((await h.available(apiKey)) ?? 0)).toBe(15_000);

    for (const granularity of ['minute', 'hour', 'day']) {
      const r = await admin('GET', '/admin/api/timeseries', { query: { granularity, points: 3 } });
      expect(r.status).toBe(200);
      assertDocumented('GET', '/admin/api/timeseries', 200, r.body);
      expect(r.body.granularity).toBe(granularity);
      expect(r.body.points).toHaveLength(3);
      const sum = (f: string) => r.body.points.reduce((s: number, p: Json) => s + p[f], 0);
      // Within one test the calls may straddle a minute boundary: the sums over 3 buckets hold them all.
      expect({ calls: sum('calls'), errors: sum('errors'), msats: sum('charged_msats') }).toEqual({
        calls: CALLS + 1,
        errors: 1,
        msats: 15_000,
      });
      const ts = r.body.points.map((p: Json) => p.t);
      expect(ts[1] - ts[0]).toBe(r.body.bucket_ms);
    }
    const def = await admin('GET', '/admin/api/timeseries');
    expect(def.body.points).toHaveLength(60);

    for (const query of [
      { granularity: 'week' },
      { points: 0 },
      { points: '1.5' },
      { granularity: 'minute', points: 1441 },
    ]) {
      const r = await admin('GET', '/admin/api/timeseries', { query });
      expect(r.status, JSON.stringify(query)).toBe(400);
      expect(errorCode(r)).toBe('validation_failed');
    }
  });

  it('key lookup: figures, children, transactions and audit records; unknown key 404', async () => {
    const { apiKey, keyId } = await h.fundKey(30);
    const client = h.openai(apiKey);
    for (let i = 0; i < 2; i++) {
      await client.chat.completions.create({
        model: 'mock-gpt',
        messages: [{ role: 'user', content: 'hi' }],
      });
    }
    const child = await req('POST', '/v1/balance/child-key', { auth: apiKey, body: { count: 1 } });
    expect(child.status).toBe(201);
    const r = await admin('POST', '/admin/api/keys/lookup', { body: { api_key: apiKey, limit: 10 } });
    expect(r.status).toBe(200);
    assertDocumented('POST', '/admin/api/keys/lookup', 200, r.body);
    expect(r.text).not.toContain(apiKey);
    expect(r.body.key).toMatchObject({
      key_id: keyId,
      is_child: false,
      total_requests: 2,
      total_spent: 6_000,
    });
    expect(r.body.key.last_used).toBeGreaterThan(Date.now() - 60_000);
    expect(r.body.children).toHaveLength(1);
    expect(r.body.account).toMatchObject({ deposited: 30_000, spent: 6_000 });
    expect(r.body.available).toBe(r.body.account.balance);
    const usage = r.body.transactions.filter((t: Json) => t.type === 'usage');
    expect(usage.map((t: Json) => t.amount)).toEqual([-3_000, -3_000]);
    expect(r.body.transactions.at(-1)).toMatchObject({ type: 'deposit', amount: 30_000 });
    // The key's records from the audit trail: every use, newest first (the child-key creation, then the calls).
    expect(r.body.audit[0]).toMatchObject({ endpoint: '/v1/balance/child-key', status: 201, key_id: keyId });
    const calls = r.body.audit.filter((a: Json) => a.endpoint === '/v1/chat/completions');
    expect(calls).toHaveLength(2);
    for (const c of calls) expect(c).toMatchObject({ status: 200, cost_msats: 3_000, method: 'POST' });

    const none = await admin('POST', '/admin/api/keys/lookup', {
      body: { api_key: 'sk-nosuchkey0000000000' },
    });
    expect(none.status).toBe(404);
    expect(errorCode(none)).toBe('not_found');
    const bad = await admin('POST', '/admin/api/keys/lookup', { body: { api_key: 'cashuBxyz' } });
    expect(bad.status).toBe(400);

    // Its alert settings and webhooks, receivers by origin only.
    expect(r.body).toMatchObject({ alerts: null, webhooks: [] });
    const hookUrl = 'http://127.0.0.1:9/hooks?token=receiver-secret';
    expect(
      (
        await req('POST', '/v1/wallet/alerts', {
          auth: apiKey,
          body: { low_balance_threshold: 5000, daily_spend_limit: null, webhook_url: hookUrl },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await req('POST', '/v1/webhooks', {
          auth: apiKey,
          body: { url: hookUrl, events: ['balance.low'], secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=' },
        })
      ).status,
    ).toBe(201);
    const withAlerts = await admin('POST', '/admin/api/keys/lookup', { body: { key_id: keyId } });
    assertDocumented('POST', '/admin/api/keys/lookup', 200, withAlerts.body);
    expect(withAlerts.body.alerts).toEqual({
      low_balance_threshold: 5000,
      daily_spend_limit: null,
      webhook_origin: 'http://127.0.0.1:9',
    });
    expect(withAlerts.body.webhooks).toMatchObject([
      { origin: 'http://127.0.0.1:9', events: ['balance.low'], disabled: false },
    ]);
    expect(withAlerts.text).not.toContain('receiver-secret');

    // The same key found by its public id (what audit records, transactions and logs show), and its child too.
    const byId = await admin('POST', '/admin/api/keys/lookup', { body: { key_id: keyId, limit: 10 } });
    expect(byId.status).toBe(200);
    assertDocumented('POST', '/admin/api/keys/lookup', 200, byId.body);
    expect(byId.body.key).toEqual(r.body.key);
    expect(byId.body.account).toEqual(r.body.account);
    expect(byId.body.transactions).toEqual(r.body.transactions);
    const childId = r.body.children[0].key_id as string;
    const childView = await admin('POST', '/admin/api/keys/lookup', { body: { key_id: childId } });
    expect(childView.status).toBe(200);
    expect(childView.body.key).toMatchObject({ key_id: childId, is_child: true });
    expect(childView.text).not.toContain(apiKey);
    const unknownId = await admin('POST', '/admin/api/keys/lookup', { body: { key_id: '0123456789abcdef' } });
    expect(unknownId.status).toBe(404);
    expect(errorCode(unknownId)).toBe('not_found');
    // Exactly one of api_key and key_id, and a key id is 16 lowercase hex characters.
    for (const body of [
      { api_key: apiKey, key_id: keyId },
      {},
      { key_id: keyId.toUpperCase() },
      { key_id: 'sk-x' },
    ]) {
      const x = await admin('POST', '/admin/api/keys/lookup', { body });
      expect(x.status, JSON.stringify(Object.keys(body))).toBe(400);
      expect(x.text).not.toContain(apiKey);
    }
  });

  it('overview: node, ledger totals and wallet per mint', async () => {
    const r = await admin('GET', '/admin/api/overview');
    expect(r.status).toBe(200);
    assertDocumented('GET', '/admin/api/overview', 200, r.body);
    expect(r.body.audit.ok).toBe(true);
    expect(r.body.wallet[0]).toMatchObject({ mint: h.mint.url, unit: 'sat' });
    // No Lightning payout is open (a pending one is listed: test/account/payout-once.test.ts checks the journal).
    expect(r.body.open_payouts).toEqual([]);
    expect(r.body.settings).toBeUndefined();
    expect(r.text).not.toContain(PASSWORD);
  });

  it('actions need "confirm": true; the solvency check is recorded as a sample; recovery runs', async () => {
    // The periodic sample from store figures is taken 1 s after start (then every 5 minutes).
    const solvency = async () => (await admin('GET', '/admin/api/solvency')).body.samples as Json[];
    await expect.poll(async () => (await solvency()).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    const before = await solvency();
    expect(before[0]!.proofs_msat).toBeGreaterThanOrEqual(before[0]!.user_balances_msat);
    for (const body of [{}, { confirm: false }, { confirm: 'yes' }]) {
      const r = await admin('POST', '/admin/api/actions/solvency-check', { body });
      expect(r.status).toBe(400);
      expect(errorCode(r)).toBe('validation_failed');
    }
    const check = await admin('POST', '/admin/api/actions/solvency-check', { body: { confirm: true } });
    expect(check.status).toBe(200);
    assertDocumented('POST', '/admin/api/actions/solvency-check', 200, check.body);
    expect(check.body.solvent).toBe(true);
    expect(check.body.user_balances_msat).toBe(await h.ledger.totalUserBalancesMsat());
    expect(check.body.proofs_msat).toBeGreaterThanOrEqual(check.body.user_balances_msat + 15_000);

    const samples = await admin('GET', '/admin/api/solvency', { query: { limit: 5 } });
    expect(samples.status).toBe(200);
    assertDocumented('GET', '/admin/api/solvency', 200, samples.body);
    expect((await solvency()).length).toBe(before.length + 1);
    const last = samples.body.samples.at(-1);
    expect(last).toMatchObject({
      proofs_msat: check.body.proofs_msat,
      user_balances_msat: check.body.user_balances_msat,
    });
    expect(Math.abs(last.t - Date.now())).toBeLessThan(60_000);
    expect((await admin('GET', '/admin/api/solvency', { query: { limit: 10_001 } })).status).toBe(400);

    const rec = await admin('POST', '/admin/api/actions/recovery', { body: { confirm: true } });
    expect(rec.status).toBe(200);
    assertDocumented('POST', '/admin/api/actions/recovery', 200, rec.body);
    expect(rec.body.deferred).toBe(0);
  });

  it('pays a Lightning invoice out of the operator surplus (confirm, known mint)', async () => {
    const held = async () => (await h.wallet.balances()).reduce((s, l) => s + l.amountMsat, 0);
    const before = await held();
    const invoice = h.mint.invoice(2_000);
    expect((await admin('POST', '/admin/api/actions/payout', { body: { invoice } })).status).toBe(400);
    const otherMint = await admin('POST', '/admin/api/actions/payout', {
      body: { confirm: true, invoice, mint: 'http://127.0.0.1:1' },
    });
    expect(otherMint.status).toBe(400);
    expect(errorCode(otherMint)).toBe('validation_failed');
    const bad = await admin('POST', '/admin/api/actions/payout', {
      body: { confirm: true, invoice: 'not-an-invoice' },
    });
    expect(bad.status).toBe(400);
    expect(await held()).toBe(before);

    const paid = await admin('POST', '/admin/api/actions/payout', { body: { confirm: true, invoice } });
    expect(paid.status).toBe(200);
    assertDocumented('POST', '/admin/api/actions/payout', 200, paid.body);
    expect(paid.body).toMatchObject({ amount_msat: 2_000, mint: h.mint.url, unit: 'sat' });
    expect(before - (await held())).toBe(2_000 + paid.body.fee_msat);
  });

  it('every /admin/api answer matches its OpenAPI schema: settings, audit log, deliveries and the errors', async () => {
    // Settings: read, changed (the answer is the settings after the change), refused.
    const settings = await admin('GET', '/admin/api/settings');
    expect(settings.status).toBe(200);
    assertDocumented('GET', '/admin/api/settings', 200, settings.body);
    expect(settings.body.admin_password).toBe('[redacted]');
    expect(settings.text).not.toContain(PASSWORD);
    const patched = await admin('PATCH', '/admin/api/settings', { body: { node_name: `Node on ${store}` } });
    expect(patched.status).toBe(200);
    assertDocumented('PATCH', '/admin/api/settings', 200, patched.body);
    expect(patched.body.node_name).toBe(`Node on ${store}`);
    for (const body of [{ exchange_fee: -1 }, { no_such_setting: 1 }, { cashu_mints: ['http://x'] }]) {
      const r = await admin('PATCH', '/admin/api/settings', { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      assertDocumented('PATCH', '/admin/api/settings', 400, r.body);
    }

    // Audit log: a paid call and the admin change above leave records (written in batches: poll).
    const { apiKey, keyId } = await h.fundKey(10);
    await h.openai(apiKey).chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'hi' }],
    });
    await expect
      .poll(
        async () => (await admin('GET', '/admin/api/audit', { query: { key_id: keyId } })).body.data.length,
        {
          timeout: 10_000,
        },
      )
      .toBe(1);
    const byKey = await admin('GET', '/admin/api/audit', { query: { key_id: keyId } });
    assertDocumented('GET', '/admin/api/audit', 200, byKey.body);
    expect(byKey.body.data[0]).toMatchObject({
      api_key_id: keyId,
      endpoint: '/v1/chat/completions',
      response_status: 200,
      cost_msats: 3_000,
    });
    const first = await admin('GET', '/admin/api/audit', { query: { limit: 1 } });
    assertDocumented('GET', '/admin/api/audit', 200, first.body);
    expect(first.body).toMatchObject({ has_more: true });
    const older = await admin('GET', '/admin/api/audit', {
      query: { limit: 1, before: first.body.data[0].id },
    });
    assertDocumented('GET', '/admin/api/audit', 200, older.body);
    expect(older.body.data[0].id).not.toBe(first.body.data[0].id);
    expect(JSON.stringify([byKey.body, first.body, older.body])).not.toContain(apiKey);
    for (const query of [{ key_id: 'nothex' }, { status: 99 }, { since: 'yesterday' }, { limit: 501 }]) {
      const r = await admin('GET', '/admin/api/audit', { query });
      expect(r.status, JSON.stringify(query)).toBe(400);
      assertDocumented('GET', '/admin/api/audit', 400, r.body);
    }

    // Webhook deliveries (none fired here) and a refused filter.
    const deliveries = await admin('GET', '/admin/api/webhooks/deliveries');
    expect(deliveries.status).toBe(200);
    assertDocumented('GET', '/admin/api/webhooks/deliveries', 200, deliveries.body);
    const badFilter = await admin('GET', '/admin/api/webhooks/deliveries', { query: { failed: 'yes' } });
    expect(badFilter.status).toBe(400);
    assertDocumented('GET', '/admin/api/webhooks/deliveries', 400, badFilter.body);

    // The error answers: 400 of the series endpoints, 404 of an unknown key (401: the test above).
    const badSeries = await admin('GET', '/admin/api/timeseries', { query: { granularity: 'week' } });
    assertDocumented('GET', '/admin/api/timeseries', 400, badSeries.body);
    const badSamples = await admin('GET', '/admin/api/solvency', { query: { limit: 0 } });
    assertDocumented('GET', '/admin/api/solvency', 400, badSamples.body);
    const unknown = await admin('POST', '/admin/api/keys/lookup', { body: { key_id: '0123456789abcdef' } });
    assertDocumented('POST', '/admin/api/keys/lookup', 404, unknown.body);
  });

  it('a backfill through AdminStats.addCounts / addSample shows in the series; samples come in time order', async () => {
    const store = h.gateway.services.store!;
    const hourStart = Math.floor(Date.now() / SPAN_MS.hour) * SPAN_MS.hour - 3 * SPAN_MS.hour;
    const before = (await admin('GET', '/admin/api/solvency')).body.samples as Json[];
    const latest = before.at(-1)!;
    const backfill = new AdminStats(store, createLogger('silent'));
    try {
      backfill.addCounts(hourStart + 5 * SPAN_MS.minute, { calls: 7, errors: 2, chargedMsat: 9_100 });
      backfill.addCounts(hourStart + 5 * SPAN_MS.minute + 30_000, { calls: 1, errors: 0, chargedMsat: 900 });
      backfill.addCounts(hourStart + 59 * SPAN_MS.minute, { calls: 2, errors: 1, chargedMsat: 500 });
      // Written after the newer samples, older than all of them.
      await backfill.addSample({ t: before[0]!.t - 60_000, proofsMsat: 5_000, userBalancesMsat: 3_000 });
    } finally {
      await backfill.close();
    }
    const hours = await admin('GET', '/admin/api/timeseries', { query: { granularity: 'hour', points: 5 } });
    expect(hours.body.points.find((p: Json) => p.t === hourStart)).toEqual({
      t: hourStart,
      calls: 10,
      errors: 3,
      charged_msats: 10_500,
    });
    const minutes = await admin('GET', '/admin/api/timeseries', {
      query: { granularity: 'minute', points: 240 },
    });
    const at = (t: number) => minutes.body.points.find((p: Json) => p.t === t);
    expect(at(hourStart + 5 * SPAN_MS.minute)).toMatchObject({ calls: 8, errors: 2, charged_msats: 10_000 });
    expect(at(hourStart + 59 * SPAN_MS.minute)).toMatchObject({ calls: 2, errors: 1, charged_msats: 500 });
    const after = (await admin('GET', '/admin/api/solvency')).body.samples as Json[];
    expect(after).toHaveLength(before.length + 1);
    expect(after[0]).toMatchObject({ proofs_msat: 5_000, user_balances_msat: 3_000 });
    expect(after.at(-1)).toEqual(latest);
    const ts = after.map((x) => x.t);
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
  });
});
