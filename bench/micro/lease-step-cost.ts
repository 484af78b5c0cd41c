import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { callAuditRecord } from '../../core/audit/audit-log.js';
import { createLedger } from '../../core/ledger/index.js';
import type { LeaseCall, Ledger } from '../../core/ledger/types.js';
import { openStore } from '../../core/store/connection.js';

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
const LIMITS = { requestsPerMinute: 1e12, tokensPerHour: 1e12, concurrent: 1e9 };

async function cpuMicros(r: Redis): Promise<number> {
  const info = await r.info('cpu');
  const f = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (f('used_cpu_user_main_thread') + f('used_cpu_sys_main_thread')) * 1e6;
}

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
    auditRecord: callAuditRecord({
      atMs,
      requestId,
      subject: { credential: { apiKey } },
      endpoint: '/v1/chat/completions',
      method: 'POST',
      ip: '10.0.0.1',
      userAgent: 'bench/1',
      costMsat: 0,
      status: 200,
    }),
    atMs,
  };
}

async function main(): Promise<void> {
  const stats = new Redis(REDIS_URL);
  const prefix = `lcost${randomBytes(4).toString('hex')}`;
  const conn = openStore({ redisUrl: REDIS_URL, redisPrefix: prefix });
  try {
    const ledger: Ledger = await createLedger(conn, { warn: () => {} });
    const d = await ledger.createKeyFromDeposit({
      tokenHash: randomBytes(32).toString('hex'),
      amountMsat: 1e15,
    });
    if (!d.ok) throw new Error(d.code);
    const apiKey = d.apiKey;
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
      const cpu0 = await cpuMicros(stats);
      for (const b of batches) await step(b);
      const cpu = (await cpuMicros(stats)) - cpu0;
      const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await stats.info('commandstats'));
      const n = STEPS * BATCH;
      console.log(
        `round ${round}: ${STEPS} steps × ${BATCH} calls: Redis main thread ${(cpu / n).toFixed(2)} µs a call, ` +
          `EVALSHA ${(Number(m?.[2]) / Number(m?.[1])).toFixed(0)} µs a step (${(Number(m?.[2]) / n).toFixed(2)} µs a call)`,
      );
    }
  } finally {
    let cursor = '0';
    do {
      const [next, keys] = await stats.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) await stats.del(k);
    } while (cursor !== '0');
    await conn.close();
    stats.disconnect();
  }
}

await main();
