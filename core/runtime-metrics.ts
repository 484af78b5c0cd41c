import { type IntervalHistogram, monitorEventLoopDelay, type RecordableHistogram } from 'node:perf_hooks';
import { Histogram } from 'prom-client';
import { registry } from './metrics.js';

/**
 * The tail's causes as Prometheus histograms: how late the event loop ran its timers
 * (`gateway_event_loop_delay_seconds`, from `perf_hooks.monitorEventLoopDelay`), beside prom-client's
 * `nodejs_gc_duration_seconds{kind}` (GC pauses by kind; its buckets are set finer in core/metrics.ts).
 *
 * The monitor is Node's own sampler (a libuv timer every `LOOP_SAMPLE_MS`, recorded in native code: no
 * JavaScript runs per sample). Once a second (an unref'd timer) and at each scrape, its samples are moved into
 * the Prometheus histogram (each sample observed at its bucket's upper bound, so `_sum` is an upper estimate)
 * and the monitor is reset: at most a second's samples (200) are moved in one turn.
 */

/** How often the monitor samples the loop, ms: a stall shorter than this can fall between two samples. */
export const LOOP_SAMPLE_MS = 5;
const DRAIN_MS = 1000;

/** Seconds. Fine between 0.5 and 10 ms, where the tail targets sit (loop delay p99 < 2 ms, GC < 5 ms). */
export const LOOP_DELAY_BUCKETS = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1];

const loopDelay = new Histogram({
  name: 'gateway_event_loop_delay_seconds',
  help: `How late the event loop ran a timer sampled every ${LOOP_SAMPLE_MS} ms (perf_hooks.monitorEventLoopDelay): each sample is one observation; a long synchronous turn, GC pause or burst of work shows here before it shows in request latency`,
  buckets: LOOP_DELAY_BUCKETS,
  registers: [registry],
  // A scrape reads up to the moment it asks (the drain timer only bounds how much piles up between scrapes).
  collect: () => drain(),
});

/**
 * How many of a histogram's samples fall in each bucket, read through `percentile()` (the only exact reader
 * Node's histograms offer): for each bound, the largest percentile whose value is within the bound, by
 * bisection. Returns one count per bound plus the count above the last bound. Pure in its input; tested with
 * `perf_hooks.createHistogram()`.
 */
export function bucketCounts(
  h: Pick<RecordableHistogram, 'percentile' | 'count' | 'max'>,
  boundsNs: readonly number[],
): number[] {
  const total = h.count;
  const out: number[] = [];
  let below = 0;
  for (const bound of boundsNs) {
    let cumulative: number;
    if (total === 0) cumulative = 0;
    else if (h.max <= bound) cumulative = total;
    else if (h.percentile(0.0001) > bound) cumulative = 0;
    else {
      let lo = 0.0001; // percentile(lo) <= bound
      let hi = 100; // percentile(hi) > bound
      for (let i = 0; i < 24; i++) {
        const mid = (lo + hi) / 2;
        if (h.percentile(mid) <= bound) lo = mid;
        else hi = mid;
      }
      cumulative = Math.min(total, Math.round((total * lo) / 100));
    }
    cumulative = Math.max(cumulative, below);
    out.push(cumulative - below);
    below = cumulative;
  }
  out.push(total - below);
  return out;
}

let monitor: IntervalHistogram | undefined;
let drainTimer: NodeJS.Timeout | undefined;
const boundsNs = LOOP_DELAY_BUCKETS.map((s) => s * 1e9);
// A value inside each bucket (its upper bound; past the last bound, twice it) observed once per sample.
const representative = [...LOOP_DELAY_BUCKETS, LOOP_DELAY_BUCKETS[LOOP_DELAY_BUCKETS.length - 1]! * 2];

function drain(): void {
  if (monitor === undefined || monitor.count === 0) return;
  const counts = bucketCounts(monitor, boundsNs);
  monitor.reset();
  for (let b = 0; b < counts.length; b++) {
    const v = representative[b]!;
    for (let i = counts[b]!; i > 0; i--) loopDelay.observe(v);
  }
}

/** Starts the loop-delay monitor once per process (the metrics route calls it). */
export function installRuntimeMetrics(): void {
  if (monitor !== undefined) return;
  monitor = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
  monitor.enable();
  drainTimer = setInterval(drain, DRAIN_MS);
  drainTimer.unref();
}

/** Stops the monitor (tests; a process that closes its metrics). */
export function uninstallRuntimeMetrics(): void {
  if (drainTimer !== undefined) clearInterval(drainTimer);
  monitor?.disable();
  monitor = undefined;
  drainTimer = undefined;
}

/** Moves what the monitor sampled into the histogram now (tests; the drain timer does it every second). */
export function drainRuntimeMetrics(): void {
  drain();
}
