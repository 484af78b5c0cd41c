import { createLedger } from '../../../core/ledger/index.js';
import { LeasingLedger } from '../../../core/ledger/leasing.js';
import { PROCESS_ID } from '../../../core/ledger/owner.js';
import { openStore } from '../../../core/store/connection.js';

/**
 * A separate OS process for the lease race tests: its own store connection and lease manager, CALLS calls of
 * MSAT each (admit → settle at the bound), PARALLEL at a time. Reports {ok, refused, charged} when done
 * (after returning its leases), or — with W_FOREVER — every 50 ms until it is killed. With W_HOLD it first
 * reports {holding: true} and keeps its lease (and unreported calls) until the parent sends 'stop'.
 */
const env = process.env;
const conn = openStore(
  env.W_REDIS_URL
    ? { redisUrl: env.W_REDIS_URL, redisPrefix: env.W_PREFIX! }
    : { dataDir: env.W_DATA_DIR!, sqliteFile: 'ledger.db' },
);
const inner = await createLedger(conn, { warn: () => {} });
await inner.heartbeat(PROCESS_ID);
const ledger = new LeasingLedger(inner, {
  flushMs: Number(env.W_FLUSH_MS ?? 20),
  idleMs: Number(env.W_IDLE_MS ?? 300),
  ttlMs: Number(env.W_TTL_MS ?? 5000),
  recallWaitMs: 3000,
});
const calls = Number(env.W_CALLS ?? 1e9);
const msat = Number(env.W_MSAT);
const limits = { requestsPerMinute: 1_000_000, tokensPerHour: 1_000_000_000, concurrent: 1_000_000 };
let ok = 0;
let refused = 0;
let charged = 0;
let n = 0;
const forever = env.W_FOREVER === '1';
if (forever) setInterval(() => process.send?.({ ok, refused, charged }), 50);

async function lane(): Promise<void> {
  while (n < calls) {
    n++;
    const a = await ledger.admit({
      credential: { apiKey: env.W_API_KEY! },
      requestId: `c~${PROCESS_ID}~${n}`,
      model: 'm',
      maxMsat: msat,
      minMsat: msat,
      leaseMs: Number(env.W_LEASE_MS ?? 600_000),
      limits,
    });
    if (!a.ok) {
      refused++;
      if (forever) await new Promise((r) => setTimeout(r, 5));
      continue;
    }
    const s = await ledger.settle({
      accountId: a.accountId,
      requestId: a.requestId,
      costMsat: msat,
      promptTokens: 1,
      completionTokens: 1,
      model: 'm',
      description: 'd',
      estimated: false,
    });
    if (s.ok) {
      ok++;
      charged += s.chargedMsat;
    }
  }
}
await Promise.all(Array.from({ length: Number(env.W_PARALLEL ?? 16) }, lane));
if (env.W_HOLD === '1') {
  // Keep the lease (and the calls not reported yet) until the parent says stop.
  process.send?.({ ok, refused, charged, holding: true });
  await new Promise<void>((resolve) => process.on('message', (m) => m === 'stop' && resolve()));
}
await ledger.close();
process.send?.({ ok, refused, charged, done: true });
process.exit(0);
