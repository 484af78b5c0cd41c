import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Wallet } from '@cashu/cashu-ts';
import { createLogger, type Logger } from '../../core/log.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { type CashuUnit, createWallet, type WalletService } from '../../core/wallet/wallet.js';
import { type DevMint, type DevMintOptions, startDevMint } from '../../scripts/mint/index.js';

/**
 * Test helpers around the dev mint: start/stop one per suite, tokens via its public NUT-04 flow (cashu-ts),
 * a fresh store per test (SQLite in memory or Redis under a random prefix), a wallet with captured logs, and
 * a separate cashu-ts wallet to redeem what ours sends.
 */

export type { DevMint } from '../../scripts/mint/index.js';

export async function startTestMint(opts: DevMintOptions = {}): Promise<DevMint> {
  return startDevMint({ port: 0, ...opts });
}

export type StoreKind = 'sqlite' | 'redis';

export function testStore(kind: StoreKind): StoreConnection {
  if (kind === 'redis') {
    const url = process.env.TEST_REDIS_URL;
    if (!url) throw new Error('TEST_REDIS_URL is not set (global setup)');
    return openStore({ redisUrl: url, redisPrefix: `t${randomBytes(6).toString('hex')}` });
  }
  return openStore({ sqliteFile: ':memory:' });
}

/**
 * A store that a crash child process (test/wallet/fixtures/*-child.ts) can open too: SQLite in the file
 * `<dir>/gateway.db`, or Redis under a random prefix; with the CRASH_* environment that names it to the child.
 */
export function crashStore(
  kind: StoreKind,
  dir: string,
  mintUrl: string,
): { conn: StoreConnection; childEnv: Record<string, string> } {
  if (kind === 'sqlite') {
    return {
      conn: openStore({ dataDir: dir, sqliteFile: 'gateway.db' }),
      childEnv: { CRASH_STORE: 'sqlite', CRASH_SQLITE_DIR: dir, CRASH_MINT: mintUrl },
    };
  }
  const conn = testStore('redis');
  return {
    conn,
    childEnv: {
      CRASH_STORE: 'redis',
      CRASH_REDIS_URL: process.env.TEST_REDIS_URL ?? '',
      CRASH_REDIS_PREFIX: conn.kind === 'redis' ? conn.prefix : '',
      CRASH_MINT: mintUrl,
    },
  };
}

/** Deletes every key of a Redis test store, then closes it. */
export async function dropStore(conn: StoreConnection): Promise<void> {
  if (conn.kind === 'redis') {
    const keys = await conn.redis.keys(`${conn.prefix}:*`);
    if (keys.length > 0) await conn.redis.del(...keys);
  }
  await conn.close();
}

export interface CapturedLog {
  log: Logger;
  text(): string;
}

export function captureLog(): CapturedLog {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { log: createLogger('debug', sink), text: () => lines.join('') };
}

export async function testWallet(
  conn: StoreConnection,
  mints: string[],
  log: Logger = captureLog().log,
): Promise<WalletService> {
  // 90 s per mint request: the dev mint signs in the same process (libsecp256k1 as WebAssembly), and on a busy
  // machine a swap of many proofs takes far longer than at idle (5 s, then 30 s for six concurrent sends, failed
  // spend-redis at load 37, when it signed in pure JavaScript). A mint that is down is refused at once whatever the
  // bound.
  return createWallet({ conn, mints, log, mintTimeoutMs: 90_000 });
}

/** The wallet's proofs, every mint and unit, in msat. */
export async function proofsMsat(w: WalletService): Promise<number> {
  return (await w.balances()).reduce((s, l) => s + l.amountMsat, 0);
}

/** Redeems a token with an independent cashu-ts wallet; returns the amount it got (in unit). */
export async function redeemElsewhere(
  mintUrl: string,
  token: string,
  unit: CashuUnit = 'sat',
): Promise<number> {
  const w = new Wallet(mintUrl, { unit });
  await w.loadMint();
  const proofs = await w.receive(token, { requireDleq: false });
  return proofs.reduce((s, p) => s + p.amount.toNumber(), 0);
}
