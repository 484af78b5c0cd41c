import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { methodLabel, recordRequest, registry, routeLabel } from '../../core/metrics.js';
import { rawRequest } from '../../scripts/fuzz/raw-http.js';
import { freePort } from '../../scripts/lib/net.js';
import { chatCalls } from '../support/balance.js';
import { startTestGateway } from '../support/gateway.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * A real Prometheus (Debian's `prometheus` package) scrapes the gateway: started here on a loopback port
 * with its data in a temp dir, from the shipped ops/prometheus.yml (target replaced, scraping every second),
 * stopped at the end. The test makes paid calls, then
 * asks Prometheus's HTTP API for what it scraped: the call count, the charged msats (equal to what the
 * ledger took), the overhead histogram's count, the standard process/runtime metric names; and every query
 * of ops/grafana-dashboard.json is accepted by Prometheus.
 */
const PROMETHEUS = '/usr/bin/prometheus';
const CALLS = 7;
/** METRICS_TOKEN of the gateway under test, in the token file the shipped scrape config names. */
const SCRAPE_TOKEN = 'scrape-token-for-the-prometheus-test';

let h: PaidGateway;
let dir: string;
let prom: ChildProcess | undefined;
let promUrl: string;
let promLog = '';

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(q: string): Promise<Sample[]> {
  const r = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = (await r.json()) as { status: string; error?: string; data?: { result: Sample[] } };
  if (body.status !== 'success') throw new Error(`query ${q}: ${body.error}`);
  return body.data?.result ?? [];
}

/** Polls `q` until its first sample's value satisfies `ok` (bounded); returns that value. */
async function waitFor(q: string, ok: (v: number) => boolean, ms = 30_000): Promise<number> {
  let last: number | undefined;
  const met = async () => {
    const r = await query(q);
    if (r.length > 0) last = Number(r[0]!.value[1]);
    return last !== undefined && ok(last);
  };
  await until(q, met, ms, 250).catch((err: Error) => {
    throw new Error(`${err.message}; last value ${last}; prometheus log:\n${promLog.slice(-2000)}`);
  });
  return last!;
}

