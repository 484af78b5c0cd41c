import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import Database from 'libsql';
import { GatewayError } from '../errors.js';
import type { RedisConfig, RedisForm } from './redis-config.js';
import { onlineReplicas, type RedisClient, ReplicaAcks } from './replica-acks.js';
import { checkpointInBackground } from './sqlite-checkpoint.js';

export type { RedisClient, RedisForm };

/** How many Redis nodes the store knows of and how many of them answer (/readyz, the console). */
export interface RedisNodes {
  form: RedisForm;
  nodes: number;
  answering: number;
}

export interface RedisStore {
  kind: 'redis';
  /** A single-node or Sentinel client (`Redis`) or a `Cluster`: every store uses only what both offer. */
  redis: RedisClient;
  form: RedisForm;
  prefix: string;
  /** The replica-acknowledgement rule for money writes (replica-acks.ts): call after a money write to `key`. */
  replicated(key: string): Promise<void>;
  /** Resolves once the client can take commands (it queues none while offline); 503 after `timeoutMs`. */
  ready(timeoutMs?: number): Promise<void>;
  nodes(): Promise<RedisNodes>;
  close(): Promise<void>;
}

/**
 * The one connection to the money store, shared by every store of the process (ledger, wallet proofs,
 * Lightning deposits, events and webhooks, audit trail, limiters, settings, console statistics) so that all
 * of them live in the same backend: Redis in one of its three forms (core/store/redis-config.ts) when one is
 * configured, otherwise embedded SQLite in DATA_DIR.
 */
export type StoreConnection =
  | RedisStore
  | { kind: 'sqlite'; db: Database.Database; path: string; close(): Promise<void> };

export interface StoreOptions {
  /** The configured Redis (config.redis). */
  redis?: RedisConfig | undefined;
  /** Shorthand for a single node with the default rules (tools and tests). */
  redisUrl?: string | undefined;
  redisPrefix?: string;
  dataDir?: string;
  /** SQLite file name inside dataDir (default gateway.db); ':memory:' for tests. */
  sqliteFile?: string;
  /**
   * SQLite: WAL checkpoints in a worker thread every this many ms (`SQLITE_CHECKPOINT_MS`,
   * core/store/sqlite-checkpoint.ts); absent or 0: SQLite's automatic checkpoint, inside a commit.
   */
  sqliteCheckpointMs?: number;
  /** A background checkpoint that failed, or its worker gone (the automatic checkpoint is back then). */
  onCheckpointError?: (err: unknown) => void;
}

/**
 * Waits until a Redis client (single, Sentinel or Cluster) can take commands: the store clients queue
 * nothing while offline (money commands fail fast instead), so start-up must wait for the first connection.
 */
export async function waitForRedis(client: RedisClient, timeoutMs = 10_000): Promise<void> {
  if (client.status === 'ready') return;
  if (client.status === 'wait') client.connect().catch(() => {});
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`Redis not ready after ${timeoutMs} ms`)), timeoutMs);
    const onReady = () => done();
    const onEnd = () => done(new Error('Redis connection closed during start-up'));
    function done(err?: Error) {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      if (err) reject(new GatewayError('store_unavailable', { cause: err }));
      else resolve();
    }
    client.on('ready', onReady);
    client.on('end', onEnd);
  });
}

// Fail fast instead of queueing money operations while the store is down: callers map the error to
// 503 store_unavailable and no call goes through unpaid.
const FAIL_FAST = { enableOfflineQueue: false, maxRetriesPerRequest: 1 } as const;

