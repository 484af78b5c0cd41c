import { describe, expect, it } from 'vitest';
import { parseSoakArgs, SoakUsageError } from '../../bench/soak/args.js';
import { streams } from '../../bench/soak/mixed-load.js';
import {
  DEFAULT_THRESHOLDS,
  evaluate,
  expectedSamples,
  promValue,
  renderSoakMarkdown,
  rssGrowth,
  type SoakReport,
  type SoakSample,
  warmupSeconds,
} from '../../bench/soak/report.js';
import { SOAK_SLICE } from './support/soak.js';

/** The soak's pure parts: options, metric parsing, warm-up and RSS growth, the criteria and the report. */

const sample = (tS: number, rssMb: number, over: Partial<SoakSample> = {}): SoakSample => ({
  tS,
  windowS: 10,
  rssMb,
  cpuPercent: 40,
  clientCpuPercent: 30,
  upstreamCpuPercent: 10,
  heapUsedMb: 50,
  eventLoopP99Ms: 12,
  activeHandles: 40,
  sent: 2000,
  ok: 2000,
  failed: 0,
  missed: 0,
  rate: 200,
  p50Ms: 2,
  p99Ms: 9,
  ...over,
});

function report(over: Partial<SoakReport> = {}): SoakReport {
  const samples = [10, 20, 30, 40, 50, 60].map((t) => sample(t, 100 + t / 10));
  const base: SoakReport = {
    startedAt: '2026-11-25T00:00:00.000Z',
    config: {
      ...SOAK_SLICE,
      sampleEveryS: 10,
      entry: 'source',
      costMsat: 1000,
    },
    machine: { cpuModel: 'test', cores: 2, memGb: 8, os: 'Linux' },
    versions: { node: '20', gateway: '0.1.0' },
    warmupS: 12,
    rssBaselineMb: 102,
    rssGrowthMb: 4,
    rssSlopeMbPerMin: 6,
    rssTrace: samples.map((s) => ({ tS: s.tS, rssMb: s.rssMb })),
    samples,
    load: {
      sent: 12_000,
      ok: 12_000,
      okStreams: 6000,
      non2xx: 0,
      badBodies: 0,
      errors: 0,
      timeouts: 0,
      missed: 0,
      statusCodes: { '200': 12_000 },
      seconds: 60,
      latency: { count: 12_000, mean: 3, p50: 2, p90: 5, p99: 9, max: 40 },
    },
    money: {
      fundedMsat: 1_000_000_000,
      depositedMsat: 1_000_000_000,
      balanceMsat: 1_000_000_000 - 12_000_000,
      reservedMsat: 0,
      chargedMsat: 12_000_000,
      expectedMsat: 12_000_000,
      requests: 12_000,
      auditOk: true,
      breaches: [],
      settleWaitMs: 1100,
    },
    thresholds: DEFAULT_THRESHOLDS,
    criteria: [],
    pass: true,
    notes: [],
    ...over,
  };
  return base;
}

const failing = (r: SoakReport): string[] =>
  evaluate(r, DEFAULT_THRESHOLDS)
    .filter((c) => !c.pass)
    .map((c) => c.id);

describe('soak options', () => {
  it('defaults: 20 minutes, 1,000 req/s, 10,000 keys, half streamed, Redis, bench/results, build', () => {
    expect(parseSoakArgs([])).toEqual({
      minutes: 20,
      rate: 1000,
      keys: 10_000,
      streamShare: 0.5,
      store: 'redis',
      connections: 64,
      outDir: 'bench/results',
      build: true,
    });
  });
  it('reads every option, in both spellings', () => {
    expect(
      parseSoakArgs([
        '--minutes',
        '3',
        '--rate=500',
        '--keys',
        '100',
        '--stream-share',
        '0.25',
        '--store',
        'sqlite',
        '--out',
        '/tmp/x',
        '--no-build',
      ]),
    ).toMatchObject({
      minutes: 3,
      rate: 500,
      keys: 100,
      streamShare: 0.25,
      store: 'sqlite',
      outDir: '/tmp/x',
      build: false,
    });
  });
  it.each([
    [['--minutes', '0']],
    [['--minutes', 'x']],
    [['--rate', '1.5']],
    [['--stream-share', '2']],
    [['--store', 'postgres']],
    [['--unknown']],
    [['positional']],
  ])('refuses %j', (argv) => {
    expect(() => parseSoakArgs(argv)).toThrow(SoakUsageError);
  });
});