beforeAll(async () => {
  // The upstream takes 300 ms to answer: the overhead histogram must not count that wait.
  h = await startPaidGateway({
    store: 'sqlite',
    upstream: { latencyMs: 300 },
    // RELAY_PATHS: every /v1 path reaches the catch-all (the hostile-methods test below counts its series).
    env: { METRICS_TOKEN: SCRAPE_TOKEN, RELAY_PATHS: '* /v1/**=0' },
  });
  dir = await mkdtemp(join(tmpdir(), 'prometheus-'));
  // The shipped file reads the token from `gateway-metrics-token` next to it.
  await writeFile(join(dir, 'gateway-metrics-token'), `${SCRAPE_TOKEN}\n`, { mode: 0o600 });
  const target = new URL(h.gateway.url).host;
  // The shipped scrape example itself, pointed at this gateway and scraping every second.
  const shipped = parseYaml(await readFile(join(process.cwd(), 'ops/prometheus.yml'), 'utf8')) as {
    global: Record<string, string>;
    scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
  };
  shipped.global.scrape_interval = '1s';
  shipped.global.evaluation_interval = '1s';
  const job = shipped.scrape_configs.find((c) => c.job_name === 'gateway')!;
  job.static_configs = [{ ...job.static_configs[0]!, targets: [target] }];
  await writeFile(join(dir, 'prometheus.yml'), stringifyYaml(shipped));
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prom = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      '--storage.tsdb.retention.time=1h',
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prom.stdout?.on('data', (d: Buffer) => {
    promLog += d.toString();
  });
  prom.stderr?.on('data', (d: Buffer) => {
    promLog += d.toString();
  });
  const started = prom;
  const ready = async () => {
    if (started.exitCode !== null) throw new Error(`prometheus exited (${started.exitCode})`);
    return fetch(`${promUrl}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
  };
  await until('prometheus ready', ready, 20_000, 200).catch((err: Error) => {
    throw new Error(`prometheus did not become ready: ${err.message}\n${promLog.slice(-2000)}`);
  });
}, 40_000);

afterAll(async () => {
  if (prom && prom.exitCode === null) {
    const exited = new Promise((res) => prom!.once('exit', res));
    prom.kill('SIGTERM');
    await Promise.race([exited, new Promise((res) => setTimeout(res, 5_000))]);
    if (prom.exitCode === null) prom.kill('SIGKILL');
  }
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a real Prometheus scraping the gateway', () => {
  it('finds the calls made, the msats charged, the overhead histogram and the standard process metrics', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(50);
    await chatCalls(h, apiKey, CALLS, (i) => `call ${i}`);
    const charged = balanceMsat - ((await h.available(apiKey)) ?? 0);
    expect(charged).toBeGreaterThan(0);

    const route = 'route="/v1/chat/completions"';
    expect(
      await waitFor(`sum(gateway_requests_total{job="gateway",${route},status="200"})`, (v) => v >= CALLS),
    ).toBe(CALLS);
    expect(await waitFor('sum(gateway_charged_msats_total{job="gateway"})', (v) => v >= charged)).toBe(
      charged,
    );
    expect(
      await waitFor(`sum(gateway_overhead_seconds_count{job="gateway",${route}})`, (v) => v >= CALLS),
    ).toBe(CALLS);
    // Each call waited ≥ 300 ms for the upstream: the request durations include that wait, the overhead
    // histogram does not (its sum is at most the durations' sum minus 7 × 300 ms).
    const durationSum = await waitFor(
      `sum(gateway_request_duration_seconds_sum{job="gateway",${route}})`,
      (v) => v >= CALLS * 0.3,
    );
    const overheadSum = Number(
      (await query(`sum(gateway_overhead_seconds_sum{job="gateway",${route}})`))[0]!.value[1],
    );
    expect(overheadSum).toBeGreaterThan(0);
    expect(overheadSum).toBeLessThanOrEqual(durationSum - CALLS * 0.3 + 1e-6);
    // prom-client's defaults under their standard names (no gateway_process_ prefix).
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect((await query(`${name}{job="gateway"}`)).length, name).toBeGreaterThan(0);
    }
    expect(await query('{__name__=~"gateway_process_.*"}')).toEqual([]);
    expect(await query('up{job="gateway"}')).toMatchObject([{ value: [expect.any(Number), '1'] }]);
    await h.auditOk();
  }, 60_000);

  it('accepts every query of ops/grafana-dashboard.json and each returns data', async () => {
    const dash = JSON.parse(await readFile(join(process.cwd(), 'ops/grafana-dashboard.json'), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    expect(dash.panels.length).toBeGreaterThan(5);
    // rate() needs two samples of a series: allow a few more scrapes after the calls above.
    const expected = new Set([
      'Requests per second by route',
      'Sats charged per minute',
      'Gateway overhead (excluding the upstream wait)',
      'Request duration p50 / p99',
      'CPU (process_cpu_seconds_total)',
      'Resident memory',
      'Event loop lag p99',
      'Event-loop delay p99 / max bucket (gateway_event_loop_delay_seconds)',
      'GC pauses by kind: p99 and pauses over 5 ms per minute',
      // gateway_overrun_msats_total has no labels: it exists (at 0) from the start.
      'Overruns and store errors',
      'Provider calls by outcome, and failovers',
    ]);
    const withData = new Set<string>();
    const everyPanelHasData = async () => {
      for (const panel of dash.panels) {
        for (const t of panel.targets) {
          const expr = t.expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', 'gateway');
          // Throws on a query Prometheus does not accept.
          if ((await query(expr)).length > 0) withData.add(panel.title);
        }
      }
      return [...expected].every((t) => withData.has(t));
    };
    // On a timeout the assertion below names the panels without data.
    await until('every expected panel has data', everyPanelHasData, 15_000, 500).catch(() => {});
    // Every panel shows something after the calls above, except the errors panel (no call failed) and the
    // webhook panel (no webhook here).
    expect([...withData].sort()).toEqual([...expected].sort());
  });
});

/** Every label set of `gateway_requests_total` and `gateway_request_duration_seconds` (count series). */
async function requestSeries(): Promise<Set<string>> {
  const out = new Set<string>();
  for (const name of ['gateway_requests_total', 'gateway_request_duration_seconds']) {
    const m = await registry.getSingleMetric(name)!.get();
    for (const v of m.values) {
      // A histogram's bucket bound is not a series of its own here.
      const { le: _le, ...labels } = v.labels;
      out.add(`${name} ${JSON.stringify(labels)}`);
    }
  }
  return out;
}

/** gateway_requests_total{route="/v1/{path}",method="OTHER",status="401"}. */
async function otherCount(): Promise<number> {
  const m = await registry.getSingleMetric('gateway_requests_total')!.get();
  // 401 (no credential) or 402 (no credential on a node with a wallet: the payment doors' offer).
  return m.values
    .filter(
      (x) =>
        x.labels.route === '/v1/{path}' &&
        x.labels.method === 'OTHER' &&
        (x.labels.status === '401' || x.labels.status === '402'),
    )
    .reduce((n, x) => n + x.value, 0);
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'OTHER']);

describe('label cardinality: hostile methods and paths add no series', () => {
  it('methodLabel / routeLabel map anything unknown to OTHER and the catch-all template', async () => {
    expect([...METHODS].filter((m) => m !== 'OTHER').map(methodLabel)).toEqual(
      [...METHODS].filter((m) => m !== 'OTHER'),
    );
    for (const m of ['get', 'PROPFIND', 'X'.repeat(200), 'POST ', '', 'BREW'])
      expect(methodLabel(m)).toBe('OTHER');
    for (const p of ['/v1/x?api_key=sk-secret', '/v1/chat/completions/../../etc', '/v1/a/b/c', '/v1/']) {
      expect(routeLabel(p)).toBe('/v1/{path}');
    }
    const before = await requestSeries();
    for (let i = 0; i < 50; i++) {
      recordRequest('/v1/{path}', `HOSTILE${i}`, 401, 0.001);
    }
    const added = [...(await requestSeries())].filter((s) => !before.has(s));
    // At most the OTHER series of that route (counter with status 401, histogram), whatever the 50 methods.
    expect(added.length).toBeLessThanOrEqual(2);
    for (const s of added) expect(s).toContain('"method":"OTHER"');
    const after = await requestSeries();
    recordRequest('/v1/{path}', 'HOSTILE-again', 401, 0.001);
    expect(await requestSeries()).toEqual(after);
  });

  it('requests with invented methods and random paths, on both engines, land on bounded series', async () => {
    const uws = await startTestGateway({ engine: 'uws', env: { RELAY_PATHS: '* /v1/**=0' } });
    try {
      const before = await requestSeries();
      const otherBefore = await otherCount();
      let counted = 0;
      // Methods outside the fixed set that an engine may pass on (node:http: the WebDAV ones and TRACE; uWS:
      // TRACE), invented ones and a lowercase one (the engines refuse those: no answer or 400).
      const methods = ['PROPFIND', 'MKCOL', 'LOCK', 'SEARCH', 'PURGE', 'TRACE', 'INVENTED', 'get'];
      for (const url of [h.gateway.url, uws.url]) {
        const port = Number(new URL(url).port);
        let reachedPipeline = 0;
        for (const [i, method] of methods.entries()) {
          const path = `/v1/random-${i}-${Math.random().toString(36).slice(2)}?api_key=sk-leak${i}`;
          const r = await rawRequest(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, {
            port,
            timeoutMs: 5_000,
            stopAfterAnswer: true,
            // Keep the write side open: the 402's payment offer waits for a mint quote, and node:http drops a
            // request whose client half-closed before its answer.
            endAfterWrite: false,
          });
          // 401 or 402 (no credential; 402 with the payment doors' offer on a node with a wallet): the pipeline
          // answered, so the request was counted.
          if (r.status === 401 || r.status === 402) reachedPipeline++;
        }
        expect(reachedPipeline, url).toBeGreaterThanOrEqual(1);
        counted += reachedPipeline;
      }
      // Each one the pipeline answered is counted once, under OTHER (recorded as the request ends, which can be
      // just after the client read its answer).
      await until(
        'every answered request to be counted',
        async () => (await otherCount()) - otherBefore >= counted,
      );
      expect((await otherCount()) - otherBefore).toBe(counted);
      const after = await requestSeries();
      const added = [...after].filter((s) => !before.has(s));
      for (const s of added) {
        const labels = JSON.parse(s.slice(s.indexOf(' ') + 1)) as Record<string, string>;
        expect(labels.method, s).toBe('OTHER');
        expect(labels.route, s).toBe('/v1/{path}');
      }
      // Nothing of a path (random part, query, secret) or of a method token ever became a label.
      const text = await registry.metrics();
      for (const leak of ['random-', 'sk-leak', 'INVENTED', 'PROPFIND', 'TRACE']) {
        expect(text).not.toContain(leak);
      }
    } finally {
      await uws.close();
    }
  });
});

/** The metric names a PromQL expression selects (`name{…}` or `name[…]`; functions and `by (…)` are not). */
function selectedMetrics(expr: string): string[] {
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{[]/g)].map((m) => m[1]!);
}

/** The exposition declares `name` (a histogram's `_bucket` / `_sum` / `_count` by its base name). */
function declared(metricsText: string, name: string): boolean {
  if (metricsText.includes(`\n# TYPE ${name} `)) return true;
  const base = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
  return base !== undefined && metricsText.includes(`\n# TYPE ${base} histogram`);
}

describe('the shipped ops files', () => {
  const PROMTOOL = '/usr/bin/promtool';
  const run = promisify(execFile);

  it('ops/prometheus.yml passes promtool check config and scrapes /metrics as job gateway', async () => {
    // promtool checks that the token file exists: the shipped file, checked next to a token file.
    const file = join(dir, 'shipped', 'prometheus.yml');
    await mkdir(join(dir, 'shipped'), { recursive: true });
    await writeFile(file, await readFile(join(process.cwd(), 'ops/prometheus.yml'), 'utf8'));
    await writeFile(join(dir, 'shipped', 'gateway-metrics-token'), SCRAPE_TOKEN, { mode: 0o600 });
    const ok = await run(PROMTOOL, ['check', 'config', file]);
    expect(`${ok.stdout}${ok.stderr}`).toMatch(/SUCCESS/);
    // promtool does refuse a broken file (the check above is not a no-op).
    const broken = join(dir, 'broken.yml');
    await writeFile(
      broken,
      (await readFile(file, 'utf8')).replace('scrape_interval: 15s', 'scrape_interval: soon'),
    );
    await expect(run(PROMTOOL, ['check', 'config', broken])).rejects.toMatchObject({ code: 1 });
    const cfg = parseYaml(await readFile(file, 'utf8')) as {
      scrape_configs: Array<{
        job_name: string;
        metrics_path?: string;
        authorization?: Record<string, string>;
        static_configs: Array<{ targets: string[] }>;
      }>;
    };
    const job = cfg.scrape_configs.find((c) => c.job_name === 'gateway');
    expect(job?.metrics_path ?? '/metrics').toBe('/metrics');
    // The shipped scrape sends the bearer token from a file (METRICS_TOKEN closes /metrics to everyone else).
    expect(job?.authorization).toEqual({ type: 'Bearer', credentials_file: 'gateway-metrics-token' });
    expect(job?.static_configs[0]?.targets.length).toBeGreaterThan(0);
  });

  it('every metric the dashboard and the example queries select is declared in /metrics of a running gateway', async () => {
    const dash = JSON.parse(await readFile(join(process.cwd(), 'ops/grafana-dashboard.json'), 'utf8')) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    const exprs = dash.panels.flatMap((p) => p.targets.map((t) => t.expr));
    const yml = await readFile(join(process.cwd(), 'ops/prometheus.yml'), 'utf8');
    exprs.push(...yml.split('\n').filter((l) => l.startsWith('#   ')));
    const names = new Set(exprs.flatMap(selectedMetrics));
    // The extraction found the dashboard's series (guards the pattern itself).
    for (const n of [
      'gateway_requests_total',
      'gateway_overhead_seconds_bucket',
      'process_cpu_seconds_total',
    ]) {
      expect(names.has(n), n).toBe(true);
    }
    expect(names.size).toBeGreaterThanOrEqual(10);
    // Without the token the door stays closed (401), with it the series are there.
    expect((await fetch(`${h.gateway.url}/metrics`)).status).toBe(401);
    const text = await (
      await fetch(`${h.gateway.url}/metrics`, { headers: { authorization: `Bearer ${SCRAPE_TOKEN}` } })
    ).text();
    const missing = [...names].filter((n) => !declared(text, n));
    expect(missing).toEqual([]);
    // And the check would see a missing one.
    expect(declared(text, 'gateway_no_such_metric_total')).toBe(false);
  });
});
