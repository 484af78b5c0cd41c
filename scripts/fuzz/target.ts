import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getEncodedToken, type Proof, Wallet } from '@cashu/cashu-ts';
import { Redis } from 'ioredis';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { createLedger } from '../../core/ledger/index.js';
import { createLogger } from '../../core/log.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { type GatewayProcess, spawnGateway } from '../lib/gateway-process.js';
import { type DevMint, startDevMint } from '../mint/index.js';

/**
 * What the fuzzer attacks: the gateway as its own OS process (so "the process stays alive" is observable),
 * started with `node --import tsx core/main.ts` on a fresh store (SQLite in a temp DATA_DIR, or Redis under a
 * random prefix), in front of the dev mint and the mock upstream, with every secret the gateway knows set to
 * a recognisable value — so the invariants can look for any of them in answers and logs.
 */

export type FuzzEngine = 'uws' | 'node';
export type FuzzStore = 'sqlite' | 'redis';

export interface FuzzTargetOptions {
  engine: FuzzEngine;
  store: FuzzStore;
  /** Redis URL for the redis store (default TEST_REDIS_URL, REDIS_URL, then 127.0.0.1:6379). */
  redisUrl?: string;
}

export interface FuzzSecrets {
  adminPassword: string;
  upstreamApiKey: string;
  seed: string;
}

export interface FuzzTarget {
  readonly port: number;
  readonly engine: FuzzEngine;
  readonly store: FuzzStore;
  readonly mint: DevMint;
  readonly upstream: MockUpstream;
  readonly secrets: FuzzSecrets;
  /** Everything the gateway process wrote to stdout/stderr so far. */
  logs(): string;
  /** The process has not exited. */
  alive(): boolean;
  /** Exit code/signal when it died. */
  exitInfo(): string | undefined;
  /** Fresh proofs worth `sats` from the dev mint (NUT-04 via cashu-ts), and the token that carries them. */
  mintToken(sats: number): Promise<{ token: string; mint: string; proofs: Proof[] }>;
  /** The ledger's conservation check and wallet solvency of the target's store; throws with the reports when either fails. */
  checkMoney(): Promise<{ audit: unknown; solvency: unknown }>;
  close(): Promise<void>;
}

export async function startFuzzTarget(opts: FuzzTargetOptions): Promise<FuzzTarget> {
  const mint = await startDevMint({ port: 0 });
  const upstream = await startMockUpstream({});
  const secrets: FuzzSecrets = {
    adminPassword: `adm-${randomBytes(12).toString('hex')}`,
    upstreamApiKey: `upk-${randomBytes(12).toString('hex')}`,
    seed: randomBytes(32).toString('hex'),
  };
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    HTTP_ENGINE: opts.engine,
    UPSTREAM_BASE_URL: upstream.url,
    UPSTREAM_API_KEY: secrets.upstreamApiKey,
    UPSTREAM_TIMEOUT_MS: '5000',
    ADMIN_PASSWORD: secrets.adminPassword,
    CASHU_MINTS: mint.url,
    CASHU_SEED: secrets.seed,
    LOG_LEVEL: 'debug',
  };
  let dataDir: string | undefined;
  let redisUrl: string | undefined;
  let prefix: string | undefined;
  if (opts.store === 'redis') {
    redisUrl =
      opts.redisUrl ?? process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    prefix = `fuzz${randomBytes(6).toString('hex')}`;
    env.REDIS_URL = redisUrl;
    env.REDIS_PREFIX = prefix;
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-fuzz-'));
    env.DATA_DIR = dataDir;
  }

  const cleanup = async () => {
    await gw?.kill();
    await Promise.allSettled([mint.close(), upstream.close()]);
    if (redisUrl && prefix) {
      const r = new Redis(redisUrl);
      try {
        const keys = await r.keys(`${prefix}:*`);
        if (keys.length > 0) await r.del(...keys);
      } finally {
        r.disconnect();
      }
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  let gw: GatewayProcess | undefined;
  try {
    gw = await spawnGateway(env);
  } catch (err) {
    await cleanup();
    throw err;
  }
  const proc = gw;

  const storeConn = (): StoreConnection =>
    redisUrl ? openStore({ redisUrl, redisPrefix: prefix! }) : openStore({ dataDir: dataDir! });

  return {
    port: proc.port,
    engine: opts.engine,
    store: opts.store,
    mint,
    upstream,
    secrets,
    logs: proc.logs,
    alive: proc.alive,
    exitInfo: proc.exitInfo,
    async mintToken(sats) {
      const w = new Wallet(mint.url, { unit: 'sat' });
      await w.loadMint();
      const quote = await w.createMintQuoteBolt11(sats);
      const proofs = await w.mintProofsBolt11(sats, quote.quote);
      return { token: getEncodedToken({ mint: mint.url, proofs, unit: 'sat' }), mint: mint.url, proofs };
    },
    async checkMoney() {
      const conn = storeConn();
      try {
        if (conn.kind === 'redis') await conn.ready();
        const ledger = await createLedger(conn, { prefix: prefix ?? 'gw' });
        const audit = await ledger.checkConservation();
        const wallet = await createWallet({
          conn,
          mints: [mint.url],
          seed: secrets.seed,
          log: createLogger('silent'),
        });
        try {
          const solvency = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
          if (!audit.ok || !solvency.solvent) {
            throw new Error(`money check failed: ${JSON.stringify({ audit, solvency })}`);
          }
          return { audit, solvency };
        } finally {
          await wallet.close();
          await ledger.close();
        }
      } finally {
        await conn.close();
      }
    },
    close: cleanup,
  };
}
