import type { MachineInfo } from '../lib/results.js';
import type { LatencySummary } from '../lib/stats.js';
import type { LoadCounts } from './mixed-load.js';

/**
 * The soak's report: the samples, the money check and the verdict (pure code: tested in
 * test/bench/soak-report.test.ts). Criteria, each PASS or FAIL:
 * - rss: RSS growth after warm-up (`rssGrowth`: the first quarter's lowest reading to the last quarter's, from a
 *   reading every second) below the bound (20 MB);
 * - errors: non-2xx, cut or wrong bodies, transport errors and timeouts at most 0.1 % of the calls issued;
 * - rate: after warm-up, the rate answered 200 at least 95 % of the rate asked (else the soak did not test
 *   what it says; a gateway started cold on a busy machine may fall behind in its first seconds);
 * - samples: one complete sample (RSS, heap, event-loop delay, handles) every interval, none missing;
 * - settled: nothing left reserved once the leases were reported and returned;
 * - audit: the ledger's conservation check exact (conservation per account and in total, reserved = open reservations);
 * - charged: charged = the fixed price × the calls answered 200, as many calls counted, and
 *   balances = funded − charged with nothing else deposited (the ledger identity: the soak's keys are funded
 *   through the ledger directly, so there are no proofs for the wallet's solvency check to weigh).
 */

export interface SoakSample {
  /** Seconds since the load started. */
  tS: number;
  /** Seconds this sample's window covers (since the previous sample). */
  windowS: number;
  rssMb: number;
  /** CPU of the gateway process over the window, % of one core. */
  cpuPercent: number;
  /** CPU of the soak's own process (the load generator) and of the mock upstream, same unit: on a shared
   *  machine, what tells a gateway that is slow from one that is starved. */
  clientCpuPercent: number;
  upstreamCpuPercent: number;
  heapUsedMb: number | null;
  eventLoopP99Ms: number | null;
  activeHandles: number | null;
  /** What a failed /metrics read said (the sample is then incomplete). */
  metricsError?: string;
  sent: number;
  ok: number;
  failed: number;
  missed: number;
  /** Calls answered 200 per second in the window. */
  rate: number;
  p50Ms: number;
  p99Ms: number;
}

export interface SoakMoney {
  /** Deposited before the load (the funded keys). */
  fundedMsat: number;
  depositedMsat: number;
  balanceMsat: number;
  reservedMsat: number;
  chargedMsat: number;
  expectedMsat: number;
  requests: number;
  auditOk: boolean;
  breaches: string[];
  /** From the end of the load until nothing was reserved and every answered call was counted. */
  settleWaitMs: number;
}

export interface Criterion {
  id: 'rss' | 'errors' | 'rate' | 'samples' | 'settled' | 'audit' | 'charged';
  pass: boolean;
  measured: string;
  goal: string;
}

export interface SoakThresholds {
  rssGrowthMb: number;
  errorShare: number;
  rateShare: number;
}

export const DEFAULT_THRESHOLDS: SoakThresholds = { rssGrowthMb: 20, errorShare: 0.001, rateShare: 0.95 };

export interface SoakConfig {
  minutes: number;
  rate: number;
  keys: number;
  streamShare: number;
  store: 'redis' | 'sqlite';
  connections: number;
  sampleEveryS: number;
  entry: 'dist' | 'source';
  costMsat: number;
}

export interface SoakReport {
  startedAt: string;
  config: SoakConfig;
  machine: MachineInfo;
  versions: Record<string, string>;
  /** Seconds of load after which RSS growth is measured. */
  warmupS: number;
  /** The RSS the growth is measured from (the first sample at or after warm-up), MB. */
  rssBaselineMb: number;
  rssGrowthMb: number;
  /** The gateway's RSS read every second of the load: what the growth is measured over. */
  rssTrace: RssPoint[];
  /** Least-squares slope of RSS over the samples after warm-up, MB per minute (information). */
  rssSlopeMbPerMin: number;
  samples: SoakSample[];
  load: LoadCounts & { seconds: number; latency: LatencySummary };
  money: SoakMoney;
  thresholds: SoakThresholds;
  criteria: Criterion[];
  pass: boolean;
  notes: string[];
}

/** Warm-up: one minute, or a fifth of the run for runs shorter than five minutes. */
export function warmupSeconds(durationS: number): number {
  return Math.min(60, durationS / 5);
}

/**
 * The first unlabelled value of metric `name` in a Prometheus text exposition, or null (pure; tested).
 * prom-client writes `name value` (no timestamp) for unlabelled series.
 */
export function promValue(text: string, name: string): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ') continue;
    const v = Number(rest.trim().split(/\s+/)[0]);
    return Number.isFinite(v) ? v : null;
  }
  return null;
}

