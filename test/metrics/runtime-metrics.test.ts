import { monitorEventLoopDelay } from 'node:perf_hooks';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { registry } from '../../core/metrics.js';
import {
  delaySamples,
  installRuntimeMetrics,
  LOOP_SAMPLE_MS,
  uninstallRuntimeMetrics,
} from '../../core/runtime-metrics.js';
import { until } from '../support/until.js';

const samplesOf = (lateMs: number, intervalMs: number, maxSlots?: number): number[] => {
  const out: number[] = [];
  delaySamples(lateMs, intervalMs, (ms) => out.push(ms), maxSlots);
  return out;
};

describe('delaySamples: one stall counted in every slot it covered', () => {
  it('a run on time, or a little early, is one delay of 0; a short delay is itself', () => {
    expect(samplesOf(0, 5)).toEqual([0]);
    expect(samplesOf(-0.8, 5)).toEqual([0]);
    expect(samplesOf(1.5, 5)).toEqual([1.5]);
    expect(samplesOf(5, 5)).toEqual([5]);
  });

  it('a 22 ms stall sampled every 5 ms is the delays the missed samples would have met', () => {
    expect(samplesOf(22, 5)).toEqual([22, 17, 12, 7, 2]);
  });

  it('a frozen process is counted as at most maxSlots samples', () => {
    expect(samplesOf(10_000, 5, 4)).toEqual([10_000, 9_995, 9_990, 9_985]);
  });

  it('for any lateness: ceil(late / interval) samples (at least one), each an interval apart, all positive', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -2, max: 5_000, noNaN: true }),
        fc.integer({ min: 1, max: 50 }),
        (late, interval) => {
          const s = samplesOf(late, interval);
          expect(s[0]).toBe(Math.max(0, late));
          expect(s.length).toBe(Math.max(1, Math.ceil(Math.max(0, late) / interval)));
          for (let i = 1; i < s.length; i++) {
            expect(s[i]).toBeGreaterThan(0);
            expect(s[i - 1]! - s[i]!).toBeCloseTo(interval, 6);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('gateway_event_loop_delay_seconds', () => {
  afterAll(() => uninstallRuntimeMetrics());

  it("Node's monitorEventLoopDelay records the interval, not the delay (why the gateway samples itself)", async () => {
    // The fact the sampler is built on: if a Node release starts recording the delay, this fails and the
    // gateway could go back to the native monitor.
    const m = monitorEventLoopDelay({ resolution: 20 });
    m.enable();
    await until('the monitor to take samples', () => m.count >= 3);
    m.disable();
    expect(m.min).toBeGreaterThan(10e6); // ns: every sample is at least about the 20 ms resolution
  });

  it('an idle loop shows delays under 1 ms (the native monitor never goes under its resolution)', async () => {
    installRuntimeMetrics();
    const before = await bucket('0.001');
    await until('a sample of at most 1 ms', async () => (await bucket('0.001')) > before, 15_000, 25);
  });

  it('one 60 ms stall counts in every 5 ms slot it covered: several samples above 20 ms, not one', async () => {
    installRuntimeMetrics();
    await until('the sampler to take samples', async () => (await count()) > 0);
    // A stall that shows as only one sample above 20 ms fails here (other stalls of a loaded machine only add).
    // Each look is one stall with its own before and after.
    const above = async (): Promise<number> => (await count()) - (await bucket('0.02'));
    await until('one stall to show as several samples above 20 ms', async () => {
      const before = await above();
      const end = performance.now() + 60;
      while (performance.now() < end) {
        /* a stall */
      }
      await new Promise((r) => setTimeout(r, 2 * LOOP_SAMPLE_MS));
      return (await above()) - before >= 6;
    });
    const text = await registry.getSingleMetricAsString('gateway_event_loop_delay_seconds');
    expect(text).toContain('gateway_event_loop_delay_seconds_bucket{le="0.002"}');
    // The target is "under 2 ms": a bound below 2 tells a p99 under it from one at most 2.
    expect(text).toContain('gateway_event_loop_delay_seconds_bucket{le="0.0015"}');
  });

  it('GC pauses are histogrammed by kind with buckets that tell 2 and 5 ms apart', async () => {
    // Make garbage until a scavenge has been observed (the GC observer reports asynchronously).
    let keep: unknown[] = [];
    await until('a GC pause to be observed', async () => {
      for (let i = 0; i < 200_000; i++) keep.push({ i });
      keep = [];
      const text = await registry.getSingleMetricAsString('nodejs_gc_duration_seconds');
      return /nodejs_gc_duration_seconds_count\{kind="\w+"\} [1-9]/.test(text);
    });
    const text = await registry.getSingleMetricAsString('nodejs_gc_duration_seconds');
    expect(text).toContain('le="0.002"');
    expect(text).toContain('le="0.005"');
  });
});

/** A sample's value from the text exposition (prom-client's typed values omit the series name). */
async function value(series: string): Promise<number> {
  const text = await registry.getSingleMetricAsString('gateway_event_loop_delay_seconds');
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const count = (): Promise<number> => value('gateway_event_loop_delay_seconds_count');
const bucket = (le: string): Promise<number> => value(`gateway_event_loop_delay_seconds_bucket{le="${le}"}`);
