import { subscribe } from 'node:diagnostics_channel';
import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { clusterMetricsText, isClusterWorker } from './cluster.js';
import { CATCH_ALL_TEMPLATE, isPaidRoute } from './paid-routes.js';
import { type CallTimes, overheadMs } from './server-timing.js';
import { requestEndChannel } from './tracing.js';

/**
 * Prometheus metrics (prom-client), served at GET /metrics by `metricsRoutes` (core/routes/metrics.ts).
 *
 * One process-wide registry (prom-client's model: one scrape per process). Label values are bounded and
 * never secret: route TEMPLATES (never raw paths, which could carry `?api_key=` or arbitrary catch-all
 * paths), HTTP methods bounded by `methodLabel`, status codes, provider names (the providers file's fixed
 * set) and fixed reason words (`where`, `scope`, `stage`, `outcome`: literals at every call site). No key, key id, token, mint secret or model id
 * supplied by a caller ever becomes a label.
 *
 * Who records what:
 * - paid-pipeline requests: recorded here from the `gateway:request:start/end` tracing channels (requests,
 *   latency, and upstream errors = 502/504 answers), once `installPipelineMetrics()` ran (`metricsRoutes`
 *   calls it);
 * - route-handler requests (wallet, balance, estimate, admin): `route()` (core/http/router.ts) wraps the handler;
 * - charges and overruns: the settle stage calls `recordCharge()` / `recordOverrun()`;
 * - store failures: `recordStoreError()` (the route modules call it for `store_unavailable`).
 */

export const registry = new Registry();
// prom-client's default process/runtime metrics under their standard names (`process_cpu_seconds_total`,
// `nodejs_eventloop_lag_seconds`, …): the common Node.js dashboards look for exactly these.
// GC pause buckets finer than prom-client's default (1 ms, 10 ms, 100 ms, …): the tail targets sit between 1 and
// 10 ms (no GC pause over 5 ms), so the histogram must tell 2, 3 and 5 ms apart.
collectDefaultMetrics({
  register: registry,
  gcDurationBuckets: [0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 5],
});
// In a cluster worker, prom-client's aggregation asks for this registry (not its global one); constructing an
// AggregatorRegistry is what makes the worker answer the primary's requests.
if (isClusterWorker()) {
  AggregatorRegistry.setRegistries([registry]);
  void new AggregatorRegistry();
}

/**
 * Counts of the hot path (every call) kept as plain numbers and added to their prom-client counter when it
 * is read (its `collect` hook: a scrape, the cluster's aggregation, the console): a prom-client `inc` hashes
 * the label set and allocates on every call (≈ 600 bytes each, measured with bench/profile/alloc-per-call.sh).
 */
export interface HotCount {
  n: number;
}
const hotCounts = new Map<Counter<string>, Array<{ labels: Record<string, string>; c: HotCount }>>();

/** A series of `counter` (created with `collect: flushHot`) counted in memory: `c.n++` per event. */
function hotCount<T extends string>(counter: Counter<T>, labels: Record<T, string>): HotCount {
  const c: HotCount = { n: 0 };
  let list = hotCounts.get(counter as Counter<string>);
  if (list === undefined) {
    list = [];
    hotCounts.set(counter as Counter<string>, list);
  }
  list.push({ labels, c });
  return c;
}

