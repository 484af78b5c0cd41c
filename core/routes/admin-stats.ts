import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { migrate } from '../ledger/sqlite/migrations.js';
import type { Logger } from '../log.js';
import { onCharge } from '../metrics.js';
import type { StoreConnection } from '../store/connection.js';
import { requestEndChannel } from '../tracing.js';

/**
 * What the operator's console charts: paid calls, failed calls and charged msats per minute, hour and day,
 * and solvency samples (msats held in proofs vs. msats owed to users) over time — kept in the money store
 * so every process sharing it adds to the same series and the history survives restarts.
 *
 * Off the hot path: each call only bumps an in-memory counter of its minute; every FLUSH_MS the pending
 * minutes are added to the store (Redis: HINCRBY on one hash per bucket with a TTL; SQLite: an upsert
 * adding to the row) at all three granularities. A read flushes this process's pending counts first. A
 * failed flush keeps the counts for the next one; what is pending when the process dies (≤ FLUSH_MS) is lost
 * from the charts only — the ledger is the record of money.
 *
 * "Calls" are requests through the paid pipeline; "errors" those answered with a status ≥ 400.
 */

export type Granularity = 'minute' | 'hour' | 'day';
export const SPAN_MS: Record<Granularity, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** How long each granularity is kept. */
const KEEP_MS: Record<Granularity, number> = {
  minute: 2 * 86_400_000,
  hour: 90 * 86_400_000,
  day: 3 * 365 * 86_400_000,
};
export const MAX_POINTS: Record<Granularity, number> = { minute: 24 * 60, hour: 24 * 90, day: 3 * 365 };
const FLUSH_MS = 10_000;
/**
 * Solvency samples from store figures (no mint call) this often, across all processes sharing the store (a
 * process skips its turn when a sample is younger than that): summing user balances is one pass over every
 * account. The console's solvency check adds a sample too.
 */
const SAMPLE_MS = 5 * 60_000;
const MAX_SAMPLES = 10_000;

export interface Counts {
  calls: number;
  errors: number;
  chargedMsat: number;
}
export interface Point extends Counts {
  /** Bucket start, ms since the epoch. */
  t: number;
}
export interface SolvencySample {
  t: number;
  proofsMsat: number;
  userBalancesMsat: number;
}

// Every bucket in one hash slot ({stats}): a flush is one MULTI and a chart one pipeline, on Redis Cluster too.
const bucketKey = (prefix: string, g: Granularity, bucket: number) =>
  `${prefix}:{stats}:admin:stats:${g}:${bucket}`;
const solvencyKey = (prefix: string) => `${prefix}:{stats}:admin:solvency`;

