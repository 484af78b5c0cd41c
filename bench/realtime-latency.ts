import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HttpEngine, loadConfig } from '../core/config.js';
import { createLogger } from '../core/log.js';
import { startGateway } from '../core/server.js';
import { startMockUpstream } from './upstream/mock-upstream.js';
import {
  openRealtime,
  type RawRealtimeClient,
  REALTIME_MODELS,
  REALTIME_PRICING_ENV,
  userText,
} from './upstream/realtime-rig.js';

/**
 * `npx tsx bench/realtime-latency.ts [--samples 2000] [--responses 20] [--deltas 500] [--engines node,uws]`: what
 * the gateway adds to each relayed Realtime event, against a direct connection to the mock provider's Realtime
 * double. Bounded: at most 20,000 samples and 200 responses a path, and 120 s a path.
 *
 * - Round trip: one client, one event at a time: `conversation.item.create` → the double's
 *   `conversation.item.created` (through the gateway: client → gateway → double → gateway → client, the money
 *   check of the event included). p50/p90/p99 per path; the gateway's share is the difference to the direct path.
 * - Stream: responses of `--deltas` text deltas sent at once by the double: ms from `response.create` to the
 *   client's `response.done`; the gateway's difference to the direct path ÷ the deltas is what relaying one
 *   event of a streamed response costs (the response's settlement runs after its `response.done` is relayed).
 *
 * Client, double and gateway share this process (one event loop), so the gateway's CPU per event is in the figures
 * in full; SQLite in a temp folder. The first 10 % of samples are a warm-up and not counted. Prints one JSON report.
 */

function arg(name: string, fallback: number, max: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? undefined : Number(process.argv[i + 1]);
  return Math.min(v !== undefined && Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback, max);
}
const SAMPLES = arg('samples', 2000, 20_000);
const RESPONSES = arg('responses', 20, 200);
const DELTAS = arg('deltas', 500, 5000);
const PATH_LIMIT_MS = 120_000;
const enginesArg = process.argv.indexOf('--engines');
const ENGINES = (enginesArg === -1 ? 'node,uws' : (process.argv[enginesArg + 1] ?? '')).split(
  ',',
) as HttpEngine[];

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
const r3 = (v: number) => Math.round(v * 1000) / 1000;
function summary(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  return { n: s.length, p50: r3(pct(s, 50)), p90: r3(pct(s, 90)), p99: r3(pct(s, 99)), mean: r3(mean) };
}

/** The time the next event of `type` arrives (read from the frame's text, as relayed: no parse). */
function arrival(c: RawRealtimeClient, type: string): Promise<number> {
  const needle = `"type":"${type}"`;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      c.ws.off('message', on);
      reject(new Error(`no ${type} within 10 s`));
    }, 10_000);
    const on = (data: unknown) => {
      if (!String(data).includes(needle)) return;
      const t = performance.now();
      clearTimeout(timer);
      c.ws.off('message', on);
      resolve(t);
    };
    c.ws.on('message', on);
  });
}

async function roundTrips(c: RawRealtimeClient): Promise<number[]> {
  const out: number[] = [];
  const warm = Math.ceil(SAMPLES / 10);
  const stop = Date.now() + PATH_LIMIT_MS / 2;
  const item = userText('ping');
  for (let i = 0; i < SAMPLES + warm && Date.now() < stop; i++) {
    const arrived = arrival(c, 'conversation.item.created');
    const t0 = performance.now();
    c.send(item);
    const t1 = await arrived;
    if (i >= warm) out.push(t1 - t0);
  }
  return out;
}

/** ms from `response.create` to the `response.done` of a response of DELTAS deltas sent at once. */
async function stream(c: RawRealtimeClient): Promise<number[]> {
  const out: number[] = [];
  const stop = Date.now() + PATH_LIMIT_MS / 2;
  for (let i = 0; i < RESPONSES + 1 && Date.now() < stop; i++) {
    const done = arrival(c, 'response.done');
    const t0 = performance.now();
    c.send({ type: 'response.create' });
    const t1 = await done;
    // The first response is a warm-up.
    if (i > 0) out.push(t1 - t0);
  }
  return out;
}

const upstream = await startMockUpstream();
upstream.realtime.behaviour.textTokens = DELTAS;
const dir = mkdtempSync(join(tmpdir(), 'rt-lat-'));
const models = join(dir, 'models.json');
writeFileSync(models, JSON.stringify(REALTIME_MODELS));

const report: Record<string, unknown> = {
  samples: SAMPLES,
  responses: RESPONSES,
  deltas: DELTAS,
  node: process.version,
};

// Direct: the double itself (it asks for no key).
{
  const direct = await openRealtime(`127.0.0.1:${upstream.port}`, 'none', { record: false });
  report.direct = {
    roundTripMs: summary(await roundTrips(direct)),
    responseMs: summary(await stream(direct)),
  };
  direct.ws.close();
}

for (const engine of ENGINES) {
  const data = mkdtempSync(join(dir, `${engine}-`));
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    HTTP_ENGINE: engine,
    DATA_DIR: data,
    MODELS_PATH: models,
    UPSTREAM_BASE_URL: upstream.url,
    LOG_LEVEL: 'error',
    ...REALTIME_PRICING_ENV,
  });
  const gateway = await startGateway({ config, log: createLogger('error'), awaitCatalog: true });
  const ledger = gateway.services.ledger!;
  const dep = await ledger.createKeyFromDeposit({
    tokenHash: randomBytes(32).toString('hex'),
    amountMsat: 1_000_000_000,
  });
  if (!dep.ok) throw new Error('funding failed');
  const c = await openRealtime(`127.0.0.1:${gateway.port}`, dep.apiKey, { record: false });
  report[`gateway_${gateway.engine}`] = {
    roundTripMs: summary(await roundTrips(c)),
    responseMs: summary(await stream(c)),
  };
  c.ws.close();
  await gateway.close(5000);
}

const d = report.direct as { roundTripMs: { p50: number; p99: number }; responseMs: { p50: number } };
const added: Record<string, unknown> = {};
for (const [k, v] of Object.entries(report)) {
  if (!k.startsWith('gateway_')) continue;
  const g = v as typeof d;
  added[k] = {
    roundTripP50Ms: r3(g.roundTripMs.p50 - d.roundTripMs.p50),
    roundTripP99Ms: r3(g.roundTripMs.p99 - d.roundTripMs.p99),
    perStreamedDeltaP50Us: r3(((g.responseMs.p50 - d.responseMs.p50) / DELTAS) * 1000),
  };
}
report.addedByGateway = added;
console.log(JSON.stringify(report, null, 2));
await upstream.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
