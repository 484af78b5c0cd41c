import { writeFileSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import { createLedger, createLedgerOnRedis } from '../../../core/ledger/index.js';
import { LeasingLedger } from '../../../core/ledger/leasing.js';
import { PROCESS_ID } from '../../../core/ledger/owner.js';
import { openStore } from '../../../core/store/connection.js';
import { overriding } from '../../support/fakes.js';

/**
 * A separate OS process for the lease race tests: its own store connection and lease manager, CALLS calls of
 * MSAT each (admit → settle at the bound), PARALLEL at a time. Reports {ok, refused, charged} when done
 * (after returning its leases), and — with W_FOREVER or W_REPORT — every 50 ms (W_FOREVER: until it is killed;
 * W_SNAPSHOT: on 'freeze', while it holds a lease, it writes its exact counts to that file and stops dead). With W_HOLD it first
 * reports {holding: true} and keeps its lease (and unreported calls) until the parent sends 'stop'.
 */
const env = process.env;
// W_CLUSTER: 'host:port,host:port,…' of a Redis Cluster (the ledger on an ioredis Cluster client).
const inner = env.W_CLUSTER
  ? await createLedgerOnRedis(
      new Cluster(
        env.W_CLUSTER.split(',').map((n) => ({ host: n.split(':')[0]!, port: Number(n.split(':')[1]) })),
        { redisOptions: { maxRetriesPerRequest: 1 } },
      ),
      env.W_PREFIX!,
      { warn: () => {} },
    )
  : await createLedger(
      openStore(
        env.W_REDIS_URL
          ? { redisUrl: env.W_REDIS_URL, redisPrefix: env.W_PREFIX! }
          : { dataDir: env.W_DATA_DIR!, sqliteFile: 'ledger.db' },
      ),
      { warn: () => {} },
    );
await inner.heartbeat(PROCESS_ID);
// When each lease step began, and the latest one whose answer came back: a call settled before that step
// began is reported (the kill test's bound on what a killed process can lose).
let ackedStepStart = 0;
const observed = overriding(inner, {
  lease: async (input) => {
    const began = Date.now();
    const r = await inner.lease(input);
    ackedStepStart = Math.max(ackedStepStart, began);
    return r;
  },
});
const ledger = new LeasingLedger(observed, {
  flushMs: Number(env.W_FLUSH_MS ?? 20),
  idleMs: Number(env.W_IDLE_MS ?? 300),
  ttlMs: Number(env.W_TTL_MS ?? 5000),
  recallWaitMs: 3000,
});
const calls = Number(env.W_CALLS ?? 1e9);
const msat = Number(env.W_MSAT);
const limits = {
  requestsPerMinute: 1_000_000,
  tokensPerHour: 1_000_000_000,
  concurrent: Number(env.W_CONCURRENT ?? 1_000_000),
};
let ok = 0;
/** Calls open now (admitted, not yet settled), the most ever open at once, refusals for concurrency. */
let open = 0;
let maxOpen = 0;
let concurrentRefused = 0;
// W_COUNTER (a Redis key at W_COUNTER_URL): the calls open in all the processes together, counted inside
// each call's admit…settle interval (so never more than were really open); the most seen is reported.
const counter = env.W_COUNTER ? new Redis(env.W_COUNTER_URL!) : undefined;
let maxShared = 0;
let refused = 0;
let charged = 0;
let n = 0;
const forever = env.W_FOREVER === '1';
if (forever || env.W_REPORT === '1')
  setInterval(() => process.send?.({ ok, refused, charged, leases: ledger.stats().leases }), 50).unref();
/** When each answered call was settled (W_FOREVER: for the freeze snapshot). */
const settledAt: number[] = [];
if (env.W_SNAPSHOT) {
  // 'freeze' (kill -9 test): write what this process answered and has not yet reported, synchronously, then
  // stop dead (no step, no timer runs again) until the parent kills it. A step already sent may still land.
  process.on('message', (m) => {
    // Only while it holds a lease (the parent asks again): the test kills a process holding a slice.
    if (m !== 'freeze' || ledger.stats().leases === 0) return;
    const since = settledAt.filter((t) => t >= ackedStepStart).length;
    const st = ledger.stats();
    writeFileSync(
      env.W_SNAPSHOT!,
      JSON.stringify({
        processId: PROCESS_ID,
        ok,
        charged,
        queued: st.queuedCalls,
        granted: st.grantedMsat,
        since,
      }),
    );
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  });
}

async function lane(): Promise<void> {
  while (n < calls) {
    n++;
    const a = await ledger.admit({
      credential: { apiKey: env.W_API_KEY! },
      requestId: `c~${PROCESS_ID}~${n}`,
      model: 'm',
      maxMsat: msat,
      minMsat: msat,
      expiresInMs: Number(env.W_LEASE_MS ?? 600_000),
      limits,
    });
    if (!a.ok) {
      refused++;
      if (a.code === 'rate_limit_exceeded' && a.rateLimit.type === 'concurrent_requests') concurrentRefused++;
      if (forever) await new Promise((r) => setTimeout(r, 5));
      continue;
    }
    open++;
    maxOpen = Math.max(maxOpen, open);
    if (counter) maxShared = Math.max(maxShared, await counter.incr(env.W_COUNTER!));
    // W_DELAY_MS: the upstream call's duration (the call stays open in memory meanwhile).
    if (env.W_DELAY_MS) await new Promise((r) => setTimeout(r, Number(env.W_DELAY_MS)));
    if (counter) await counter.decr(env.W_COUNTER!);
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
    open--;
    if (s.ok) {
      if (env.W_SNAPSHOT) settledAt.push(Date.now());
      ok++;
      charged += s.chargedMsat;
    }
  }
}
if (env.W_GO === '1') {
  // Start together with the others: say ready, wait for 'go' (process start-up takes a while).
  const go = new Promise<void>((resolve) => process.on('message', (m) => m === 'go' && resolve()));
  process.send?.({ ok, refused, charged, ready: true });
  await go;
}
await Promise.all(Array.from({ length: Number(env.W_PARALLEL ?? 16) }, lane));
if (env.W_HOLD === '1') {
  // Keep the lease (and the calls not reported yet) until the parent says stop.
  process.send?.({ ok, refused, charged, holding: true });
  await new Promise<void>((resolve) => process.on('message', (m) => m === 'stop' && resolve()));
}
await ledger.close();
counter?.disconnect();
process.send?.({ ok, refused, charged, maxOpen, maxShared, concurrentRefused, done: true });
process.exit(0);
