/**
 * Latency recording and summaries: pure code (tested in test/bench). Latencies are kept as raw
 * microsecond samples in a bounded buffer — autocannon's own histogram has 1 ms resolution, far too coarse
 * for sub-millisecond overhead targets — and summarised by exact order statistics.
 */

/** Raw samples beyond this are dropped (counted in `dropped`): bounded memory whatever the run length. */
export const MAX_SAMPLES = 4_000_000;

export interface LatencySummary {
  count: number;
  /** Milliseconds, 3 decimals. */
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Bounded recorder of latency samples (milliseconds in, microseconds stored). */
export class LatencyRecorder {
  private buf: Float64Array;
  private n = 0;
  dropped = 0;

  constructor(capacity = 65_536) {
    this.buf = new Float64Array(Math.min(capacity, MAX_SAMPLES));
  }

  record(ms: number): void {
    if (this.n === this.buf.length) {
      if (this.buf.length >= MAX_SAMPLES) {
        this.dropped++;
        return;
      }
      const next = new Float64Array(Math.min(this.buf.length * 2, MAX_SAMPLES));
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = ms * 1000;
  }

  get count(): number {
    return this.n;
  }

  summary(): LatencySummary {
    return summarize(this.buf.subarray(0, this.n));
  }
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** Nearest-rank percentile of sorted values (`p` in 0–100). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Summary in milliseconds of microsecond samples. */
export function summarize(micros: Float64Array | number[]): LatencySummary {
  const sorted = Float64Array.from(micros).sort();
  if (sorted.length === 0)
    return { count: 0, mean: Number.NaN, p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN };
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    mean: round3(sum / sorted.length / 1000),
    p50: round3(percentile(sorted, 50) / 1000),
    p90: round3(percentile(sorted, 90) / 1000),
    p99: round3(percentile(sorted, 99) / 1000),
    max: round3(sorted[sorted.length - 1]! / 1000),
  };
}
