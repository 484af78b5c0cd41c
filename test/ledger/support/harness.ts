import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import Database from 'libsql';
import { AuditLog } from '../../../core/audit/audit-log.js';
import { type LeaseOptions, LeasingLedger } from '../../../core/ledger/leasing.js';
import { accountKeys, keyIdIndexKey } from '../../../core/ledger/redis/redis-keys.js';
import { createRedisLedger } from '../../../core/ledger/redis/redis-ledger.js';
import { SqliteLedger } from '../../../core/ledger/sqlite/sqlite-ledger.js';
import type { Ledger, LedgerOptions } from '../../../core/ledger/types.js';
import { createLogger } from '../../../core/log.js';
import type { StoreConnection } from '../../../core/store/connection.js';
import { deleteKeys } from '../../../scripts/lib/redis-cleanup.js';

/**
 * One store under test: a fresh, empty ledger per test (SQLite in memory; Redis under a random prefix,
 * deleted afterwards) plus a way to corrupt an account so the audit can be shown to catch breaches.
 */
export interface StoreHarness {
  ledger: Ledger;
  /** Adds `delta` to an account's balance behind the ledger's back. */
  tamper(accountId: string, delta: number): Promise<void>;
  /** Drops what the store keeps only to find things faster (Redis: the key-id index), as an old store lacks it. */
  forgetIndexes(): Promise<void>;
  /**
   * The audit log (core/audit/audit-log.ts) over the same store, as the gateway builds it: its reads first have
   * `ledger` (default: this harness's) report what it still holds. No timers (nothing is buffered by the ledger).
   */
  auditLog(ledger?: Ledger): AuditLog;
  close(): Promise<void>;
}

function auditLogOver(store: StoreConnection, ledger: Ledger): AuditLog {
  return new AuditLog(store, {
    retentionDays: 30,
    log: createLogger('silent'),
    beforeRead: (account) => ledger.reportCalls(account),
  });
}

export interface StoreFactory {
  name: string;
  create(opts?: LedgerOptions): Promise<StoreHarness>;
  /** Once per file. */
  teardown(): Promise<void>;
}

export function sqliteFactory(): StoreFactory {
  return {
    name: 'sqlite',
    async create(opts) {
      const db = new Database(':memory:');
      db.pragma('foreign_keys = ON');
      const ledger = new SqliteLedger(db, opts);
      return {
        ledger,
        async tamper(accountId, delta) {
          db.prepare('UPDATE ledger_accounts SET balance = balance + ? WHERE id = ?').run(delta, accountId);
        },
        async forgetIndexes() {},
        auditLog(l = ledger) {
          return auditLogOver({ kind: 'sqlite', db, path: ':memory:', close: async () => {} }, l);
        },
        async close() {
          db.close();
        },
      };
    },
    async teardown() {},
  };
}

/** A ledger on a Redis client (one server or a cluster) under `prefix`, with the harness's ways in. */
async function redisHarness(
  c: Redis | Cluster,
  prefix: string,
  form: 'single' | 'cluster',
  opts?: LedgerOptions,
): Promise<StoreHarness> {
  const ledger = await createRedisLedger(c, prefix, { warn: () => {}, ...opts });
  return {
    ledger,
    async tamper(accountId, delta) {
      await c.hincrby(accountKeys(prefix, accountId).acct, 'balance', delta);
    },
    async forgetIndexes() {
      await c.del(keyIdIndexKey(prefix));
    },
    auditLog(l = ledger) {
      // The audit log takes the store's client as it is (its Redis backend works on a Cluster client too).
      return auditLogOver(storeOver(c, prefix, form), l);
    },
    async close() {},
  };
}

export function redisFactory(url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'): StoreFactory {
  let client: Redis | undefined;
  const prefixes: string[] = [];
  return {
    name: 'redis',
    async create(opts) {
      client ??= new Redis(url, { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
      const prefix = `t${randomBytes(6).toString('hex')}`;
      prefixes.push(prefix);
      return redisHarness(client, prefix, 'single', opts);
    },
    async teardown() {
      if (!client) return;
      for (const p of prefixes) await deleteKeys(client, `${p}:*`);
      client.disconnect();
    },
  };
}

export function clusterFactory(getNodes: () => Array<{ host: string; port: number }>): StoreFactory {
  let client: Cluster | undefined;
  const prefixes: string[] = [];
  return {
    name: 'redis-cluster',
    async create(opts) {
      client ??= new Cluster(getNodes(), { redisOptions: { maxRetriesPerRequest: 1 } });
      const prefix = `t${randomBytes(6).toString('hex')}`;
      prefixes.push(prefix);
      return redisHarness(client, prefix, 'cluster', opts);
    },
    async teardown() {
      if (!client) return;
      for (const p of prefixes) await deleteKeys(client, `${p}:*`);
      client.disconnect();
    },
  };
}

export function randomTokenHash(): string {
  return randomBytes(32).toString('hex');
}

/**
 * The same store behind the credit-lease wrapper, as core/services.ts builds it by default (LEDGER_LEASES=on),
 * so the conformance suite runs through the code path production uses. Short flush/idle times keep background
 * steps happening while a test runs; `close` reports and returns every lease before the store closes.
 *
 * The suite drives time by passing `now` to each operation (production never does: one clock). The wrapper
 * runs on that same clock: the latest `now` a test passed (else the real one), so its lease steps, expiries
 * and requests/min windows agree with the store's view of the test's calls.
 */
export function leasedFactory(
  inner: StoreFactory,
  opts: Omit<LeaseOptions, 'now'> = { flushMs: 10, idleMs: 100, ttlMs: 5000 },
): StoreFactory {
  return {
    name: `${inner.name}+leases`,
    async create(ledgerOpts) {
      const h = await inner.create(ledgerOpts);
      let clock: number | undefined;
      const leasing = new LeasingLedger(h.ledger, { ...opts, now: () => clock ?? Date.now() });
      const ledger = new Proxy(leasing, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver);
          if (typeof v !== 'function') return v;
          return (...args: unknown[]) => {
            const at = testNow(String(prop), args);
            if (at !== undefined) clock = at;
            return v.apply(target, args);
          };
        },
      });
      return {
        ...h,
        ledger,
        auditLog: (l = ledger) => h.auditLog(l),
        async close() {
          await leasing.close(); // reports and returns every lease (the store's close leaves the connection)
          await h.close();
        },
      };
    },
    teardown: () => inner.teardown(),
  };
}

/** The `now` a test passed to a Ledger method, wherever that method takes it. */
function testNow(method: string, args: unknown[]): number | undefined {
  const at = (i: number) => (typeof args[i] === 'number' ? (args[i] as number) : undefined);
  switch (method) {
    case 'getKeyInfo':
    case 'heartbeat':
    case 'releaseOrphans':
    case 'otherLeases':
      return at(method === 'otherLeases' ? 2 : 1);
    case 'sweepExpired':
    case 'recalledSince':
      return method === 'sweepExpired' ? at(0) : undefined;
    default: {
      const input = args[0] as { now?: unknown } | undefined;
      return input && typeof input === 'object' && typeof input.now === 'number' ? input.now : undefined;
    }
  }
}

/** A store connection over a client the factory owns (the audit log takes it as a gateway would). */
function storeOver(redis: Redis | Cluster, prefix: string, form: 'single' | 'cluster'): StoreConnection {
  return {
    kind: 'redis',
    redis,
    form,
    prefix,
    replicated: async () => {},
    ready: async () => {},
    nodes: async () => ({ form, nodes: 1, answering: 1 }),
    close: async () => {},
  };
}
