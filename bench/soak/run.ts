import { setTimeout as delay } from 'node:timers/promises';
import { baseVersions, machineInfo } from '../lib/machine.js';
import { processTree, readUsage } from '../lib/proc-sampler.js';
import { parseRuntime, summarize } from '../lib/runtime-scrape.js';
import { type BenchStore, COST_SATS, openBenchStore } from '../targets/gateway.js';
import { startUpstream, type UpstreamProcess } from '../targets/upstream.js';
import { type GatewayEntry, type SoakGateway, startSoakGateway } from './gateway.js';
import { MixedLoad } from './mixed-load.js';
import {
  DEFAULT_THRESHOLDS,
  evaluate,
  expectedSamples,
  promValue,
  type RssPoint,
  rssGrowth,
  type SoakMoney,
  type SoakReport,
  type SoakSample,
  type SoakThresholds,
  warmupSeconds,
} from './report.js';

/**
 * The soak (`npm run soak`; docs/benchmarks.md, "Soak"): paid traffic at a fixed rate for N minutes against one
 * gateway process on a fresh store, sampled every 10 s (RSS and CPU from /proc; heap, event-loop delay p99 and
 * active handles from the gateway's own /metrics; the window's answers and latency). Then the load stops, the
 * leases are left to report and return, and the money is checked with the project's audit (`ledger.checkConservation()`,
 * what `npm run audit` runs) and the ledger identity. Everything is bounded: the load by its duration and its
 * in-flight cap, each wait by a deadline, and all of it on loopback.
 */

export interface SoakOptions {
  minutes: number;
  /** Calls per second (default 1,000). */
  rate?: number;
  /** Funded keys the calls rotate over (default 10,000). */
  keys?: number;
  /** Fraction of calls that stream (default 0.5). */
  streamShare?: number;
  store?: 'redis' | 'sqlite';
  /** Keep-alive connections of the load generator (default 64, as the bench's 1,000 req/s scenarios). */
  connections?: number;
  sampleEveryS?: number;
  entry?: GatewayEntry;
  thresholds?: Partial<SoakThresholds>;
  log?: (line: string) => void;
}

/** How long the money check waits for the leases to be reported and returned (LEASE_IDLE_MS is 1 s). */
const SETTLE_DEADLINE_MS = 30_000;
const METRICS_TIMEOUT_MS = 5_000;
const CALL_TIMEOUT_MS = 10_000;
/** How often the gateway's RSS is read between samples. */
const RSS_EVERY_MS = 1_000;

