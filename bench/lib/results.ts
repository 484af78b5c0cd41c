import type { RuntimeSummary } from './runtime-scrape.js';
import type { LatencySummary } from './stats.js';

/**
 * The result model of a bench run and the pure computations over it: ratios against the references,
 * added latency over the bare upstream, and the targets evaluated as PASS/FAIL.
 */

/** Target ids used by the runner. Gateway ids are `gw-<store>-<engine>`; `gw-relay-<engine>` is the bare relay. */
export const BASELINE = 'baseline';
export const NGINX = 'nginx';
export const PORTKEY = 'portkey';
/** The headline configuration of the targets. */
/** The target the goals are judged on: paid, Redis, the default engine (node:http). */
export const HEADLINE = 'gw-redis-node';

export interface ProcessUsage {
  /** Average CPU use of the target's processes over the measurement, % of one core. */
  cpuPercent: number;
  /** CPU milliseconds spent by the target per 1,000 answered requests. */
  cpuMsPer1k: number;
  rssStartMb: number;
  rssPeakMb: number;
}

export interface ScenarioResult {
  target: string;
  scenario: string;
  /** 'load': autocannon (fixed concurrency or rate). 'streams': open-streams client. */
  kind: 'load' | 'streams';
  connections: number;
  /** Fixed offered rate (req/s), evenly paced (bench/lib/paced.ts). */
  rate?: number;
  stream: boolean;
  /** SSE content chunks per response. */
  chunks: number;
  /** Distinct API keys the requests rotate over (gateway targets). */
  keys?: number;
  durationS: number;
  /** 2xx responses in the measured window. */
  ok: number;
  rps: number;
  latency: LatencySummary;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Sample requests checked before/after the run: status 200 and a real completion body. */
  bodyCheck: { ok: boolean; detail: string };
  usage?: ProcessUsage;
  /** Fixed-rate runs: p99 of how late the generator issued requests vs their schedule, ms (sanity check). */
  generatorLateP99Ms?: number;
  /** Fixed-rate runs: requests not sent because the target could not keep the rate (backlog bound). */
  missed?: number;
  /** Set when the scenario could not produce a valid measurement (never reported as fast). */
  failed?: string;
  /** Open-streams scenario only. */
  streams?: StreamsResult;
  /** Gateway targets: event-loop delay and GC pauses in the measured window, from its /metrics. */
  runtime?: RuntimeSummary;
}

export interface StreamsResult {
  requested: number;
  /** Streams open at the same time at the peak. */
  peakOpen: number;
  completed: number;
  failed: number;
  rssBeforeMb: number;
  rssPeakMb: number;
  rssGrowthMb: number;
  /** Time to the first body byte of a streamed completion, sequential requests. */
  firstByte: LatencySummary;
  /** Every stream charged once and no reservation left open (gateway targets); undefined elsewhere. */
  settled?: { ok: boolean; detail: string };
}

export interface StageBreakdown {
  target: string;
  calls: number;
  /** Mean milliseconds per call. */
  admissionMs: number;
  upstreamWaitMs: number;
  relayMs: number;
  settleMs: number;
  totalMs: number;
  /** Gateway process CPU per call (from /proc), ms. */
  cpuMsPerCall: number;
  /** Mean ms per plugin hook, `plugin.hook`. */
  hooks: Record<string, number>;
}

export interface TargetInfo {
  id: string;
  label: string;
  /** Why the target did not run, when it did not. */
  skipped?: string;
}

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memGb: number;
  os: string;
}

export interface BenchReport {
  startedAt: string;
  mode: 'quick' | 'full' | 'custom';
  durationS: number;
  warmupS: number;
  machine: MachineInfo;
  versions: Record<string, string>;
  targets: TargetInfo[];
  results: ScenarioResult[];
  breakdown: StageBreakdown[];
  evaluations: TargetEvaluation[];
  notes: string[];
}

