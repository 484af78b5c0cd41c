import type { Cluster, Redis } from 'ioredis';
import type { StoreConnection } from '../store/connection.js';
import { ReplicaAcks } from '../store/replica-acks.js';
import { createRedisLedger } from './redis/redis-ledger.js';
import { SqliteLedger } from './sqlite/sqlite-ledger.js';
import type { Ledger, LedgerOptions } from './types.js';

export * from './errors.js';
export type * from './types.js';

/**
 * The ledger for the shared store connection: Redis (REDIS_URL set) or embedded SQLite (migrations
 * applied here). Redis: loads the server secret and warns once when Redis keeps nothing on disk.
 */
export async function createLedger(conn: StoreConnection, opts: LedgerOptions = {}): Promise<Ledger> {
  if (conn.kind === 'redis')
    return createRedisLedger(conn.redis, opts.prefix ?? conn.prefix, opts, conn.replicated);
  return new SqliteLedger(conn.db, opts);
}

/** For a client made elsewhere, e.g. an ioredis `Cluster` (the replica rule at its default, `auto`). */
export async function createLedgerOnRedis(
  client: Redis | Cluster,
  prefix: string,
  opts: LedgerOptions = {},
): Promise<Ledger> {
  const acks = new ReplicaAcks(client, 'auto', 1000);
  return createRedisLedger(client, prefix, opts, (key) => acks.after(key));
}
