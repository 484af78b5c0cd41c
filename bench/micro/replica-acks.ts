import { randomBytes } from 'node:crypto';
import { createLedger } from '../../core/ledger/index.js';
import { DEFAULT_LEASE_OPTIONS, LeasingLedger } from '../../core/ledger/leasing.js';
import type { Ledger } from '../../core/ledger/types.js';
import { openStore } from '../../core/store/connection.js';
import { readRedisConfig } from '../../core/store/redis-config.js';
import { startRedisCluster } from '../../scripts/lib/redis-topology.js';
import { benchAdmitSettle } from './ledger-calls.js';

/**
 * Micro-benchmark: what the replica-acknowledgement rule (WAIT after each money write, core/store/replica-acks.ts)
 * costs, on a 3-master, 3-replica Redis Cluster started here: admit+settle pairs per second with the rule on
 * (REDIS_MIN_REPLICA_ACKS auto = 1) and off (0), per call and through credit leases (the gateway's default,
 * where one lease step carries many calls), 1 and 64 clients; on/off cells alternate, `--rounds` times.
 * Usage: npx tsx bench/micro/replica-acks.ts [-- --seconds 2 --rounds 2]
 */
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const SECONDS = arg('--seconds', 2);
const ROUNDS = arg('--rounds', 2);
const MAX_OPS = 2_000_000;

async function pairs(ledger: Ledger, clients: number): Promise<number> {
  const d = await ledger.createKeyFromDeposit({
    tokenHash: randomBytes(32).toString('hex'),
    amountMsat: 1e15,
  });
  if (!d.ok) throw new Error(d.code);
  const tag = randomBytes(4).toString('hex');
  const end = performance.now() + SECONDS * 1000;
  const start = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end && done < MAX_OPS) {
        const requestId = `${tag}-${done++}`;
        await benchAdmitSettle(ledger, d.apiKey, requestId);
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(7);

const topo = await startRedisCluster({ replicas: 1 });
try {
  const ledgers: Record<'on' | 'off', Ledger> = {} as never;
  for (const [mode, acks] of [
    ['on', ''],
    ['off', '0'],
  ] as const) {
    const prefix = `benchacks${randomBytes(4).toString('hex')}`;
    const conn = openStore({
      redis: readRedisConfig({ ...topo.env, REDIS_MIN_REPLICA_ACKS: acks }),
      redisPrefix: prefix,
    });
    if (conn.kind === 'redis') await conn.ready();
    ledgers[mode] = await createLedger(conn, { warn: () => {} });
  }
  console.log(`replica rule on/off, 3-master 3-replica cluster, ${SECONDS}s per cell, ${ROUNDS} rounds`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const clients of [1, 64]) {
      for (const leased of [false, true]) {
        const row: string[] = [];
        for (const mode of ['on', 'off'] as const) {
          const ledger = leased ? new LeasingLedger(ledgers[mode], DEFAULT_LEASE_OPTIONS) : ledgers[mode];
          row.push(`${mode} ${fmt(await pairs(ledger, clients))}`);
          if (leased) await (ledger as LeasingLedger).close();
        }
        console.log(
          `round ${round}  ${leased ? 'leased  ' : 'per call'}  ${String(clients).padStart(2)} clients  pairs/s  ${row.join('   ')}`,
        );
      }
    }
  }
} finally {
  await topo.stop();
}
process.exit(0);