export function find(
  results: ScenarioResult[],
  target: string,
  scenario: string,
): ScenarioResult | undefined {
  return results.find((r) => r.target === target && r.scenario === scenario && r.failed === undefined);
}

/** p50/p99 added over the baseline for the same scenario, ms; undefined when either is missing. */
export function addedLatency(
  results: ScenarioResult[],
  r: ScenarioResult,
): { p50: number; p99: number } | undefined {
  if (r.target === BASELINE || r.failed !== undefined) return undefined;
  const base = find(results, BASELINE, r.scenario);
  if (base === undefined) return undefined;
  return { p50: round3(r.latency.p50 - base.latency.p50), p99: round3(r.latency.p99 - base.latency.p99) };
}

/** Requests/s of `r` divided by the reference target's for the same scenario. */
export function rpsRatio(results: ScenarioResult[], r: ScenarioResult, ref: string): number | undefined {
  if (r.failed !== undefined) return undefined;
  const other = find(results, ref, r.scenario);
  if (other === undefined || other.rps <= 0) return undefined;
  return round2(r.rps / other.rps);
}

export interface TargetEvaluation {
  id: string;
  description: string;
  goal: string;
  measured: string;
  /** null: not measured in this run (a scenario or target missing or failed). */
  pass: boolean | null;
}

const round2 = (v: number): number => Math.round(v * 100) / 100;
const round3 = (v: number): number => Math.round(v * 1000) / 1000;

function evaluation(
  id: string,
  description: string,
  goal: string,
  value: number | undefined,
  ok: (v: number) => boolean,
  fmt: (v: number) => string,
  missing: string,
): TargetEvaluation {
  if (value === undefined || Number.isNaN(value))
    return { id, description, goal, measured: missing, pass: null };
  return { id, description, goal, measured: fmt(value), pass: ok(value) };
}

