import { randomUUID } from 'node:crypto';
import type { LeaseCall } from '../../core/ledger/types.js';
import { LIMITS } from './ledger-calls.js';
import { benchAuditRecord, redisCpuMicros, withFundedRedisLedger } from './redis-ledger-bench.js';

/**
 * Redis CPU of the credit-lease step (core/ledger/redis/lease-7.lua) per reported call: one hot key's lease,
 * `--steps` steps each reporting `--batch` calls with their audit records, as the lease manager sends them
 * under load (≈ 100 a step at 1,000 req/s). CONFIG RESETSTAT before each round, so run it against a Redis
 * nobody else uses. Prints the Redis main thread's CPU and EVALSHA's time per reported call.
 *   REDIS_URL=redis://127.0.0.1:6391 npx tsx bench/micro/lease-step-cost.ts [--steps 200] [--batch 100] [--rounds 3]
 */
const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const STEPS = arg('steps', 200);
const BATCH = arg('batch', 100);
const ROUNDS = arg('rounds', 3);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6391';

function call(apiKey: string, i: number): LeaseCall {
  const requestId = `r~abcdef012345~${randomUUID()}`;
  const atMs = Date.now();
  return {
    requestId,
    costMsat: 1234 + (i % 7),
    promptTokens: 10,
    completionTokens: 20,
    model: 'gpt-4o-mini',
    description: 'gpt-4o-mini: 10 prompt + 20 completion tokens',
    estimated: false,
    auditRecord: benchAuditRecord(apiKey, requestId, atMs),
    atMs,
  };
}

async function main(): Promise<void> {
  await withFundedRedisLedger(REDIS_URL, 'lcost', async ({ stats, ledger, apiKey }) => {
    const leaseId = `l~abcdef012345~${randomUUID()}`;
    let seq = 0;
    const step = async (calls: LeaseCall[]) => {
      seq += 1;
      const r = await ledger.lease({
        credential: { apiKey },
        leaseId,
        seq,
        wantMsat: 10_000_000,
        minMsat: 1,
        wantRequests: BATCH,
        usedRequests: calls.length,
        ttlMs: 60_000,
        limits: LIMITS,
        calls,
        close: false,
      });
      if (!r.ok) throw new Error(r.code);
    };
    await step([]);
    for (let round = 1; round <= ROUNDS; round++) {
      const batches = Array.from({ length: STEPS }, () =>
        Array.from({ length: BATCH }, (_, i) => call(apiKey, i)),
      );
      await stats.config('RESETSTAT');
      const cpu0 = await redisCpuMicros(stats);
      for (const b of batches) await step(b);
      const cpu = (await redisCpuMicros(stats)) - cpu0;
      const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await stats.info('commandstats'));
      const n = STEPS * BATCH;
      console.log(
        `round ${round}: ${STEPS} steps × ${BATCH} calls: Redis main thread ${(cpu / n).toFixed(2)} µs a call, ` +
          `EVALSHA ${(Number(m?.[2]) / Number(m?.[1])).toFixed(0)} µs a step (${(Number(m?.[2]) / n).toFixed(2)} µs a call)`,
      );
    }
  });
}

await main();
