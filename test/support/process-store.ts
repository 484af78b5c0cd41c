import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { AuditLog } from '../../core/audit/audit-log.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger, LedgerOptions } from '../../core/ledger/types.js';
import { createLogger } from '../../core/log.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { readRedisConfig } from '../../core/store/redis-config.js';
import type { RedisTopology } from './redis-cluster.js';

/**
 * A fresh store for gateways that run as their own processes (spawnGateway): the environment that points them
 * at it (a temp DATA_DIR, or TEST_REDIS_URL under a random prefix), a way to read its ledger from the test,
 * and clean-up.
 */
export interface ProcessStore {
  /** DATA_DIR, or REDIS_URL + REDIS_PREFIX. */
  readonly env: Record<string, string>;
  /** Runs `fn` with a ledger on its own connection to the store (closed afterwards); `conn` is that connection. */
  withLedger<T>(fn: (ledger: Ledger, conn: StoreConnection) => Promise<T>): Promise<T>;
  /** Runs `fn` with the audit log (core/audit) on its own connection to the store (closed afterwards). */
  withAuditLog<T>(fn: (audit: AuditLog) => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}

/**
 * Which store: SQLite, the shared test Redis (TEST_REDIS_URL), a Redis of the test's own (`{ redisUrl }`, e.g.
 * one it stops and starts), or a throw-away Redis Cluster or Sentinel set-up (`topology`: its keys go with it,
 * nothing to drop).
 */
export type ProcessStoreKind = 'sqlite' | 'redis' | { redisUrl: string } | RedisTopology;

export function processStore(kind: ProcessStoreKind): ProcessStore {
  if (typeof kind !== 'string' && !('redisUrl' in kind)) return topologyStore(kind);
  const redisUrl = typeof kind === 'string' ? process.env.TEST_REDIS_URL : kind.redisUrl;
  const redis = kind !== 'sqlite';
  const prefix = redis ? `tproc${randomBytes(5).toString('hex')}` : undefined;
  const dataDir = redis ? undefined : mkdtempSync(join(tmpdir(), 'gw-proc-'));
  if (redis && !redisUrl) throw new Error('TEST_REDIS_URL is not set (global setup)');
  return {
    env: prefix ? { REDIS_URL: redisUrl!, REDIS_PREFIX: prefix } : { DATA_DIR: dataDir! },
    ...readers(
      () =>
        prefix ? openStore({ redisUrl: redisUrl!, redisPrefix: prefix }) : openStore({ dataDir: dataDir! }),
      { prefix: prefix ?? 'gw' },
    ),
    async drop() {
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (prefix) {
        // Fails at once when that Redis is gone (a test's own, stopped), instead of retrying for ever.
        const r = new Redis(redisUrl!, { maxRetriesPerRequest: 0, retryStrategy: () => null });
        r.on('error', () => {});
        try {
          const keys = await r.keys(`${prefix}:*`);
          if (keys.length > 0) await r.del(...keys);
        } finally {
          r.disconnect();
        }
      }
    },
  };
}

function topologyStore(topo: RedisTopology): ProcessStore {
  const prefix = `tproc${randomBytes(5).toString('hex')}`;
  const env = { ...topo.env, REDIS_PREFIX: prefix };
  return {
    env,
    ...readers(() => openStore({ redis: readRedisConfig(env), redisPrefix: prefix }), {
      prefix,
      warn: () => {},
    }),
    async drop() {},
  };
}

/** `withLedger` and `withAuditLog` on a fresh connection from `open` each time (ready first, closed after). */
function readers(
  open: () => StoreConnection,
  ledgerOptions: LedgerOptions,
): Pick<ProcessStore, 'withLedger' | 'withAuditLog'> {
  async function withConn<T>(fn: (conn: StoreConnection) => Promise<T>): Promise<T> {
    const conn = open();
    try {
      if (conn.kind === 'redis') await conn.ready();
      return await fn(conn);
    } finally {
      await conn.close();
    }
  }
  return {
    withLedger: (fn) =>
      withConn(async (conn) => {
        const ledger = await createLedger(conn, ledgerOptions);
        try {
          return await fn(ledger, conn);
        } finally {
          await ledger.close();
        }
      }),
    withAuditLog: (fn) =>
      withConn(async (conn) => {
        const audit = new AuditLog(conn, { retentionDays: 30, log: createLogger('silent') });
        try {
          return await fn(audit);
        } finally {
          await audit.close();
        }
      }),
  };
}
