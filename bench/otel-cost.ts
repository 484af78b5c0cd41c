import { createServer, type Server } from 'node:http';
import { Pool } from 'undici';
import { ProcSampler } from './lib/proc-sampler.js';
import { freePort } from './lib/processes.js';
import { LatencyRecorder, type LatencySummary } from './lib/stats.js';
import { openBenchStore, type StoreKind, startGatewayTarget } from './targets/gateway.js';
import { startUpstream } from './targets/upstream.js';

/**
 * What OpenTelemetry tracing costs on the paid call path (README, "Tracing"; docs/benchmarks.md, "Tracing
 * cost"): the built gateway (`npm run build`) as a child process on a fresh store, paid with an `sk-` key at fixed
 * pricing, against the mock provider in its own process; once with tracing off and once with it on at sampling 1.0
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` = an OTLP/HTTP sink in this process that reads and drops what it is sent), the
 * two alternated `--rounds` times. Each phase: `--warmup` calls, then `--calls` calls at `--concurrency` (stopped
 * at `--seconds` if not done), per scenario (`chat`: non-streamed, 8 tokens; `stream`: 50 SSE chunks).
 * Reported: answered calls, req/s, client-side p50/p99 (ms), and the gateway's CPU per call (utime + stime of
 * its process from /proc over the measured window ÷ calls) — the steadier figure on a shared machine.
 *
 *   npm run build && npx tsx bench/otel-cost.ts [--store sqlite|redis] [--calls 3000] [--seconds 20]
 *     [--concurrency 8] [--rounds 2] [--warmup 300] [--scenarios chat,stream]
 */

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
};

interface Phase {
  scenario: string;
  tracing: 'off' | 'on';
  calls: number;
  errors: number;
  rps: number;
  latency: LatencySummary;
  cpuMsPerCall: number;
}

const BODIES: Record<string, string> = {
  chat: JSON.stringify({
    model: 'mock-gpt',
    max_tokens: 8,
    messages: [{ role: 'user', content: 'Say something short, please.' }],
  }),
  stream: JSON.stringify({
    model: 'mock-gpt',
    max_tokens: 50,
    stream: true,
    messages: [{ role: 'user', content: 'Say something longer, please.' }],
  }),
};

/** An OTLP/HTTP receiver that reads every export and drops it (counts the spans' bytes). */
async function startSink(): Promise<{ url: string; exports: () => number; close: () => Promise<void> }> {
  let exports = 0;
  const server: Server = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  const port = await freePort();
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${port}`,
    exports: () => exports,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

async function load(
  pool: Pool,
  headers: Record<string, string>,
  body: string,
  calls: number,
  concurrency: number,
  deadlineMs: number,
  rec?: LatencyRecorder,
): Promise<{ done: number; errors: number }> {
  let next = 0;
  let done = 0;
  let errors = 0;
  const worker = async () => {
    while (next < calls && Date.now() < deadlineMs) {
      next++;
      const t0 = performance.now();
      try {
        const r = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body });
        await r.body.dump();
        if (r.statusCode !== 200) errors++;
        else {
          done++;
          rec?.record(performance.now() - t0);
        }
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { done, errors };
}

async function main(): Promise<void> {
  const storeKind = arg('store', 'sqlite') as StoreKind;
  const calls = Math.min(Number(arg('calls', '3000')), 100_000);
  const seconds = Math.min(Number(arg('seconds', '20')), 300);
  const concurrency = Math.min(Number(arg('concurrency', '8')), 256);
  const rounds = Math.min(Number(arg('rounds', '2')), 10);
  const warmup = Math.min(Number(arg('warmup', '300')), 10_000);
  const scenarios = arg('scenarios', 'chat,stream')
    .split(',')
    .filter((s) => BODIES[s] !== undefined);

  const upstream = await startUpstream();
  const store = await openBenchStore(storeKind);
  const sink = await startSink();
  const phases: Phase[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const tracing of ['off', 'on'] as const) {
        const gw = await startGatewayTarget({
          engine: 'node',
          store,
          upstreamUrl: upstream.url,
          extraEnv:
            tracing === 'on'
              ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'otel-cost-bench' }
              : {},
        });
        const pool = new Pool(gw.baseUrl, { connections: concurrency, pipelining: 1 });
        const headers = { 'content-type': 'application/json', ...gw.headers(0) };
        try {
          for (const scenario of scenarios) {
            const body = BODIES[scenario]!;
            await load(pool, headers, body, warmup, concurrency, Date.now() + seconds * 1000);
            const rec = new LatencyRecorder(calls);
            const sampler = new ProcSampler(gw.pid);
            sampler.start();
            const t0 = performance.now();
            const { done, errors } = await load(
              pool,
              headers,
              body,
              calls,
              concurrency,
              Date.now() + seconds * 1000,
              rec,
            );
            const wallS = (performance.now() - t0) / 1000;
            const usage = sampler.stop();
            const p: Phase = {
              scenario,
              tracing,
              calls: done,
              errors,
              rps: Math.round(done / wallS),
              latency: rec.summary(),
              cpuMsPerCall: done === 0 ? Number.NaN : (usage.cpuS * 1000) / done,
            };
            phases.push(p);
            process.stdout.write(
              `round ${round} ${scenario.padEnd(6)} tracing ${tracing.padEnd(3)}: ${p.calls} calls (${errors} errors), ` +
                `${p.rps} req/s, p50 ${p.latency.p50} ms, p99 ${p.latency.p99} ms, CPU ${p.cpuMsPerCall.toFixed(3)} ms/call\n`,
            );
          }
        } finally {
          await pool.close();
          await gw.stop();
        }
      }
    }
  } finally {
    await sink.close();
    await store.close();
    await upstream.stop();
  }
  process.stdout.write(`\nOTLP exports received: ${sink.exports()}\n\n`);
  process.stdout.write(
    '| scenario | tracing | calls | req/s | p50 ms | p99 ms | gateway CPU ms/call |\n| --- | --- | --- | --- | --- | --- | --- |\n',
  );
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  for (const scenario of scenarios) {
    const by = (t: 'off' | 'on') => phases.filter((p) => p.scenario === scenario && p.tracing === t);
    const row = (t: 'off' | 'on') => {
      const ps = by(t);
      return {
        calls: ps.reduce((a, p) => a + p.calls, 0),
        rps: median(ps.map((p) => p.rps)),
        p50: median(ps.map((p) => p.latency.p50)),
        p99: median(ps.map((p) => p.latency.p99)),
        cpu: median(ps.map((p) => p.cpuMsPerCall)),
      };
    };
    const off = row('off');
    const on = row('on');
    for (const [t, r] of [
      ['off', off],
      ['on', on],
    ] as const) {
      process.stdout.write(
        `| ${scenario} | ${t} | ${r.calls} | ${r.rps} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${r.cpu.toFixed(3)} |\n`,
      );
    }
    process.stdout.write(
      `| ${scenario} | on − off | | | ${(on.p50 - off.p50).toFixed(3)} | ${(on.p99 - off.p99).toFixed(3)} | ${(on.cpu - off.cpu).toFixed(3)} |\n`,
    );
  }
}

await main();