const r1 = (v: number): number => Math.round(v * 10) / 10;
const signed = (v: number): string => (v >= 0 ? `+${v}` : `${v}`);

/** One reading of the gateway's RSS (the soak reads it every second between its samples). */
export interface RssPoint {
  tS: number;
  rssMb: number;
}

/**
 * RSS growth after warm-up (pure; tested): the lowest RSS of the last quarter of the readings after warm-up
 * minus the lowest of the first quarter (at least one reading each). RSS follows the V8 heap's collection
 * cycle up and down by tens of MB, and in a short run the old generation may fill for most of a minute
 * before its first full collection: where a reading falls in that cycle says nothing about a leak. What a
 * leak raises is the level the collector brings RSS back to, the lower envelope, so each quarter is read by
 * its minimum; a leak raises every reading, the troughs too. The least-squares slope is given as information.
 */
export function rssGrowth(
  points: RssPoint[],
  warmupS: number,
): { baselineMb: number; growthMb: number; slopeMbPerMin: number } {
  const after = points.filter((s) => s.tS >= warmupS - 1e-6);
  if (after.length === 0) return { baselineMb: Number.NaN, growthMb: Number.NaN, slopeMbPerMin: Number.NaN };
  const q = Math.max(1, Math.floor(after.length / 4));
  const baseline = Math.min(...after.slice(0, q).map((s) => s.rssMb));
  const end = Math.min(...after.slice(-q).map((s) => s.rssMb));
  let slope = 0;
  if (after.length >= 2) {
    const mx = after.reduce((a, s) => a + s.tS, 0) / after.length;
    const my = after.reduce((a, s) => a + s.rssMb, 0) / after.length;
    let num = 0;
    let den = 0;
    for (const s of after) {
      num += (s.tS - mx) * (s.rssMb - my);
      den += (s.tS - mx) ** 2;
    }
    slope = den > 0 ? (num / den) * 60 : 0;
  }
  return { baselineMb: r1(baseline), growthMb: r1(end - baseline), slopeMbPerMin: r1(slope) };
}

/** Samples expected: one every `everyS` over `durationS`, the last at the end of the load. */
export function expectedSamples(durationS: number, everyS: number): number {
  return Math.ceil(durationS / everyS - 1e-9);
}

export function evaluate(
  r: Pick<SoakReport, 'config' | 'samples' | 'load' | 'money' | 'rssGrowthMb' | 'warmupS'>,
  t: SoakThresholds,
): Criterion[] {
  const { load, money } = r;
  const failed = load.non2xx + load.badBodies + load.errors + load.timeouts;
  const errorShare = load.sent > 0 ? failed / load.sent : 1;
  const after = r.samples.filter((s) => s.tS >= r.warmupS - 1e-6);
  const afterS = after.reduce((a, s) => a + s.windowS, 0);
  const rateAfter = afterS > 0 ? after.reduce((a, s) => a + s.ok, 0) / afterS : 0;
  const missedAfter = after.reduce((a, s) => a + s.missed, 0);
  const want = expectedSamples(r.config.minutes * 60, r.config.sampleEveryS);
  const complete = r.samples.filter(
    (s) => s.heapUsedMb !== null && s.eventLoopP99Ms !== null && s.activeHandles !== null,
  ).length;
  let gapS = 0;
  for (let i = 0; i < r.samples.length; i++)
    gapS = Math.max(gapS, r.samples[i]!.tS - (i === 0 ? 0 : r.samples[i - 1]!.tS));
  const statuses = Object.entries(load.statusCodes)
    .filter(([c]) => c !== '200')
    .map(([c, n]) => `${c}×${n}`)
    .join(', ');
  return [
    {
      id: 'rss',
      pass: Number.isFinite(r.rssGrowthMb) && r.rssGrowthMb < t.rssGrowthMb,
      measured: `${signed(r.rssGrowthMb)} MB`,
      goal: `< ${t.rssGrowthMb} MB after warm-up`,
    },
    {
      id: 'errors',
      pass: load.sent > 0 && errorShare <= t.errorShare,
      measured: `${failed} of ${load.sent} (${(errorShare * 100).toFixed(3)} %): non-2xx ${load.non2xx}${statuses ? ` (${statuses})` : ''}, bad bodies ${load.badBodies}, errors ${load.errors}, timeouts ${load.timeouts}`,
      goal: `≤ ${t.errorShare * 100} %`,
    },
    {
      id: 'rate',
      pass: rateAfter >= t.rateShare * r.config.rate,
      measured: `${Math.round(rateAfter)} req/s answered 200 after warm-up (not sent, target behind: ${load.missed - missedAfter} in warm-up, ${missedAfter} after)`,
      goal: `≥ ${Math.round(t.rateShare * 100)} % of ${r.config.rate} req/s after warm-up`,
    },
    {
      id: 'samples',
      pass: r.samples.length === want && complete === want && gapS <= r.config.sampleEveryS * 1.5,
      measured: `${complete} complete of ${r.samples.length} (largest gap ${r1(gapS)} s)`,
      goal: `${want}, one every ${r.config.sampleEveryS} s`,
    },
    {
      id: 'settled',
      pass: money.reservedMsat === 0,
      measured: `${money.reservedMsat} msat reserved ${r1(money.settleWaitMs / 1000)} s after the load`,
      goal: '0',
    },
    {
      id: 'audit',
      pass: money.auditOk,
      measured: money.auditOk ? 'exact' : `breaches: ${money.breaches.slice(0, 3).join('; ')}`,
      goal: 'exact',
    },
    {
      id: 'charged',
      pass:
        money.chargedMsat === money.expectedMsat &&
        money.requests === load.ok &&
        money.depositedMsat === money.fundedMsat &&
        money.balanceMsat === money.fundedMsat - money.chargedMsat,
      measured: `charged ${money.chargedMsat} msat for ${money.requests} calls; balances ${money.balanceMsat} of ${money.fundedMsat} funded`,
      goal: `${money.expectedMsat} msat = ${load.ok} calls × ${r.config.costMsat}; balances = funded − charged`,
    },
  ];
}

