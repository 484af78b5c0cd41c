import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { readRedisConfig } from '../../core/store/redis-config.js';
import { deleteKeys } from '../../scripts/lib/redis-cleanup.js';
import { startRedisCluster } from '../../scripts/lib/redis-topology.js';
import { freePort, startChild, waitForHttp } from '../lib/processes.js';
import type { RunningTarget, StreamsAccount } from './types.js';

/**
 * This gateway, built (`dist/`), as a child process: paid with `sk-` keys under fixed pricing on a fresh
 * store (a temp SQLite DATA_DIR, or Redis under a random REDIS_PREFIX, deleted afterwards). Keys are created
 * in the bench process through the ledger contract (`createKeyFromDeposit` with synthetic token hashes),
 * which is the same path a Cashu deposit takes after the wallet redeemed the token.
 */

/** `cluster`: a 3-master, 3-replica Redis Cluster started for the run (money writes wait for a replica). */
export type StoreKind = 'sqlite' | 'redis' | 'cluster';
export type Engine = 'uws' | 'node';

/** Fixed price per call, sats (FIXED_COST_PER_REQUEST); every call is charged this. */
export const COST_SATS = 1;
const FUNDING_MSAT = 1_000_000_000_000; // 1e9 sats: never the limit of a bench run

export interface BenchStore {
  kind: StoreKind;
  env: Record<string, string>;
  ledger: Ledger;
  /** Key 0 is the hot key; more are created on demand by `ensureKeys`. */
  keys: string[];
  ensureKeys(n: number): Promise<void>;
  newKey(): Promise<string>;
  close(): Promise<void>;
}

const tokenHash = (): string => randomBytes(32).toString('hex');

export async function openBenchStore(kind: StoreKind): Promise<BenchStore> {
  let conn: StoreConnection;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (kind === 'cluster') {
    const topo = await startRedisCluster({ replicas: 1 });
    const prefix = `bench-${randomBytes(6).toString('hex')}`;
    env = { ...topo.env, REDIS_PREFIX: prefix };
    conn = openStore({ redis: readRedisConfig(env), redisPrefix: prefix });
    if (conn.kind === 'redis') await conn.ready();
    cleanup = () => topo.stop();
  } else if (kind === 'redis') {
    const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    const prefix = `bench-${randomBytes(6).toString('hex')}`;
    conn = openStore({ redisUrl: url, redisPrefix: prefix });
    env = { REDIS_URL: url, REDIS_PREFIX: prefix };
    cleanup = async () => {
      if (conn.kind !== 'redis') return;
      // Delete everything under the random prefix (bounded SCAN rounds: the store holds only bench data).
      await deleteKeys(conn.redis, `${prefix}*`);
    };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'bench-gw-'));
    conn = openStore({ dataDir: dir });
    env = { DATA_DIR: dir };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  // Seeding only: the bench's own SQLite connection skips fsync (a per-connection pragma); the gateway's
  // connection keeps synchronous=FULL, so what is measured is unchanged.
  if (conn.kind === 'sqlite') conn.db.pragma('synchronous = OFF');
  const ledger = await createLedger(conn, kind !== 'sqlite' ? { prefix: env.REDIS_PREFIX! } : {});
  const newKey = async (): Promise<string> => {
    const r = await ledger.createKeyFromDeposit({
      tokenHash: tokenHash(),
      amountMsat: FUNDING_MSAT,
      name: 'bench',
    });
    if (!r.ok) throw new Error(`could not create a bench key: ${r.code}`);
    return r.apiKey;
  };
  const keys = [await newKey()];
  return {
    kind,
    env,
    ledger,
    keys,
    newKey,
    async ensureKeys(n) {
      // Bounded batches keep Redis pipelines and SQLite transactions moving without unbounded fan-out.
      while (keys.length < n) {
        const batch = Math.min(100, n - keys.length);
        keys.push(...(await Promise.all(Array.from({ length: batch }, newKey))));
      }
    },
    async close() {
      await ledger.close().catch(() => undefined);
      await cleanup();
      await conn.close();
    },
  };
}

/**
 * What every measured gateway process gets (bench targets, the soak): loopback on `port`, production mode, the
 * mock upstream with `upstreamConnections` (enough for the open-streams scenario; the default pool is 256),
 * fixed pricing at COST_SATS, and limits far above what a bench can offer (measure the work, not refusals).
 */
