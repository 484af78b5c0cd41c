import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../core/events/signing.js';
import { Receiver } from '../events/support/receiver.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { call, errorCode } from './http.js';
import { assertDocumented } from './response-schema.js';

/**
 * GET /admin/api/webhooks/deliveries with real deliveries on both stores: two keys, each with a webhook on
 * balance.low and an alert threshold one paid call crosses. Key A's receiver always answers 500 (two attempts,
 * WEBHOOK_MAX_ATTEMPTS=2), key B's answers 200. The key filter keeps one key's attempts, `failed=true` only
 * the failed ones, and `before` / `has_more` page through them; every answer matches the OpenAPI schema.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const PASSWORD = 'deliveries-pw';

describe.each<PaidStore>(['sqlite', 'redis'])('admin webhook deliveries on %s', (store) => {
  const rx = new Receiver();
  beforeAll(async () => {
    await rx.start();
    rx.plan.set('/a-fails', [500]);
  });
  afterAll(() => rx.close());
  const h = paidGatewayPerSuite(
    {
      store,
      env: {
        ADMIN_PASSWORD: PASSWORD,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_POLL_MS: '20',
        WEBHOOK_RETRY_BASE_MS: '50',
        WEBHOOK_MAX_ATTEMPTS: '2',
        FIXED_PRICING: 'true',
        FIXED_COST_PER_REQUEST: '1',
      },
    },
    { auditEachTest: false },
  );
  const admin = (query: Record<string, string | number> = {}) =>
    call<Json>(h.gateway.url, 'GET', '/admin/api/webhooks/deliveries', {
      query,
      headers: { cookie: `admin_password=${PASSWORD}` },
    });

  /** A funded key whose webhook at `path` gets balance.low once its first paid call crosses 19,500 msats. */
  async function watchedKey(path: string): Promise<{ apiKey: string; keyId: string }> {
    const k = await h.fundKey(20);
    const auth = { auth: k.apiKey };
    const hook = await call(h.gateway.url, 'POST', '/v1/webhooks', {
      ...auth,
      body: { url: `${rx.url}${path}`, events: ['balance.low'], secret: newWebhookSecret() },
    });
    expect(hook.status).toBe(201);
    const alerts = await call(h.gateway.url, 'POST', '/v1/wallet/alerts', {
      ...auth,
      body: { low_balance_threshold: 19_500 },
    });
    expect(alerts.status).toBe(200);
    await h.openai(k.apiKey).chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'hi' }],
    });
    return k;
  }

  it('lists real attempts; filters by key id and failed only; pages with before / has_more', async () => {
    const a = await watchedKey('/a-fails');
    const b = await watchedKey('/b-ok');
    await until(
      'both attempts to A and one to B',
      () => rx.on('/a-fails').length >= 2 && rx.on('/b-ok').length >= 1,
    );
    // The attempt is logged after the receiver answered: poll the admin list.
    await until(
      'the attempts in the admin list',
      async () => (await admin({ limit: 500 })).body.data.length >= 3,
    );

    const all = await admin({ limit: 500 });
    expect(all.status).toBe(200);
    assertDocumented('GET', '/admin/api/webhooks/deliveries', 200, all.body);
    const origin = new URL(rx.url).origin;
    // Newest first. B's one attempt and A's retry are not ordered by the test (B's key is set up while A's retry
    // waits its backoff): the three attempts, A's newest before its first, every row no newer than the one above.
    const data = all.body.data as Json[];
    const rows = data.map((r) => [r.key_id, r.attempt, r.status]);
    expect([...rows].sort()).toEqual(
      [
        [b.keyId, 1, 200],
        [a.keyId, 2, 500],
        [a.keyId, 1, 500],
      ].sort(),
    );
    expect(rows.filter((r) => r[0] === a.keyId).map((r) => r[1])).toEqual([2, 1]);
    for (let i = 1; i < data.length; i++) expect(data[i]!.at).toBeLessThanOrEqual(data[i - 1]!.at);
    for (const r of all.body.data as Json[]) expect(r).toMatchObject({ kind: 'webhook', origin });
    expect(all.text).not.toContain('/a-fails');

    const onlyA = await admin({ key_id: a.keyId });
    assertDocumented('GET', '/admin/api/webhooks/deliveries', 200, onlyA.body);
    expect(onlyA.body.data.map((r: Json) => [r.attempt, r.status, r.error])).toEqual([
      [2, 500, 'HTTP 500'],
      [1, 500, 'HTTP 500'],
    ]);
    const onlyB = await admin({ key_id: b.keyId });
    expect(onlyB.body.data.map((r: Json) => [r.key_id, r.status])).toEqual([[b.keyId, 200]]);
    const failed = await admin({ failed: 'true' });
    assertDocumented('GET', '/admin/api/webhooks/deliveries', 200, failed.body);
    expect(failed.body.data.map((r: Json) => r.key_id)).toEqual([a.keyId, a.keyId]);
    const failedOfB = await admin({ failed: 'true', key_id: b.keyId });
    expect(failedOfB.body).toEqual({ data: [], has_more: false });

    // Paging: one row per page, newest first, until has_more is false.
    const first = await admin({ key_id: a.keyId, limit: 1 });
    expect(first.body).toMatchObject({ has_more: true, data: [{ attempt: 2 }] });
    const second = await admin({ key_id: a.keyId, limit: 1, before: first.body.data[0].id });
    assertDocumented('GET', '/admin/api/webhooks/deliveries', 200, second.body);
    expect(second.body).toMatchObject({ has_more: false, data: [{ attempt: 1, key_id: a.keyId }] });
    const allPaged = await admin({ limit: 2 });
    const rest = await admin({ limit: 2, before: allPaged.body.data[1].id });
    expect([...allPaged.body.data, ...rest.body.data]).toEqual(all.body.data);
    expect([allPaged.body.has_more, rest.body.has_more]).toEqual([true, false]);

    const bad: Record<string, string>[] = [
      { key_id: 'ABC' },
      { before: 'x' },
      { before: '1.1.wh/../x' },
      { failed: 'yes' },
    ];
    for (const query of bad) {
      const r = await admin(query);
      expect(r.status, JSON.stringify(query)).toBe(400);
      expect(errorCode(r)).toMatch(/^(validation_failed|invalid_request)$/);
      assertDocumented('GET', '/admin/api/webhooks/deliveries', 400, r.body);
    }
    await h.auditOk();
  });
});
