import { randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { BatchWatcher, type BatchWatcherOptions } from '../../../core/batches/batch-watcher.js';
import { RedisBatchJobs } from '../../../core/batches/redis-batch-jobs.js';
import { SqliteBatchJobs } from '../../../core/batches/sqlite-batch-jobs.js';
import type { BatchJobs } from '../../../core/batches/types.js';
import { RedisWebhookStore } from '../../../core/events/redis-webhook-store.js';
import { SqliteWebhookStore } from '../../../core/events/sqlite-webhook-store.js';
import type { WebhookStore } from '../../../core/events/types.js';
import { createLedger, createLedgerOnRedis } from '../../../core/ledger/index.js';
import type { Ledger } from '../../../core/ledger/types.js';
import { RedisObjectOwners } from '../../../core/objects/redis-object-owners.js';
import { SqliteObjectOwners } from '../../../core/objects/sqlite-object-owners.js';
import type { ObjectOwners } from '../../../core/objects/types.js';
import type { StoreConnection } from '../../../core/store/connection.js';
import { dropStore, testStore } from '../../support/dev-mint.js';
import { startRedisCluster } from '../../support/redis-cluster.js';

/** The stores a batch or background-response job touches, on one fresh store of the test's kind. */
export interface BatchBackend {
  ledger: Ledger;
  owners: ObjectOwners;
  jobs: BatchJobs;
  hooks: WebhookStore;
  close(): Promise<void>;
}

async function onRedis(client: Redis | Cluster, prefix: string): Promise<Omit<BatchBackend, 'close'>> {
  return {
    ledger: await createLedgerOnRedis(client, prefix),
    owners: new RedisObjectOwners(client, prefix),
    jobs: new RedisBatchJobs(client, prefix),
    hooks: new RedisWebhookStore(client, prefix),
  };
}

/** A fresh backend on SQLite, Redis or a Redis Cluster (started here, stopped by `close`). */
export async function batchBackend(kind: 'sqlite' | 'redis' | 'redis-cluster'): Promise<BatchBackend> {
  if (kind === 'sqlite') {
    const conn = testStore('sqlite') as Extract<StoreConnection, { kind: 'sqlite' }>;
    const ledger = await createLedger(conn);
    return {
      ledger,
      owners: new SqliteObjectOwners(conn.db),
      jobs: new SqliteBatchJobs(conn.db),
      hooks: new SqliteWebhookStore(conn.db),
      async close() {
        await ledger.close();
        await conn.close();
      },
    };
  }
  if (kind === 'redis') {
    const conn = testStore('redis') as Extract<StoreConnection, { kind: 'redis' }>;
    if (conn.redis.status !== 'ready') await new Promise((r) => conn.redis.once('ready', r));
    const b = await onRedis(conn.redis, conn.prefix);
    return {
      ...b,
      async close() {
        await b.ledger.close();
        await dropStore(conn);
      },
    };
  }
  const cluster = await startRedisCluster();
  const client = new Cluster(cluster.nodes);
  await new Promise((r) => client.once('ready', r));
  const b = await onRedis(client, `bc${randomUUID().slice(0, 6)}`);
  return {
    ...b,
    async close() {
      await b.ledger.close();
      client.disconnect();
      await cluster.stop();
    },
  };
}

/** A settlement watcher over `b`'s stores (3 reconcile polls unless `opts` says otherwise). */
export function watcherOn(
  b: BatchBackend,
  opts: Omit<BatchWatcherOptions, 'jobs' | 'objects' | 'ledger' | 'reconcilePolls'> &
    Partial<Pick<BatchWatcherOptions, 'reconcilePolls'>>,
): BatchWatcher {
  return new BatchWatcher({ jobs: b.jobs, objects: b.owners, ledger: b.ledger, reconcilePolls: 3, ...opts });
}