/** A counter's `collect` hook: adds what its hot series counted since the last read. */
function flushHot(this: Counter<string>): void {
  for (const { labels, c } of hotCounts.get(this) ?? []) {
    if (c.n === 0) continue;
    this.inc(labels, c.n);
    c.n = 0;
  }
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export const requestsTotal = new Counter({
  name: 'gateway_requests_total',
  help: 'Requests handled, by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
  collect: flushHot,
});

export const requestDuration = new Histogram({
  name: 'gateway_request_duration_seconds',
  help: 'Time from request start to the end of the response, by route template and method',
  labelNames: ['route', 'method'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Finer at the low end: the gateway's own work is typically well under a millisecond. */
const OVERHEAD_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

export const overheadDuration = new Histogram({
  name: 'gateway_overhead_seconds',
  help: 'Time a paid-pipeline request spent in the gateway itself: its whole duration minus the upstream wait (dispatch to the end of the upstream response)',
  labelNames: ['route'] as const,
  buckets: OVERHEAD_BUCKETS,
  registers: [registry],
});

export const chargedMsatsTotal = new Counter({
  name: 'gateway_charged_msats_total',
  help: 'Millisatoshis charged for paid calls',
  labelNames: ['endpoint'] as const,
  registers: [registry],
});

export const unreportedOutputTokensTotal = new Counter({
  name: 'gateway_unreported_output_tokens_total',
  help: 'Output tokens a provider counted in total_tokens but in neither its prompt nor completion count (reasoning it left out), charged as reasoning',
  registers: [registry],
});

export const unpricedDimensionTotal = new Counter({
  name: 'gateway_unpriced_dimension_total',
  help: 'Settled calls that used a usage dimension the price book has no price for, charged at its direction base rate (prompt, completion or request), by dimension',
  labelNames: ['dimension'] as const,
  registers: [registry],
});

export const upstreamPaidMsatsTotal = new Counter({
  name: 'gateway_upstream_paid_msats_total',
  help: 'Millisatoshis the operator paid other nodes for calls: "payment: cashu" (token sent minus change redeemed) and "payment: cashu-balance" (the cost the node stated, debited from the prepaid key), by provider',
  labelNames: ['provider'] as const,
  registers: [registry],
});

export const upstreamLostMsatsTotal = new Counter({
  name: 'gateway_upstream_lost_msats_total',
  help: 'Millisatoshis of eCash sent to other nodes that came back neither as an answer nor as change (a node that failed after redeeming the token: no_answer; change the node could not make: change_pending; change this node could not redeem: change_unredeemable; a "payment: cashu-balance" key creation or top-up the node spent without confirming: prepaid_unconfirmed), by provider and reason',
  labelNames: ['provider', 'reason'] as const,
  registers: [registry],
});

export const upstreamChangeRetriesTotal = new Counter({
  name: 'gateway_upstream_change_retries_total',
  help: 'Change (or a refused token) from "payment: cashu" nodes that could not be redeemed at once and was handed to the background retry, by provider',
  labelNames: ['provider'] as const,
  registers: [registry],
});

export const overrunsTotal = new Counter({
  name: 'gateway_overruns_total',
  help: 'Settlements whose metered cost exceeded what could be charged',
  registers: [registry],
});

export const overrunMsatsTotal = new Counter({
  name: 'gateway_overrun_msats_total',
  help: 'Millisatoshis that could not be charged (cost above reservation and balance)',
  registers: [registry],
});

export const realtimeSessionsOpen = new Gauge({
  name: 'gateway_realtime_sessions_open',
  help: 'Realtime WebSocket sessions open now',
  registers: [registry],
});

export const realtimeSessionSeconds = new Histogram({
  name: 'gateway_realtime_session_seconds',
  help: 'Length of ended Realtime sessions, seconds',
  buckets: [1, 5, 15, 60, 300, 900, 1800, 3600],
  registers: [registry],
});

export const realtimeSessionMsats = new Histogram({
  name: 'gateway_realtime_session_msats',
  help: 'Millisatoshis charged per ended Realtime session',
  buckets: [0, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000],
  registers: [registry],
});

/** A Realtime session ended: its length and charge (`gateway_realtime_session_*`) and the charge counter. */
export function recordRealtimeSession(seconds: number, msats: number): void {
  realtimeSessionSeconds.observe(seconds);
  realtimeSessionMsats.observe(msats);
  if (msats > 0) recordCharge(msats, '/v1/realtime');
}

export const upstreamErrorsTotal = new Counter({
  name: 'gateway_upstream_errors_total',
  help: 'Paid calls answered with an upstream error (502) or timeout (504)',
  labelNames: ['status'] as const,
  registers: [registry],
});

// Per provider: the label values are the provider names of the providers file (a fixed, operator-chosen set).
export const providerRequestsTotal = new Counter({
  name: 'gateway_provider_requests_total',
  help: 'Calls sent to each provider, by outcome: ok (a response head the call used), error (connect error or timeout before the head), status_5xx, status_429',
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
  collect: flushHot,
});

export const providerFailoversTotal = new Counter({
  name: 'gateway_provider_failovers_total',
  help: 'Calls moved on to the next provider after this provider failed before the first byte',
  labelNames: ['provider'] as const,
  registers: [registry],
});

export const providerHeadLatency = new Histogram({
  name: 'gateway_provider_head_seconds',
  help: 'Time from sending a call to a provider to its response head',
  labelNames: ['provider'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const storeErrorsTotal = new Counter({
  name: 'gateway_store_errors_total',
  help: 'Operations refused because the balance store was unreachable (503 store_unavailable)',
  labelNames: ['where'] as const,
  registers: [registry],
});

export const limiterErrorsTotal = new Counter({
  name: 'gateway_rate_limit_store_errors_total',
  help: 'Per-IP limit checks skipped because the limit store was unreachable (they fail open)',
  labelNames: ['scope'] as const,
  registers: [registry],
});

export const auditDroppedTotal = new Counter({
  name: 'gateway_audit_dropped_total',
  help: 'Audit records dropped because the audit buffer was full (the store was away too long)',
  registers: [registry],
});

export const auditWriteFailuresTotal = new Counter({
  name: 'gateway_audit_write_failures_total',
  help: 'Audit batch writes that failed (the batch is kept and retried)',
  registers: [registry],
});

/** `endpoint` label of `recordCharge`: one of the paid route templates (core/paid-routes.ts), or `/v1/{path}`. */
export function routeLabel(path: string): string {
  return isPaidRoute(path) ? path : CATCH_ALL_TEMPLATE;
}

const chargeListeners = new Set<(msats: number) => void>();

/** Calls `fn` with every recorded charge (the console's statistics); returns the unsubscribe. */
export function onCharge(fn: (msats: number) => void): () => void {
  chargeListeners.add(fn);
  return () => chargeListeners.delete(fn);
}

/** Records a settled charge (msats ≥ 0). Called by the settle stage. */
export function recordCharge(msats: number, path = '/v1/{path}'): void {
  if (!Number.isFinite(msats) || msats <= 0) return;
  chargedMsatsTotal.inc({ endpoint: routeLabel(path) }, msats);
  for (const fn of chargeListeners) fn(msats);
}

/** Records a settled call that used `dimension` without a price of its own (charged at its base rate). The
 *  label is one of the fixed dimension names (core/pricing/dimensions.ts). */
export function recordUnpricedDimension(dimension: string): void {
  unpricedDimensionTotal.inc({ dimension });
}

/** Counts output tokens the provider billed in `total_tokens` without itemising them. */
export function recordUnreportedOutput(tokens: number): void {
  if (Number.isFinite(tokens) && tokens > 0) unreportedOutputTokensTotal.inc(tokens);
}

/** Records an overrun: `msats` of metered cost that could not be charged. */
export function recordOverrun(msats: number): void {
  if (!Number.isFinite(msats) || msats <= 0) return;
  overrunsTotal.inc();
  overrunMsatsTotal.inc(msats);
}

/** Records a store failure; `where` is a fixed word naming the operation (e.g. `admit`, `wallet_route`). */
export function recordStoreError(where: string): void {
  storeErrorsTotal.inc({ where });
}

/**
 * The `method` label: one of the methods the gateway serves, or `OTHER`. The catch-all `/v1/*` passes any
 * method to the pipeline, and an engine may accept any method token (uWS does): a raw method as a label would
 * add series for good with every new token a client invents.
 */
const METHOD_LABELS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
export function methodLabel(method: string): string {
  return METHOD_LABELS.has(method) ? method : 'OTHER';
}

/** Per-label-set metric children, cached: label hashing per request was measurable on the hot path. */
interface RequestSeries {
  count: HotCount;
  duration: ReturnType<typeof requestDuration.labels>;
}
const MAX_SERIES = 10_000;
const series = new Map<string, RequestSeries>();

/** Records one handled request (route template, not the raw path; the method is bounded by `methodLabel`). */
export function recordRequest(route: string, rawMethod: string, status: number, seconds: number): void {
  const method = methodLabel(rawMethod);
  const key = `${route} ${method} ${status}`;
  let s = series.get(key);
  if (s === undefined) {
    if (series.size >= MAX_SERIES) {
      // Bounded (label values are bounded anyway): counted so far is kept, the cache starts again.
      flushHot.call(requestsTotal as Counter<string>);
      hotCounts.delete(requestsTotal as Counter<string>);
      series.clear();
    }
    s = {
      count: hotCount(requestsTotal, { route, method, status: String(status) }),
      duration: requestDuration.labels({ route, method }),
    };
    series.set(key, s);
  }
  s.count.n++;
  s.duration.observe(seconds);
}

/** A provider's series, cached: the relay records them on every call. */
export interface ProviderSeries {
  ok: HotCount;
  error: HotCount;
  status5xx: HotCount;
  status429: HotCount;
  failover: ReturnType<typeof providerFailoversTotal.labels>;
  head: ReturnType<typeof providerHeadLatency.labels>;
}
const providerSeriesCache = new Map<string, ProviderSeries>();
export function providerSeries(provider: string): ProviderSeries {
  let s = providerSeriesCache.get(provider);
  if (s === undefined) {
    s = {
      ok: hotCount(providerRequestsTotal, { provider, outcome: 'ok' }),
      error: hotCount(providerRequestsTotal, { provider, outcome: 'error' }),
      status5xx: hotCount(providerRequestsTotal, { provider, outcome: 'status_5xx' }),
      status429: hotCount(providerRequestsTotal, { provider, outcome: 'status_429' }),
      failover: providerFailoversTotal.labels({ provider }),
      head: providerHeadLatency.labels({ provider }),
    };
    providerSeriesCache.set(provider, s);
  }
  return s;
}

const overheadChildren = new Map<string, ReturnType<typeof overheadDuration.labels>>();
function overheadChild(route: string): ReturnType<typeof overheadDuration.labels> {
  let c = overheadChildren.get(route);
  if (c === undefined) {
    c = overheadDuration.labels({ route });
    overheadChildren.set(route, c);
  }
  return c;
}

let installed = false;

/** Subscribes to the pipeline's request-end channel (idempotent). */
export function installPipelineMetrics(): void {
  if (installed) return;
  installed = true;
  subscribe(requestEndChannel.name, (msg) => {
    const m = msg as {
      method: string;
      path: string;
      status: number;
      durationMs: number;
      timings?: CallTimes;
    };
    const route = routeLabel(m.path);
    recordRequest(route, m.method, m.status, m.durationMs / 1000);
    overheadChild(route).observe(overheadMs(m.durationMs, m.timings) / 1000);
    if (m.status === 502 || m.status === 504) upstreamErrorsTotal.inc({ status: String(m.status) });
  });
}

/** The Prometheus text exposition. */
export async function metricsText(): Promise<string> {
  // WORKERS > 1: every worker's series, summed by the primary (core/cluster.ts); this process's own if it is
  // not answered in time.
  if (isClusterWorker()) {
    const all = await clusterMetricsText();
    if (all !== undefined) return all;
  }
  return await registry.metrics();
}

export const webhookDeliveriesTotal = new Counter({
  name: 'gateway_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome (delivered, retry, failed, disabled)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const eventErrorsTotal = new Counter({
  name: 'gateway_event_errors_total',
  help: 'Alert evaluations, sweeps or outbox passes that failed (logged; the call that caused them is unaffected)',
  labelNames: ['stage'] as const,
  registers: [registry],
});

/** The gateway's own share of paid calls since this process (or, with WORKERS, every worker) started. */
export interface OverheadSummary {
  calls: number;
  /** Estimated from the histogram's buckets as Prometheus' histogram_quantile does; null without calls. */
  p50_ms: number | null;
  p99_ms: number | null;
}

/**
 * `gateway_overhead_seconds` over every route, as quantiles: the console's figure (Prometheus computes the same
 * from the scraped buckets, per time window). Read from the Prometheus text so that WORKERS > 1 sums every
 * worker's buckets.
 */
export async function overheadSummary(): Promise<OverheadSummary> {
  const buckets = new Map<number, number>();
  const line = /^gateway_overhead_seconds_bucket\{([^}]*)\} (\S+)$/gm;
  const text = await metricsText();
  for (let m = line.exec(text); m !== null; m = line.exec(text)) {
    const le = /(?:^|,)le="([^"]+)"/.exec(m[1]!)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(m[2]));
  }
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  const calls = sorted.at(-1)?.[1] ?? 0;
  return { calls, p50_ms: quantileMs(sorted, calls, 0.5), p99_ms: quantileMs(sorted, calls, 0.99) };
}

/** Linear interpolation inside the bucket that holds rank q·total (cumulative buckets, ascending bounds). */
function quantileMs(sorted: [number, number][], total: number, q: number): number | null {
  if (total === 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [bound, count] of sorted) {
    if (count >= rank) {
      // Above the highest finite bound: that bound is the best estimate (as histogram_quantile answers).
      if (bound === Number.POSITIVE_INFINITY) return lower * 1000;
      const inBucket = count - below;
      const at = inBucket === 0 ? bound : lower + ((bound - lower) * (rank - below)) / inBucket;
      return Math.round(at * 1e6) / 1000;
    }
    lower = bound;
    below = count;
  }
  return lower * 1000;
}

/** What the open-payout gauges read at each scrape (the wallet's journal; set by core/services.ts). */
type OpenPayoutSource = () => Promise<ReadonlyArray<{ sinceMs: number }>>;
let openPayoutSource: OpenPayoutSource | undefined;

/** The wallet's open payouts feed `gateway_open_payouts` and `gateway_open_payout_oldest_seconds`. */
export function setOpenPayoutSource(source: OpenPayoutSource | undefined): void {
  openPayoutSource = source;
}

async function readOpenPayouts(): Promise<{ count: number; oldestSeconds: number }> {
  if (openPayoutSource === undefined) return { count: 0, oldestSeconds: 0 };
  const open = await openPayoutSource();
  const oldest = open.reduce((m, p) => Math.min(m, p.sinceMs), Number.POSITIVE_INFINITY);
  return { count: open.length, oldestSeconds: open.length === 0 ? 0 : (Date.now() - oldest) / 1000 };
}

// The journal is the store's, shared by every process: with WORKERS the primary keeps the largest reading, not
// the sum of the same figure counted by each worker.
new Gauge({
  name: 'gateway_open_payouts',
  help: 'Lightning payouts of held balances not decided or not settled yet (the wallet journal), store-wide',
  registers: [registry],
  aggregator: 'max',
  async collect() {
    this.set((await readOpenPayouts().catch(() => ({ count: 0 }))).count);
  },
});

new Gauge({
  name: 'gateway_open_payout_oldest_seconds',
  help: 'Age of the oldest open Lightning payout (0 when none): a melt the mint has not decided for long',
  registers: [registry],
  aggregator: 'max',
  async collect() {
    this.set((await readOpenPayouts().catch(() => ({ oldestSeconds: 0 }))).oldestSeconds);
  },
});
