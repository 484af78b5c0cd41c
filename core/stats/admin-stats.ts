import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Logger } from '../log.js';
import { onCharge } from '../metrics.js';
import type { StoreConnection } from '../store/connection.js';
import { requestEndChannel } from '../tracing.js';
import {
  type BucketAdd,
  type Counts,
  type Granularity,
  type SolvencySample,
  SPAN_MS,
  type StatsStore,
  statsStore,
} from './stats-store.js';

/**
 * What the operator's console charts: paid calls, failed calls and charged msats per minute, hour and day,
 * and solvency samples (msats held in proofs vs. msats owed to users) over time — kept in the money store
 * (stats-store.ts) so every process sharing it adds to the same series and the history survives restarts.
 *
 * Off the hot path: each call only bumps an in-memory counter of its minute; every FLUSH_MS the pending
 * minutes are added to the store at all three granularities. A read flushes this process's pending counts first. A
 * failed flush keeps the counts for the next one; what is pending when the process dies (≤ FLUSH_MS) is lost
 * from the charts only — the ledger is the record of money.
 *
 * "Calls" are requests through the paid pipeline; "errors" those answered with a status ≥ 400.
 */

export const MAX_POINTS: Record<Granularity, number> = { minute: 24 * 60, hour: 24 * 90, day: 3 * 365 };
const FLUSH_MS = 10_000;
/**
 * Solvency samples from store figures (no mint call) this often, across all processes sharing the store (a
 * process skips its turn when a sample is younger than that): summing user balances is one pass over every
 * account. The console's solvency check adds a sample too.
 */
const SAMPLE_MS = 5 * 60_000;

export interface Point extends Counts {
  /** Bucket start, ms since the epoch. */
  t: number;
}

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

  private readonly store: StatsStore;

  constructor(
    conn: StoreConnection,
    private readonly log: Logger,
    /** Store-only solvency figures for the periodic sample; undefined: no periodic sampling. */
    sampler?: () => Promise<Omit<SolvencySample, 't'>>,
    /** Once `draining` turns true (shutdown), the timers stop after one last flush. */
    private readonly lifecycle?: { draining: boolean },
  ) {
    this.store = statsStore(conn);
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
    const rows = new Map<string, BucketAdd>();
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
    await this.store.add([...rows.values()]);
  }

  /** The last `points` buckets of `g` up to now (oldest first, every bucket present, zero when idle). */
  async series(g: Granularity, points: number, now = Date.now()): Promise<Point[]> {
    await this.flush();
    const span = SPAN_MS[g];
    const last = Math.floor(now / span) * span;
    const buckets = Array.from({ length: points }, (_, i) => last - (points - 1 - i) * span);
    const found = await this.store.read(g, buckets);
    return buckets.map((t) => ({ t, ...(found.get(t) ?? { calls: 0, errors: 0, chargedMsat: 0 }) }));
  }

  async addSample(s: SolvencySample): Promise<void> {
    await this.store.addSample(s);
  }

  /**
   * The last `limit` samples written, oldest first by time (processes' clocks differ a little, and a backfill
   * writes older samples after newer ones: a chart needs its x values in order).
   */
  async samples(limit: number): Promise<SolvencySample[]> {
    return (await this.store.lastSamples(limit)).sort((a, b) => a.t - b.t);
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
