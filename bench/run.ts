import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { appliesTo, type BenchOptions, type LoadScenario, parseArgs, UsageError } from './lib/args.js';
import { type TraceDump, toBreakdown } from './lib/breakdown.js';
import { renderSvg, reportPanels } from './lib/chart.js';
import { type LoadTarget, measureLoad } from './lib/load.js';
import { baseVersions, machineInfo } from './lib/machine.js';
import { measureStreams } from './lib/open-streams.js';
import { ProcSampler } from './lib/proc-sampler.js';
import { type Pinning, pinChildren, pinningFor, pinProcess } from './lib/processes.js';
import { renderMarkdown } from './lib/report.js';
import {
  type BenchReport,
  evaluateTargets,
  find,
  type ScenarioResult,
  type StageBreakdown,
  type TargetInfo,
} from './lib/results.js';
import { gcOver5msText, gcPausesText } from './lib/runtime-scrape.js';
import {
  type BenchStore,
  type Engine,
  openBenchStore,
  type StoreKind,
  startGatewayTarget,
} from './targets/gateway.js';
import { openL402Door } from './targets/l402.js';
import { nginxVersion, SkipTarget, startNginx } from './targets/nginx.js';
import { portkeyVersion, startPortkey } from './targets/portkey.js';
import type { RunningTarget } from './targets/types.js';
import { startUpstream, type UpstreamProcess } from './targets/upstream.js';

/**
 * `npm run bench`: every target against the same mock upstream process, one after the other, with the same
 * warm-up and duration; results to bench/results/latest.{json,md,svg}. See docs/benchmarks.md.
 */

const LABELS: Record<string, string> = {
  baseline: 'mock upstream (baseline)',
  nginx: 'nginx proxy_pass',
  'nginx-w2': 'nginx proxy_pass, worker_processes 2',
  portkey: 'Portkey gateway',
  'gw-relay-uws': 'gateway relay only (uws)',
  'gw-relay-node': 'gateway relay only (node:http)',
  'gw-sqlite-uws': 'gateway paid, SQLite, uws',
  'gw-sqlite-node': 'gateway paid, SQLite, node:http',
  'gw-redis-uws': 'gateway paid, Redis, uws',
  'gw-redis-node': 'gateway paid, Redis, node:http',
  'gw-sqlite-node-l402': 'gateway paid from an L402 balance, SQLite, node:http',
  'gw-redis-node-l402': 'gateway paid from an L402 balance, Redis, node:http',
  'gw-sqlite-uws-percall': 'gateway paid, SQLite, uws, leases off',
  'gw-redis-uws-percall': 'gateway paid, Redis, uws, leases off',
  'gw-sqlite-node-percall': 'gateway paid, SQLite, node:http, leases off',
  'gw-redis-node-percall': 'gateway paid, Redis, node:http, leases off',
  'gw-redis-node-2prov': 'gateway paid, Redis, node:http, two providers (weighted routing)',
  'gw-redis-node-w2': 'gateway paid, Redis, node:http, WORKERS=2',
  'gw-cluster-node': 'gateway paid, Redis Cluster (3 masters + 3 replicas, WAIT for 1 replica), node:http',
  'gw-cluster-node-noacks':
    'gateway paid, Redis Cluster (3 masters + 3 replicas, REDIS_MIN_REPLICA_ACKS=0), node:http',
};

const STREAM_CHUNKS = 50;
const STREAM_CHUNK_DELAY_MS = 100;

function log(msg: string): void {
  process.stdout.write(`[bench] ${msg}\n`);
}

