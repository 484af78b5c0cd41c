import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { benchAdmit, benchSettle } from './ledger-calls.js';
import { redisCpuMicros, withFundedRedisLedger } from './redis-ledger-bench.js';

/**
 * Server-side cost of each Redis ledger script: runs admits, then settles, then admit+release, in rounds
 * on one hot account, and reads the EVALSHA time per call from INFO commandstats after each phase
 * (CONFIG RESETSTAT before). Phases run one at a time, so the figure belongs to one script. Later rounds
 * show whether the cost grows with the account's history. Use a Redis nobody else is using:
 *   REDIS_URL=redis://127.0.0.1:6391 npx tsx bench/micro/ledger-profile.ts [-- --n 5000 --rounds 3]
 */
const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const N = arg('n', 5000);
const ROUNDS = arg('rounds', 3);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function phase(r: Redis, label: string, n: number, op: (i: number) => Promise<void>): Promise<void> {
  await r.config('RESETSTAT');
  const cpu0 = await redisCpuMicros(r);
  const t = performance.now();
  for (let i = 0; i < n; i++) await op(i);
  const ms = performance.now() - t;
  const cpu = (await redisCpuMicros(r)) - cpu0;
  const info = await r.info('commandstats');
  const m = /cmdstat_(evalsha|incrby):calls=(\d+),usec=\d+,usec_per_call=([\d.]+)/.exec(info);
  const calls = Number(m?.[2] ?? n);
  console.log(
    `${label.padEnd(22)} in-command ${m?.[3]?.padStart(6) ?? '     ?'} µs/call   server CPU ` +
      `${(cpu / calls).toFixed(1).padStart(6)} µs/call   client ${((ms * 1000) / n).toFixed(0).padStart(5)} µs/op`,
  );
}

async function main(): Promise<void> {
  await withFundedRedisLedger(REDIS_URL, 'prof', async ({ stats, prefix, ledger, apiKey }) => {
    const admit = (requestId: string) => benchAdmit(ledger, apiKey, requestId);
    const accountId = await admit('warm');
    const refKey = `${prefix}:incr`;
    await phase(stats, 'reference INCRBY', N, async () => void (await stats.incrby(refKey, 1)));
    for (let round = 1; round <= ROUNDS; round++) {
      const tag = `${round}-${randomBytes(3).toString('hex')}`;
      await phase(stats, `round ${round} admit`, N, async (i) => void (await admit(`${tag}-${i}`)));
      await phase(stats, `round ${round} settle`, N, (i) => benchSettle(ledger, accountId, `${tag}-${i}`));
      await phase(stats, `round ${round} admit+release`, N, async (i) => {
        const id = `${tag}-r${i}`;
        await admit(id);
        const x = await ledger.release({ accountId, requestId: id });
        if (!x.ok) throw new Error(x.code);
      });
    }
  });
}

await main();