/** The targets, evaluated on one run's results. `headline` defaults to Redis + uWS. */
export function evaluateTargets(results: ScenarioResult[], headline = HEADLINE): TargetEvaluation[] {
  const c64 = find(results, headline, 'chat-c64');
  const rate = find(results, headline, 'chat-rate1000');
  const streams = find(results, headline, 'open-streams');
  const baseStreams = find(results, BASELINE, 'open-streams');
  const why = (name: string) => `not measured (${missingReason(results, headline, name)})`;
  const added = rate ? addedLatency(results, rate) : undefined;
  const out: TargetEvaluation[] = [
    evaluation(
      'rps-vs-nginx',
      `${headline} non-stream c=64 requests/s vs nginx proxy_pass`,
      '≥ 0.8×',
      c64 ? rpsRatio(results, c64, NGINX) : undefined,
      (v) => v >= 0.8,
      (v) => `${v.toFixed(2)}×`,
      why('chat-c64'),
    ),
    evaluation(
      'rps-vs-portkey',
      `${headline} non-stream c=64 requests/s vs Portkey`,
      '≥ 3×',
      c64 ? rpsRatio(results, c64, PORTKEY) : undefined,
      (v) => v >= 3,
      (v) => `${v.toFixed(2)}×`,
      why('chat-c64'),
    ),
    evaluation(
      'added-p50',
      `${headline} added p50 over the bare upstream at 1,000 req/s`,
      '≤ 0.3 ms',
      added?.p50,
      (v) => v <= 0.3,
      (v) => `${v.toFixed(3)} ms`,
      why('chat-rate1000'),
    ),
    evaluation(
      'added-p99',
      `${headline} added p99 over the bare upstream at 1,000 req/s`,
      '≤ 1.5 ms',
      added?.p99,
      (v) => v <= 1.5,
      (v) => `${v.toFixed(3)} ms`,
      why('chat-rate1000'),
    ),
    evaluation(
      'rps-vs-relay',
      `${headline} non-stream c=64 requests/s vs the relay alone (gw-relay-node)`,
      '≥ 0.8×',
      ratioOf(results, headline, 'gw-relay-node', 'chat-c64'),
      (v) => v >= 0.8,
      (v) => `${v.toFixed(2)}×`,
      `not measured (${missingReason(results, 'gw-relay-node', 'chat-c64')})`,
    ),
    evaluation(
      'relay-vs-nginx',
      'the relay alone (gw-relay-node) non-stream c=64 requests/s vs nginx proxy_pass',
      '≥ 0.5×',
      ratioOf(results, 'gw-relay-node', NGINX, 'chat-c64'),
      (v) => v >= 0.5,
      (v) => `${v.toFixed(2)}×`,
      `not measured (${missingReason(results, find(results, 'gw-relay-node', 'chat-c64') ? NGINX : 'gw-relay-node', 'chat-c64')})`,
    ),
    evaluation(
      'sqlite-vs-redis',
      `paid SQLite node:http (gw-sqlite-node) vs ${headline}, non-stream c=64 requests/s`,
      '≥ 0.9×',
      ratioOf(results, 'gw-sqlite-node', headline, 'chat-c64'),
      (v) => v >= 0.9,
      (v) => `${v.toFixed(2)}×`,
      `not measured (${missingReason(results, find(results, 'gw-sqlite-node', 'chat-c64') ? headline : 'gw-sqlite-node', 'chat-c64')})`,
    ),
    evaluation(
      'sqlite-vs-nginx',
      'paid SQLite node:http (gw-sqlite-node) non-stream c=64 requests/s vs nginx proxy_pass',
      '≥ 0.6×',
      ratioOf(results, 'gw-sqlite-node', NGINX, 'chat-c64'),
      (v) => v >= 0.6,
      (v) => `${v.toFixed(2)}×`,
      `not measured (${missingReason(results, 'gw-sqlite-node', 'chat-c64')})`,
    ),
    evaluation(
      'loop-delay-p99',
      `${headline} event-loop delay p99 at 1,000 req/s (gateway_event_loop_delay_seconds, bucket bound)`,
      '< 2 ms',
      rate?.runtime?.loopDelayP99Ms,
      (v) => v < 2,
      (v) => `≤ ${v} ms`,
      rate ? 'not measured (no /metrics scrape)' : why('chat-rate1000'),
    ),
    evaluation(
      'gc-pauses',
      `${headline} GC pauses over 5 ms at 1,000 req/s (nodejs_gc_duration_seconds)`,
      '0',
      rate?.runtime?.gcOver5ms,
      (v) => v === 0,
      (v) => `${v} (longest ≤ ${rate?.runtime?.gcLongestMs} ms)`,
      rate ? 'not measured (no /metrics scrape)' : why('chat-rate1000'),
    ),
    hotKeyEvaluation(results, headline),
    evaluation(
      'workers-2',
      'WORKERS=2 vs WORKERS=1, paid Redis node:http, non-stream c=64 requests/s',
      '≥ 1.6×',
      ratioOf(results, 'gw-redis-node-w2', 'gw-redis-node', 'chat-c64'),
      (v) => v >= 1.6,
      (v) => `${v.toFixed(2)}×`,
      `not measured (${missingReason(results, 'gw-redis-node-w2', 'chat-c64')})`,
    ),
    evaluation(
      'workers-2-vs-nginx-2',
      'WORKERS=2 paid Redis node:http vs nginx proxy_pass worker_processes 2, non-stream c=64 requests/s',
      '≥ 0.8×',
      ratioOf(results, 'gw-redis-node-w2', 'nginx-w2', 'chat-c64'),
      (v) => v >= 0.8,
      (v) => `${v.toFixed(2)}×`,
      `not measured (${missingReason(results, find(results, 'gw-redis-node-w2', 'chat-c64') ? 'nginx-w2' : 'gw-redis-node-w2', 'chat-c64')})`,
    ),
    evaluation(
      'leases-on-vs-off',
      'credit leases on vs off (LEDGER_LEASES=off), paid Redis node:http, non-stream c=64 requests/s',
      '≥ 1× (leases never slower)',
      ratioOf(results, headline, 'gw-redis-node-percall', 'chat-c64'),
      (v) => v >= 1,
      (v) => `${v.toFixed(2)}×`,
      `not measured (${missingReason(results, 'gw-redis-node-percall', 'chat-c64')})`,
    ),
    evaluation(
      'routing-overhead',
      'two providers (weighted routing) vs one, paid Redis node:http, non-stream c=64 requests/s',
      '≥ 0.95×',
      ratioOf(results, 'gw-redis-node-2prov', 'gw-redis-node', 'chat-c64'),
      (v) => v >= 0.95,
      (v) => `${v.toFixed(2)}×`,
      `not measured (${missingReason(results, 'gw-redis-node-2prov', 'chat-c64')})`,
    ),
    evaluation(
      'streams-rss',
      `${headline} RSS growth with ${streams?.streams?.requested ?? 1000} concurrent open streams`,
      '< 100 MB',
      streams?.streams?.rssGrowthMb,
      (v) => v < 100,
      (v) => `${v.toFixed(1)} MB`,
      why('open-streams'),
    ),
    evaluation(
      'first-byte',
      `${headline} first-byte overhead (p50) over the bare upstream`,
      '≤ 1 ms',
      streams?.streams && baseStreams?.streams
        ? round3(streams.streams.firstByte.p50 - baseStreams.streams.firstByte.p50)
        : undefined,
      (v) => v <= 1,
      (v) => `${v.toFixed(3)} ms`,
      why('open-streams'),
    ),
  ];
  const settled = streams?.streams?.settled;
  out.push(
    settled === undefined
      ? {
          id: 'streams-settled',
          description: `${headline} every stream settled`,
          goal: 'all',
          measured: why('open-streams'),
          pass: null,
        }
      : {
          id: 'streams-settled',
          description: `${headline} every stream settled`,
          goal: 'all',
          measured: settled.detail,
          pass: settled.ok && (streams?.streams?.failed ?? 1) === 0,
        },
  );
  return out;
}

