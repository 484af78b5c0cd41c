import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import Database from 'libsql';

/**
 * The one connection to the money store, shared by the ledger and the wallet's proof store so that both
 * live in the same backend: Redis when REDIS_URL is set, otherwise embedded SQLite in DATA_DIR.
 */
export type StoreConnection =
  | { kind: 'redis'; redis: Redis; prefix: string; close(): Promise<void> }
  | { kind: 'sqlite'; db: Database.Database; path: string; close(): Promise<void> };

export interface StoreOptions {
  redisUrl?: string | undefined;
  redisPrefix?: string;
  dataDir?: string;
  /** SQLite file name inside dataDir (default gateway.db); ':memory:' for tests. */
  sqliteFile?: string;
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
  if (opts.redisUrl) {
    const redis = new Redis(opts.redisUrl, {
      // Fail fast instead of queueing money operations while the store is down: callers map the error to
      // 503 store_unavailable and no call goes through unpaid.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: false,
      enableAutoPipelining: true,
    });
    redis.on('error', () => {
      /* surfaced per command as typed errors; avoid unhandled 'error' events */
    });
    return {
      kind: 'redis',
      redis,
      prefix: opts.redisPrefix ?? 'gw',
      async close() {
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
  return {
    kind: 'sqlite',
    db,
    path,
    async close() {
      db.close();
    },
  };
}