describe('soak measurements', () => {
  it('reads unlabelled values from prom-client text, not a longer name or a labelled series', () => {
    const text = [
      '# HELP nodejs_heap_size_used_bytes Process heap size used from Node.js in bytes.',
      '# TYPE nodejs_heap_size_used_bytes gauge',
      'nodejs_heap_size_used_bytes 52428800',
      'nodejs_eventloop_lag_p99_seconds_extra 9',
      'nodejs_eventloop_lag_p99_seconds 0.012',
      'nodejs_active_handles{type="Socket"} 30',
      'nodejs_active_handles_total 41',
    ].join('\n');
    expect(promValue(text, 'nodejs_heap_size_used_bytes')).toBe(52_428_800);
    expect(promValue(text, 'nodejs_eventloop_lag_p99_seconds')).toBe(0.012);
    expect(promValue(text, 'nodejs_active_handles_total')).toBe(41);
    expect(promValue(text, 'nodejs_active_handles')).toBeNull();
    expect(promValue(text, 'absent')).toBeNull();
  });
  it('warm-up is one minute, or a fifth of a run shorter than five minutes', () => {
    expect(warmupSeconds(1200)).toBe(60);
    expect(warmupSeconds(180)).toBe(36);
    expect(warmupSeconds(60)).toBe(12);
  });
  it('expects one sample per interval, the last at the end of a run not a multiple of it', () => {
    expect(expectedSamples(60, 10)).toBe(6);
    expect(expectedSamples(1200, 10)).toBe(120);
    expect(expectedSamples(30.6, 10)).toBe(4);
  });
  it('measures RSS growth after warm-up from the first to the last sample of a short run, with its slope', () => {
    const s = [sample(10, 150), sample(20, 180), sample(30, 181), sample(40, 183), sample(50, 185)];
    expect(rssGrowth(s, 12)).toEqual({ baselineMb: 180, growthMb: 5, slopeMbPerMin: 10.2 });
    expect(rssGrowth(s, 20).baselineMb).toBe(180);
    expect(Number.isNaN(rssGrowth(s, 60).growthMb)).toBe(true);
  });
  it('compares the lowest reading of the first and last quarter: the collection cycle is not growth, a creep is', () => {
    // A sawtooth of 60 MB on a flat level, 16 readings after warm-up, the last one at a peak (+80 MB over the
    // first reading): no growth.
    const saw = Array.from({ length: 16 }, (_, i) => sample(70 + i * 10, [180, 220, 200, 240][i % 4]!));
    saw[15] = sample(220, 260);
    expect(rssGrowth(saw, 60).growthMb).toBe(0);
    // The same sawtooth on a level rising 1 MB per reading: +12 MB from the first quarter's trough to the last's.
    const creep = saw.map((x, i) => ({ ...x, rssMb: [180, 220, 200, 240][i % 4]! + i }));
    expect(rssGrowth(creep, 60)).toMatchObject({ baselineMb: 180, growthMb: 12 });
    expect(rssGrowth(creep, 60).slopeMbPerMin).toBeGreaterThan(0);
  });
  it('does not read an old generation filling before its first full collection as growth (CI at 2c48fad)', () => {
    // The slice that failed: readings every second after the 12 s warm-up, flat near 200 MB to t=45, then RSS
    // climbing to 261 MB at t=60 with the heap used (63 → 153 MB) before a full collection. The medians of the
    // first and last quarter of its five 10 s samples read that climb as +60 MB.
    const trace = Array.from({ length: 49 }, (_, i) => {
      const t = 12 + i;
      return { tS: t, rssMb: t <= 45 ? 195 + ((t * 7) % 8) : 202 + (t - 45) * 4 };
    });
    const g = rssGrowth(trace, 12);
    expect(g.growthMb).toBeLessThan(40);
    expect(g.slopeMbPerMin).toBeGreaterThan(0);
  });
  it('sees a leak in every reading: a level rising under the sawtooth fails the bound', () => {
    // 20 minutes, a reading a second, a 30 MB sawtooth with a 40 s period, the level rising 2 MB a minute.
    const leak = Array.from({ length: 1200 }, (_, t) => ({
      tS: t,
      rssMb: 200 + (t % 40) * 0.75 + (2 * t) / 60,
    }));
    expect(rssGrowth(leak, 60).growthMb).toBeGreaterThan(20);
    const flat = leak.map((p) => ({ ...p, rssMb: 200 + (p.tS % 40) * 0.75 }));
    expect(Math.abs(rssGrowth(flat, 60).growthMb)).toBeLessThan(1);
  });
  it('spreads streamed calls evenly, exactly the share asked', () => {
    const count = (share: number, n: number) =>
      Array.from({ length: n }, (_, i) => streams(i, share)).filter(Boolean).length;
    expect(count(0.5, 1000)).toBe(500);
    expect(count(0.25, 1000)).toBe(250);
    expect(count(0, 1000)).toBe(0);
    expect(count(1, 1000)).toBe(1000);
    expect([0, 1, 2, 3].map((i) => streams(i, 0.5))).toEqual([false, true, false, true]);
  });
});