const r1 = (v: number): number => Math.round(v * 10) / 10;
const r2 = (v: number): number => Math.round(v * 100) / 100;

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const log = o.log ?? (() => {});
  const config = {
    minutes: o.minutes,
    rate: o.rate ?? 1000,
    keys: o.keys ?? 10_000,
    streamShare: o.streamShare ?? 0.5,
    store: o.store ?? 'redis',
    connections: o.connections ?? 64,
    sampleEveryS: o.sampleEveryS ?? 10,
    entry: o.entry ?? 'dist',
    costMsat: COST_SATS * 1000,
  } as const;
  const thresholds = { ...DEFAULT_THRESHOLDS, ...o.thresholds };
  const durationS = config.minutes * 60;
  const startedAt = new Date().toISOString();
  const notes: string[] = [];
  let store: BenchStore | undefined;
  let up: UpstreamProcess | undefined;
  let gw: SoakGateway | undefined;
  try {
    log(`opening a fresh ${config.store} store and funding ${config.keys} keys`);
    store = await openBenchStore(config.store);
    await store.ensureKeys(config.keys);
    const keys = store.keys.slice(0, config.keys);
    const before = await store.ledger.checkConservation();
    if (!before.ok) throw new Error(`the fresh store fails its audit: ${JSON.stringify(before.breaches[0])}`);
    const fundedMsat = before.totals.depositedMsat;

    up = await startUpstream();
    gw = await startSoakGateway(store, up.url, config.entry);
    log(`gateway pid ${gw.pid} at ${gw.baseUrl}; ${config.minutes} min at ${config.rate} req/s`);
    const pids = processTree(gw.pid);

    const load = new MixedLoad({
      baseUrl: gw.baseUrl,
      keys,
      rate: config.rate,
      durationS,
      streamShare: config.streamShare,
      connections: config.connections,
      timeoutMs: CALL_TIMEOUT_MS,
    });
    // Each sample's loop-delay p99 is its own window's: the difference of `gateway_event_loop_delay_seconds`
    // between two scrapes (a bucket bound, as in the bench's tables; bench/lib/runtime-scrape.ts).
    let runtime = parseRuntime(await gw.metrics(METRICS_TIMEOUT_MS).catch(() => ''));
    const samples: SoakSample[] = [];
    const rssTrace: RssPoint[] = [];
    let nextRssMs = RSS_EVERY_MS;
    const upPid = [up.child.pid];
    let cpu = readUsage(pids);
    let upCpu = readUsage(upPid);
    let clientCpu = process.cpuUsage();
    const t0 = performance.now();
    load.start();
    const n = expectedSamples(durationS, config.sampleEveryS);
    for (let k = 1; k <= n; k++) {
      const dueMs = Math.min(k * config.sampleEveryS, durationS) * 1000;
      // RSS on every whole second of the load before the sample is due (a /proc read; the sample is the
      // reading of its own second): the growth is measured over these.
      for (; nextRssMs < dueMs; nextRssMs += RSS_EVERY_MS) {
        await delay(Math.max(0, t0 + nextRssMs - performance.now()));
        rssTrace.push({
          tS: r1((performance.now() - t0) / 1000),
          rssMb: r1(readUsage(pids).rssBytes / 1048576),
        });
      }
      nextRssMs = dueMs + RSS_EVERY_MS;
      await delay(Math.max(0, t0 + dueMs - performance.now()));
      const w = load.takeWindow();
      const usage = readUsage(pids);
      const upUsage = readUsage(upPid);
      const clientUsage = process.cpuUsage();
      const pct = (cpuS: number): number => (w.seconds > 0 ? Math.round((cpuS / w.seconds) * 100) : 0);
      const sample: SoakSample = {
        tS: r1((performance.now() - t0) / 1000),
        windowS: r2(w.seconds),
        rssMb: r1(usage.rssBytes / 1048576),
        cpuPercent: pct(usage.cpuS - cpu.cpuS),
        clientCpuPercent: pct(
          (clientUsage.user + clientUsage.system - clientCpu.user - clientCpu.system) / 1e6,
        ),
        upstreamCpuPercent: pct(upUsage.cpuS - upCpu.cpuS),
        heapUsedMb: null,
        eventLoopP99Ms: null,
        activeHandles: null,
        sent: w.sent,
        ok: w.ok,
        failed: w.non2xx + w.badBodies + w.errors + w.timeouts,
        missed: w.missed,
        rate: w.seconds > 0 ? Math.round(w.ok / w.seconds) : 0,
        p50Ms: w.latency.p50,
        p99Ms: w.latency.p99,
      };
      rssTrace.push({ tS: sample.tS, rssMb: sample.rssMb });
      cpu = usage;
      upCpu = upUsage;
      clientCpu = clientUsage;
      try {
        const text = await gw.metrics(METRICS_TIMEOUT_MS);
        const heap = promValue(text, 'nodejs_heap_size_used_bytes');
        const now = parseRuntime(text);
        const loop = summarize(runtime, now);
        runtime = now;
        sample.heapUsedMb = heap === null ? null : r1(heap / 1048576);
        sample.eventLoopP99Ms = loop.loopSamples === 0 ? null : loop.loopDelayP99Ms;
        sample.activeHandles = promValue(text, 'nodejs_active_handles_total');
      } catch (err) {
        sample.metricsError = (err as Error).message.slice(0, 200);
      }
      samples.push(sample);
      log(
        `t=${Math.round(sample.tS)} s RSS ${sample.rssMb} MB CPU ${sample.cpuPercent} % (client ${sample.clientCpuPercent} %, mock ${sample.upstreamCpuPercent} %) heap ${sample.heapUsedMb} MB loop p99 ${sample.eventLoopP99Ms} ms handles ${sample.activeHandles} | ${sample.rate} req/s ok ${sample.ok} failed ${sample.failed} missed ${sample.missed} p50 ${sample.p50Ms} p99 ${sample.p99Ms} ms`,
      );
      if (usage.rssBytes === 0) {
        notes.push(`the gateway process was gone at ${sample.tS} s: ${gw.tail().slice(-500)}`);
        load.stop();
        break;
      }
    }
    load.stop();
    await load.finished();
    const totals = load.totals();
    log(`load done: ${totals.sent} sent, ${totals.ok} answered 200; waiting for the leases to settle`);

    const money = await settledMoney(store, fundedMsat, totals.ok, config.costMsat);
    log(
      `settled in ${money.settleWaitMs} ms: charged ${money.chargedMsat} msat, reserved ${money.reservedMsat}`,
    );
    const warmupS = warmupSeconds(durationS);
    const growth = rssGrowth(rssTrace, warmupS);
    const partial = {
      config,
      warmupS,
      samples,
      load: { ...totals, seconds: Math.min(totals.seconds, durationS) },
      money,
      rssGrowthMb: growth.growthMb,
    };
    const criteria = evaluate(partial, thresholds);
    return {
      startedAt,
      machine: machineInfo(),
      versions: baseVersions(),
      rssBaselineMb: growth.baselineMb,
      rssSlopeMbPerMin: growth.slopeMbPerMin,
      rssTrace,
      thresholds,
      ...partial,
      criteria,
      pass: criteria.every((c) => c.pass),
      notes,
    };
  } finally {
    await gw?.stop();
    await up?.stop();
    await store?.close();
  }
}

/**
 * Waits, bounded, until the gateway has reported every answered call and returned every lease (nothing
 * reserved, at least `answered` calls counted), then reads the final audit.
 */
async function settledMoney(
  store: BenchStore,
  fundedMsat: number,
  answered: number,
  costMsat: number,
): Promise<SoakMoney> {
  const start = Date.now();
  for (;;) {
    const audit = await store.ledger.checkConservation();
    const t = audit.totals;
    const settled = t.reservedMsat === 0 && t.requests >= answered;
    if (settled || Date.now() - start >= SETTLE_DEADLINE_MS) {
      return {
        fundedMsat,
        depositedMsat: t.depositedMsat,
        balanceMsat: t.balanceMsat,
        reservedMsat: t.reservedMsat,
        chargedMsat: t.spentMsat,
        expectedMsat: answered * costMsat,
        requests: t.requests,
        auditOk: audit.ok,
        breaches: audit.breaches.map((b) => `${b.rule}${b.accountId ? ` ${b.accountId}` : ''}: ${b.detail}`),
        settleWaitMs: Date.now() - start,
      };
    }
    await delay(250);
  }
}
