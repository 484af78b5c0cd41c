import type Database from 'libsql';
import type { RedisStore, StoreConnection } from '../store/connection.js';
import { migrate } from '../store/sqlite-migrations.js';

/**
 * Where the console's series and solvency samples are kept: the money store, so every process sharing it adds
 * to the same series and the history survives restarts. Redis: one hash per bucket (HINCRBY, with a TTL);
 * SQLite: the tables `admin_stats` and `admin_solvency` (migration 14), a flush being one upsert per bucket
 * inside an IMMEDIATE transaction. The counting and flushing policy lives in admin-stats.ts.
 */

export type Granularity = 'minute' | 'hour' | 'day';
export const SPAN_MS: Record<Granularity, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** How long each granularity is kept. */
const KEEP_MS: Record<Granularity, number> = {
  minute: 2 * 86_400_000,
  hour: 90 * 86_400_000,
  day: 3 * 365 * 86_400_000,
};
const MAX_SAMPLES = 10_000;

export interface Counts {
  calls: number;
  errors: number;
  chargedMsat: number;
}
export interface SolvencySample {
  t: number;
  proofsMsat: number;
  userBalancesMsat: number;
}
/** Counts to add to one bucket. */
export interface BucketAdd {
  g: Granularity;
  bucket: number;
  c: Counts;
}

export interface StatsStore {
  /** Adds each row's counts to its bucket in one step, and forgets buckets older than their granularity keeps. */
  add(rows: readonly BucketAdd[]): Promise<void>;
  /** The stored counts of `g` in `buckets` (ascending bucket starts; a bucket never written is absent). */
  read(g: Granularity, buckets: readonly number[]): Promise<Map<number, Counts>>;
  /** Appends a sample (the oldest past MAX_SAMPLES are dropped). */
  addSample(s: SolvencySample): Promise<void>;
  /** The last `limit` samples in the order written. */
  lastSamples(limit: number): Promise<SolvencySample[]>;
}

export function statsStore(conn: StoreConnection): StatsStore {
  return conn.kind === 'redis' ? new RedisStatsStore(conn) : new SqliteStatsStore(conn.db);
}

// Every bucket in one hash slot ({stats}): a flush is one MULTI and a chart one pipeline, on Redis Cluster too.
const bucketKey = (prefix: string, g: Granularity, bucket: number) =>
  `${prefix}:{stats}:admin:stats:${g}:${bucket}`;
const solvencyKey = (prefix: string) => `${prefix}:{stats}:admin:solvency`;

class RedisStatsStore implements StatsStore {
  constructor(private readonly conn: RedisStore) {}

  async add(rows: readonly BucketAdd[]): Promise<void> {
    const { redis, prefix } = this.conn;
    const m = redis.multi();
    for (const { g, bucket, c } of rows) {
      const k = bucketKey(prefix, g, bucket);
      m.hincrby(k, 'calls', c.calls);
      m.hincrby(k, 'errors', c.errors);
      m.hincrby(k, 'charged_msat', c.chargedMsat);
      m.pexpireat(k, bucket + SPAN_MS[g] + KEEP_MS[g]);
    }
    await m.exec();
  }

  async read(g: Granularity, buckets: readonly number[]): Promise<Map<number, Counts>> {
    const found = new Map<number, Counts>();
    const p = this.conn.redis.pipeline();
    for (const b of buckets) p.hgetall(bucketKey(this.conn.prefix, g, b));
    const res = (await p.exec()) ?? [];
    res.forEach(([err, v], i) => {
      if (err) throw err;
      const h = v as Record<string, string>;
      if (h.calls !== undefined) {
        found.set(buckets[i]!, {
          calls: Number(h.calls),
          errors: Number(h.errors ?? 0),
          chargedMsat: Number(h.charged_msat ?? 0),
        });
      }
    });
    return found;
  }

  async addSample(s: SolvencySample): Promise<void> {
    const k = solvencyKey(this.conn.prefix);
    await this.conn.redis
      .multi()
      .rpush(k, JSON.stringify([s.t, s.proofsMsat, s.userBalancesMsat]))
      .ltrim(k, -MAX_SAMPLES, -1)
      .exec();
  }

  async lastSamples(limit: number): Promise<SolvencySample[]> {
    const raw = await this.conn.redis.lrange(solvencyKey(this.conn.prefix), -limit, -1);
    return raw.map((r) => {
      const [t, proofsMsat, userBalancesMsat] = JSON.parse(r) as [number, number, number];
      return { t, proofsMsat, userBalancesMsat };
    });
  }
}

class SqliteStatsStore implements StatsStore {
  constructor(private readonly db: Database.Database) {
    migrate(db);
  }

  async add(rows: readonly BucketAdd[]): Promise<void> {
    const db = this.db;
    const up = db.prepare(
      'INSERT INTO admin_stats (g, bucket, calls, errors, charged_msat) VALUES (?, ?, ?, ?, ?) ON CONFLICT (g, bucket) DO UPDATE SET calls = calls + excluded.calls, errors = errors + excluded.errors, charged_msat = charged_msat + excluded.charged_msat',
    );
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const { g, bucket, c } of rows) up.run(g, bucket, c.calls, c.errors, c.chargedMsat);
      const now = Date.now();
      for (const g of ['minute', 'hour', 'day'] as const) {
        db.prepare('DELETE FROM admin_stats WHERE g = ? AND bucket < ?').run(g, now - KEEP_MS[g]);
      }
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  }

  async read(g: Granularity, buckets: readonly number[]): Promise<Map<number, Counts>> {
    const found = new Map<number, Counts>();
    if (buckets.length === 0) return found;
    const rows = this.db
      .prepare(
        'SELECT bucket, calls, errors, charged_msat FROM admin_stats WHERE g = ? AND bucket >= ? AND bucket <= ?',
      )
      .all(g, buckets[0], buckets[buckets.length - 1]) as Array<{
      bucket: number;
      calls: number;
      errors: number;
      charged_msat: number;
    }>;
    for (const r of rows) {
      found.set(Number(r.bucket), {
        calls: Number(r.calls),
        errors: Number(r.errors),
        chargedMsat: Number(r.charged_msat),
      });
    }
    return found;
  }

  async addSample(s: SolvencySample): Promise<void> {
    this.db
      .prepare('INSERT INTO admin_solvency (t, proofs_msat, user_balances_msat) VALUES (?, ?, ?)')
      .run(s.t, s.proofsMsat, s.userBalancesMsat);
    this.db
      .prepare(
        'DELETE FROM admin_solvency WHERE rowid <= (SELECT rowid FROM admin_solvency ORDER BY rowid DESC LIMIT 1 OFFSET ?)',
      )
      .run(MAX_SAMPLES);
  }

  async lastSamples(limit: number): Promise<SolvencySample[]> {
    const rows = this.db
      .prepare('SELECT t, proofs_msat, user_balances_msat FROM admin_solvency ORDER BY rowid DESC LIMIT ?')
      .all(limit) as Array<{ t: number; proofs_msat: number; user_balances_msat: number }>;
    return rows.reverse().map((r) => ({
      t: Number(r.t),
      proofsMsat: Number(r.proofs_msat),
      userBalancesMsat: Number(r.user_balances_msat),
    }));
  }
}