export function benchGatewayEnv(
  port: number,
  upstreamUrl: string,
  upstreamConnections: number,
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    UPSTREAM_BASE_URL: upstreamUrl,
    UPSTREAM_CONNECTIONS: String(upstreamConnections),
    FIXED_PRICING: 'true',
    FIXED_COST_PER_REQUEST: String(COST_SATS),
    RATE_LIMIT_REQUESTS_PER_MINUTE: '1000000000',
    RATE_LIMIT_TOKENS_PER_HOUR: '1000000000000',
    RATE_LIMIT_CONCURRENT: '1000000',
    LOG_LEVEL: 'warn',
  };
}

export function gatewayEntry(): string {
  return join(process.cwd(), 'dist/core/main.js');
}

export interface GatewayStart {
  engine: Engine;
  /** undefined: the bare relay (PIPELINE=relay, no store). */
  store: BenchStore | undefined;
  upstreamUrl: string;
  /** Extra node flags (the tracing preload for the per-stage breakdown). */
  nodeArgs?: string[];
  extraEnv?: Record<string, string>;
}

/**
 * Starts the gateway; one retry when the first start fails (observed once: the Redis ledger's first command
 * raced the connection and start-up stopped with store_unavailable). A second failure is reported.
 */
export async function startGatewayTarget(o: GatewayStart): Promise<RunningTarget> {
  try {
    return await startOnce(o);
  } catch (err) {
    process.stdout.write(
      `[bench] gateway start failed, retrying once: ${(err as Error).message.slice(0, 200)}\n`,
    );
    return startOnce(o);
  }
}

async function startOnce(o: GatewayStart): Promise<RunningTarget> {
  if (!existsSync(gatewayEntry())) throw new Error('dist/core/main.js is missing: run `npm run build`');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...benchGatewayEnv(port, o.upstreamUrl, 2048),
    HTTP_ENGINE: o.engine,
    ...(o.store ? o.store.env : { PIPELINE: 'relay' }),
    ...o.extraEnv,
  };
  // BENCH_NODE_ARGS: extra node flags for the gateway processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`
  // (a CPU profile of any target and scenario; summarise it with bench/profile/cpuprofile-summary.ts).
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = startChild(process.execPath, [...extra, ...(o.nodeArgs ?? []), gatewayEntry()], { env });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${baseUrl}/v1/models`, child);
  } catch (err) {
    await child.stop();
    throw err;
  }
  const store = o.store;
  const keyHeaders = store?.keys.map((k) => ({ authorization: `Bearer ${k}` }));
  return {
    baseUrl,
    pid: child.pid,
    headers(i, keyCount) {
      if (!keyHeaders || !store) return {};
      if (keyHeaders.length < store.keys.length) {
        for (let k = keyHeaders.length; k < store.keys.length; k++)
          keyHeaders.push({ authorization: `Bearer ${store.keys[k]}` });
      }
      return keyHeaders[
        keyCount === undefined || keyCount <= 1 ? 0 : i % Math.min(keyCount, keyHeaders.length)
      ]!;
    },
    streamsAccount: store ? () => streamsAccount(store) : undefined,
    stop: () => child.stop(),
  };
}

/** How long the settlement check waits for leases to report and return (LEASE_IDLE_MS + flushes + margin). */
const SETTLE_WAIT_MS = 5000;

async function streamsAccount(store: BenchStore): Promise<StreamsAccount> {
  const key = await store.newKey();
  const credential = { apiKey: key };
  const before = await store.ledger.getKeyInfo(credential);
  if (!before) throw new Error('the streams key is unknown right after its creation');
  return {
    headers: { authorization: `Bearer ${key}` },
    async verifySettled(calls) {
      // Read from the store directly: with credit leases on, usage is reported in batches (LEASE_FLUSH_MS) and
      // the key's slice stays reserved until the key has been idle for LEASE_IDLE_MS (1 s by default); so the
      // read is repeated, bounded, until everything is reported and returned (or the deadline says it was not).
      const expected = calls * COST_SATS * 1000;
      const deadline = Date.now() + SETTLE_WAIT_MS;
      for (;;) {
        const info = await store.ledger.getKeyInfo(credential);
        if (!info) return { ok: false, detail: 'key unknown' };
        const charged = before.account.balanceMsat - info.account.balanceMsat;
        const requests = info.usage.totalRequests - before.usage.totalRequests;
        const ok =
          info.usage.reservedMsat === 0 &&
          info.account.reservedMsat === 0 &&
          charged === expected &&
          requests === calls;
        if (ok || Date.now() >= deadline) {
          return {
            ok,
            detail: `${requests}/${calls} calls counted, charged ${charged} msat (expected ${expected}), ${info.account.reservedMsat} msat still reserved`,
          };
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
