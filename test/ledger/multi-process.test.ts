import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { dropStore } from '../support/dev-mint.js';
import { randomTokenHash } from './support/harness.js';

const WORKER = join(import.meta.dirname, 'support', 'admit-worker.ts');
const T0 = Date.UTC(2030, 0, 7, 12);

function runWorker(env: Record<string, string>): Promise<{ ok: number; paymentRequired: number }> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...env },
      stdio: 'inherit',
    });
    let msg: { ok: number; paymentRequired: number } | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.on('message', (m) => {
      msg = m as typeof msg;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (msg) resolve(msg);
      else reject(new Error(`worker exited ${code} without a result`));
    });
  });
}

/** 4 OS processes × 250 concurrent admits against one balance affording exactly 100. */
async function race(ledger: Ledger, env: Record<string, string>) {
  const d = await ledger.createKeyFromDeposit({
    tokenHash: randomTokenHash(),
    amountMsat: 100 * 41,
    now: T0,
  });
  if (!d.ok) throw new Error(d.code);
  const common = { ...env, W_API_KEY: d.apiKey, W_ADMITS: '250', W_MSAT: '41', W_NOW: String(T0) };
  const results = await Promise.all([1, 2, 3, 4].map(() => runWorker(common)));
  expect(results.reduce((s, r) => s + r.ok, 0)).toBe(100);
  expect(results.reduce((s, r) => s + r.paymentRequired, 0)).toBe(900);
  const info = await ledger.getKeyInfo({ apiKey: d.apiKey }, T0);
  expect(info?.account).toMatchObject({ balanceMsat: 4100, reservedMsat: 4100 });
  expect((await ledger.checkConservation()).breaches).toEqual([]);
}

const conns: StoreConnection[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const c of conns) await dropStore(c);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('ledger across OS processes', () => {
  it('4 processes sharing one Redis: exactly 100 of 1,000 admits succeed', async () => {
    const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const prefix = `mp${randomBytes(5).toString('hex')}`;
    const conn = openStore({ redisUrl: url, redisPrefix: prefix });
    conns.push(conn);
    const ledger = await createLedger(conn, { warn: () => {} });
    await race(ledger, { W_REDIS_URL: url, W_PREFIX: prefix });
  }, 60_000);

  it('4 processes sharing one SQLite file: exactly 100 of 1,000 admits succeed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-ledger-'));
    dirs.push(dir);
    const conn = openStore({ dataDir: dir, sqliteFile: 'ledger.db' });
    conns.push(conn);
    const ledger = await createLedger(conn);
    await race(ledger, { W_DATA_DIR: dir, W_REDIS_URL: '' });
  }, 60_000);
});