export class AdminStats {
  private pending = new Map<number, Counts>();
  private readonly timers: NodeJS.Timeout[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  private readonly onEnd = (msg: unknown) => {
    const status = (msg as { status: number }).status;
    const c = this.current();
    c.calls++;
    if (status >= 400) c.errors++;
  };
  private readonly offCharge: () => void;

  constructor(
    private readonly store: StoreConnection,
    private readonly log: Logger,
    /** Store-only solvency figures for the periodic sample; undefined: no periodic sampling. */
    sampler?: () => Promise<Omit<SolvencySample, 't'>>,
    /** Once `draining` turns true (shutdown), the timers stop after one last flush. */
    private readonly lifecycle?: { draining: boolean },
  ) {
    if (store.kind === 'sqlite') migrate(store.db);
    subscribe(requestEndChannel.name, this.onEnd);
    this.offCharge = onCharge((msat) => {
      this.current().chargedMsat += msat;
    });
    this.timers.push(
      setInterval(() => {
        if (this.lifecycle?.draining) void this.close();
        else void this.flush().catch(() => {});
      }, FLUSH_MS).unref(),
    );
    if (sampler) {
      const sample = () =>
        this.samples(1)
          .then(async (last) => {
            if (last.length > 0 && Date.now() - last[0]!.t < SAMPLE_MS * 0.9) return;
            await this.addSample({ t: Date.now(), ...(await sampler()) });
          })
          .catch((err: unknown) => {
            if (!this.closed) this.log.warn({ err }, 'solvency sample failed');
          });
      this.timers.push(setTimeout(sample, 1_000).unref(), setInterval(sample, SAMPLE_MS).unref());
    }
  }

  private current(): Counts {
    const minute = Math.floor(Date.now() / SPAN_MS.minute) * SPAN_MS.minute;
    let c = this.pending.get(minute);
    if (c === undefined) {
      c = { calls: 0, errors: 0, chargedMsat: 0 };
      this.pending.set(minute, c);
    }
    return c;
  }

  /**
   * Adds counts to the minute of `minuteMs` (any past minute) exactly as the gateway's own counting does, for
   * backfills and demo data (scripts/console-screenshot.ts); written by the next flush.
   */
  addCounts(minuteMs: number, counts: Counts): void {
    const minute = Math.floor(minuteMs / SPAN_MS.minute) * SPAN_MS.minute;
    const c = this.pending.get(minute);
    if (c === undefined) this.pending.set(minute, { ...counts });
    else {
      c.calls += counts.calls;
      c.errors += counts.errors;
      c.chargedMsat += counts.chargedMsat;
    }
  }

  /** Adds the pending minutes to the store (one flush at a time; a failure keeps them pending). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.pending.size === 0) return Promise.resolve();
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write(batch)
      .catch((err: unknown) => {
        for (const [minute, c] of batch) {
          const p = this.pending.get(minute);
          if (p) {
            p.calls += c.calls;
            p.errors += c.errors;
            p.chargedMsat += c.chargedMsat;
          } else this.pending.set(minute, c);
        }
        if (!this.closed) this.log.warn({ err }, 'could not write the console statistics');
        throw err;
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  private async write(batch: Map<number, Counts>): Promise<void> {
    // Fold the minutes into their hour and day buckets first: one store update per bucket.
    const rows = new Map<string, { g: Granularity; bucket: number; c: Counts }>();
    for (const [minute, c] of batch) {
      for (const g of ['minute', 'hour', 'day'] as const) {
        const bucket = Math.floor(minute / SPAN_MS[g]) * SPAN_MS[g];
        const id = `${g}:${bucket}`;
        const row = rows.get(id);
        if (row) {
          row.c.calls += c.calls;
          row.c.errors += c.errors;
          row.c.chargedMsat += c.chargedMsat;
        } else rows.set(id, { g, bucket, c: { ...c } });
      }
    }
    const store = this.store;
    if (store.kind === 'redis') {
      const m = store.redis.multi();
      for (const { g, bucket, c } of rows.values()) {
        const k = bucketKey(store.prefix, g, bucket);
        m.hincrby(k, 'calls', c.calls);
        m.hincrby(k, 'errors', c.errors);
        m.hincrby(k, 'charged_msat', c.chargedMsat);
        m.pexpireat(k, bucket + SPAN_MS[g] + KEEP_MS[g]);
      }
      await m.exec();
      return;
    }
    const db = store.db;
    const up = db.prepare(
      'INSERT INTO admin_stats (g, bucket, calls, errors, charged_msat) VALUES (?, ?, ?, ?, ?) ON CONFLICT (g, bucket) DO UPDATE SET calls = calls + excluded.calls, errors = errors + excluded.errors, charged_msat = charged_msat + excluded.charged_msat',
    );
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const { g, bucket, c } of rows.values()) up.run(g, bucket, c.calls, c.errors, c.chargedMsat);
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

  /** The last `points` buckets of `g` up to now (oldest first, every bucket present, zero when idle). */
  async series(g: Granularity, points: number, now = Date.now()): Promise<Point[]> {
    await this.flush();
    const span = SPAN_MS[g];
    const last = Math.floor(now / span) * span;
    const buckets = Array.from({ length: points }, (_, i) => last - (points - 1 - i) * span);
    const found = new Map<number, Counts>();
    const store = this.store;
    if (store.kind === 'redis') {
      const p = store.redis.pipeline();
      for (const b of buckets) p.hgetall(bucketKey(store.prefix, g, b));
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
    } else {
      const rows = store.db
        .prepare(
          'SELECT bucket, calls, errors, charged_msat FROM admin_stats WHERE g = ? AND bucket >= ? AND bucket <= ?',
        )
        .all(g, buckets[0], last) as Array<{
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
    }
    return buckets.map((t) => ({ t, ...(found.get(t) ?? { calls: 0, errors: 0, chargedMsat: 0 }) }));
  }

  async addSample(s: SolvencySample): Promise<void> {
    const store = this.store;
    if (store.kind === 'redis') {
      const k = solvencyKey(store.prefix);
      await store.redis
        .multi()
        .rpush(k, JSON.stringify([s.t, s.proofsMsat, s.userBalancesMsat]))
        .ltrim(k, -MAX_SAMPLES, -1)
        .exec();
      return;
    }
    store.db
      .prepare('INSERT INTO admin_solvency (t, proofs_msat, user_balances_msat) VALUES (?, ?, ?)')
      .run(s.t, s.proofsMsat, s.userBalancesMsat);
    store.db
      .prepare(
        'DELETE FROM admin_solvency WHERE rowid <= (SELECT rowid FROM admin_solvency ORDER BY rowid DESC LIMIT 1 OFFSET ?)',
      )
      .run(MAX_SAMPLES);
  }

  /**
   * The last `limit` samples written, oldest first by time (processes' clocks differ a little, and a backfill
   * writes older samples after newer ones: a chart needs its x values in order).
   */
  async samples(limit: number): Promise<SolvencySample[]> {
    return (await this.lastSamples(limit)).sort((a, b) => a.t - b.t);
  }

  private async lastSamples(limit: number): Promise<SolvencySample[]> {
    const store = this.store;
    if (store.kind === 'redis') {
      const raw = await store.redis.lrange(solvencyKey(store.prefix), -limit, -1);
      return raw.map((r) => {
        const [t, proofsMsat, userBalancesMsat] = JSON.parse(r) as [number, number, number];
        return { t, proofsMsat, userBalancesMsat };
      });
    }
    const rows = store.db
      .prepare('SELECT t, proofs_msat, user_balances_msat FROM admin_solvency ORDER BY rowid DESC LIMIT ?')
      .all(limit) as Array<{ t: number; proofs_msat: number; user_balances_msat: number }>;
    return rows.reverse().map((r) => ({
      t: Number(r.t),
      proofsMsat: Number(r.proofs_msat),
      userBalancesMsat: Number(r.user_balances_msat),
    }));
  }

  /** Stops recording and sampling (the last pending counts are written when the store still answers). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    unsubscribe(requestEndChannel.name, this.onEnd);
    this.offCharge();
    for (const t of this.timers) clearInterval(t);
    await this.flush().catch(() => {});
  }
}
