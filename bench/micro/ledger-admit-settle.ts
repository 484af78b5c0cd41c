import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createLedger } from '../../core/ledger/index.js';
import { DEFAULT_LEASE_OPTIONS, LeasingLedger } from '../../core/ledger/leasing.js';
import type { Ledger } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { deleteKeys } from '../../scripts/lib/redis-cleanup.js';
import { benchAdmitSettle } from './ledger-calls.js';

/**
 * Micro-benchmark: admit+settle pairs per second per store, with 1 client and 64 concurrent clients,
 * printed next to a plain Redis INCRBY round trip measured in the same run (the floor for "one store
 * round trip"). A pair is two round trips, so a ratio near 0.5 of INCRBY means the scripts cost little
 * beyond the network. SQLite runs with the ledger's default durability (admit/settle commit without fsync,
 * at most 1 s unsynced; docs/ledger.md "Durability"); `--sqlite-full` syncs every commit instead.
 * Usage: npm run bench:ledger [-- --seconds 2] [-- --sqlite-full]
 */
const argSeconds = process.argv.indexOf('--seconds');
const SECONDS = argSeconds > 0 ? Number(process.argv[argSeconds + 1]) : 2;
const REDIS_URL = process.env.REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MAX_OPS = 2_000_000;
const SQLITE_HOT_SYNC = process.argv.includes('--sqlite-full') ? 'full' : 'normal';

/** Runs `op` from `clients` concurrent loops for SECONDS (bounded by MAX_OPS); returns ops/s. */
async function measure(clients: number, op: (i: number) => Promise<void>): Promise<number> {
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end && done < MAX_OPS) {
        await op(done++);
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

async function pairs(ledger: Ledger, clients: number): Promise<number> {
  const d = await ledger.createKeyFromDeposit({
    tokenHash: randomBytes(32).toString('hex'),
    amountMsat: 1e15,
  });
  if (!d.ok) throw new Error(d.code);
  const tag = randomBytes(4).toString('hex');
  return measure(clients, async (i) => {
    const requestId = `${tag}-${i}`;
    await benchAdmitSettle(ledger, d.apiKey, requestId);
  });
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(9);

async function main(): Promise<void> {
  const ref = new Redis(REDIS_URL);
  const refKey = `bench:${randomBytes(4).toString('hex')}:incr`;
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const conns: StoreConnection[] = [
    openStore({ dataDir: dir, sqliteFile: 'ledger.db' }),
    openStore({ redisUrl: REDIS_URL, redisPrefix: prefix }),
  ];
  try {
    console.log(
      `ledger admit+settle micro-benchmark (${SECONDS}s per cell, Node ${process.version}, ` +
        `sqlite hot-path sync ${SQLITE_HOT_SYNC})`,
    );
    const incr1 = await measure(1, async () => void (await ref.incrby(refKey, 1)));
    const incr64 = await measure(64, async () => void (await ref.incrby(refKey, 1)));
    console.log(
      `reference  Redis INCRBY round trips/s     1 client: ${fmt(incr1)}   64 clients: ${fmt(incr64)}`,
    );
    for (const conn of conns) {
      const ledger = await createLedger(conn, { warn: () => {}, sqliteHotSync: SQLITE_HOT_SYNC });
      const p1 = await pairs(ledger, 1);
      const p64 = await pairs(ledger, 64);
      console.log(
        `${conn.kind.padEnd(7)}    admit+settle pairs/s       1 client: ${fmt(p1)}   64 clients: ${fmt(p64)}` +
          `   ratio to INCRBY: ${(p1 / incr1).toFixed(3)} / ${(p64 / incr64).toFixed(3)}`,
      );
      // The same pairs through the credit-lease manager (core/ledger/leasing.ts, the gateway's default):
      // admitted and settled in memory, reported in batched lease steps.
      const leased = new LeasingLedger(ledger, DEFAULT_LEASE_OPTIONS);
      const l1 = await pairs(leased, 1);
      const l64 = await pairs(leased, 64);
      await leased.flushAll(true);
      const audit = await ledger.checkConservation();
      console.log(
        `${conn.kind.padEnd(7)}    leased pairs/s             1 client: ${fmt(l1)}   64 clients: ${fmt(l64)}` +
          `   × per-call: ${(l1 / p1).toFixed(1)} / ${(l64 / p64).toFixed(1)}   audit ${audit.ok ? 'clean' : 'BREACH'}`,
      );
    }
  } finally {
    await ref.del(refKey);
    const r = conns[1];
    if (r?.kind === 'redis') await deleteKeys(r.redis, `${prefix}:*`);
    for (const c of conns) await c.close();
    ref.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
