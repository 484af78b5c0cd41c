import { describe, expect, it } from 'vitest';
import { appliesTo, parseArgs, QUICK_SCENARIOS, UsageError } from '../../bench/lib/args.js';
import { toBreakdown } from '../../bench/lib/breakdown.js';
import { niceTicks, renderSvg, reportPanels } from '../../bench/lib/chart.js';
import { chatBody, checkCompletion } from '../../bench/lib/load.js';
import { dueCount } from '../../bench/lib/paced.js';
import { parseProcStat } from '../../bench/lib/proc-sampler.js';
import { pinnedCommand, pinningFor, pinProcess, startChild } from '../../bench/lib/processes.js';
import { renderMarkdown } from '../../bench/lib/report.js';
import {
  addedLatency,
  type BenchReport,
  evaluateTargets,
  rpsRatio,
  type ScenarioResult,
} from '../../bench/lib/results.js';
import { LatencyRecorder, percentile, summarize } from '../../bench/lib/stats.js';
import { nginxConfig } from '../../bench/targets/nginx.js';

function result(
  target: string,
  scenario: string,
  rps: number,
  p50: number,
  p99: number,
  extra: Partial<ScenarioResult> = {},
): ScenarioResult {
  return {
    target,
    scenario,
    kind: 'load',
    connections: 64,
    stream: false,
    chunks: 8,
    durationS: 4,
    ok: rps * 4,
    rps,
    latency: { count: rps * 4, mean: p50, p50, p90: p50, p99, max: p99 },
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: { 200: rps * 4 },
    bodyCheck: { ok: true, detail: 'ok' },
    usage: { cpuPercent: 90, cpuMsPer1k: 45, rssStartMb: 60, rssPeakMb: 70 },
    ...extra,
  };
}

const streams = (target: string, growth: number, fb: number, settled?: boolean): ScenarioResult =>
  result(target, 'open-streams', 100, fb, fb, {
    kind: 'streams',
    streams: {
      requested: 1000,
      peakOpen: 1000,
      completed: 1000,
      failed: 0,
      rssBeforeMb: 60,
      rssPeakMb: 60 + growth,
      rssGrowthMb: growth,
      firstByte: { count: 300, mean: fb, p50: fb, p90: fb, p99: fb, max: fb },
      ...(settled === undefined
        ? {}
        : { settled: { ok: settled, detail: settled ? '1000/1000 calls counted' : '998/1000' } }),
    },
  });

function sampleResults(): ScenarioResult[] {
  return [
    result('baseline', 'chat-c64', 10_000, 5, 10),
    result('nginx', 'chat-c64', 9_000, 6, 12),
    result('portkey', 'chat-c64', 1_000, 50, 100),
    result('gw-redis-node', 'chat-c64', 7_500, 7, 15),
    result('baseline', 'chat-rate1000', 1000, 0.25, 0.8),
    result('gw-redis-node', 'chat-rate1000', 1000, 0.5, 1.5),
    streams('baseline', 1, 0.4),
    streams('gw-redis-node', 40, 0.9, true),
  ];
}

/** The targets judged over `rs`, by id. */
const judged = (rs: Parameters<typeof evaluateTargets>[0]) =>
  Object.fromEntries(evaluateTargets(rs).map((e) => [e.id, e]));

/** A target not judged (no pass or fail) because a run it needs is missing: its reason names `what`. */
const notRun = (what: string) => ({ pass: null, measured: expect.stringContaining(what) });

describe('stats', () => {
  it('nearest-rank percentiles over microsecond samples, reported in ms', () => {
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50)).toBe(5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99)).toBe(10);
    const rec = new LatencyRecorder(2);
    for (let i = 1; i <= 1000; i++) rec.record(i / 1000); // 1 µs … 1 ms, grows past the initial capacity
    const s = rec.summary();
    expect(s.count).toBe(1000);
    expect(s.p50).toBe(0.5);
    expect(s.p90).toBe(0.9);
    expect(s.p99).toBe(0.99);
    expect(s.max).toBe(1);
    expect(summarize([]).count).toBe(0);
  });
});

