import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisWebhookStore } from '../../core/events/redis-webhook-store.js';
import { SqliteWebhookStore } from '../../core/events/sqlite-webhook-store.js';
import type { Delivery, EventKey, WebhookStore } from '../../core/events/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { startRedisCluster } from '../support/redis-cluster.js';

/** One conformance suite over both WebhookStore implementations (real SQLite file, real Redis, a 3-master Redis Cluster). */

interface Harness {
  store: WebhookStore;
  close(): Promise<void>;
}

const backends: Array<[string, () => Promise<Harness>]> = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ev-store-'));
      const conn = openStore({ dataDir: dir, sqliteFile: 'gw.db' }) as Extract<
        StoreConnection,
        { kind: 'sqlite' }
      >;
      return {
        store: new SqliteWebhookStore(conn.db),
        async close() {
          await conn.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'redis',
    async () => {
      const prefix = `evtest-${randomBytes(4).toString('hex')}`;
      const conn = openStore({ redisUrl: process.env.TEST_REDIS_URL!, redisPrefix: prefix }) as Extract<
        StoreConnection,
        { kind: 'redis' }
      >;
      await new Promise<void>((r) =>
        conn.redis.status === 'ready' ? r() : conn.redis.once('ready', () => r()),
      );
      return {
        store: new RedisWebhookStore(conn.redis, prefix),
        async close() {
          const keys = await conn.redis.keys(`${prefix}:*`);
          if (keys.length > 0) await conn.redis.del(...keys);
          await conn.close();
        },
      };
    },
  ],
  [
    'redis-cluster',
    async () => {
      const cluster = await startRedisCluster();
      const client = new Cluster(cluster.nodes);
      await new Promise((r) => client.once('ready', r));
      return {
        store: new RedisWebhookStore(client, `evc${randomBytes(3).toString('hex')}`),
        async close() {
          client.disconnect();
          await cluster.stop();
        },
      };
    },
  ],
];

let n = 0;
/** `key` alerted when its balance falls below `thresholdMsat` (no daily limit), at `url` signed with `secret`. */
function alertBelow(
  store: WebhookStore,
  key: EventKey,
  thresholdMsat: number,
  url: string,
  secret: string | null,
) {
  return store.setAlerts(
    key,
    { lowBalanceThresholdMsat: thresholdMsat, dailySpendLimitMsat: null, webhookUrl: url },
    secret,
  );
}

/**
 * `parent` alerted below 100 msat, a balance.low webhook at `url`, and a debit to 50 msat at `t`: one delivery
 * enqueued. Answers the webhook.
 */
async function lowBalanceDelivery(store: WebhookStore, parent: EventKey, url: string, t: number) {
  await store.setAlerts(
    parent,
    { lowBalanceThresholdMsat: 100, dailySpendLimitMsat: null, webhookUrl: null },
    null,
  );
  const hook = await store.createWebhook(parent, { url, events: ['balance.low'], secret: 's' });
  expect(await store.onBalance(parent.accountId, 50, 'debit', t)).toBe(1);
  return hook;
}

function account(): { parent: EventKey; child: EventKey } {
  const accountId = `acct${++n}${randomBytes(3).toString('hex')}`;
  return {
    parent: { accountId, keyId: `p${accountId}`, parentKeyId: null, expiresAtMs: null },
    child: { accountId, keyId: `c${accountId}`, parentKeyId: `p${accountId}`, expiresAtMs: null },
  };
}

async function drain(store: WebhookStore, now: number): Promise<Delivery[]> {
  return store.claimDue(now, 60_000, 1000);
}