export function renderSoakMarkdown(r: SoakReport): string {
  const c = r.config;
  const l = r.load;
  const lines = [
    `# Soak — ${r.pass ? 'PASS' : 'FAIL'}`,
    '',
    `${r.startedAt}: ${c.minutes} min at ${c.rate} req/s, ${c.keys} keys, ${Math.round(c.streamShare * 100)} % streamed, ${c.store}, credit leases on, ${c.connections} connections; gateway from ${c.entry === 'dist' ? 'dist/ (the build)' : 'source (tsx)'}.`,
    `Machine: ${r.machine.cpuModel}, ${r.machine.cores} cores, ${r.machine.memGb} GB; node ${r.versions.node}; gateway ${r.versions.gateway}.`,
    '',
    `Calls: ${l.sent} issued, ${l.ok} answered 200 (${l.okStreams} streamed) in ${Math.round(l.seconds)} s; latency p50 ${l.latency.p50} ms, p99 ${l.latency.p99} ms, max ${l.latency.max} ms.`,
    `RSS: ${r.rssBaselineMb} MB after the ${Math.round(r.warmupS)} s warm-up, growth ${signed(r.rssGrowthMb)} MB to the end (lowest reading of the first and last quarter after warm-up, one a second), slope ${r.rssSlopeMbPerMin} MB/min after warm-up.`,
    `Money: funded ${r.money.fundedMsat} msat, charged ${r.money.chargedMsat} msat (expected ${r.money.expectedMsat}), ${r.money.requests} calls counted, balances ${r.money.balanceMsat}, reserved ${r.money.reservedMsat}; settled in ${r.money.settleWaitMs} ms.`,
    '',
    '| criterion | result | measured | goal |',
    '| --- | --- | --- | --- |',
    ...r.criteria.map((k) => `| ${k.id} | ${k.pass ? 'PASS' : 'FAIL'} | ${k.measured} | ${k.goal} |`),
    '',
    "Per sample: the gateway's RSS, CPU (% of one core), heap used, event-loop delay p99 (the upper bound of its `gateway_event_loop_delay_seconds` bucket over the window) and active handles; the CPU of the load generator and of the mock upstream; the window's calls and latency.",
    '',
    '| t (s) | RSS MB | CPU % | heap MB | loop p99 ms | handles | client / mock CPU % | sent | ok | failed | missed | req/s | p50 ms | p99 ms |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...r.samples.map(
      (s) =>
        `| ${Math.round(s.tS)} | ${s.rssMb} | ${s.cpuPercent} | ${s.heapUsedMb ?? '—'} | ${s.eventLoopP99Ms ?? '—'} | ${s.activeHandles ?? '—'} | ${s.clientCpuPercent} / ${s.upstreamCpuPercent} | ${s.sent} | ${s.ok} | ${s.failed} | ${s.missed} | ${s.rate} | ${s.p50Ms} | ${s.p99Ms} |`,
    ),
  ];
  if (r.notes.length > 0) lines.push('', 'Notes:', ...r.notes.map((n) => `- ${n}`));
  return `${lines.join('\n')}\n`;
}
