import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../core/events/signing.js';
import type { WebhookStore } from '../../core/events/types.js';
import { registry } from '../../core/metrics.js';
import { assertDocumented } from '../routes/response-schema.js';
import { captureLog } from '../support/dev-mint.js';
import { overriding } from '../support/fakes.js';
import { paidGatewayPerSuite } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { Receiver } from './support/receiver.js';
import { type Json, webhookClient } from './support/webhook-client.js';

const ADMIN = 'contract-admin-password';

async function metric(name: string, labels: string): Promise<number> {
  const text = await registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/**
 * The webhook contract around the deliveries: the answers match openapi.yaml; no secret is ever in
 * an answer or a log line; a redirect is not followed and a receiver that never answers times out (both
 * failed attempts, retried later); a failing or hanging event store never fails or holds a paid call.
 */
for (const store of ['sqlite', 'redis'] as const) {
  describe(`webhook contract (${store})`, () => {
    const captured = captureLog();
    const rx = new Receiver();
    beforeAll(() => rx.start());
    afterAll(() => rx.close());
    /** The event store's steps a test replaces (a hanging or failing `onSpend`); the real store's otherwise. */
    const storeSteps: Partial<WebhookStore> = {};
    const h = paidGatewayPerSuite(
      {
        store,
        log: captured.log,
        money: { wrapWebhookStore: (real) => overriding(real, storeSteps) },
        env: {
          LOG_LEVEL: 'debug',
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          ADMIN_PASSWORD: ADMIN,
          WEBHOOK_POLL_MS: '20',
          // Retries far away: each test sees exactly the first attempt.
          WEBHOOK_RETRY_BASE_MS: '600000',
          WEBHOOK_TIMEOUT_MS: '500',
          FIXED_COST_PER_REQUEST: '1',
        },
      },
      { auditEachTest: false },
    );
    const { api, register, paidCall } = webhookClient(h);
    /** Every secret registered in this file's tests: none may appear in the run's logs (last test). */
    const secrets: string[] = [];
    const newSecret = () => {
      const s = newWebhookSecret();
      secrets.push(s, s.slice('whsec_'.length));
      return s;
    };
    /** The outbox still holds the event for a later attempt (after WEBHOOK_RETRY_BASE_MS ± jitter). */
    const expectRetryPending = async (webhookId: string) => {
      const outbox = h.gateway.services.events!.store;
      const later = Date.now() + 2 * 600_000;
      const due = (await outbox.claimDue(later, 1000, 1000)).filter((d) => d.webhookId === webhookId);
      expect(due.map((d) => d.attempts)).toEqual([1]);
    };

    it('answers match the OpenAPI schemas; no webhook or alert secret in any answer or log line', async () => {
      const { apiKey } = await h.fundKey(20);
      const secret = newSecret();
      const created = await register(
        apiKey,
        `${rx.url}/${store}/sec-hook`,
        ['balance.low', 'spend.daily_limit', 'key.expired'],
        secret,
      );
      expect(created.status).toBe(201);
      assertDocumented('POST', '/v1/webhooks', 201, created.json);
      const alerts = await api(apiKey, 'POST', '/v1/wallet/alerts', {
        low_balance_threshold: 19_500,
        daily_spend_limit: 500,
        webhook_url: `${rx.url}/${store}/sec-alert`,
      });
      expect(alerts.status).toBe(200);
      assertDocumented('POST', '/v1/wallet/alerts', 200, alerts.json);
      const alertSecret: string = alerts.json.webhook_secret;
      expect(alertSecret).toMatch(/^whsec_/);
      secrets.push(alertSecret, alertSecret.slice('whsec_'.length));
      // 20,000 → 19,000 msat: below 19,500 (balance.low) and 1,000 ≥ 500 spent today (spend.daily_limit),
      // each to the webhook and to the alert URL.
      await paidCall(apiKey);
      await until(
        'four deliveries',
        () => rx.on(`/${store}/sec-hook`).length >= 2 && rx.on(`/${store}/sec-alert`).length >= 1,
      );
      expect(
        rx
          .on(`/${store}/sec-hook`)
          .map((g) => JSON.parse(g.body).type)
          .sort(),
      ).toEqual(['balance.low', 'spend.daily_limit']);

      const gets: Array<[string, string, Json]> = [
        ['/v1/webhooks', '/v1/webhooks', (await api(apiKey, 'GET', '/v1/webhooks')).json],
        ['/v1/wallet/alerts', '/v1/wallet/alerts', (await api(apiKey, 'GET', '/v1/wallet/alerts')).json],
        [
          '/v1/webhooks/{id}/deliveries',
          `/v1/webhooks/${created.json.id}/deliveries`,
          (await api(apiKey, 'GET', `/v1/webhooks/${created.json.id}/deliveries`)).json,
        ],
        ['/v1/wallet/audit', '/v1/wallet/audit', (await api(apiKey, 'GET', '/v1/wallet/audit')).json],
      ];
      const adminGet = async (path: string) =>
        (await fetch(`${h.gateway.url}${path}`, { headers: { cookie: `admin_password=${ADMIN}` } })).json();
      gets.push(
        ['/admin/api/webhooks/deliveries', '', await adminGet('/admin/api/webhooks/deliveries?limit=500')],
        ['/admin/api/audit', '', await adminGet('/admin/api/audit?limit=500')],
      );
      expect(gets[2]![2].data.length).toBe(2);
      expect(gets[0]![2].data).toEqual([expect.objectContaining({ id: created.json.id })]);
      expect(gets[3]![2].data.length).toBeGreaterThanOrEqual(3);
      for (const [template, , body] of gets) {
        assertDocumented('GET', template, 200, body);
        const text = JSON.stringify(body);
        for (const s of [secret, alertSecret, secret.slice(6), alertSecret.slice(6)]) {
          expect(text).not.toContain(s);
        }
      }
      const del = await api(apiKey, 'DELETE', `/v1/webhooks/${created.json.id}`);
      assertDocumented('DELETE', '/v1/webhooks/{id}', 200, del.json);
    });

    /** A webhook at `path` whose receiver answers `status` (0: never) gets the first balance.low; its log. */
    const firstAttempt = async (path: string, status: number, waitingFor: string) => {
      const { apiKey } = await h.fundKey(20);
      rx.plan.set(`/${store}/${path}`, [status]);
      const created = await register(apiKey, `${rx.url}/${store}/${path}`, ['balance.low'], newSecret());
      await api(apiKey, 'POST', '/v1/wallet/alerts', { low_balance_threshold: 19_500 });
      await paidCall(apiKey);
      const log = async () =>
        (await api(apiKey, 'GET', `/v1/webhooks/${created.json.id}/deliveries`)).json.data as Json[];
      await until(waitingFor, async () => (await log()).length >= 1);
      return { apiKey, webhookId: created.json.id as string, log: await log() };
    };

    it('a redirect (302) is not followed: a failed attempt, retried later', async () => {
      const { apiKey, webhookId, log } = await firstAttempt('moved', 302, 'the attempt is logged');
      expect(log).toEqual([{ attempt: 1, at: expect.any(String), status: 302, error: 'HTTP 302' }]);
      expect(rx.on(`/${store}/moved`)).toHaveLength(1);
      expect(rx.on(`/${store}/moved/moved`)).toHaveLength(0);
      expect((await api(apiKey, 'GET', '/v1/webhooks')).json.data[0].disabled).toBe(false);
      await expectRetryPending(webhookId);
    });

    it('a receiver that never answers times out after WEBHOOK_TIMEOUT_MS: no status, an error, retried later', async () => {
      const { webhookId, log } = await firstAttempt('silent', 0, 'the timed-out attempt is logged');
      const [entry] = log;
      expect(entry).toMatchObject({ attempt: 1, status: null });
      expect(entry.error).toMatch(/timeout|aborted/i);
      expect(rx.on(`/${store}/silent`)).toHaveLength(1);
      await expectRetryPending(webhookId);
    });

    it('a failing or hanging event store never fails or holds a paid call; the error is counted', async () => {
      const { apiKey } = await h.fundKey(20);
      await api(apiKey, 'POST', '/v1/wallet/alerts', { low_balance_threshold: 1_000 });
      const errorsBefore = await metric('gateway_event_errors_total', '{stage="spend"}');
      let release: () => void = () => undefined;
      try {
        // Hanging: a call that waited on the store would never answer (the test would time out).
        storeSteps.onSpend = () =>
          new Promise<number>((resolve) => {
            release = () => resolve(0);
          });
        const a = await paidCall(apiKey);
        expect(a.choices).toHaveLength(1);
        // Failing: the call answers 200, is charged; the failure is counted.
        storeSteps.onSpend = () => Promise.reject(new Error('event store down'));
        const b = await paidCall(apiKey);
        expect(b.choices).toHaveLength(1);
        await until(
          'the error counted',
          async () => (await metric('gateway_event_errors_total', '{stage="spend"}')) >= errorsBefore + 1,
        );
      } finally {
        delete storeSteps.onSpend;
        release();
      }
      // Both calls charged 1 sat each: 20,000 → 18,000 msat.
      expect(await h.available(apiKey)).toBe(18_000);
      await h.auditOk();
    });

    it('the run’s logs (debug level, failed deliveries and event steps included) hold no webhook secret', () => {
      const logs = captured.text();
      expect(logs).toContain('event step failed'); // the capture saw the failing store of the previous test
      expect(secrets.length).toBe(8);
      for (const s of secrets) expect(logs.includes(s)).toBe(false);
    });
  });
}
