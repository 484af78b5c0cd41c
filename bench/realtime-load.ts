import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/log.js';
import { startGateway } from '../core/server.js';
import { startMockUpstream } from './upstream/mock-upstream.js';

/**
 * `npx tsx bench/realtime-load.ts [--sessions 200] [--seconds 60] [--pace-ms 500]`: the load slice for Realtime. One
 * gateway process (node:http, SQLite in a temp folder) in front of the mock provider's Realtime double; N
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
const SECONDS = Math.min(arg('seconds', 60), 600);
/** Pause between a response's gateway.cost and the next turn, ms (a voice session's pace). */
const PACE_MS = arg('pace-ms', 500);
const FUND_MSAT = 50_000_000;
// msats per token (BTC $100,000, fees 1): text in 4, cached text 1, audio in 32, cached audio 2, out 16, audio out 64.
const RATES = { text: 4, cachedText: 1, audio: 32, cachedAudio: 2, out: 16, outAudio: 64 };

interface Counts {
  text_tokens?: number;
  audio_tokens?: number;
}
interface BillUsage {
  input_token_details?: Counts & { cached_tokens_details?: Counts };
  output_token_details?: Counts;
}

function billMsat(u: BillUsage): number {
  const d = u.input_token_details ?? {};
  const c = d.cached_tokens_details ?? {};
  const o = u.output_token_details ?? {};
  const n = (v: number | undefined) => v ?? 0;
  return (
    (n(d.text_tokens) - n(c.text_tokens)) * RATES.text +
    n(c.text_tokens) * RATES.cachedText +
    (n(d.audio_tokens) - n(c.audio_tokens)) * RATES.audio +
    n(c.audio_tokens) * RATES.cachedAudio +
    n(o.text_tokens) * RATES.out +
    n(o.audio_tokens) * RATES.outAudio
  );
}

const dir = mkdtempSync(join(tmpdir(), 'rt-load-'));
const upstream = await startMockUpstream();
const models = join(dir, 'models.json');
writeFileSync(
  models,
  JSON.stringify({
    models: [
      {
        id: 'mock-realtime',
        pricing: {
          prompt: '0.000004',
          input_cache_read: '0.000001',
          input_audio: '0.000032',
          input_audio_cache_read: '0.000002',
          completion: '0.000016',
          output_audio: '0.000064',
        },
      },
    ],
  }),
);
const config = loadConfig({
  HOST: '127.0.0.1',
  PORT: '0',
  HTTP_ENGINE: 'node',
  DATA_DIR: dir,
  MODELS_PATH: models,
  UPSTREAM_BASE_URL: upstream.url,
  LOG_LEVEL: 'error',
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '0',
  BTC_USD_PRICE: '100000',
  EXCHANGE_FEE: '1',
  UPSTREAM_PROVIDER_FEE: '1',
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
  const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/v1/realtime?model=mock-realtime`, {
    headers: { authorization: `Bearer ${dep.apiKey}` },
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const end = Date.now() + SECONDS * 1000;
  let turn = i;
  const next = () => {
    if (Date.now() >= end) {
      ws.close();
      return;
    }
    turn++;
    if (turn % 2 === 0) {
      ws.send(
        JSON.stringify({
          type: 'conversation.item.create',
          item: {
            type: 'message',
            role: 'user',
            content: [{ type: 'input_text', text: 'Hello there, how are you?' }],
          },
        }),
      );
      ws.send(JSON.stringify({ type: 'response.create' }));
    } else {
      ws.send(
        JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.alloc(48_000).toString('base64') }),
      );
      ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
      ws.send(JSON.stringify({ type: 'response.create', response: { output_modalities: ['audio'] } }));
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
const runs = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => session(i)));
const wallS = (Date.now() - t0) / 1000;
// Every session closed by its client: wait until nothing is reserved any more.
const failures: string[] = [];
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
  .reduce((s, b) => s + billMsat(b.usage as BillUsage), 0);
if (billed !== totalCharged) failures.push(`charged ${totalCharged} msats, the provider billed ${billed}`);
clearInterval(sampler);
const audit = await ledger.checkConservation();
if (!audit.ok) failures.push(`ledger audit: ${JSON.stringify(audit.breaches)}`);
const report = {
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