describe('derived metrics and targets', () => {
  it('computes added latency and requests/s ratios against the references', () => {
    const rs = sampleResults();
    const gw = rs.find((r) => r.target === 'gw-redis-node' && r.scenario === 'chat-c64')!;
    expect(rpsRatio(rs, gw, 'nginx')).toBe(0.83);
    expect(rpsRatio(rs, gw, 'portkey')).toBe(7.5);
    const rate = rs.find((r) => r.target === 'gw-redis-node' && r.scenario === 'chat-rate1000')!;
    expect(addedLatency(rs, rate)).toEqual({ p50: 0.25, p99: 0.7 });
  });

  it('evaluates each target as PASS, FAIL, or not measured with the reason', () => {
    const evals = evaluateTargets(sampleResults());
    const by = Object.fromEntries(evals.map((e) => [e.id, e]));
    expect(by['rps-vs-nginx']!.pass).toBe(true);
    expect(by['rps-vs-portkey']!.pass).toBe(true);
    expect(by['added-p50']!.pass).toBe(true);
    expect(by['added-p99']!.pass).toBe(true);
    expect(by['streams-rss']!.pass).toBe(true);
    expect(by['first-byte']!.measured).toBe('0.500 ms');
    expect(by['streams-settled']!.pass).toBe(true);

    const slow = sampleResults().map((r) =>
      r.target === 'gw-redis-node' && r.scenario === 'chat-c64' ? { ...r, rps: 2_000 } : r,
    );
    const e2 = judged(slow);
    expect(e2['rps-vs-nginx']!.pass).toBe(false);
    expect(e2['rps-vs-portkey']!.pass).toBe(false);

    const failed = sampleResults().map((r) =>
      r.target === 'gw-redis-node' && r.scenario === 'chat-c64'
        ? { ...r, failed: 'no 2xx answers ({"401":10})' }
        : r,
    );
    const e3 = judged(failed);
    expect(e3['rps-vs-nginx']!.pass).toBeNull();
    expect(e3['rps-vs-nginx']!.measured).toContain('401');
  });

  it('judges relay-only, SQLite and hot-key-vs-many-keys rows, and names what was not run', () => {
    const rs = [
      ...sampleResults(),
      result('gw-relay-node', 'chat-c64', 8_000, 6, 12),
      result('gw-sqlite-node', 'chat-c64', 5_000, 12, 30),
      result('gw-redis-node', 'keys-1', 3_000, 20, 40),
      result('gw-redis-node', 'keys-10000', 2_800, 21, 42),
    ];
    const by = judged(rs);
    expect(by['rps-vs-relay']).toMatchObject({ measured: '0.94×', pass: true });
    expect(by['sqlite-vs-nginx']).toMatchObject({ measured: '0.56×', pass: false });
    // gw-redis-node 7,500 req/s in the sample: 8,000 / nginx and 5,000 / 7,500.
    expect(by['relay-vs-nginx']).toMatchObject({ measured: '0.89×', pass: true });
    expect(by['sqlite-vs-redis']).toMatchObject({ measured: '0.67×', pass: false });
    expect(by['hot-key']).toMatchObject({ measured: '0.93×', pass: true });
    expect(by['hot-key']!.description).toContain('10000 keys vs 1 hot key');

    // Many keys faster than the hot key by more than 10 % fails too (leases must not favour either).
    const skewed = rs.map((r) => (r.scenario === 'keys-10000' ? { ...r, rps: 3_500 } : r));
    expect(evaluateTargets(skewed).find((e) => e.id === 'hot-key')).toMatchObject({ pass: false });

    const none = judged(sampleResults());
    expect(none['hot-key']).toMatchObject(notRun('keys-10000 not run'));
    expect(none['rps-vs-relay']).toMatchObject(notRun('gw-relay-node'));
    const noHot = rs.filter((r) => r.scenario !== 'keys-1');
    expect(evaluateTargets(noHot).find((e) => e.id === 'hot-key')!.measured).toContain('keys-1 not run');
  });

  it('judges WORKERS=2 against WORKERS=1 and nginx with two workers, and leases on against off', () => {
    const rs = [
      ...sampleResults(),
      result('nginx-w2', 'chat-c64', 15_000, 3, 6),
      result('gw-redis-node-w2', 'chat-c64', 10_500, 9, 20),
      result('gw-redis-node-percall', 'chat-c64', 6_000, 15, 30),
    ];
    const by = judged(rs);
    // sampleResults: gw-redis-node chat-c64 = 7,500 req/s.
    expect(by['workers-2']).toMatchObject({ measured: '1.40×', pass: false });
    expect(by['workers-2-vs-nginx-2']).toMatchObject({ measured: '0.70×', pass: false });
    expect(by['leases-on-vs-off']).toMatchObject({ measured: '1.25×', pass: true });
    const slower = rs.map((r) => (r.target === 'gw-redis-node-percall' ? { ...r, rps: 8_000 } : r));
    expect(evaluateTargets(slower).find((e) => e.id === 'leases-on-vs-off')).toMatchObject({ pass: false });
    const none = judged(sampleResults());
    expect(none['workers-2-vs-nginx-2']).toMatchObject(notRun('gw-redis-node-w2'));
    expect(none['leases-on-vs-off']).toMatchObject(notRun('gw-redis-node-percall'));
  });

  it('a stream not settled fails the settle target', () => {
    const rs = sampleResults().map((r) =>
      r.target === 'gw-redis-node' && r.scenario === 'open-streams'
        ? streams('gw-redis-node', 40, 0.9, false)
        : r,
    );
    expect(evaluateTargets(rs).find((e) => e.id === 'streams-settled')!.pass).toBe(false);
  });
});

