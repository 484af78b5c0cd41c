import { performance } from 'node:perf_hooks';
import { Histogram } from 'prom-client';
import { registry } from './metrics.js';

/**
 * The tail's causes as Prometheus histograms: how late the event loop ran a timer due every `LOOP_SAMPLE_MS`
 * (`gateway_event_loop_delay_seconds`), beside prom-client's `nodejs_gc_duration_seconds{kind}` (GC pauses by
 * kind; its buckets are set finer in core/metrics.ts).
 *
 * Why not `perf_hooks.monitorEventLoopDelay` as is: it records the whole interval between two of its timer's
 * runs, not how late the run was, so on an idle loop every sample is the resolution itself (≈ 5.1 ms at
 * `resolution: 5`, measured on Node 20, 22 and 24), and no sample can fall under a 2 ms bound however free the
 * loop is. Its samples also count a stall once: a 50 ms turn is one sample among the 200 a free second gives,
 * so the p99 hides it. prom-client's `nodejs_eventloop_lag_p99_seconds` (and `_min`, `_mean`, …) are read from
 * that monitor and carry both biases; they stay under their standard names for the common dashboards.
 *
 * Here one unref'd JavaScript timer samples the loop (200 runs a second, well under a microsecond of work
 * each): it observes how late it ran and, for a stall longer than the interval, the delays the samples it
 * missed would have shown (`delaySamples`): the histogram is the delay met by work arriving at any moment,
 * which is what a request waiting behind the stall meets.
 */

/** How often the sampler looks at the loop, ms: a stall shorter than this can fall between two samples. */
export const LOOP_SAMPLE_MS = 5;

/** Seconds. Fine between 0.5 and 10 ms, where the tail targets sit (loop delay p99 < 2 ms: the 1.5 ms bound tells "under 2" from "at most 2"; GC < 5 ms). */
export const LOOP_DELAY_BUCKETS = [
  0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1,
];

/** The most samples one stall is counted as (a minute of slots): a frozen process does not flood the turn. */
const MAX_SLOTS = (60_000 / LOOP_SAMPLE_MS) | 0;

const loopDelay = new Histogram({
  name: 'gateway_event_loop_delay_seconds',
  help: `How late the event loop ran a timer due every ${LOOP_SAMPLE_MS} ms: one observation per ${LOOP_SAMPLE_MS} ms slot, a stall counted in every slot it covered; a long synchronous turn, GC pause or burst of work shows here before it shows in request latency`,
  buckets: LOOP_DELAY_BUCKETS,
  registers: [registry],
});

/**
 * The delays a timer due every `intervalMs` meets over a stretch where its run came `lateMs` late: that run's
 * own delay and, for a stall longer than the interval, one for each slot the stall covered that no run could
 * sample (lateMs − interval, lateMs − 2·interval, … while above 0; at most `maxSlots` in all). A negative
 * lateness (a run a little early: libuv's timers keep whole milliseconds) is a delay of 0. This is
 * HdrHistogram's correction for coordinated omission (`recordValueWithExpectedInterval`).
 */
export function delaySamples(
  lateMs: number,
  intervalMs: number,
  each: (ms: number) => void,
  maxSlots = MAX_SLOTS,
): void {
  let late = Math.max(lateMs, 0);
  each(late);
  for (let n = 1; n < maxSlots; n++) {
    late -= intervalMs;
    if (late <= 0) return;
    each(late);
  }
}

let timer: NodeJS.Timeout | undefined;
let due = 0;
const observe = (ms: number): void => loopDelay.observe(ms / 1000);

function sample(): void {
  const now = performance.now();
  const late = now - due;
  due = now + LOOP_SAMPLE_MS;
  delaySamples(late, LOOP_SAMPLE_MS, observe);
}

/** Starts the loop-delay sampler once per process (the metrics route calls it). */
export function installRuntimeMetrics(): void {
  if (timer !== undefined) return;
  due = performance.now() + LOOP_SAMPLE_MS;
  timer = setInterval(sample, LOOP_SAMPLE_MS);
  timer.unref();
}

/** Stops the sampler (tests; a process that closes its metrics). */
export function uninstallRuntimeMetrics(): void {
  if (timer !== undefined) clearInterval(timer);
  timer = undefined;
}