/** Opens the configured form. Credentials go to the client only; nothing here logs them. */
function openRedis(c: RedisConfig): RedisClient {
  const auth: RedisOptions = {
    ...(c.username !== undefined ? { username: c.username } : {}),
    ...(c.password !== undefined ? { password: c.password } : {}),
    ...(c.tls ? { tls: {} } : {}),
  };
  if (c.form === 'cluster') {
    return new Cluster(c.nodes!, {
      ...FAIL_FAST,
      enableAutoPipelining: true,
      redisOptions: { ...auth, ...FAIL_FAST },
      // While a master fails over, a command for its slots is retried briefly (then answered 503) instead
      // of failing at the first closed connection; the slot map is re-read from any node that answers.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      maxRedirections: 8,
    });
  }
  if (c.form === 'sentinel') {
    return new Redis({
      ...auth,
      ...FAIL_FAST,
      enableAutoPipelining: true,
      sentinels: c.nodes!,
      name: c.sentinelName!,
      // Not ioredis' `failoverDetector`: its disconnect on +switch-master, landing while a reconnect is under
      // way, fails that connect and leaves the client ended for good. The reconnect loop asks the sentinels
      // for the master at every attempt, so a failover is followed within a retry delay anyway.
      sentinelRetryStrategy: (times) => Math.min(times * 200, 2000),
    });
  }
  return new Redis(c.url!, { ...auth, ...FAIL_FAST, enableAutoPipelining: true });
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Nodes and answering nodes: the cluster's own view (CLUSTER NODES), or the master and its replicas. */
async function countNodes(client: RedisClient, form: RedisForm): Promise<RedisNodes> {
  if (client instanceof Cluster) {
    let text = '';
    for (const n of client.nodes('all')) {
      text = await withTimeout(n.cluster('NODES') as Promise<string>, 1000).catch(() => '');
      if (text !== '') break;
    }
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    const answering = lines.filter((l) => {
      const [, , flags = '', , , , , link = ''] = l.split(' ');
      return !/fail|noaddr|handshake/.test(flags) && link === 'connected';
    }).length;
    return { form, nodes: lines.length, answering };
  }
  const info = await withTimeout(client.info('replication'), 1000).catch(() => '');
  if (info === '') return { form, nodes: 1, answering: 0 };
  const replicas = Number(/connected_slaves:(\d+)/.exec(info)?.[1] ?? 0);
  const online = onlineReplicas(info);
  return { form, nodes: 1 + replicas, answering: 1 + online };
}

/** Runs `fn`, retrying on SQLITE_BUSY for up to `ms` (start-up only: it sleeps synchronously between tries). */
function whileBusy<T>(fn: () => T, ms = 15_000): T {
  const until = Date.now() + ms;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return fn();
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > until) throw err;
      Atomics.wait(pause, 0, 0, 10 + Math.floor(Math.random() * 40));
    }
  }
}

export function openStore(opts: StoreOptions): StoreConnection {
  const config: RedisConfig | undefined =
    opts.redis ??
    (opts.redisUrl
      ? { form: 'single', url: opts.redisUrl, tls: false, minReplicaAcks: 'auto', replicaAckTimeoutMs: 1000 }
      : undefined);
  if (config) {
    const redis = openRedis(config);
    redis.on('error', () => {
      /* surfaced per command as typed errors; avoid unhandled 'error' events */
    });
    // Recover without a restart: a client that ended on its own (a connect that failed outright, not a
    // retried one) is reconnected; only close() ends it for good.
    let closing = false;
    redis.on('end', () => {
      if (closing) return;
      setTimeout(() => {
        if (!closing && redis.status === 'end') redis.connect().catch(() => {});
      }, 500).unref();
    });
    const acks = new ReplicaAcks(redis, config.minReplicaAcks, config.replicaAckTimeoutMs);
    return {
      kind: 'redis',
      redis,
      form: config.form,
      prefix: opts.redisPrefix ?? 'gw',
      replicated: (key) => acks.after(key),
      ready: (timeoutMs) => waitForRedis(redis, timeoutMs),
      nodes: () => countNodes(redis, config.form),
      async close() {
        closing = true;
        redis.disconnect();
      },
    };
  }
  const file = opts.sqliteFile ?? 'gateway.db';
  let path = file;
  if (file !== ':memory:') {
    const dir = opts.dataDir ?? './data';
    mkdirSync(dir, { recursive: true });
    path = join(dir, file);
  }
  const db = new Database(path);
  // busy_timeout first: several processes (WORKERS>1) opening a new file at once wait for each other's
  // switch to WAL instead of failing with SQLITE_BUSY.
  db.pragma('busy_timeout = 5000');
  // SQLite can answer SQLITE_BUSY to the WAL switch without calling the busy handler (a lock upgrade that
  // would deadlock), so the start-up pragmas are also retried for a while (seen in CI with 6 processes).
  whileBusy(() => db.pragma('journal_mode = WAL'));
  whileBusy(() => db.pragma('synchronous = FULL'));
  whileBusy(() => db.pragma('foreign_keys = ON'));
  // A no-op for ':memory:' and for 0 or absent (checkpointInBackground decides).
  const checkpoints = checkpointInBackground(db, path, {
    everyMs: opts.sqliteCheckpointMs ?? 0,
    ...(opts.onCheckpointError !== undefined ? { onError: opts.onCheckpointError } : {}),
  });
  return {
    kind: 'sqlite',
    db,
    path,
    async close() {
      await checkpoints.close();
      db.close();
    },
  };
}