describe('soak criteria', () => {
  it('a clean run passes every criterion', () => {
    const crit = evaluate(report(), DEFAULT_THRESHOLDS);
    expect(crit.map((c) => c.id)).toEqual([
      'rss',
      'errors',
      'rate',
      'samples',
      'settled',
      'audit',
      'charged',
    ]);
    expect(crit.every((c) => c.pass)).toBe(true);
  });
  it('RSS growth at the bound fails', () => {
    expect(failing(report({ rssGrowthMb: 20 }))).toEqual(['rss']);
    expect(failing(report({ rssGrowthMb: Number.NaN }))).toEqual(['rss']);
  });
  it('errors: 0.1 % passes, more fails; cut bodies and timeouts count', () => {
    const load = report().load;
    expect(failing(report({ load: { ...load, non2xx: 12 } }))).toEqual([]);
    expect(failing(report({ load: { ...load, non2xx: 12, badBodies: 1 } }))).toEqual(['errors']);
    expect(failing(report({ load: { ...load, timeouts: 13 } }))).toEqual(['errors']);
  });
  it('rate: judged after warm-up, where falling behind fails', () => {
    const slowStart = report().samples.map((s, i) => (i === 0 ? { ...s, ok: 1000, missed: 900 } : s));
    expect(failing(report({ samples: slowStart }))).toEqual([]);
    const behind = report().samples.map((s) => ({ ...s, ok: 1800, missed: 200 }));
    expect(failing(report({ samples: behind }))).toEqual(['rate']);
  });
  it('samples: a missing one, an incomplete one or a long gap fails', () => {
    const s = report().samples;
    expect(failing(report({ samples: s.slice(1) }))).toContain('samples');
    expect(failing(report({ samples: s.map((x, i) => (i === 3 ? { ...x, heapUsedMb: null } : x)) }))).toEqual(
      ['samples'],
    );
    const gap = s.map((x, i) => (i === 2 ? { ...x, tS: 22 } : i === 3 ? { ...x, tS: 40 } : x));
    expect(failing(report({ samples: gap }))).toEqual(['samples']);
  });
  it('money: something reserved, an audit breach, a charge off by one call or a stray deposit fails', () => {
    const m = report().money;
    expect(failing(report({ money: { ...m, reservedMsat: 1000 } }))).toEqual(['settled']);
    expect(failing(report({ money: { ...m, auditOk: false, breaches: ['conservation a: x'] } }))).toEqual([
      'audit',
    ]);
    expect(failing(report({ money: { ...m, chargedMsat: m.chargedMsat + 1000 } }))).toEqual(['charged']);
    expect(failing(report({ money: { ...m, requests: m.requests - 1 } }))).toEqual(['charged']);
    expect(
      failing(
        report({ money: { ...m, depositedMsat: m.depositedMsat + 5, balanceMsat: m.balanceMsat + 5 } }),
      ),
    ).toEqual(['charged']);
  });
  it('the markdown report says the verdict, each criterion and each sample', () => {
    const r = report();
    r.criteria = evaluate(r, DEFAULT_THRESHOLDS);
    const md = renderSoakMarkdown(r);
    expect(md.startsWith('# Soak — PASS')).toBe(true);
    for (const id of ['rss', 'errors', 'rate', 'samples', 'settled', 'audit', 'charged'])
      expect(md).toContain(`| ${id} | PASS |`);
    expect(md.split('\n').filter((l) => /^\| \d+ \| /.test(l))).toHaveLength(6);
  });
});
