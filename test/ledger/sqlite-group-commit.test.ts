import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import Database from 'libsql';
import { afterAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import { createLedger } from '../../core/ledger/index.js';
import { GROUP_COMMIT_MAX, SqliteStore } from '../../core/ledger/sqlite/sqlite-store.js';
import type { Ledger } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { admitInput, settleInput } from './support/conformance.js';
import { watchExec } from './support/exec-spy.js';
import { randomTokenHash } from './support/harness.js';
import { playRounds, roundsOf } from './support/rounds-property.js';

/**
 * Group commit on SQLite (SqliteStore.hotTx): the hot changes asked for in one turn of the event loop share one
 * transaction. What must hold: nobody is answered before the commit; the answers are those of the same changes
 * run one at a time in the order asked; one change's failure costs nobody else anything; a store that cannot
 * take the write lock answers every change `store_unavailable` and moves nothing.
 */

const dir = mkdtempSync(join(tmpdir(), 'gw-group-commit-'));
const conns: StoreConnection[] = [];
let files = 0;
afterAll(async () => {
  for (const c of conns) await c.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A ledger on its own WAL file as openStore makes it; `log` records BEGIN/COMMIT/ROLLBACK as they run.
 * `failCommits(n)`: the next n COMMITs fail (-1: every one until told 0), as a full disk fails them: the
 * statement errs and the transaction is still open (logged as 'COMMIT failed').
 */
async function open(): Promise<{
  ledger: Ledger;
  db: Database.Database;
  log: string[];
  path: string;
  failCommits: (n: number) => void;
}> {
  const file = `${files++}.db`;
  const conn = openStore({ dataDir: dir, sqliteFile: file });
  conns.push(conn);
  if (conn.kind !== 'sqlite') throw new Error('expected sqlite');
  const db = conn.db;
  const log: string[] = [];
  let commitFaults = 0;
  watchExec(db, (sql) => {
    if (sql === 'COMMIT' && commitFaults !== 0) {
      if (commitFaults > 0) commitFaults--;
      log.push('COMMIT failed');
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    }
    if (sql === 'BEGIN IMMEDIATE' || sql === 'COMMIT' || sql === 'ROLLBACK') log.push(sql);
  });
  return {
    ledger: await createLedger(conn, {}),
    db,
    log,
    path: join(dir, file),
    failCommits: (n) => {
      commitFaults = n;
    },
  };
}

async function fund(ledger: Ledger, amountMsat: number): Promise<{ apiKey: string; accountId: string }> {
  const d = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat });
  if (!d.ok) throw new Error(d.code);
  return { apiKey: d.apiKey, accountId: d.key.accountId };
}

const codeOf = (err: unknown): string => (isGatewayError(err) ? err.code : String(err));

describe('SQLite group commit', () => {
  it('changes asked for in one turn commit in one transaction, and nobody is answered before it', async () => {
    const { ledger, log } = await open();
    const keys = await Promise.all(Array.from({ length: 20 }, () => fund(ledger, 10_000)));
    log.length = 0;
    const admits = await Promise.all(
      keys.map((k) =>
        ledger.admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 1, expiresInMs: 60_000 })).then((a) => {
          log.push('answer');
          return a;
        }),
      ),
    );
    expect(log).toEqual(['BEGIN IMMEDIATE', 'COMMIT', ...Array(20).fill('answer')]);
    log.length = 0;
    const settles = await Promise.all(
      admits.map((a) => {
        if (!a.ok) throw new Error(a.code);
        return ledger.settle(settleInput(a, { costMsat: 40 }));
      }),
    );
    expect(log).toEqual(['BEGIN IMMEDIATE', 'COMMIT']);
    for (const s of settles) expect(s).toMatchObject({ ok: true, chargedMsat: 40, balanceMsat: 9_960 });
    for (const k of keys) {
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 9_960, reservedMsat: 0 });
    }
  });

  it(`more than ${GROUP_COMMIT_MAX} at once: several commits, still in the order asked`, async () => {
    const { ledger, log } = await open();
    const k = await fund(ledger, 10_000); // affords exactly 100 calls of 100
    log.length = 0;
    const n = 150;
    const answers = await Promise.all(
      Array.from({ length: n }, () =>
        ledger.admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 100, expiresInMs: 60_000 })),
      ),
    );
    expect(log.filter((l) => l === 'COMMIT')).toHaveLength(Math.ceil(n / GROUP_COMMIT_MAX));
    // The first 100 asked are the 100 admitted: order kept across batches.
    expect(answers.map((a) => a.ok)).toEqual([...Array(100).fill(true), ...Array(50).fill(false)]);
    const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
    expect(info?.account.reservedMsat).toBe(10_000);
  });

  it("one change's failure is its own: the batch runs again change by change, the others commit", async () => {
    const db = new Database(join(dir, `${files++}.db`));
    db.pragma('journal_mode = WAL');
    const s = new SqliteStore(db, { tx: 100, finishedMs: 60_000 });
    const put = (k: string) => () => s.q('INSERT INTO ledger_meta (k, v) VALUES (?, ?)').run(k, 'v');
    const results = await Promise.allSettled([
      s.hotTx(put('a')),
      s.hotTx(() => {
        put('b')();
        throw new Error('disk said no');
      }),
      s.hotTx(put('c')),
      s.hotTx(() => put('a')()), // a duplicate of the first: the UNIQUE constraint refuses it
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect(codeOf((results[1] as PromiseRejectedResult).reason)).toBe('store_unavailable');
    expect(codeOf((results[3] as PromiseRejectedResult).reason)).toBe('store_unavailable');
    const rows = db.prepare("SELECT k FROM ledger_meta WHERE k IN ('a','b','c') ORDER BY k").all() as Array<{
      k: string;
    }>;
    expect(rows.map((r) => r.k)).toEqual(['a', 'c']);
    expect(db.inTransaction).toBe(false);
    db.close();
  });

  it('the write lock held elsewhere: every change of the batch answers store_unavailable and moves nothing', async () => {
    const { ledger, db, path } = await open();
    const k = await fund(ledger, 10_000);
    const other = new Database(path);
    db.pragma('busy_timeout = 0');
    other.exec('BEGIN IMMEDIATE');
    const refused = await Promise.allSettled(
      Array.from({ length: 3 }, () =>
        ledger.admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 1, expiresInMs: 60_000 })),
      ),
    );
    other.exec('COMMIT');
    other.close();
    for (const r of refused) {
      expect(r.status).toBe('rejected');
      expect(codeOf((r as PromiseRejectedResult).reason)).toBe('store_unavailable');
    }
    const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
    expect(info?.account.reservedMsat).toBe(0);
    const a = await ledger.admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 1, expiresInMs: 60_000 }));
    expect(a.ok).toBe(true);
  });

  it('a COMMIT that fails rolls the whole batch back, and each change then commits once by itself', async () => {
    const { ledger, log, failCommits } = await open();
    const keys = await Promise.all(Array.from({ length: 10 }, () => fund(ledger, 10_000)));
    log.length = 0;
    failCommits(1);
    const admits = await Promise.all(
      keys.map((k) => ledger.admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 1, expiresInMs: 60_000 }))),
    );
    expect(log).toEqual([
      'BEGIN IMMEDIATE',
      'COMMIT failed',
      'ROLLBACK',
      ...Array.from({ length: 10 }, () => ['BEGIN IMMEDIATE', 'COMMIT']).flat(),
    ]);
    for (const a of admits) expect(a).toMatchObject({ ok: true, reservedMsat: 100 });
    // Reserved once each: the rolled-back batch left nothing behind for the second run to add to.
    for (const k of keys) {
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 10_000, reservedMsat: 100 });
    }
    log.length = 0;
    failCommits(1);
    const settles = await Promise.all(
      admits.map((a) => {
        if (!a.ok) throw new Error(a.code);
        return ledger.settle(settleInput(a, { costMsat: 40 }));
      }),
    );
    expect(log.slice(0, 3)).toEqual(['BEGIN IMMEDIATE', 'COMMIT failed', 'ROLLBACK']);
    expect(log.filter((l) => l === 'COMMIT')).toHaveLength(10);
    for (const s of settles)
      expect(s).toMatchObject({ ok: true, replay: false, chargedMsat: 40, balanceMsat: 9_960 });
    for (const k of keys) {
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 9_960, reservedMsat: 0 });
      const txs = await ledger.listTransactions({ apiKey: k.apiKey });
      expect(txs?.transactions.filter((t) => t.type === 'usage')).toHaveLength(1);
    }
    expect((await ledger.checkConservation()).ok).toBe(true);
  });

  it('COMMIT failing every time: every change answers store_unavailable and moves nothing; once healed, each goes through once', async () => {
    const { ledger, failCommits } = await open();
    const keys = await Promise.all(Array.from({ length: 3 }, () => fund(ledger, 10_000)));
    const open1 = await Promise.all(
      keys.map((k) => ledger.admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 1, expiresInMs: 60_000 }))),
    );
    failCommits(-1);
    const refused = await Promise.allSettled([
      ...open1.map((a) => {
        if (!a.ok) throw new Error(a.code);
        return ledger.settle(settleInput(a, { costMsat: 40 }));
      }),
      ...keys.map((k) =>
        ledger.admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 1, expiresInMs: 60_000 })),
      ),
    ]);
    for (const r of refused) {
      expect(r.status).toBe('rejected');
      expect(codeOf((r as PromiseRejectedResult).reason)).toBe('store_unavailable');
    }
    failCommits(0);
    for (const k of keys) {
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 10_000, reservedMsat: 100 });
    }
    // The settles retried (as settle's background retry does): charged once, not a replay of a lost commit.
    const settled = await Promise.all(
      open1.map((a) => {
        if (!a.ok) throw new Error(a.code);
        return ledger.settle(settleInput(a, { costMsat: 40 }));
      }),
    );
    for (const s of settled)
      expect(s).toMatchObject({ ok: true, replay: false, chargedMsat: 40, balanceMsat: 9_960 });
    expect((await ledger.checkConservation()).ok).toBe(true);
  });

  it("the database full (max_page_count, SQLite's own SQLITE_FULL): the changes that fit commit, the rest move nothing", async () => {
    const { ledger, db } = await open();
    const keys = await Promise.all(Array.from({ length: 30 }, () => fund(ledger, 10_000)));
    const admits = await Promise.all(
      keys.map((k) => ledger.admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 1, expiresInMs: 60_000 }))),
    );
    const pages = (db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
    db.exec(`PRAGMA max_page_count = ${pages}`);
    // Each settle writes a transaction row with this description: 30 of them need pages the file may not grow.
    const description = 'x'.repeat(3_000);
    const first = await Promise.allSettled(
      admits.map((a) => {
        if (!a.ok) throw new Error(a.code);
        return ledger.settle(settleInput(a, { costMsat: 40, description }));
      }),
    );
    const failed = first.filter((r) => r.status === 'rejected');
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) expect(codeOf((r as PromiseRejectedResult).reason)).toBe('store_unavailable');
    for (const [i, k] of keys.entries()) {
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      const expected =
        first[i]!.status === 'fulfilled'
          ? { balanceMsat: 9_960, reservedMsat: 0 }
          : { balanceMsat: 10_000, reservedMsat: 100 };
      expect(info?.account).toMatchObject(expected);
    }
    db.exec('PRAGMA max_page_count = 1073741823');
    const again = await Promise.all(
      admits.map((a) => {
        if (!a.ok) throw new Error(a.code);
        return ledger.settle(settleInput(a, { costMsat: 40, description }));
      }),
    );
    for (const [i, s] of again.entries())
      expect(s).toMatchObject({ ok: true, replay: first[i]!.status === 'fulfilled', balanceMsat: 9_960 });
    expect((await ledger.checkConservation()).ok).toBe(true);
  });

  it('close() commits and answers what is still waiting for its group commit', async () => {
    const { ledger } = await open();
    const k = await fund(ledger, 10_000);
    let answered = false;
    const p = ledger
      .admit(admitInput(k.apiKey, { maxMsat: 100, minMsat: 1, expiresInMs: 60_000 }))
      .then((a) => {
        answered = true;
        return a;
      });
    await ledger.close(); // before the setImmediate that would have committed it
    expect((await p).ok).toBe(true);
    expect(answered).toBe(true);
  });

  it('property: the answers of concurrent rounds equal those of the same changes run one at a time', async () => {
    await fc.assert(
      fc.asyncProperty(roundsOf(false), async (plan) => {
        const setup = async () => {
          const o = await open();
          const keys = [];
          for (let i = 0; i < 3; i++) keys.push(await fund(o.ledger, 5_000 + i * 1_000));
          return { ledger: o.ledger, keys };
        };
        await playRounds(plan, await setup(), await setup());
      }),
      { numRuns: 25 },
    );
  });
});