describe('markdown and chart', () => {
  const report = (): BenchReport => {
    const results = sampleResults();
    results.push({
      ...result('gw-sqlite-uws', 'chat-c64', 0, Number.NaN, Number.NaN),
      failed: 'no 2xx answers ({"401":3})',
    });
    results.push(result('baseline', 'chat-c16', 9_000, 1, 3), result('nginx', 'chat-c16', 8_000, 1.2, 3.5));
    return {
      startedAt: '2026-01-01T00:00:00.000Z',
      mode: 'quick',
      durationS: 2,
      warmupS: 0.5,
      machine: { cpuModel: 'Test CPU', cores: 2, memGb: 24, os: 'Linux' },
      versions: { node: '20.0.0', nginx: '1.22.1', portkey: '1.15.2', gateway: '0.1.0' },
      targets: [
        { id: 'baseline', label: 'mock upstream (baseline)' },
        { id: 'nginx', label: 'nginx proxy_pass' },
        { id: 'portkey', label: 'Portkey gateway' },
        { id: 'gw-redis-node', label: 'gateway paid, Redis, uws' },
        { id: 'gw-sqlite-uws', label: 'gateway paid, SQLite, uws' },
      ],
      results,
      breakdown: [
        toBreakdown(
          'gw-redis-node',
          {
            calls: 100,
            admission: 20,
            upstreamWait: 50,
            afterHeaders: 30,
            total: 110,
            chunkMs: 1,
            hooks: { 'settle.onResponseEnd': { n: 100, ms: 10 }, 'auth.onRequest': { n: 100, ms: 5 } },
            statuses: { 200: 100 },
          },
          0.05,
          100,
        ),
      ],
      evaluations: evaluateTargets(results),
      notes: ['a note'],
    };
  };

  it('renders the load table with ratios, failures and the target verdicts', () => {
    const md = renderMarkdown(report());
    expect(md).toContain(
      '| gateway paid, Redis, uws | non-stream, c=64 | 7500 | 7.000 | 7.000 | 15.000 | +2.000 | +5.000 | 0.83× | 7.50× |',
    );
    expect(md).toContain('| gateway paid, SQLite, uws | non-stream, c=64 | FAILED |');
    expect(md).toContain('no 2xx answers ({"401":3})');
    expect(md).toMatch(/vs nginx proxy_pass \| ≥ 0\.8× \| 0\.83× \| PASS \|/);
    expect(md).toContain('Machine: Test CPU, 2 cores, 24 GB RAM');
    expect(md).toContain(
      '| gateway paid, Redis, uws | 100 | 0.200 | 0.500 | 0.200 | 0.100 | 1.100 | 0.500 |',
    );
  });

  it('draws the growth curves as SVG', () => {
    const svg = renderSvg(reportPanels(report()), 'Growth');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('requests/s vs concurrency');
    expect(svg).toContain('nginx proxy_pass');
    expect(svg.match(/<path /g)?.length).toBeGreaterThanOrEqual(4); // baseline + nginx, two panels
    expect(niceTicks(9_300)).toEqual([0, 2000, 4000, 6000, 8000, 10000]);
  });
});

