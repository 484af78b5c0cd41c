import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../core/events/signing.js';
import { assertDocumented } from '../routes/response-schema.js';
import { paidGatewayPerSuite } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { Receiver } from './support/receiver.js';
import { type Json, webhookClient } from './support/webhook-client.js';

const ADMIN = 'console-password-1';

/**
 * Webhooks end to end on the paid gateway (real store, dev mint, OpenAI SDK): registration, alerts fired once
 * by 100 concurrent paid calls, signed deliveries verified with `standardwebhooks` and node's crypto, a retry
 * after a 500 with the same webhook-id, 410 disabling, the delivery log, child/parent routing, SSRF refusal.
 */

for (const store of ['sqlite', 'redis'] as const) {
  describe(`webhooks end to end (${store})`, () => {
    const rx = new Receiver();
    beforeAll(() => rx.start());
    afterAll(() => rx.close());
    const h = paidGatewayPerSuite(
      {
        store,
        env: {
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          ADMIN_PASSWORD: ADMIN,
          WEBHOOK_POLL_MS: '20',
          WEBHOOK_RETRY_BASE_MS: '50',
          RATE_LIMIT_CONCURRENT: '500',
          FIXED_COST_PER_REQUEST: '1',
          ALERT_SWEEP_MS: '100',
        },
      },
      { auditEachTest: false },
    );
    const { api, register, paidCall } = webhookClient(h);

    it('balance.low fires once for 100 concurrent calls; both signatures verify; a 500 is retried with the same id', async () => {
      const { apiKey, keyId } = await h.fundKey(150);
      const secret = newWebhookSecret();
      rx.plan.set(`/${store}/hook`, [500, 200]);
      const created = await register(apiKey, `${rx.url}/${store}/hook`, ['balance.low'], secret);
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({ url: `${rx.url}/${store}/hook`, events: ['balance.low'] });
      expect(JSON.stringify(created.json)).not.toContain(secret);
      const alerts = await api(apiKey, 'POST', '/v1/wallet/alerts', {
        low_balance_threshold: 100_000,
        webhook_url: `${rx.url}/${store}/alert`,
      });
      expect(alerts.status).toBe(200);
      expect(alerts.json).toMatchObject({
        low_balance_threshold: 100_000,
        daily_spend_limit: null,
        webhook_url: `${rx.url}/${store}/alert`,
      });
      const alertSecret: string = alerts.json.webhook_secret;
      expect(alertSecret).toMatch(/^whsec_/);
      expect((await api(apiKey, 'GET', '/v1/wallet/alerts')).json.webhook_secret).toBeUndefined();

      const ai = h.openai(apiKey);
      const results = await Promise.allSettled(
        Array.from({ length: 100 }, () =>
          ai.chat.completions.create({
            model: 'mock-gpt',
            max_tokens: 8,
            messages: [{ role: 'user', content: 'hi' }],
          }),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(51);

      await until('the alert delivery', () => rx.on(`/${store}/alert`).length >= 1);
      await until('the retried hook delivery', () => rx.on(`/${store}/hook`).length >= 2);
      // Give any (wrong) second event time to show up.
      await new Promise((r) => setTimeout(r, 500));

      const alertsGot = rx.on(`/${store}/alert`);
      expect(alertsGot).toHaveLength(1);
      const evt = new Webhook(alertSecret).verify(
        alertsGot[0]!.body,
        alertsGot[0]!.headers as Record<string, string>,
      ) as Json;
      expect(evt).toMatchObject({ type: 'balance.low', data: { key_id: keyId, threshold: 100_000 } });
      expect(evt.data.balance).toBeLessThan(100_000);

      const hookGot = rx.on(`/${store}/hook`);
      expect(hookGot).toHaveLength(2);
      expect(new Set(hookGot.map((g) => g.headers['webhook-id'])).size).toBe(1);
      expect(hookGot[0]!.headers['webhook-id']).toBe(evt.id);
      for (const g of hookGot) {
        expect(new Webhook(secret).verify(g.body, g.headers as Record<string, string>)).toMatchObject({
          id: evt.id,
        });
        expect(g.headers['x-webhook-signature']).toBe(
          `sha256=${createHmac('sha256', secret).update(g.body).digest('hex')}`,
        );
      }
      const log = await api(apiKey, 'GET', `/v1/webhooks/${created.json.id}/deliveries`);
      expect(log.status).toBe(200);
      expect(log.json.data.map((d: Json) => [d.attempt, d.status])).toEqual([
        [2, 200],
        [1, 500],
      ]);
      expect(log.json.data[1].error).toBe('HTTP 500');

      // The operator's console lists the same attempts node-wide: key, origin only, failed filter.
      const admin = (query: string, cookie = true) =>
        fetch(`${h.gateway.url}/admin/api/webhooks/deliveries${query}`, {
          headers: cookie ? { cookie: `admin_password=${ADMIN}` } : {},
        });
      expect((await admin('', false)).status).toBe(401);
      const all = await admin('?limit=500');
      expect(all.status).toBe(200);
      const allJson = (await all.json()) as { data: Json[]; has_more: boolean };
      assertDocumented('GET', '/admin/api/webhooks/deliveries', 200, allJson);
      const mine = allJson.data.filter((d) => d.webhook_id === created.json.id);
      expect(mine.map((d) => [d.attempt, d.status])).toEqual([
        [2, 200],
        [1, 500],
      ]);
      expect(mine[0]).toMatchObject({ key_id: keyId, kind: 'webhook', origin: new URL(rx.url).origin });
      expect(allJson.data.some((d) => d.kind === 'alert' && d.key_id === keyId)).toBe(true);
      expect(JSON.stringify(allJson)).not.toContain(`/${store}/hook`);
      const failedOnly = (await (await admin('?failed=true')).json()) as { data: Json[] };
      expect(failedOnly.data.filter((d) => d.webhook_id === created.json.id).map((d) => d.status)).toEqual([
        500,
      ]);
      expect((await admin('?failed=maybe')).status).toBe(400);

      // A top-up re-arms; listing and deleting work.
      const list = await api(apiKey, 'GET', '/v1/webhooks');
      expect(list.json).toMatchObject({ has_more: false, data: [{ id: created.json.id, disabled: false }] });
      expect((await api(apiKey, 'DELETE', `/v1/webhooks/${created.json.id}`)).status).toBe(200);
      expect((await api(apiKey, 'DELETE', `/v1/webhooks/${created.json.id}`)).status).toBe(404);
      await h.auditOk();
    });

    it('410 Gone disables the webhook', async () => {
      const { apiKey } = await h.fundKey(20);
      rx.plan.set(`/${store}/gone`, [410]);
      const created = await register(apiKey, `${rx.url}/${store}/gone`, ['balance.low']);
      await api(apiKey, 'POST', '/v1/wallet/alerts', { low_balance_threshold: 19_500 });
      await paidCall(apiKey);
      await until('the 410', () => rx.on(`/${store}/gone`).length >= 1);
      await until(
        'disabled',
        async () => (await api(apiKey, 'GET', '/v1/webhooks')).json.data[0].disabled === true,
      );
      const log = await api(apiKey, 'GET', `/v1/webhooks/${created.json.id}/deliveries`);
      expect(log.json.data).toEqual([{ attempt: 1, at: expect.any(String), status: 410, error: 'HTTP 410' }]);
    });

    it('a child key manages its own webhooks; the parent sees its events', async () => {
      const { apiKey } = await h.fundKey(50);
      const sub = await api(apiKey, 'POST', '/v1/wallet/create/subkey', { name: 'kid' });
      expect(sub.status).toBe(201);
      const child: string = sub.json.api_key;
      await register(apiKey, `${rx.url}/${store}/parent`, ['spend.daily_limit']);
      const mine = await register(child, `${rx.url}/${store}/child`, ['spend.daily_limit']);
      expect(mine.status).toBe(201);
      expect((await api(child, 'GET', '/v1/webhooks')).json.data.map((w: Json) => w.id)).toEqual([
        mine.json.id,
      ]);
      expect((await api(apiKey, 'GET', '/v1/webhooks')).json.data).toHaveLength(1);
      // The parent cannot delete the child's webhook, nor read its log.
      expect((await api(apiKey, 'DELETE', `/v1/webhooks/${mine.json.id}`)).status).toBe(404);
      expect((await api(apiKey, 'GET', `/v1/webhooks/${mine.json.id}/deliveries`)).status).toBe(404);
      await api(child, 'POST', '/v1/wallet/alerts', { daily_spend_limit: 2000 });
      for (let i = 0; i < 3; i++) await paidCall(child);
      await until(
        'both deliveries',
        () => rx.on(`/${store}/parent`).length >= 1 && rx.on(`/${store}/child`).length >= 1,
      );
      await new Promise((r) => setTimeout(r, 300)); // a negative over a window: no second delivery to either
      expect(rx.on(`/${store}/parent`)).toHaveLength(1);
      expect(rx.on(`/${store}/child`)).toHaveLength(1);
      const e = JSON.parse(rx.on(`/${store}/child`)[0]!.body);
      expect(e).toMatchObject({ type: 'spend.daily_limit', data: { key_id: sub.json.key_id, limit: 2000 } });
    });

    it('key.expired fires once when the expiry passes (the sweep)', async () => {
      // The expiry leaves the webhook time to be registered first on a loaded machine (it once did not at 1.5 s:
      // the sweep found the key expired with nothing registered, and nothing was ever sent).
      const expiresAtMs = Date.now() + 4000;
      const { apiKey, keyId } = await h.fundKey(5, { expiresAtMs });
      const secret = newWebhookSecret();
      const r = await register(apiKey, `${rx.url}/${store}/expired`, ['key.expired'], secret);
      expect(r.status).toBe(201);
      expect(Date.now(), 'the webhook was registered before the key expired').toBeLessThan(expiresAtMs);
      await until('key.expired', () => rx.on(`/${store}/expired`).length >= 1, 20_000);
      await new Promise((res) => setTimeout(res, 400)); // a negative over a window: no further key.expired
      const got = rx.on(`/${store}/expired`);
      expect(got).toHaveLength(1);
      expect(
        new Webhook(secret).verify(got[0]!.body, got[0]!.headers as Record<string, string>),
      ).toMatchObject({
        type: 'key.expired',
        data: { key_id: keyId },
      });
      // The expired key can still read its webhooks and their log.
      expect((await api(apiKey, 'GET', '/v1/webhooks')).status).toBe(200);
    });

    it("key.expired of child keys that registered nothing reaches the parent's webhooks", async () => {
      const { apiKey } = await h.fundKey(20);
      const child = async (validity: number | null) => {
        const r = await api(apiKey, 'POST', '/v1/balance/child-key', {
          count: 1,
          ...(validity !== null ? { validity_date: validity } : {}),
        });
        expect(r.status).toBe(201);
        const key: string = r.json.api_keys[0];
        return (await h.ledger.getKeyInfo({ apiKey: key }))!.key.keyId;
      };
      const soon = Math.ceil(Date.now() / 1000) + 5; // room for the webhook and both children first (see above)
      // One child made before the parent has a webhook, one after, one that never expires.
      const before = await child(soon);
      const secret = newWebhookSecret();
      const hook = await register(apiKey, `${rx.url}/${store}/kids-expired`, ['key.expired'], secret);
      expect(hook.status).toBe(201);
      const after = await child(soon);
      await child(null);
      expect(Date.now(), 'the webhook and the children were made before the expiry').toBeLessThan(
        soon * 1000,
      );
      await until('both children expired', () => rx.on(`/${store}/kids-expired`).length >= 2, 20_000);
      await new Promise((res) => setTimeout(res, 400)); // a negative over a window: no further key.expired
      const got = rx
        .on(`/${store}/kids-expired`)
        .map((g) => new Webhook(secret).verify(g.body, g.headers as Record<string, string>) as Json);
      expect(got.map((e) => e.data.key_id).sort()).toEqual([before, after].sort());
      for (const e of got) {
        expect(e).toMatchObject({
          type: 'key.expired',
          data: { expired_at: new Date(soon * 1000).toISOString() },
        });
      }
    });

    it('refuses private URLs unless WEBHOOK_ALLOW_PRIVATE_URLS, and unsupported schemes always', async () => {
      const { apiKey } = await h.fundKey(5);
      const cfg = h.gateway.services.config.webhooks;
      cfg.allowPrivateUrls = false;
      try {
        for (const url of [
          'http://127.0.0.1:1/x',
          'http://169.254.169.254/',
          'http://[::ffff:10.0.0.1]/',
          'http://localhost/',
        ]) {
          const r = await register(apiKey, url, ['key.expired']);
          expect(r.status).toBe(400);
          expect(r.json.error.message).toMatch(/webhook URL refused/);
          const a = await api(apiKey, 'POST', '/v1/wallet/alerts', { webhook_url: url });
          expect(a.status).toBe(400);
        }
      } finally {
        cfg.allowPrivateUrls = true;
      }
      const ftp = await register(apiKey, 'ftp://example.com/', ['key.expired']);
      expect(ftp.status).toBe(400);
      expect((await fetch(`${h.gateway.url}/v1/webhooks`)).status).toBe(401);
    });
  });
}
