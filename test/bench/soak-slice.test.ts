import { describe, expect, it } from 'vitest';
import { runSoak } from '../../bench/soak/run.js';
import { SOAK_SLICE } from './support/soak.js';

/**
 * The one-minute slice of `npm run soak` the test command runs: the soak function itself (not through npm)
 * for 60 s at 200 req/s over 1,000 funded keys, half streamed, credit leases on, against one gateway process
 * (from source: no tsc build inside the test) on a fresh Redis prefix and the mock upstream. Every criterion
 * of the soak must pass, with a looser RSS bound for a one-minute run (40 MB after its 12 s warm-up, from the
 * lowest RSS reading of the first and last quarter).
 */
describe('soak slice (1 min, 200 req/s, 1,000 keys, Redis)', () => {
  it('no errors, the rate kept, a complete sample every 10 s, nothing reserved, audit exact, charged = price × calls, RSS flat', async () => {
    if (process.env.TEST_REDIS_URL) process.env.REDIS_URL = process.env.TEST_REDIS_URL;
    const report = await runSoak({
      ...SOAK_SLICE,
      entry: 'source',
      thresholds: { rssGrowthMb: 40 },
    });
    const failed = report.criteria.filter((c) => !c.pass);
    expect(failed, JSON.stringify({ failed, samples: report.samples, notes: report.notes })).toEqual([]);
    expect(report.criteria.map((c) => c.id).sort()).toEqual(
      ['audit', 'charged', 'errors', 'rate', 'rss', 'samples', 'settled'].sort(),
    );

    // A sample every 10 s, each with the gateway's RSS, heap, event-loop p99 and handles.
    expect(report.samples).toHaveLength(6);
    report.samples.forEach((s, i) => {
      expect(s.tS).toBeGreaterThanOrEqual((i + 1) * 10);
      expect(s.tS).toBeLessThan((i + 1) * 10 + 5);
      expect(s.rssMb).toBeGreaterThan(20);
      expect(s.heapUsedMb).toBeGreaterThan(1);
      expect(s.eventLoopP99Ms).toBeGreaterThan(0);
      expect(s.activeHandles).toBeGreaterThan(0);
      expect(s.ok).toBeGreaterThan(0);
    });
    expect(report.rssGrowthMb).toBeLessThan(40);
    // The growth is measured over a reading a second (not the six samples): 60 readings, in order.
    expect(report.rssTrace.length).toBeGreaterThanOrEqual(58);
    expect(report.rssTrace.length).toBeLessThanOrEqual(61);
    report.rssTrace.forEach((p, i) => {
      expect(p.rssMb).toBeGreaterThan(20);
      if (i > 0) expect(p.tS).toBeGreaterThan(report.rssTrace[i - 1]!.tS);
    });

    // Every call was issued and answered 200 with a real completion, half of them streamed.
    const { load, money } = report;
    expect(load.sent + load.missed).toBe(12_000);
    expect(load.ok).toBeGreaterThanOrEqual(Math.floor(0.999 * load.sent));
    expect(load.okStreams).toBeGreaterThan(0.45 * load.ok);
    expect(load.okStreams).toBeLessThan(0.55 * load.ok);

    // The money: exactly the fixed price (1 sat) per call answered, nothing left reserved, the audit exact.
    expect(money.auditOk).toBe(true);
    expect(money.reservedMsat).toBe(0);
    expect(money.requests).toBe(load.ok);
    expect(money.chargedMsat).toBe(load.ok * 1000);
    expect(money.balanceMsat).toBe(money.fundedMsat - money.chargedMsat);
    expect(report.pass).toBe(true);
  }, 120_000);
});