function build(notes: string[]): void {
  log('npm run build');
  const r = spawnSync('npm', ['run', 'build', '--silent'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.status !== 0) {
    const msg = `npm run build failed (exit ${r.status}); using the existing dist/ (${(r.stdout + r.stderr).trim().split('\n').slice(0, 3).join(' | ')})`;
    log(msg);
    notes.push(msg);
  }
}

class Stores {
  private readonly open = new Map<StoreKind, Promise<BenchStore>>();
  get(kind: StoreKind): Promise<BenchStore> {
    let s = this.open.get(kind);
    if (!s) {
      s = openBenchStore(kind);
      this.open.set(kind, s);
    }
    return s;
  }
  async closeAll(): Promise<void> {
    for (const s of this.open.values()) await (await s.catch(() => undefined))?.close();
  }
}

function gatewayParts(id: string): {
  store: StoreKind | 'relay';
  engine: Engine;
  perCall: boolean;
  noAcks: boolean;
  twoProviders: boolean;
  workers: number;
  l402: boolean;
} {
  const [, store, engine, variant] = id.split('-') as [string, StoreKind | 'relay', Engine, string?];
  return {
    store,
    engine,
    perCall: variant === 'percall',
    noAcks: variant === 'noacks',
    twoProviders: variant === '2prov',
    workers: variant === 'w2' ? 2 : 1,
    l402: variant === 'l402',
  };
}

/**
 * A providers file with two providers in front of the same mock upstream, routed `weighted` (the policy that
 * does the most per call): what routing costs, against the one-provider target.
 */
function twoProvidersFile(upstreamUrl: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-providers-'));
  const file = join(dir, 'providers.json');
  writeFileSync(
    file,
    JSON.stringify({
      providers: [
        { name: 'one', base_url: upstreamUrl, weight: 1, max_connections: 1024 },
        { name: 'two', base_url: upstreamUrl, weight: 1, max_connections: 1024 },
      ],
    }),
  );
  return file;
}

async function startTarget(
  id: string,
  up: UpstreamProcess,
  opts: BenchOptions,
  stores: Stores,
  nodeArgs?: string[],
  extraEnv?: Record<string, string>,
): Promise<RunningTarget> {
  if (id === 'baseline') {
    return {
      baseUrl: up.url.replace(/\/v1$/, ''),
      pid: up.child.pid,
      headers: () => ({}),
      stop: async () => undefined,
    };
  }
  if (id === 'nginx') return startNginx(up.port, opts.nginxWorkers);
  // The reference for WORKERS=2: the same nginx with two worker processes, in the same run.
  if (id === 'nginx-w2') return startNginx(up.port, 2);
  if (id === 'portkey') return startPortkey(up.url);
  const { store, engine, perCall, noAcks, twoProviders, workers, l402 } = gatewayParts(id);
  // '-l402': every call paid from one L402 balance (bench/targets/l402.ts), against the same store's sk- row.
  if (l402) {
    const door = await openL402Door();
    try {
      const target = await startGatewayTarget({
        engine,
        store: store === 'relay' ? undefined : await stores.get(store),
        upstreamUrl: up.url,
        ...(nodeArgs ? { nodeArgs } : {}),
        extraEnv: { ...door.env, ...extraEnv },
      });
      const paid = await door.pay(target).catch(async (err: unknown) => {
        await target.stop();
        throw err;
      });
      return {
        ...paid,
        stop: async () => {
          await target.stop();
          await door.close();
        },
      };
    } catch (err) {
      await door.close();
      throw err;
    }
  }
  // '-percall' targets: credit leases off (one store step per admit and per settle), for the on/off rows.
  // '-2prov': two providers, weighted routing (the routing row).
  // '-noacks': money writes do not wait for a replica (the cost of the replica rule, against the same cluster).
  const env = perCall
    ? { LEDGER_LEASES: 'off', ...extraEnv }
    : noAcks
      ? { REDIS_MIN_REPLICA_ACKS: '0', ...extraEnv }
      : twoProviders
        ? { PROVIDERS_PATH: twoProvidersFile(up.url), ROUTING_POLICY: 'weighted', ...extraEnv }
        : workers > 1
          ? { WORKERS: String(workers), ...extraEnv }
          : extraEnv;
  return startGatewayTarget({
    engine,
    store: store === 'relay' ? undefined : await stores.get(store),
    upstreamUrl: up.url,
    ...(nodeArgs ? { nodeArgs } : {}),
    ...(env ? { extraEnv: env } : {}),
  });
}

function failedResult(target: string, s: LoadScenario | { id: string }, reason: string): ScenarioResult {
  const load = 'connections' in s ? s : undefined;
  return {
    target,
    scenario: s.id,
    kind: s.id === 'open-streams' ? 'streams' : 'load',
    connections: load?.connections ?? 0,
    ...(load?.rate !== undefined ? { rate: load.rate } : {}),
    stream: load?.stream ?? true,
    chunks: load?.chunks ?? STREAM_CHUNKS,
    durationS: 0,
    ok: 0,
    rps: 0,
    latency: {
      count: 0,
      mean: Number.NaN,
      p50: Number.NaN,
      p90: Number.NaN,
      p99: Number.NaN,
      max: Number.NaN,
    },
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: {},
    bodyCheck: { ok: false, detail: reason },
    failed: reason,
  };
}

function describe(r: ScenarioResult): string {
  if (r.failed) return `${r.target} ${r.scenario}: FAILED — ${r.failed}`;
  if (r.streams) {
    const s = r.streams;
    return `${r.target} ${r.scenario}: ${s.peakOpen}/${s.requested} open, RSS +${s.rssGrowthMb} MB, first byte p50 ${s.firstByte.p50} ms${s.settled ? `, settled: ${s.settled.detail}` : ''}`;
  }
  const rt = r.runtime
    ? `; loop delay p99 ≤${r.runtime.loopDelayP99Ms} ms, GC ${gcPausesText(r.runtime)} pauses (${gcOver5msText(r.runtime)} over 5 ms, longest ≤${r.runtime.gcLongestMs} ms)`
    : '';
  return `${r.target} ${r.scenario}: ${r.rps} req/s, p50 ${r.latency.p50} p99 ${r.latency.p99} ms, CPU ${r.usage?.cpuPercent}%${rt}`;
}

async function runBreakdown(
  id: string,
  up: UpstreamProcess,
  opts: BenchOptions,
  stores: Stores,
  results: ScenarioResult[],
): Promise<StageBreakdown | string> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-trace-'));
  const out = join(dir, 'trace.json');
  let t: RunningTarget | undefined;
  try {
    t = await startTarget(id, up, opts, stores, ['--import', './bench/support/trace-preload.mjs'], {
      BENCH_TRACE_OUT: out,
    });
    const target: LoadTarget = { id, baseUrl: t.baseUrl, pid: t.pid, headers: (i, k) => t!.headers(i, k) };
    const scenario: LoadScenario = {
      id: 'breakdown',
      kind: 'load',
      stream: false,
      chunks: 8,
      connections: 1,
    };
    await measureLoad(target, scenario, { durationS: Math.min(1, opts.warmupS || 0.5), warmupS: 0 });
    process.kill(t.pid, 'SIGUSR1');
    const sampler = new ProcSampler(t.pid);
    sampler.start();
    const r = await measureLoad(target, scenario, { durationS: opts.durationS, warmupS: 0 });
    const u = sampler.stop();
    if (r.failed) return r.failed;
    process.kill(t.pid, 'SIGUSR2');
    for (let i = 0; i < 50 && !existsSync(out); i++) await new Promise((res) => setTimeout(res, 50));
    const dump = JSON.parse(readFileSync(out, 'utf8')) as TraceDump;
    if (dump.calls === 0) return `no traced paid call (statuses ${JSON.stringify(dump.statuses)})`;
    const b = toBreakdown(id, dump, u.cpuS, r.ok);
    // CPU per call from the untraced c=1 run when there is one (the trace subscriber costs a little).
    const c1 = find(results, id, 'chat-c1');
    if (c1?.usage) b.cpuMsPerCall = Math.round(c1.usage.cpuMsPer1k) / 1000;
    return b;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `--pin`: every target alone on CPU 0, and on the other CPUs the load generator (this process), the mock
 * upstream and the local Redis server (moved for the run, its CPU list given back after). What the target's
 * latency then shows is its own work, not a queue behind the load generator on a shared core. Answers the undo.
 */
async function pinRun(notes: string[]): Promise<() => Promise<void>> {
  const p: Pinning | null = pinningFor(availableParallelism());
  if (p === null) {
    console.error('bench: --pin needs at least 2 CPUs');
    process.exit(2);
  }
  pinChildren(p);
  pinProcess(process.pid, p.rest);
  let redisNote = 'no local Redis server found to pin';
  let undo = async (): Promise<void> => undefined;
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  if (['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    const { Redis } = await import('ioredis');
    const r = new Redis(url.toString(), { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await r.connect();
      const info = await r.info('server');
      const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
      if (Number.isInteger(pid) && existsSync(`/proc/${pid}`)) {
        const before = pinProcess(pid, p.rest);
        redisNote = `Redis (pid ${pid}) on CPU ${p.rest} for the run (${before} before, given back after)`;
        undo = async () => {
          pinProcess(pid, before);
        };
      }
    } catch {
      /* no Redis here: the Redis targets will say so */
    } finally {
      r.disconnect();
    }
  }
  notes.push(
    `pinned (--pin): each target alone on CPU ${p.target}; the load generator, the mock upstream and ${redisNote.startsWith('Redis') ? 'Redis' : 'the rest'} on CPU ${p.rest}. ${redisNote}`,
  );
  log(`pinned: targets on CPU ${p.target}, the rest on ${p.rest}; ${redisNote}`);
  return undo;
}

async function main(): Promise<void> {
  let opts: BenchOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`bench: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const started = Date.now();
  const notes: string[] = [];
  if (opts.build) build(notes);
  const versions = baseVersions();
  const nv = nginxVersion();
  if (nv) versions.nginx = nv;
  versions.portkey = portkeyVersion();
  const report: BenchReport = {
    startedAt: new Date().toISOString(),
    mode: opts.mode,
    durationS: opts.durationS,
    warmupS: opts.warmupS,
    machine: machineInfo(),
    versions,
    targets: [],
    results: [],
    breakdown: [],
    evaluations: [],
    notes,
  };
  log(
    `${opts.mode} run: targets ${opts.targets.join(', ')}; ${opts.scenarios.length} scenarios; ${opts.warmupS}+${opts.durationS} s each`,
  );
  const unpin = opts.pin ? await pinRun(notes) : async () => undefined;
  const up = await startUpstream();
  const stores = new Stores();
  const results = report.results;
  try {
    for (const id of opts.targets) {
      const info: TargetInfo = { id, label: LABELS[id] ?? id };
      report.targets.push(info);
      const scenarios = opts.scenarios.filter((s) => s.kind !== 'breakdown' && appliesTo(s, id));
      const wantsBreakdown = opts.scenarios.some((s) => s.kind === 'breakdown' && appliesTo(s, id));
      if (scenarios.length > 0) {
        let t: RunningTarget;
        try {
          log(`start ${id}`);
          t = await startTarget(id, up, opts, stores);
        } catch (err) {
          if (err instanceof SkipTarget) {
            info.skipped = err.message;
            log(`skip ${id}: ${err.message}`);
            continue;
          }
          const reason = `could not start: ${(err as Error).message.slice(0, 300)}`;
          log(`${id} ${reason}`);
          for (const s of scenarios) results.push(failedResult(id, s, reason));
          continue;
        }
        const target: LoadTarget = {
          id,
          baseUrl: t.baseUrl,
          pid: t.pid,
          headers: (i, k) => t.headers(i, k),
          runtimeMetrics: id.startsWith('gw-'),
        };
        try {
          for (const s of scenarios) {
            let r: ScenarioResult;
            if (s.kind === 'load') {
              if (s.keys !== undefined && id.startsWith('gw-')) {
                const store = await stores.get(gatewayParts(id).store as StoreKind);
                if (store.keys.length < s.keys) log(`creating ${s.keys} funded keys in ${store.kind}`);
                await store.ensureKeys(s.keys);
              }
              r = await measureLoad(target, s, opts);
            } else {
              const account = t.streamsAccount ? await t.streamsAccount() : undefined;
              r = await measureStreams(target, {
                count: opts.streams,
                chunks: STREAM_CHUNKS,
                firstByteCalls: opts.mode === 'quick' ? 100 : 300,
                holdHeaders: account?.headers ?? t.headers(0),
                pace: (ms) => up.setBehaviour({ chunkDelayMs: ms }),
                chunkDelayMs: STREAM_CHUNK_DELAY_MS,
                ...(account ? { verifySettled: account.verifySettled } : {}),
                timeoutMs: 60_000,
              });
            }
            results.push(r);
            log(describe(r));
          }
        } finally {
          await t.stop();
        }
      }
      if (wantsBreakdown) {
        const b = await runBreakdown(id, up, opts, stores, results);
        if (typeof b === 'string') {
          notes.push(`per-stage breakdown of ${id} failed: ${b}`);
          log(`${id} breakdown: FAILED — ${b}`);
        } else {
          report.breakdown.push(b);
          log(
            `${id} breakdown: admission ${b.admissionMs} upstream ${b.upstreamWaitMs} relay ${b.relayMs} settle ${b.settleMs} ms`,
          );
        }
      }
    }
  } finally {
    await stores.closeAll();
    await up.stop();
    await unpin();
  }
  report.evaluations = evaluateTargets(results);
  notes.push(`run took ${Math.round((Date.now() - started) / 1000)} s`);
  mkdirSync(opts.outDir, { recursive: true });
  writeFileSync(join(opts.outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(opts.outDir, 'latest.md'), renderMarkdown(report));
  writeFileSync(
    join(opts.outDir, 'latest.svg'),
    renderSvg(
      reportPanels(report),
      `Growth curves (${report.startedAt.slice(0, 10)}, ${report.machine.cores} cores)`,
    ),
  );
  log(`wrote ${opts.outDir}/latest.{json,md,svg}`);
  for (const e of report.evaluations)
    log(
      `target ${e.id}: ${e.pass === null ? 'NOT MEASURED' : e.pass ? 'PASS' : 'FAIL'} (${e.measured}; goal ${e.goal})`,
    );
}

await main();
