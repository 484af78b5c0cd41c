import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'libsql';
import { afterAll, describe, expect, it } from 'vitest';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger, LedgerOptions } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { admitInput, holdInput, settleInput } from './support/conformance.js';
import { watchExec } from './support/exec-spy.js';
import { randomTokenHash } from './support/harness.js';

const LIMITS = { requestsPerMinute: 1000, tokensPerHour: 1e9, concurrent: 100 };
const dir = mkdtempSync(join(tmpdir(), 'gw-ledger-sync-'));
const conns: StoreConnection[] = [];
afterAll(async () => {
  for (const c of conns) await c.close();
  rmSync(dir, { recursive: true, force: true });
});

const level = (db: Database.Database) =>
  (db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous;

/** A ledger on a WAL file as openStore makes it, recording the synchronous level each transaction began with. */
async function open(
  opts: LedgerOptions = {},
): Promise<{ ledger: Ledger; begins: number[]; db: Database.Database }> {
  const conn = openStore({ dataDir: dir, sqliteFile: `${conns.length}.db` });
  conns.push(conn);
  if (conn.kind !== 'sqlite') throw new Error('expected sqlite');
  const db = conn.db;
  const begins: number[] = [];
  watchExec(db, (sql) => {
    if (sql === 'BEGIN IMMEDIATE') begins.push(level(db));
  });
  return { ledger: await createLedger(conn, opts), begins, db };
}

async function pair(ledger: Ledger, apiKey: string, requestId: string): Promise<void> {
  const a = await ledger.admit(
    admitInput(apiKey, { requestId, maxMsat: 100, minMsat: 1, expiresInMs: 60_000, limits: LIMITS }),
  );
  if (!a.ok) throw new Error(a.code);
  const s = await ledger.settle(
    settleInput(a, { requestId, costMsat: 10, promptTokens: 1, completionTokens: 1 }),
  );
  expect(s.ok).toBe(true);
}

const FULL = 2;
const NORMAL = 1;

describe('sqlite durability policy', () => {
  it('commits admit/settle with NORMAL and money in/out with FULL, restoring FULL afterwards', async () => {
    const { ledger, begins, db } = await open({ sqliteMaxUnsyncedMs: 60_000 }); // a loaded host stays inside
    expect(level(db)).toBe(FULL);
    const d = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: 10_000 });
    if (!d.ok) throw new Error(d.code);
    begins.length = 0;
    await pair(ledger, d.apiKey, 'r1');
    expect(begins).toEqual([NORMAL, NORMAL]);
    expect(level(db)).toBe(FULL);
    const c = await ledger.credit({
      credential: { apiKey: d.apiKey },
      tokenHash: randomTokenHash(),
      amountMsat: 500,
      kind: 'topup',
    });
    expect(c.ok).toBe(true);
    const h = await ledger.holdWithdrawal(
      holdInput(d.apiKey, { holdId: 'w1', amountMsat: 100, expiresInMs: 60_000 }),
    );
    if (!h.ok) throw new Error(h.code);
    await ledger.commitWithdrawal({ accountId: h.accountId, holdId: 'w1' });
    await ledger.createChildKeys({ parent: { apiKey: d.apiKey }, count: 1, feePerKeyMsat: 5 });
    expect(begins.slice(2)).toEqual([FULL, FULL, FULL, FULL]);
    expect(level(db)).toBe(FULL);
  });

  it('syncs a hot commit once the last synced one is older than sqliteMaxUnsyncedMs', async () => {
    const { ledger, begins } = await open({ sqliteMaxUnsyncedMs: 0 });
    const d = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: 10_000 });
    if (!d.ok) throw new Error(d.code);
    begins.length = 0;
    await pair(ledger, d.apiKey, 'r1');
    expect(begins).toEqual([FULL, FULL]);
  });

  it("sqliteHotSync 'full' syncs every commit", async () => {
    const { ledger, begins } = await open({ sqliteHotSync: 'full' });
    const d = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: 10_000 });
    if (!d.ok) throw new Error(d.code);
    begins.length = 0;
    await pair(ledger, d.apiKey, 'r1');
    expect(begins).toEqual([FULL, FULL]);
  });
});