describe('harness helpers', () => {
  it('parses flags into a bounded plan', () => {
    const q = parseArgs(['--quick']);
    expect(q.mode).toBe('quick');
    expect(q.scenarios.map((s) => s.id)).toEqual(QUICK_SCENARIOS);
    const c = parseArgs([
      '--targets',
      'baseline,nginx',
      '--scenarios=chat-c1,keys-n',
      '--duration',
      '3',
      '--keys',
      '50',
    ]);
    expect(c.targets).toEqual(['baseline', 'nginx']);
    expect(c.scenarios.map((s) => s.id)).toEqual(['chat-c1', 'keys-50']);
    expect(c.durationS).toBe(3);
    expect(() => parseArgs(['--targets', 'haproxy'])).toThrow(UsageError);
    expect(() => parseArgs(['--fast'])).toThrow(UsageError);
    const keys = c.scenarios[1]!;
    expect(appliesTo(keys, 'nginx')).toBe(false);
    expect(appliesTo(keys, 'gw-sqlite-node')).toBe(true);
    expect(appliesTo(keys, 'gw-relay-uws')).toBe(false);
  });

  it('--pin: the target alone on CPU 0, the rest elsewhere, through taskset', async () => {
    expect(parseArgs(['--quick']).pin).toBe(false);
    expect(parseArgs(['--pin', '--targets', 'nginx']).pin).toBe(true);
    expect(() => parseArgs(['--pin', 'yes'])).toThrow(UsageError);
    expect(pinningFor(1)).toBeNull();
    expect(pinningFor(2)).toEqual({ target: '0', rest: '1' });
    expect(pinningFor(8)).toEqual({ target: '0', rest: '1-7' });
    const p = { target: '0', rest: '1' };
    expect(pinnedCommand('nginx', ['-p', 'd'], 'target', p)).toEqual([
      'taskset',
      ['-c', '0', 'nginx', '-p', 'd'],
    ]);
    expect(pinnedCommand('node', ['up.js'], 'rest', p)).toEqual(['taskset', ['-c', '1', 'node', 'up.js']]);
    expect(pinnedCommand('node', ['up.js'], 'rest', null)).toEqual(['node', ['up.js']]);
    // A real process moved and given back (this machine has 2 CPUs or more; CI's has 2).
    const child = startChild('sleep', ['30']);
    try {
      const before = pinProcess(child.pid, '0');
      expect(before).toMatch(/^\d/);
      expect(pinProcess(child.pid, before)).toBe('0');
    } finally {
      await child.stop();
    }
  });

  it('checks that answers are real completions', () => {
    const body = JSON.stringify({
      object: 'chat.completion',
      choices: [{ message: { content: 'tok tok ' } }],
    });
    expect(checkCompletion(200, body, false, 2)).toBeUndefined();
    expect(checkCompletion(200, body, false, 3)).toBe('completion content differs');
    expect(checkCompletion(401, '{"error":{}}', false, 2)).toMatch(/^status 401/);
    const ev = 'data: {"choices":[{"delta":{"content":"tok "}}]}\n\n';
    expect(checkCompletion(200, `${ev}${ev}data: [DONE]\n\n`, true, 2)).toBeUndefined();
    expect(checkCompletion(200, `${ev}data: [DONE]\n\n`, true, 2)).toMatch(/1 token events/);
    expect(checkCompletion(200, `${ev}${ev}`, true, 2)).toMatch(/DONE/);
    expect(JSON.parse(chatBody(true, 50))).toMatchObject({ max_tokens: 50, stream: true });
  });

  it('parses /proc/<pid>/stat with spaces in the name, paces evenly, writes an nginx config', () => {
    const line =
      '4242 (node (gw) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 11 0 1000 123456789 2560 18446744073709551615';
    expect(parseProcStat(line)).toEqual({ pid: 4242, ppid: 1, cpuS: 3, rssBytes: 2560 * 4096 });
    expect(dueCount(0, 1000)).toBe(1);
    expect(dueCount(10, 1000)).toBe(11);
    expect(dueCount(999, 2)).toBe(2);
    const conf = nginxConfig({ dir: '/tmp/x', port: 8080, upstreamPort: 9000, workers: 1 });
    expect(conf).toContain('listen 127.0.0.1:8080;');
    expect(conf).toContain('server 127.0.0.1:9000;');
    expect(conf).toContain('keepalive 512;');
    expect(conf).toContain('daemon off;');
  });
});
