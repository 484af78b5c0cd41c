import { afterEach, describe, expect, it } from 'vitest';
import { paidProcessesPerTest, postJson, SMALL_CHAT } from '../support/paid-process.js';
import { until } from '../support/until.js';
import { Receiver } from './support/receiver.js';

/**
 * The outbox is durable: a delivery that failed (500) on a gateway process that then crashed (SIGKILL) is
 * retried by the next process on the same store, with the same webhook-id. On SQLite and Redis.
 */
describe.each(['sqlite', 'redis'] as const)(
  'webhook delivery resumes after a gateway restart (%s)',
  (store) => {
    const paidProcesses = paidProcessesPerTest();
    const rx = new Receiver();
    afterEach(() => {
      rx.close();
    });

    it('retries the pending delivery from the new process', { timeout: 90_000 }, async () => {
      await rx.start();
      const procs = await paidProcesses(store);
      const env = {
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_POLL_MS: '50',
        WEBHOOK_RETRY_BASE_MS: '1500',
      };
      let gw = await procs.spawn(env);
      let base = `http://127.0.0.1:${gw.port}`;
      const apiKey = await procs.createKey(base, 100);
      rx.plan.set('/r', [500]);
      const alerts = await postJson(base, apiKey, '/v1/wallet/alerts', {
        low_balance_threshold: 1_000_000,
        webhook_url: `${rx.url}/r`,
      });
      expect(alerts.status).toBe(200);
      const call = await postJson(base, apiKey, '/v1/chat/completions', SMALL_CHAT);
      expect(call.status).toBe(200);
      await until('the first (failed) attempt', () => rx.on('/r').length >= 1);
      await gw.kill('SIGKILL');
      expect(rx.on('/r')).toHaveLength(1);

      rx.plan.set('/r', [200]);
      gw = await procs.spawn(env);
      base = `http://127.0.0.1:${gw.port}`;
      await until('the retry from the new process', () => rx.on('/r').length >= 2, 20_000);
      const [first, second] = rx.on('/r');
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(JSON.parse(second!.body)).toMatchObject({ type: 'balance.low' });
    });
  },
);