for (const [name, open] of backends) {
  describe(`WebhookStore conformance: ${name}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await open();
    }, 60_000);
    afterAll(async () => {
      await h.close();
    });

    it('creates, lists and deletes webhooks per key', async () => {
      const { parent, child } = account();
      const a = await h.store.createWebhook(parent, {
        url: 'https://example.com/a',
        events: ['balance.low'],
        secret: 's1',
      });
      await h.store.createWebhook(child, {
        url: 'https://example.com/c',
        events: ['key.expired'],
        secret: 's2',
      });
      expect((await h.store.listWebhooks(parent.accountId, parent.keyId)).map((w) => w.url)).toEqual([
        'https://example.com/a',
      ]);
      expect((await h.store.listWebhooks(child.accountId, child.keyId)).map((w) => w.url)).toEqual([
        'https://example.com/c',
      ]);
      expect(await h.store.deleteWebhook(child.accountId, child.keyId, a.id)).toBe(false);
      expect(await h.store.deleteWebhook(parent.accountId, parent.keyId, a.id)).toBe(true);
      expect(await h.store.listWebhooks(parent.accountId, parent.keyId)).toEqual([]);
    });

    it('stores alert settings, keeping the secret when the URL is re-sent without one', async () => {
      const { parent } = account();
      expect(await h.store.getAlerts(parent.accountId, parent.keyId)).toBeNull();
      await alertBelow(h.store, parent, 5000, 'https://x.test/h', 'whsec_a');
      expect(await h.store.getAlerts(parent.accountId, parent.keyId)).toEqual({
        lowBalanceThresholdMsat: 5000,
        dailySpendLimitMsat: null,
        webhookUrl: 'https://x.test/h',
      });
      await h.store.setAlerts(
        parent,
        { lowBalanceThresholdMsat: 7000, dailySpendLimitMsat: 100, webhookUrl: 'https://x.test/h' },
        null,
      );
      expect((await h.store.getWebhook(parent.accountId, `alert_${parent.keyId}`))?.secret).toBe('whsec_a');
    });

    it('balance.low fires exactly once under 100 concurrent spends, re-arms on a rise above the threshold', async () => {
      const { parent } = account();
      const t = 1_800_000_000_000;
      await alertBelow(h.store, parent, 50_000, 'https://x.test/a', 'whsec_x');
      const hook = await h.store.createWebhook(parent, {
        url: 'https://x.test/b',
        events: ['balance.low'],
        secret: 'sb',
      });
      const fired = await Promise.all(
        Array.from({ length: 100 }, (_, i) => h.store.onSpend(parent, 1000, 99_000 - i * 1000, t)),
      );
      expect(fired.reduce((a, b) => a + b, 0)).toBe(2); // one event, to the alert URL and the subscribed webhook
      const ds = await drain(h.store, t);
      expect(ds.map((d) => d.webhookId).sort()).toEqual([`alert_${parent.keyId}`, hook.id].sort());
      expect(ds[0]!.msgId).toBe(ds[1]!.msgId);
      const body = JSON.parse(ds[0]!.body);
      expect(body).toMatchObject({ type: 'balance.low', data: { key_id: parent.keyId, threshold: 50_000 } });
      expect(body.data.balance).toBeLessThan(50_000);
      // Still below: nothing. A top-up above re-arms; the next fall fires again.
      expect(await h.store.onBalance(parent.accountId, 10_000, 'credit', t)).toBe(0);
      expect(await h.store.onBalance(parent.accountId, 80_000, 'credit', t)).toBe(0);
      expect(await h.store.onSpend(parent, 40_000, 40_000, t)).toBe(2);
    });

    it('balance.low re-arms only through a credit: a stale higher spend report never re-arms', async () => {
      const { parent } = account();
      const t = 1_810_000_000_000;
      await alertBelow(h.store, parent, 5_000, 'https://x.test/s', 'whsec_s');
      // Two processes with credit leases report their own view: A is current, B has not seen A's calls yet.
      expect(await h.store.onSpend(parent, 1_000, 4_000, t)).toBe(1); // A crosses: fires
      expect(await h.store.onSpend(parent, 1_000, 6_000, t)).toBe(0); // B, stale and higher: no re-arm
      expect(await h.store.onSpend(parent, 1_000, 3_000, t)).toBe(0); // still the same crossing
      expect(await h.store.onBalance(parent.accountId, 2_000, 'debit', t)).toBe(0); // a withdrawal: no re-arm
      expect(await h.store.onBalance(parent.accountId, 7_000, 'debit', t)).toBe(0); // nor a higher debit report
      expect(await h.store.onSpend(parent, 1_000, 1_000, t)).toBe(0);
      // A credit that stays below does not re-arm; one at the threshold does; the next crossing fires once.
      expect(await h.store.onBalance(parent.accountId, 4_999, 'credit', t)).toBe(0);
      expect(await h.store.onSpend(parent, 1, 4_998, t)).toBe(0);
      expect(await h.store.onBalance(parent.accountId, 5_000, 'credit', t)).toBe(0);
      expect(await h.store.onSpend(parent, 1, 4_999, t)).toBe(1);
      expect(await h.store.onSpend(parent, 1, 9_000, t)).toBe(0);
      expect(await h.store.onSpend(parent, 1, 4_000, t)).toBe(0);
      // A changed threshold is a new alert: armed at once.
      await alertBelow(h.store, parent, 3_000, 'https://x.test/s', null);
      expect(await h.store.onSpend(parent, 1, 2_999, t)).toBe(1);
      const bodies = (await drain(h.store, t))
        .filter((d) => d.webhookId === `alert_${parent.keyId}`)
        .map((d) => JSON.parse(d.body).data)
        .sort((a, b) => b.threshold - a.threshold || a.balance - b.balance);
      expect(bodies).toEqual([
        { key_id: parent.keyId, balance: 4_000, threshold: 5_000 },
        { key_id: parent.keyId, balance: 4_999, threshold: 5_000 },
        { key_id: parent.keyId, balance: 2_999, threshold: 3_000 },
      ]);
    });

    it("watchKeys: a child's expiry reaches the parent's key.expired webhooks without the child registering", async () => {
      const { parent, child } = account();
      const hook = await h.store.createWebhook(parent, {
        url: 'https://x.test/kids',
        events: ['key.expired'],
        secret: 's',
      });
      await h.store.watchKeys([{ ...child, expiresAtMs: 2_000_000 }]);
      expect(await h.store.getAlerts(child.accountId, child.keyId)).toEqual({
        lowBalanceThresholdMsat: null,
        dailySpendLimitMsat: null,
        webhookUrl: null,
      });
      expect(await h.store.sweepExpired(1_999_999)).toBe(0);
      expect(await h.store.sweepExpired(2_000_001)).toBe(1);
      expect(await h.store.sweepExpired(2_000_002)).toBe(0);
      // Watching again keeps the fired state.
      await h.store.watchKeys([{ ...child, expiresAtMs: 2_000_000 }]);
      expect(await h.store.sweepExpired(2_000_003)).toBe(0);
      const ds = (await drain(h.store, 2_000_001)).filter((d) => d.webhookId === hook.id);
      expect(ds.map((d) => JSON.parse(d.body))).toEqual([
        expect.objectContaining({
          type: 'key.expired',
          data: { key_id: child.keyId, expired_at: new Date(2_000_000).toISOString() },
        }),
      ]);
    });

    it('spend.daily_limit fires once per UTC day; a child spend counts for the parent; parent sees child events', async () => {
      const { parent, child } = account();
      const day1 = Date.UTC(2027, 0, 1, 12);
      await h.store.setAlerts(
        parent,
        { lowBalanceThresholdMsat: null, dailySpendLimitMsat: 10_000, webhookUrl: null },
        null,
      );
      await h.store.setAlerts(
        child,
        { lowBalanceThresholdMsat: null, dailySpendLimitMsat: 3_000, webhookUrl: null },
        null,
      );
      const parentHook = await h.store.createWebhook(parent, {
        url: 'https://x.test/p',
        events: ['spend.daily_limit'],
        secret: 'sp',
      });
      const childHook = await h.store.createWebhook(child, {
        url: 'https://x.test/c',
        events: ['spend.daily_limit'],
        secret: 'sc',
      });
      const fired = await Promise.all(
        Array.from({ length: 100 }, () => h.store.onSpend(child, 200, 1e9, day1)),
      );
      // The child's limit (3,000) → child hook + parent hook; the parent's (10,000, counting the child) → parent hook.
      expect(fired.reduce((a, b) => a + b, 0)).toBe(3);
      const ds = await drain(h.store, day1);
      const bodies = ds.map((d) => ({ hook: d.webhookId, body: JSON.parse(d.body) }));
      expect(
        bodies
          .filter((b) => b.body.data.key_id === child.keyId)
          .map((b) => b.hook)
          .sort(),
      ).toEqual([childHook.id, parentHook.id].sort());
      expect(bodies.filter((b) => b.body.data.key_id === parent.keyId).map((b) => b.hook)).toEqual([
        parentHook.id,
      ]);
      expect(await h.store.onSpend(child, 200, 1e9, day1 + 1000)).toBe(0);
      // Next UTC day: counts restart.
      const day2 = day1 + 86_400_000;
      expect(await h.store.onSpend(child, 2_999, 1e9, day2)).toBe(0);
      expect(await h.store.onSpend(child, 1, 1e9, day2)).toBe(2);
    });

    it('key.expired fires once per key from the sweep', async () => {
      const { parent } = account();
      const key = { ...parent, expiresAtMs: 1_000_000 };
      const hook = await h.store.createWebhook(key, {
        url: 'https://x.test/e',
        events: ['key.expired'],
        secret: 's',
      });
      const before = await h.store.sweepExpired(999_999);
      expect(before).toBe(0);
      const [a, b] = await Promise.all([h.store.sweepExpired(1_000_001), h.store.sweepExpired(1_000_001)]);
      expect(a + b).toBe(1);
      const ds = (await drain(h.store, 1_000_001)).filter((d) => d.webhookId === hook.id);
      expect(JSON.parse(ds[0]!.body)).toMatchObject({
        type: 'key.expired',
        data: { key_id: parent.keyId, expired_at: new Date(1_000_000).toISOString() },
      });
    });

    it('lists the node-wide latest attempts for the console: newest first, key id, origin only, failed filter', async () => {
      const { parent } = account();
      const t = 1_950_000_000_000;
      const hook = await lowBalanceDelivery(
        h.store,
        parent,
        'https://hooks.example.test:8443/p/secret-path?token=abc',
        t,
      );
      const d = (await h.store.claimDue(t, 30_000, 1000)).find((x) => x.webhookId === hook.id)!;
      await h.store.finishAttempt(d, {
        atMs: t,
        status: 503,
        error: 'HTTP 503',
        retryAtMs: t + 10,
        disable: false,
      });
      const d2 = (await h.store.claimDue(t + 10, 30_000, 1000)).find((x) => x.webhookId === hook.id)!;
      await h.store.finishAttempt(d2, {
        atMs: t + 10,
        status: 200,
        error: null,
        retryAtMs: null,
        disable: false,
      });
      const mine = (await h.store.listRecentDeliveries(1000, false)).filter((x) => x.webhookId === hook.id);
      expect(mine).toEqual([
        {
          attempt: 2,
          atMs: t + 10,
          status: 200,
          error: null,
          accountId: parent.accountId,
          webhookId: hook.id,
          keyId: parent.keyId,
          kind: 'webhook',
          origin: 'https://hooks.example.test:8443',
        },
        {
          attempt: 1,
          atMs: t,
          status: 503,
          error: 'HTTP 503',
          accountId: parent.accountId,
          webhookId: hook.id,
          keyId: parent.keyId,
          kind: 'webhook',
          origin: 'https://hooks.example.test:8443',
        },
      ]);
      expect(JSON.stringify(await h.store.listRecentDeliveries(1000, false))).not.toMatch(
        /secret-path|token=abc/,
      );
      const failed = (await h.store.listRecentDeliveries(1000, true)).filter((x) => x.webhookId === hook.id);
      expect(failed.map((x) => x.status)).toEqual([503]);
      expect((await h.store.listRecentDeliveries(1, false)).length).toBe(1);
    });

    it('claims with a lease, retries with the same message id, logs attempts, 410 disables', async () => {
      const { parent } = account();
      const t = 1_900_000_000_000;
      const hook = await lowBalanceDelivery(h.store, parent, 'https://x.test/r', t);
      const [first, second] = await Promise.all([
        h.store.claimDue(t, 30_000, 10),
        h.store.claimDue(t, 30_000, 10),
      ]);
      const mine = [...first!, ...second!].filter((d) => d.webhookId === hook.id);
      expect(mine).toHaveLength(1);
      const d = mine[0]!;
      expect((await h.store.claimDue(t + 1000, 30_000, 1000)).filter((x) => x.webhookId === hook.id)).toEqual(
        [],
      );
      await h.store.finishAttempt(d, {
        atMs: t,
        status: 500,
        error: 'HTTP 500',
        retryAtMs: t + 5000,
        disable: false,
      });
      const again = (await h.store.claimDue(t + 5000, 30_000, 1000)).filter((x) => x.webhookId === hook.id);
      expect(again).toHaveLength(1);
      expect(again[0]!.msgId).toBe(d.msgId);
      expect(again[0]!.attempts).toBe(1);
      await h.store.finishAttempt(again[0]!, {
        atMs: t + 5000,
        status: 410,
        error: 'HTTP 410',
        retryAtMs: null,
        disable: true,
      });
      expect((await h.store.getWebhook(parent.accountId, hook.id))?.disabled).toBe(true);
      expect(await h.store.listDeliveries(parent.accountId, hook.id, 10)).toEqual([
        { attempt: 2, atMs: t + 5000, status: 410, error: 'HTTP 410' },
        { attempt: 1, atMs: t, status: 500, error: 'HTTP 500' },
      ]);
      // Re-armed and fallen again: a disabled webhook gets nothing.
      await h.store.onBalance(parent.accountId, 500, 'credit', t);
      expect(await h.store.onBalance(parent.accountId, 50, 'debit', t)).toBe(0);
    });
  });
}
