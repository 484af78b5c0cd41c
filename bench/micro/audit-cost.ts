import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AuditLog } from '../../core/audit/audit-log.js';
import { benchSettle, LIMITS } from './ledger-calls.js';
import { benchAuditRecord, redisCpuMicros, withFundedRedisLedger } from './redis-ledger-bench.js';

/**
 * Redis CPU of the paid call's money and audit writes, per call: admit, settle (with the call's audit
 * record) and the audit log's own writes, in separate phases on one hot account (CONFIG RESETSTAT before
 * each, so run it against a Redis nobody else uses). Prints INFO commandstats (usec_per_call per command)
 * and the Redis main thread's CPU per call of each phase.
 *   REDIS_URL=redis://127.0.0.1:6391 npx tsx bench/micro/audit-cost.ts [-- --n 5000] [--no-record]
 */
const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const N = arg('n', 5000);
/** `--no-record`: settle without the audit record (what the settle script costs with no audit write at all). */
const NO_RECORD = process.argv.includes('--no-record');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6391';
const silent = { warn() {}, info() {}, error() {}, debug() {} } as never;

async function phase(r: Redis, label: string, n: number, run: () => Promise<void>): Promise<void> {
  await r.config('RESETSTAT');
  const cpu0 = await redisCpuMicros(r);
  await run();
  const cpu = (await redisCpuMicros(r)) - cpu0;
  const stats = [
    ...(await r.info('commandstats')).matchAll(
      /cmdstat_(\w+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/g,
    ),
  ]
    .filter((m) => !['config', 'info'].includes(m[1]!))
    .map((m) => `${m[1]} ${m[2]}× ${m[4]} µs (${(Number(m[3]) / n).toFixed(1)} µs/call)`);
  console.log(
    `${label.padEnd(16)} server CPU ${(cpu / n).toFixed(1).padStart(6)} µs/call | ${stats.join(' | ')}`,
  );
}

async function main(): Promise<void> {
  await withFundedRedisLedger(REDIS_URL, 'acost', async ({ stats, conn, ledger, apiKey, accountId }) => {
    const audit = new AuditLog(conn, { retentionDays: 30, log: silent, flushMs: 3_600_000 });
    try {
      const admit = async (requestId: string) => {
        const a = await ledger.admit({
          credential: { apiKey },
          requestId,
          model: 'm',
          clientIp: '10.0.0.1',
          maxMsat: 5000,
          minMsat: 100,
          expiresInMs: 60_000,
          limits: LIMITS,
        });
        if (!a.ok) throw new Error(a.code);
      };
      await admit('warm');
      for (let round = 1; round <= 2; round++) {
        const tag = `${round}-${randomBytes(3).toString('hex')}`;
        await phase(stats, `r${round} admit`, N, async () => {
          for (let i = 0; i < N; i++) await admit(`${tag}-${i}`);
        });
        await phase(stats, `r${round} settle`, N, async () => {
          for (let i = 0; i < N; i++) {
            const requestId = `${tag}-${i}`;
            await benchSettle(ledger, accountId, requestId, {
              description: 'm: 10 prompt + 20 completion tokens',
              ...SETTLE_AUDIT(requestId, apiKey),
            });
            RECORD(audit, requestId, apiKey);
          }
        });
        await phase(stats, `r${round} audit flush`, N, () => audit.flush());
      }
    } finally {
      await audit.close();
    }
  });
}

// --- how the gateway hands the call's audit record over: with the settle step (core/audit callAuditRecord).
// Before (commit aa464f3) this was the ledger's own trail (`audit: {endpoint, method, userAgent,
// responseStatus}`) plus `audit.record(...)` per call, flushed in batches (two XADDs per record).
const SETTLE_AUDIT = (requestId: string, apiKey: string) =>
  NO_RECORD
    ? {}
    : {
        auditRecord: benchAuditRecord(apiKey, requestId),
      };
function RECORD(_audit: AuditLog, _requestId: string, _apiKey: string): void {}

await main();
