import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/log.js';
import { startGateway } from '../core/server.js';
import { startMockUpstream } from './upstream/mock-upstream.js';
import {
  billMsat,
  openRealtime,
  pcm,
  REALTIME_MODELS,
  REALTIME_PRICING_ENV,
  type RealtimeBillUsage,
  userText,
} from './upstream/realtime-rig.js';

/**
 * `npx tsx bench/realtime-load.ts [--sessions 200] [--seconds 60] [--pace-ms 500] [--opening 20] [--engine node|uws]`: the issue's
 * load slice for Realtime, bounded (at most 1,000 sessions and 600 s). One gateway (the engine asked for, SQLite
 * in a temp folder) in front of the mock provider's Realtime double (prices: bench/upstream/realtime-rig.ts); N
 * sessions, each on its own funded key, loop, one turn every `--pace-ms` after the last response, text turns (an item, a response) and audio turns (1 s appended,
 * committed, an audio response) for the given time. Samples the process RSS every 5 s, then closes every
 * session and checks the money: each key was charged exactly the sum of its session's `gateway.cost` events,
 * and all charges together equal the double's bills priced at the price book's rates (computed here by hand).
 * Prints one JSON report; exits 1 when a check fails. The clients and the double run in the same process, so
 * the RSS is an upper bound of the gateway's.
 */

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? undefined : Number(process.argv[i + 1]);
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : fallback;
}

const SESSIONS = Math.min(arg('sessions', 200), 1000);
const ENGINE = process.argv.includes('--engine')
  ? process.argv[process.argv.indexOf('--engine') + 1]
  : 'node';
if (ENGINE !== 'node' && ENGINE !== 'uws') throw new Error('--engine node|uws');
const SECONDS = Math.min(arg('seconds', 60), 600);
/** Pause between a response's gateway.cost and the next turn, ms (a voice session's pace). */
const PACE_MS = arg('pace-ms', 500);
/** Sessions opening at once (clients arrive over a ramp, not all in the same millisecond). */
const OPENING = arg('opening', 20);
let opening = 0;
const openWaiters: (() => void)[] = [];
async function openSlot(): Promise<() => void> {
  while (opening >= OPENING) await new Promise<void>((r) => openWaiters.push(r));
  opening++;
  return () => {
    opening--;
    openWaiters.shift()?.();
  };
}
const FUND_MSAT = 50_000_000;
const dir = mkdtempSync(join(tmpdir(), 'rt-load-'));
const upstream = await startMockUpstream();
const models = join(dir, 'models.json');
writeFileSync(models, JSON.stringify(REALTIME_MODELS));
const config = loadConfig({
  HOST: '127.0.0.1',
  PORT: '0',
  HTTP_ENGINE: ENGINE,
  DATA_DIR: dir,
  MODELS_PATH: models,
  UPSTREAM_BASE_URL: upstream.url,
  LOG_LEVEL: 'error',
  ...REALTIME_PRICING_ENV,
  REALTIME_SESSIONS_PER_IP: String(SESSIONS),
  RATE_LIMIT_CONCURRENT: String(SESSIONS),
});
const gateway = await startGateway({ config, log: createLogger('error'), awaitCatalog: true });
const ledger = gateway.services.ledger!;
const rss: number[] = [];
const sampler = setInterval(() => rss.push(Math.round(process.memoryUsage().rss / 1e6)), 5000);

interface Run {
  apiKey: string;
  charged: number;
  responses: number;
  closeCode: number | undefined;
}

async function session(i: number): Promise<Run> {
  const dep = await ledger.createKeyFromDeposit({
    tokenHash: randomBytes(32).toString('hex'),
    amountMsat: FUND_MSAT,
  });
  if (!dep.ok) throw new Error('funding failed');
  const run: Run = { apiKey: dep.apiKey, charged: 0, responses: 0, closeCode: undefined };
  const done = await openSlot();
  const { ws, send } = await openRealtime(`127.0.0.1:${gateway.port}`, dep.apiKey, { record: false }).finally(
    done,
  );
  const end = Date.now() + SECONDS * 1000;
  let turn = i;
  const next = () => {
    if (Date.now() >= end) {
      ws.close();
      return;
    }
    turn++;
    if (turn % 2 === 0) {
      send(userText('Hello there, how are you?'));
      send({ type: 'response.create' });
    } else {
      send({ type: 'input_audio_buffer.append', audio: pcm(1000) });
      send({ type: 'input_audio_buffer.commit' });
      send({ type: 'response.create', response: { output_modalities: ['audio'] } });
    }
  };
  ws.on('message', (data) => {
    const text = String(data);
    if (!text.includes('"gateway.cost"')) return;
    const e = JSON.parse(text) as { msats: number };
    run.charged += e.msats;
    run.responses++;
    setTimeout(next, PACE_MS);
  });
  const closed = new Promise<void>((resolve) => {
    ws.once('close', (code) => {
      run.closeCode = code;
      resolve();
    });
  });
  next();
  await closed;
  return run;
}

const t0 = Date.now();
const failures: string[] = [];
// A session refused at its upgrade is a failure of the run (with the refusal), not the end of it.
const runs = (
  await Promise.all(
    Array.from({ length: SESSIONS }, (_, i) =>
      session(i).catch((err: unknown) => {
        failures.push(`a session did not open: ${err instanceof Error ? err.message : String(err)}`);
        return undefined;
      }),
    ),
  )
).filter((r) => r !== undefined);
const wallS = (Date.now() - t0) / 1000;
// Every session closed by its client: wait until nothing is reserved any more.
let totalCharged = 0;
for (const r of runs) {
  let info = await ledger.getKeyInfo({ apiKey: r.apiKey });
  for (let i = 0; i < 200 && info !== null && info.usage.reservedMsat > 0; i++) {
    await new Promise((res) => setTimeout(res, 50));
    info = await ledger.getKeyInfo({ apiKey: r.apiKey });
  }
  const spent = FUND_MSAT - (info?.account.balanceMsat ?? 0);
  totalCharged += spent;
  if (info?.usage.reservedMsat !== 0)
    failures.push(`${r.apiKey.slice(0, 6)}… still reserves ${info?.usage.reservedMsat}`);
  if (spent !== r.charged)
    failures.push(`a key was charged ${spent}, its gateway.cost events say ${r.charged}`);
  if (r.closeCode !== 1000 && r.closeCode !== 1005) failures.push(`a session closed with ${r.closeCode}`);
}
const billed = upstream.realtime.stats.bills
  .filter((b) => b.kind === 'response')
  .reduce((s, b) => s + billMsat(b.usage as RealtimeBillUsage), 0);
if (billed !== totalCharged) failures.push(`charged ${totalCharged} msats, the provider billed ${billed}`);
clearInterval(sampler);
const audit = await ledger.checkConservation();
if (!audit.ok) failures.push(`ledger audit: ${JSON.stringify(audit.breaches)}`);
const report = {
  engine: gateway.engine,
  sessions: SESSIONS,
  seconds: SECONDS,
  wallS,
  responses: runs.reduce((s, r) => s + r.responses, 0),
  chargedMsat: totalCharged,
  billedMsat: billed,
  rssMb: rss,
  failures,
};
console.log(JSON.stringify(report, null, 2));
await gateway.close(5000);
await upstream.close();
rmSync(dir, { recursive: true, force: true });
process.exit(failures.length === 0 ? 0 : 1);