/**
 * One hot key vs many keys (`keys-1` vs `keys-<n>`, n = --keys, 10,000 by default) on the headline target: the
 * many-keys requests/s over the hot key's, within 10 % either way (credit leases must not favour either).
 */
function hotKeyEvaluation(results: ScenarioResult[], headline: string): TargetEvaluation {
  const many = results.find(
    (r) => r.target === headline && /^keys-\d+$/.test(r.scenario) && r.scenario !== 'keys-1',
  );
  const scenario = many?.scenario ?? 'keys-10000';
  return evaluation(
    'hot-key',
    `${headline} non-stream c=64 requests/s, ${scenario.slice(5)} keys vs 1 hot key`,
    '0.9×–1.1× (within 10 %)',
    ratioOf(results, headline, headline, 'keys-1', scenario),
    (v) => v >= 0.9 && v <= 1.1,
    (v) => `${v.toFixed(2)}×`,
    `not measured (${missingReason(results, headline, find(results, headline, scenario) ? 'keys-1' : scenario)})`,
  );
}

/** requests/s of `a` over `b` in one scenario; undefined unless both were measured. */
function ratioOf(
  results: ScenarioResult[],
  a: string,
  b: string,
  scenario: string,
  /** `a`'s scenario when it differs from `b`'s (`b` is measured in `scenario`). */
  aScenario = scenario,
): number | undefined {
  const x = find(results, a, aScenario);
  const y = find(results, b, scenario);
  if (!x || !y || !(y.rps > 0)) return undefined;
  return round3(x.rps / y.rps);
}

function missingReason(results: ScenarioResult[], target: string, scenario: string): string {
  const r = results.find((x) => x.target === target && x.scenario === scenario);
  if (r?.failed) return `${target} ${scenario} failed: ${r.failed}`;
  if (r === undefined) return `${target} ${scenario} not run`;
  return 'a reference is missing';
}
