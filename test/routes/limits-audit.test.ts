import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, openAuditBackend } from '../../core/audit/audit-log.js';
import type { AuditQuery, StoredAudit } from '../../core/audit/types.js';
import { newWebhookSecret } from '../../core/events/signing.js';
import { createLogger } from '../../core/log.js';
import { registry } from '../../core/metrics.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { overriding } from '../support/fakes.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { type CallOptions, call, errorCode } from './http.js';
import { assertDocumented } from './response-schema.js';

/**
 * Request limits on every endpoint on each store: per client IP for callers with no usable
 * credential, a key's requests/min counted by the wallet endpoints too, failed admin logins per IP.
 * The gateway trusts 127.0.0.1 as a proxy, so each test names its own client address in X-Forwarded-For.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const EST = { model: 'mock-gpt', prompt_tokens: 10, max_tokens: 10 };
const PASSWORD = 'limits-audit-admin-password';
let ipSeq = 0;
function freshIp(): string {
  ipSeq += 1;
  return `198.51.${Math.floor(ipSeq / 250)}.${(ipSeq % 250) + 1}`;
}

async function metric(name: string, labels = ''): Promise<number> {
  const text = await registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || l === `${name}${labels}`);
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe.each<PaidStore>(['sqlite', 'redis'])('request limits on %s', (store) => {
  const METRICS_TOKEN = 'limits-metrics-token';
  const h = paidGatewayPerSuite({
    store,
    env: {
      TRUSTED_PROXIES: '127.0.0.1',
      RATE_LIMIT_IP_PER_MINUTE: '3',
      RATE_LIMIT_REQUESTS_PER_MINUTE: '5',
      ADMIN_PASSWORD: PASSWORD,
      ADMIN_LOGIN_ATTEMPTS_PER_MINUTE: '2',
      // The callers here are forwarded clients, not loopback: /metrics needs its token.
      METRICS_TOKEN: METRICS_TOKEN,
      // Unpaid calls keep the 401 of a node offering only the Cashu door: this suite is about the per-IP limits
      // (the 402 of the Lightning doors is test/doors/).
      PAYMENT_DOORS: 'cashu',
    },
  });
  const req = <T = Json>(method: string, path: string, ip: string, opts: CallOptions = {}) =>
    call<T>(h.gateway.url, method, path, { ...opts, headers: { 'x-forwarded-for': ip, ...opts.headers } });

  function expectLimited(r: { status: number; headers: Headers }, limit: number): void {
    expect(r.status).toBe(429);
    expect(errorCode(r as never)).toBe('rate_limit_exceeded');
    const retry = Number(r.headers.get('retry-after'));
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
    expect(r.headers.get('x-ratelimit-limit')).toBe(String(limit));
    expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(r.headers.get('x-ratelimit-type')).toBe('requests_per_minute');
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
  }

  it('limits callers with no usable credential per client IP, across endpoints; other IPs are not affected', async () => {
    const ip = freshIp();
    const chat = { body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] } };
    const a = await req('POST', '/v1/chat/completions', ip, chat);
    expect(a.status).toBe(401);
    expect(errorCode(a)).toBe('missing_credentials');
    expect(a.headers.get('x-ratelimit-remaining')).toBe('2');
    const b = await req('GET', '/v1/wallet/balance', ip);
    expect(b.status).toBe(401);
    // An unknown key is no usable credential either (paid path, reserve stage).
    const c = await req('POST', '/v1/chat/completions', ip, { ...chat, auth: `sk-${'A'.repeat(29)}` });
    expect(c.status).toBe(401);
    expect(errorCode(c)).toBe('invalid_api_key');
    expectLimited(await req('POST', '/v1/chat/completions', ip, chat), 3);
    expectLimited(
      await req('POST', '/v1/wallet/create', ip, { body: { cashu_token: await h.mintToken(1) } }),
      3,
    );
    expectLimited(await req('POST', '/v1/estimate', ip, { body: EST }), 3);
    const other = await req('POST', '/v1/chat/completions', freshIp(), chat);
    expect(other.status).toBe(401);
  });

  it('public endpoints count per client IP (shared with no-credential calls); health, readiness and metrics do not', async () => {
    const ip = freshIp();
    const first = await req('GET', '/v1/models', ip);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    expect((await req('GET', '/v1/info', ip)).status).toBe(200);
    const third = await req('GET', '/v1/providers', ip, { auth: `sk-${'C'.repeat(29)}` }); // a key changes nothing
    expect(third.status).toBe(200);
    expect(third.headers.get('x-ratelimit-remaining')).toBe('0');
    expectLimited(await req('GET', '/v1/models/mock-gpt', ip), 3);
    expectLimited(await req('GET', '/v1/providers/mock', ip), 3);
    expectLimited(await req('GET', '/v1/models', ip), 3);
    // The same window as callers with no usable credential.
    expectLimited(await req('GET', '/v1/wallet/balance', ip), 3);
    for (let i = 0; i < 5; i++) {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        const r = await req('GET', path, ip, path === '/metrics' ? { auth: METRICS_TOKEN } : {});
        expect(r.status).toBe(200);
        expect(r.headers.get('x-ratelimit-limit')).toBeNull();
      }
    }
    const other = freshIp();
    expect((await req('GET', '/v1/models/mock-gpt', other)).status).toBe(200);
  });

  it('a wallet endpoint sends X-RateLimit-* and counts against the key’s requests/min with paid calls', async () => {
    const { apiKey, keyId } = await h.fundKey(50);
    const ip = freshIp();
    // Not across a minute boundary (the window would reset mid-test).
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    const first = await req('GET', '/v1/wallet/balance', ip, { auth: apiKey });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('5');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('4');
    expect(first.headers.get('x-ratelimit-type')).toBe('requests_per_minute');
    // A paid call counts in the same window. (The paid path's credit lease takes slots ahead and returns
    // unused ones, so the exact remaining count after it is not fixed; the total served in the minute is.)
    const paid = await h.openai(apiKey).chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(paid.choices.length).toBe(1);
    let served = 2;
    let refusedWallet: Awaited<ReturnType<typeof req>> | undefined;
    for (let i = 0; i < 8; i++) {
      const r = await req('GET', '/v1/wallet/transactions', ip, { auth: apiKey });
      if (r.status === 200) {
        served += 1;
        expect(r.headers.get('x-ratelimit-limit')).toBe('5');
        expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeLessThanOrEqual(5 - served);
      } else refusedWallet = r;
    }
    expectLimited(refusedWallet!, 5);
    // Paid calls: at most what is left of this minute's 5, then 429.
    let refusedPaid: Awaited<ReturnType<typeof req>> | undefined;
    for (let i = 0; i < 3 && refusedPaid === undefined; i++) {
      const r = await req('POST', '/v1/chat/completions', ip, {
        auth: apiKey,
        body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
      });
      if (r.status === 200) served += 1;
      else refusedPaid = r;
    }
    expect(served).toBeLessThanOrEqual(5);
    expectLimited(refusedPaid!, 5);
    // Both 429 refusals are in the key's audit trail.
    const refusals = await h.gateway.services.audit!.list({ keyId, status: 429, limit: 50 });
    const endpoints = new Set(refusals.data.map((r) => `${r.method} ${r.endpoint}`));
    expect(endpoints).toEqual(new Set(['GET /v1/wallet/transactions', 'POST /v1/chat/completions']));
  });

  it('an upstream 429 (the last provider’s JSON answer) is relayed as is, and nothing is charged', async () => {
    const { apiKey } = await h.fundKey(20);
    const body = '{"error":{"message":"slow down","type":"requests","code":"provider_busy"}}';
    h.upstream.setBehaviour({ error: { status: 429, body, contentType: 'application/json' } });
    try {
      const r = await req('POST', '/v1/chat/completions', freshIp(), {
        auth: apiKey,
        body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(r.status).toBe(429);
      expect(r.body).toEqual(JSON.parse(body)); // the provider's envelope, not the gateway's
      expect(errorCode(r)).toBe('provider_busy');
      // A non-JSON 429 is no answer to relay: 502 upstream_error naming the status.
      h.upstream.setBehaviour({ error: { status: 429, body: 'busy', contentType: 'text/plain' } });
      const plain = await req('POST', '/v1/chat/completions', freshIp(), {
        auth: apiKey,
        body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(plain.status).toBe(502);
      expect(errorCode(plain)).toBe('upstream_error');
      expect(plain.body.error.details).toMatchObject({ upstream_status: 429 });
    } finally {
      h.upstream.setBehaviour({ error: undefined });
    }
    expect(await h.available(apiKey)).toBe(20_000);
  });

  it('failed admin logins are limited per IP: then 429 at once, even with the right password', async () => {
    const ip = freshIp();
    const cookie = (p: string) => ({ headers: { cookie: `admin_password=${encodeURIComponent(p)}` } });
    expect((await req('GET', '/admin/api/settings', ip, cookie(PASSWORD))).status).toBe(200);
    expect((await req('GET', '/admin/api/settings', ip, cookie('wrong-1'))).status).toBe(401);
    expect((await req('GET', '/admin/api/overview', ip, cookie('wrong-2'))).status).toBe(401);
    const started = Date.now();
    const right = await req('GET', '/admin/api/settings', ip, cookie(PASSWORD));
    expect(Date.now() - started).toBeLessThan(5000); // answered, never held
    expect(right.status).toBe(429);
    expect(errorCode(right)).toBe('rate_limit_exceeded');
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const page = await req('GET', '/admin/', ip, cookie(PASSWORD));
    expect(page.status).toBe(429);
    // Another address is not affected.
    expect((await req('GET', '/admin/api/settings', freshIp(), cookie(PASSWORD))).status).toBe(200);
  });

  it('per-IP limits fail open when the limit store does not answer (logged and counted)', async () => {
    const services = h.gateway.services;
    const limiter = services.limiter!;
    const before = await metric('gateway_rate_limit_store_errors_total', '{scope="ip"}');
    services.limiter = Object.assign(Object.create(limiter), {
      hit: () => Promise.reject(new Error('limit store down')),
      peek: () => Promise.reject(new Error('limit store down')),
    });
    try {
      const ip = freshIp();
      for (let i = 0; i < 5; i++) {
        const r = await req('GET', '/v1/wallet/balance', ip);
        expect(r.status).toBe(401);
        expect(errorCode(r)).toBe('missing_credentials');
      }
    } finally {
      services.limiter = limiter;
    }
    expect(await metric('gateway_rate_limit_store_errors_total', '{scope="ip"}')).toBe(before + 5);
  });
});

describe.each<PaidStore>(['sqlite', 'redis'])('audit log on %s', (store) => {
  /** While true the audit store refuses every write (a fake injected where the audit backend is built). */
  let auditDown = false;
  const h = paidGatewayPerSuite({
    store,
    env: { TRUSTED_PROXIES: '127.0.0.1', ADMIN_PASSWORD: PASSWORD, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
    money: {
      createAuditBackend: (conn) => {
        const real = openAuditBackend(conn);
        return overriding(real, {
          write: (...args) =>
            auditDown ? Promise.reject(new Error('audit store down')) : real.write(...args),
        });
      },
    },
  });
  // Each request from its own address: the per-IP limit stays out of the way.
  const req = <T = Json>(method: string, path: string, opts: CallOptions = {}) =>
    call<T>(h.gateway.url, method, path, {
      ...opts,
      headers: { 'x-forwarded-for': freshIp(), ...opts.headers },
    });
  const admin = { cookie: `admin_password=${encodeURIComponent(PASSWORD)}` };
  const chat = (auth: string) =>
    req('POST', '/v1/chat/completions', {
      auth,
      headers: { 'user-agent': 'audit-test/1.0' },
      body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
    });

  it('the readers return paid calls (admitted and refused) and wallet operations of the key, newest first', async () => {
    const { apiKey, keyId } = await h.fundKey(20);
    expect((await chat(apiKey)).status).toBe(200);
    const top = await req('POST', '/v1/wallet/topup', {
      auth: apiKey,
      body: { cashu_token: await h.mintToken(5) },
    });
    expect(top.status).toBe(200);
    const child = await req('POST', '/v1/balance/child-key', { auth: apiKey, body: { count: 1 } });
    expect(child.status).toBe(201);
    const childKey = (child.body.api_keys as string[])[0]!;
    const wd = await req('POST', '/v1/wallet/withdraw', { auth: apiKey, body: {} });
    expect(wd.status).toBe(200);
    const refused = await chat(apiKey);
    expect(refused.status).toBe(402);
    expect((await chat(childKey)).status).toBe(402);

    const page = await req('GET', '/v1/wallet/audit', { auth: apiKey, query: { limit: 100 } });
    expect(page.status).toBe(200);
    expect(page.headers.get('x-ratelimit-type')).toBe('requests_per_minute');
    const recs = page.body.data as Json[];
    const mine = recs.filter((r) => r.api_key_id === keyId);
    expect(mine.map((r) => [r.method, r.endpoint, r.response_status])).toEqual([
      ['POST', '/v1/chat/completions', 402],
      ['POST', '/v1/wallet/withdraw', 200],
      ['POST', '/v1/balance/child-key', 201],
      ['POST', '/v1/wallet/topup', 200],
      ['POST', '/v1/chat/completions', 200],
    ]);
    const paid = mine.at(-1)!;
    expect(paid.cost_msats).toBeGreaterThan(0);
    expect(paid.cost_sats).toBe(Math.floor(paid.cost_msats / 1000));
    expect(paid.user_agent).toBe('audit-test/1.0');
    expect(paid.ip_address).toMatch(/^198\.51\./);
    expect(paid.kind).toBe('key');
    expect(typeof paid.request_id).toBe('string');
    expect(new Date(paid.timestamp).toISOString()).toBe(paid.timestamp);
    // The parent sees its child's refused call; the child sees only its own records.
    const childRecs = recs.filter((r) => r.api_key_id !== keyId);
    expect(childRecs.map((r) => r.response_status)).toEqual([402]);
    const childPage = await req('GET', '/v1/wallet/audit', { auth: childKey });
    const childOwn = childPage.body.data as Json[];
    expect(childOwn.length).toBeGreaterThanOrEqual(1);
    expect(new Set(childOwn.map((r) => r.api_key_id))).toEqual(new Set([childRecs[0]!.api_key_id]));
    // Pages by cursor: the second page continues exactly where the first ended (reads are audited too,
    // so the full listing is taken from the service, which is not a request).
    const p1 = await req('GET', '/v1/wallet/audit', { auth: apiKey, query: { limit: 2 } });
    expect(p1.body.has_more).toBe(true);
    const last = (p1.body.data as Json[])[1]!.id as string;
    const p2 = await req('GET', '/v1/wallet/audit', { auth: apiKey, query: { limit: 2, before: last } });
    const accountId = (await h.ledger.getKeyInfo({ apiKey }))!.key.accountId;
    const full = (await h.gateway.services.audit!.list({ account: accountId, limit: 100 })).data.map(
      (r) => r.id,
    );
    const at = full.indexOf(last);
    expect(at).toBeGreaterThanOrEqual(1);
    expect((p2.body.data as Json[]).map((r) => r.id)).toEqual(full.slice(at + 1, at + 3));
    expect((p1.body.data as Json[]).map((r) => r.id)).toEqual(full.slice(at - 1, at + 1));
  });

  it('records a refused call naming an unknown or expired key, and admin changes and failed logins, in the admin reader', async () => {
    const expired = await h.fundKey(5, { expiresAtMs: Date.now() - 1000 });
    expect((await chat(expired.apiKey)).status).toBe(401);
    const unknown = `sk-${'B'.repeat(29)}`;
    expect((await chat(unknown)).status).toBe(401);
    expect((await req('GET', '/admin/api/audit')).status).toBe(401);
    const bad = await req('GET', '/admin/api/settings', { headers: { cookie: 'admin_password=nope' } });
    expect(bad.status).toBe(401);
    const patch = await req('PATCH', '/admin/api/settings', { headers: admin, body: { exchange_fee: 1.01 } });
    expect(patch.status).toBe(200);

    const byKey = await req('GET', '/admin/api/audit', { headers: admin, query: { key_id: expired.keyId } });
    expect(byKey.status).toBe(200);
    expect((byKey.body.data as Json[]).map((r) => [r.endpoint, r.response_status])).toEqual([
      ['/v1/chat/completions', 401],
    ]);
    const since = new Date(Date.now() - 60_000).toISOString();
    const all = await req('GET', '/admin/api/audit', { headers: admin, query: { since, limit: 500 } });
    const recs = all.body.data as Json[];
    const adminRecs = recs.filter((r) => r.kind === 'admin');
    expect(adminRecs.map((r) => [r.method, r.endpoint, r.response_status])).toEqual([
      ['PATCH', '/admin/api/settings', 200],
      ['GET', '/admin/api/settings', 401],
    ]);
    expect(adminRecs.every((r) => r.api_key_id === null)).toBe(true);
    // The unknown key's refusal is in the node-wide log (under the id its key would have).
    expect(
      recs.some((r) => r.response_status === 401 && r.api_key_id !== expired.keyId && r.kind === 'key'),
    ).toBe(true);
    const only401 = await req('GET', '/admin/api/audit', { headers: admin, query: { status: 401, since } });
    expect((only401.body.data as Json[]).every((r) => r.response_status === 401)).toBe(true);
    const future = await req('GET', '/admin/api/audit', {
      headers: admin,
      query: { since: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(future.body).toEqual({ data: [], has_more: false, next_before: null });
    expect((await req('GET', '/admin/api/audit', { headers: admin, query: { status: 'x' } })).status).toBe(
      400,
    );
  });

  it('records 403 refusals, sub-keys, wallet updates, webhook and alert changes and refunds; the admin reader filters by until', async () => {
    const { apiKey, keyId } = await h.fundKey(10);
    const home = { 'x-forwarded-for': '203.0.113.7' };
    const upd = await req('POST', '/v1/wallet/update', {
      auth: apiKey,
      headers: home,
      body: { allowed_ips: ['203.0.113.7'] },
    });
    expect(upd.status).toBe(200);
    // From another address: 403 ip_not_allowed, on the paid path and on a wallet route.
    const denied = await chat(apiKey);
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('ip_not_allowed');
    expect((await req('GET', '/v1/wallet/balance', { auth: apiKey })).status).toBe(403);
    const sub = await req('POST', '/v1/wallet/create/subkey', { auth: apiKey, headers: home, body: {} });
    expect(sub.status).toBe(201);
    const hook = await req('POST', '/v1/webhooks', {
      auth: apiKey,
      headers: home,
      body: { url: 'http://127.0.0.1:9/audit-hook', events: ['key.expired'], secret: newWebhookSecret() },
    });
    expect(hook.status).toBe(201);
    const alerts = await req('POST', '/v1/wallet/alerts', {
      auth: apiKey,
      headers: home,
      body: { low_balance_threshold: 1000 },
    });
    expect(alerts.status).toBe(200);
    const del = await req('DELETE', `/v1/webhooks/${hook.body.id}`, { auth: apiKey, headers: home });
    expect(del.status).toBe(200);
    const refund = await req('POST', '/v1/wallet/refund', { auth: apiKey, headers: home });
    expect(refund.status).toBe(200);

    const page = await req('GET', '/admin/api/audit', {
      headers: admin,
      query: { key_id: keyId, limit: 50 },
    });
    expect(page.status).toBe(200);
    assertDocumented('GET', '/admin/api/audit', 200, page.body);
    const recs = page.body.data as Json[];
    expect(recs.map((r) => [r.method, r.endpoint, r.response_status])).toEqual([
      ['POST', '/v1/wallet/refund', 200],
      ['DELETE', `/v1/webhooks/${hook.body.id}`, 200],
      ['POST', '/v1/wallet/alerts', 200],
      ['POST', '/v1/webhooks', 201],
      ['POST', '/v1/wallet/create/subkey', 201],
      ['GET', '/v1/wallet/balance', 403],
      ['POST', '/v1/chat/completions', 403],
      ['POST', '/v1/wallet/update', 200],
    ]);
    const wallet = await req('GET', '/v1/wallet/audit', {
      auth: apiKey,
      headers: home,
      query: { limit: 100 },
    });
    assertDocumented('GET', '/v1/wallet/audit', 200, wallet.body);
    expect((wallet.body.data as Json[]).filter((r) => r.response_status === 403)).toHaveLength(2);

    // until is inclusive: up to the sub-key's record, the sub-key and everything before it.
    const subRec = recs[4]!;
    const upTo = await req('GET', '/admin/api/audit', {
      headers: admin,
      query: { key_id: keyId, until: subRec.timestamp, limit: 50 },
    });
    const expected = recs.filter((r) => Date.parse(r.timestamp) <= Date.parse(subRec.timestamp));
    expect((upTo.body.data as Json[]).map((r) => r.id)).toEqual(expected.map((r) => r.id));
    expect(expected.map((r) => r.endpoint)).toContain('/v1/wallet/create/subkey');
    expect(expected.map((r) => r.endpoint)).not.toContain('/v1/wallet/refund');
    const before = await req('GET', '/admin/api/audit', {
      headers: admin,
      query: { key_id: keyId, until: new Date(Date.parse(recs.at(-1)!.timestamp) - 1).toISOString() },
    });
    expect(before.body).toEqual({ data: [], has_more: false, next_before: null });
  });

  it('a failing or full audit store never fails a call; failures and drops are counted, the batch is retried', async () => {
    const audit = h.gateway.services.audit as AuditLog;
    const { apiKey, keyId } = await h.fundKey(5);
    const failuresBefore = await metric('gateway_audit_write_failures_total');
    auditDown = true;
    try {
      const bal = await req('GET', '/v1/wallet/balance', { auth: apiKey });
      expect(bal.status).toBe(200);
      await audit.flush();
      expect(await metric('gateway_audit_write_failures_total')).toBeGreaterThan(failuresBefore);
    } finally {
      auditDown = false;
    }
    // The kept batch is written once the store answers again.
    const recs = (await audit.list({ keyId, limit: 10 })).data;
    expect(recs.map((r) => r.endpoint)).toEqual(['/v1/wallet/balance']);

    const droppedBefore = await metric('gateway_audit_dropped_total');
    const max = audit.maxBuffered;
    audit.maxBuffered = 0;
    try {
      expect((await req('GET', '/v1/wallet/balance', { auth: apiKey })).status).toBe(200);
    } finally {
      audit.maxBuffered = max;
    }
    expect(await metric('gateway_audit_dropped_total')).toBe(droppedBefore + 1);
  });
});

/** The audit store itself on a real SQLite file and a real Redis: retention by age, complete filtered pages. */
describe.each<PaidStore>(['sqlite', 'redis'])('audit store on %s', (kind) => {
  let conn: StoreConnection;
  let dir: string | undefined;
  let prefix: string | undefined;
  const DAY = 86_400_000;
  const rec = (atMs: number, keyId: string, status = 200, account = 'acct-1'): StoredAudit => ({
    timestamp: new Date(atMs).toISOString(),
    request_id: `req-${atMs}-${keyId}-${status}`,
    api_key_id: keyId,
    endpoint: '/v1/wallet/balance',
    method: 'GET',
    ip_address: '198.51.100.1',
    user_agent: null,
    cost_sats: 0,
    cost_msats: 0,
    response_status: status,
    kind: 'key',
    account,
  });
  const auditLog = (scanBudget?: number, orderWindowMs?: number) =>
    new AuditLog(conn, {
      retentionDays: 30,
      log: createLogger('silent'),
      ...(scanBudget !== undefined ? { scanBudget } : {}),
      ...(orderWindowMs !== undefined ? { orderWindowMs } : {}),
    });
  /** Every page of a query, following next_before. */
  const allPages = async (audit: AuditLog, q: Omit<AuditQuery, 'before'>) => {
    const pages: { n: number; has_more: boolean }[] = [];
    const ids: string[] = [];
    let before: string | undefined;
    for (let i = 0; i < 100; i++) {
      const p = await audit.list({ ...q, ...(before !== undefined ? { before } : {}) });
      assertDocumented('GET', '/admin/api/audit', 200, p);
      pages.push({ n: p.data.length, has_more: p.has_more });
      ids.push(...p.data.map((r) => r.request_id));
      if (!p.has_more) {
        expect(p.next_before).toBeNull();
        return { pages, ids };
      }
      expect(typeof p.next_before).toBe('string');
      before = p.next_before!;
    }
    throw new Error('no last page');
  };

  beforeAll(async () => {
    if (kind === 'redis') {
      prefix = `taud${randomBytes(5).toString('hex')}`;
      conn = openStore({ redisUrl: process.env.TEST_REDIS_URL!, redisPrefix: prefix });
      const r = (conn as Extract<StoreConnection, { kind: 'redis' }>).redis;
      if (r.status !== 'ready') await new Promise((ok) => r.once('ready', ok));
    } else {
      dir = mkdtempSync(join(tmpdir(), 'gw-audit-'));
      conn = openStore({ dataDir: dir });
    }
  });
  afterAll(async () => {
    if (conn.kind === 'redis') {
      const keys = await conn.redis.keys(`${prefix}:*`);
      if (keys.length > 0) await conn.redis.del(...keys);
    }
    await conn.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a filter over more entries than one scan budget never misses a record: has_more with a cursor', async () => {
    // Records of the last 400 s written at once: on Redis they would share one place window (written long after
    // their time, core/audit/records.ts AUDIT_ORDER_WINDOW_MS), which no budget cut splits; with no window they
    // are placed at their write, as records written promptly are, and the budget cuts pages.
    const audit = auditLog(50, 0);
    const t0 = Date.now() - 10 * 60_000;
    // 400 records a second apart; key "k1" on every 97th, status 402 on every 61st, the rest noise.
    const batch: StoredAudit[] = [];
    for (let i = 0; i < 400; i++) {
      batch.push(rec(t0 + i * 1000, i % 97 === 0 ? 'k1' : `n${i % 7}`, i % 61 === 0 ? 402 : 200));
    }
    await audit.backend.write(batch, 30 * DAY, Date.now());
    const expectIds = (pred: (r: StoredAudit) => boolean) =>
      batch
        .filter(pred)
        .map((r) => r.request_id)
        .reverse();

    const byKey = await allPages(audit, { keyId: 'k1', limit: 10 });
    expect(byKey.ids).toEqual(expectIds((r) => r.api_key_id === 'k1')); // 0, 97, 194, 291, 388
    const byStatus = await allPages(audit, { status: 402, limit: 3 });
    expect(byStatus.ids).toEqual(expectIds((r) => r.response_status === 402)); // 0, 61, …, 366
    // until (inclusive) and since together, with the account reader.
    const until = t0 + 300 * 1000;
    const since = t0 + 100 * 1000;
    const ranged = await allPages(audit, { account: 'acct-1', sinceMs: since, untilMs: until, limit: 40 });
    expect(ranged.ids).toEqual(
      expectIds((r) => Date.parse(r.timestamp) >= since && Date.parse(r.timestamp) <= until),
    );
    expect(ranged.ids).toHaveLength(201);
    if (kind === 'redis') {
      // The budget ran out before a page was full: short (even empty) pages that say has_more.
      expect(byKey.pages.some((p) => p.has_more && p.n < 10)).toBe(true);
      expect(byKey.pages.length).toBeGreaterThanOrEqual(400 / 50);
    } else {
      expect(byKey.pages).toEqual([{ n: 5, has_more: false }]);
    }
    await audit.close();
  });

  it('the node-wide reader pages through every account’s records and the node’s, each once', async () => {
    const audit = auditLog(kind === 'redis' ? 64 : undefined);
    const t0 = Date.now() - 60_000;
    // 5 accounts and records of no account, written together: on Redis many share a stream id across streams.
    const batch: StoredAudit[] = [];
    for (let i = 0; i < 240; i++) {
      const { account, ...r } = rec(t0 + i, i % 2 === 0 ? 'km' : 'kn', 200, `acct-m${i % 5}`);
      batch.push({ ...r, request_id: `merge-${i}`, ...(i % 4 === 3 ? {} : { account }) });
    }
    await audit.backend.write(batch.slice(0, 120), 30 * DAY, Date.now());
    await audit.backend.write(batch.slice(120), 30 * DAY, Date.now());
    const mine = (ids: string[]) => ids.filter((id) => id.startsWith('merge-'));
    const all = await allPages(audit, { sinceMs: t0 - 1000, limit: 7 });
    expect(mine(all.ids).sort()).toEqual(batch.map((r) => r.request_id).sort());
    expect(new Set(all.ids).size).toBe(all.ids.length);
    const km = await allPages(audit, { keyId: 'km', limit: 9 });
    expect(mine(km.ids).sort()).toEqual(
      batch
        .filter((r) => r.api_key_id === 'km')
        .map((r) => r.request_id)
        .sort(),
    );
    // One account's reader: only its records (48), newest first.
    const one = await allPages(audit, { account: 'acct-m2', limit: 10 });
    expect(one.ids).toEqual(
      batch
        .filter((r) => r.account === 'acct-m2')
        .map((r) => r.request_id)
        .reverse(),
    );
    await audit.close();
  });

  it('retention is by age: prune removes records older than AUDIT_RETENTION_DAYS and keeps the rest', async () => {
    const audit = auditLog();
    const now = Date.now();
    // SQLite keeps each record's own time; a Redis entry's id is its write time, so the old ones are written
    // first and the clock of the prune is moved forward instead.
    await audit.backend.write(
      [rec(now - 40 * DAY, 'old', 200, 'acct-r'), rec(now - 31 * DAY, 'old', 200, 'acct-r')],
      30 * DAY,
      now,
    );
    // The clock moves on a few ms on each side of the split (Redis entry ids are write times, in ms).
    await new Promise((r) => setTimeout(r, 5));
    const split = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await audit.backend.write(
      [rec(now - 29 * DAY, 'new', 200, 'acct-r'), rec(now, 'new', 200, 'acct-r')],
      30 * DAY,
      Date.now(),
    );
    const keys = async (q: Omit<AuditQuery, 'limit'>) =>
      (await audit.list({ ...q, limit: 100 })).data.map((r) => r.api_key_id);
    expect(await keys({ account: 'acct-r' })).toEqual(['new', 'new', 'old', 'old']);
    if (kind === 'redis') {
      await audit.prune(split + 30 * DAY);
      expect((await keys({})).filter((k) => k === 'old' || k === 'new')).toEqual(['new', 'new']);
      // The account's stream is trimmed at its next write by the same age.
      await audit.backend.write([rec(now, 'newer', 200, 'acct-r')], 30 * DAY, split + 30 * DAY);
      expect(await keys({ account: 'acct-r' })).toEqual(['newer', 'new', 'new']);
    } else {
      await audit.prune(now);
      expect(await keys({ account: 'acct-r' })).toEqual(['new', 'new']);
      expect((await keys({})).filter((k) => k === 'old')).toEqual([]);
    }
    await audit.close();
  });
});
