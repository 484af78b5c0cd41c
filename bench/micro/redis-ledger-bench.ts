import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { callAuditRecord } from '../../core/audit/audit-log.js';
import { createLedger } from '../../core/ledger/index.js';
import type { CallAuditRecord, Ledger } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { deleteKeys } from '../../scripts/lib/redis-cleanup.js';

/**
 * What the Redis micro-benches share: a ledger under a fresh prefix with one key funded far beyond any bench
 * (its keys deleted afterwards), Redis's own CPU, and a paid call's audit record as the settle stage builds it.
 */

export interface FundedRedisLedger {
  /** A second client, for INFO and CONFIG RESETSTAT. */
  stats: Redis;
  conn: StoreConnection;
  /** Every key under `<prefix>:` is deleted afterwards (a bench's own keys too). */
  prefix: string;
  ledger: Ledger;
  apiKey: string;
  accountId: string;
}

/** Runs `bench` against a fresh Redis ledger with one funded key, then deletes every key under its prefix. */
export async function withFundedRedisLedger(
  redisUrl: string,
  tag: string,
  bench: (b: FundedRedisLedger) => Promise<void>,
): Promise<void> {
  const stats = new Redis(redisUrl);
  const prefix = `${tag}${randomBytes(4).toString('hex')}`;
  const conn = openStore({ redisUrl, redisPrefix: prefix });
  try {
    const ledger = await createLedger(conn, { warn: () => {} });
    const d = await ledger.createKeyFromDeposit({
      tokenHash: randomBytes(32).toString('hex'),
      amountMsat: 1e15,
    });
    if (!d.ok) throw new Error(d.code);
    await bench({ stats, conn, prefix, ledger, apiKey: d.apiKey, accountId: d.key.accountId });
  } finally {
    await deleteKeys(stats, `${prefix}:*`);
    await conn.close();
    stats.disconnect();
  }
}

/** Redis main-thread CPU (user + sys), µs: unlike commandstats' wall time, not inflated by a busy host. */
export async function redisCpuMicros(r: Redis): Promise<number> {
  const info = await r.info('cpu');
  const f = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (f('used_cpu_user_main_thread') + f('used_cpu_sys_main_thread')) * 1e6;
}

/** A non-stream chat call's audit record, as the settle stage hands it to the ledger (no cost yet). */
export function benchAuditRecord(
  apiKey: string,
  requestId: string,
  atMs = Date.now(),
): CallAuditRecord | undefined {
  return callAuditRecord({
    atMs,
    requestId,
    subject: { credential: { apiKey } },
    endpoint: '/v1/chat/completions',
    method: 'POST',
    ip: '10.0.0.1',
    userAgent: 'bench/1',
    costMsat: 0,
    status: 200,
  });
}
