import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { SqliteStore } from '../../core/ledger/sqlite/sqlite-store.js';
import { openStore } from '../../core/store/connection.js';
import {
  type CheckpointOptions,
  checkpointInBackground,
  commitGateOf,
} from '../../core/store/sqlite-checkpoint.js';
import { until, untilValue } from '../support/until.js';

/**
 * WAL checkpoints in a worker thread (core/store/sqlite-checkpoint.ts): the gateway's connection never runs
 * one inside a commit, the worker's keep the WAL bounded, nothing written is lost, and a worker that dies
 * hands the automatic checkpoint back.
 */
const work = mkdtempSync(join(tmpdir(), 'gw-checkpoint-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

function open(): { db: Database.Database; file: string } {
  const file = join(work, `db-${++n}.db`);
  const db = new Database(file);
  db.pragma('busy_timeout = 5000'); // as the gateway's connection (core/store/connection.ts)
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  return { db, file };
}

/** A fresh file with a checkpointer on it; what it reports through `onError` is collected in `errors`. */
function checkpointed(opts: Omit<CheckpointOptions, 'onError'>) {
  const { db, file } = open();
  const errors: unknown[] = [];
  const cp = checkpointInBackground(db, file, { ...opts, onError: (e) => errors.push(e) });
  return { db, file, errors, cp };
}

/**
 * A SqliteStore on `db` with a `maxUnsyncedMs` bound, its durability clock the wall clock plus `skew.ms` (a test
 * ages the store's own synced commits by raising it), and `hot()`: one hot change through its group commit.
 */
function storeOn(db: Database.Database, maxUnsyncedMs: number) {
  const skew = { ms: 0 };
  const store = new SqliteStore(
    db,
    { tx: 10, finishedMs: 1000 },
    { hotSync: 'normal', maxUnsyncedMs, now: () => Date.now() + skew.ms },
  );
  const ins = db.prepare("INSERT INTO t (v) VALUES ('h')");
  return { store, skew, hot: () => store.hotTx(() => ins.run()) };
}

const autoPages = (db: Database.Database): number =>
  (db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint;

/** `count` rows of ~1 KiB in transactions of 50, as the group commit writes them. */
function write(db: Database.Database, count: number): void {
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  const batch = db.transaction((k: number) => {
    for (let i = 0; i < k; i++) ins.run('x'.repeat(1000));
  });
  for (let done = 0; done < count; done += 50) batch(Math.min(50, count - done));
}

const rows = (file: string): number => {
  const db = new Database(file);
  try {
    return (db.prepare('SELECT count(*) AS c FROM t').get() as { c: number }).c;
  } finally {
    db.close();
  }
};

describe('SQLite WAL checkpoints off the event loop', () => {
  it("turns the connection's own checkpoint off; the worker backfills the WAL while writes go on; nothing is lost", async () => {
    const { db, file, errors, cp } = checkpointed({
      everyMs: 20,
      startAtBytes: 64 * 1024,
    });
    expect(autoPages(db)).toBe(0);
    write(db, 200); // ≈ 200 KiB of WAL: past the start size
    await until(
      'a complete checkpoint by the worker',
      () => cp.stats.runs > 0 && cp.stats.last!.checkpointed > 0,
    );
    expect(cp.worker).toBeDefined();
    // Writes go on between the worker's checkpoints: each one finds what came since and copies all of it.
    for (let round = 0; round < 5; round++) {
      write(db, 300);
      const runs = cp.stats.runs;
      await until('the next checkpoint', () => cp.stats.runs > runs);
    }
    await until('a checkpoint that copied the whole WAL', () => {
      const l = cp.stats.last!;
      return l.busy === 0 && l.log > 0 && l.checkpointed === l.log;
    });
    expect(rows(file)).toBe(1700);
    await cp.close();
    expect(cp.stats.fallback).toBe(false);
    db.close();
    expect(rows(file)).toBe(1700);
    expect(errors).toEqual([]);
  });

  it('under a steady write load the WAL is wholly copied and restarts: it stays small (the commits wait for the second pass)', async () => {
    const { db, file, errors, cp } = checkpointed({
      everyMs: 50,
      startAtBytes: 64 * 1024,
    });
    const gate = commitGateOf(db)!;
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    // A commit every millisecond for at least 2 s, each held while the gate is (as SqliteStore's group commit
    // is), and on until 400 commits (4 MB of WAL frames, which a WAL that never restarts would keep), 3 checkpoint
    // runs and one commit held by the gate have happened: a busy machine makes fewer commits a second (a 2 s
    // window once made 296), and a run cut short of 2 s leaves the WAL bound below fewer cycles to average over.
    let maxWal = 0;
    let commits = 0;
    let heldSeen = 0;
    const minEnd = Date.now() + 2000;
    const deadline = Date.now() + 60_000;
    await new Promise<void>((resolve) => {
      const step = (): void => {
        const done = Date.now() >= minEnd && commits >= 400 && cp.stats.runs >= 3 && heldSeen > 0;
        if (done || Date.now() > deadline) {
          resolve();
          return;
        }
        if (gate.held) {
          heldSeen++;
          gate.whenOpen(() => setImmediate(step));
          return;
        }
        db.transaction(() => {
          for (let i = 0; i < 10; i++) ins.run('z'.repeat(1000));
        })();
        commits++;
        maxWal = Math.max(maxWal, statSync(`${file}-wal`).size);
        setTimeout(step, 1);
      };
      step();
    });
    expect(commits).toBeGreaterThanOrEqual(400);
    expect(cp.stats.runs).toBeGreaterThanOrEqual(3);
    expect(cp.stats.fallback).toBe(false);
    // ≥ 3 MB of frames were written (10 KiB a commit); the WAL never held more than a few cycles' worth.
    expect(commits * 10_000).toBeGreaterThan(3_000_000);
    expect(maxWal).toBeLessThan(Math.max(1_500_000, (commits * 10_000) / 3));
    expect(heldSeen).toBeGreaterThan(0);
    await cp.close();
    db.close();
    expect(rows(file)).toBe(commits * 10);
    expect(errors).toEqual([]);
  });

  it("SqliteStore's group commit waits while the gate is held, and commits when it opens", async () => {
    const { db, file } = open();
    const cp = checkpointInBackground(db, file, { everyMs: 60_000 });
    const store = new SqliteStore(db, { tx: 10, finishedMs: 1000 });
    const gate = commitGateOf(db)!;
    gate.hold();
    let done = false;
    const p = store
      .hotTx(() => db.prepare("INSERT INTO t (v) VALUES ('held')").run())
      .then(() => {
        done = true;
      });
    // The group commit runs on setImmediate: a few turns later it would have committed, were it not held.
    for (let turn = 0; turn < 5; turn++) await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    gate.release();
    await p;
    expect(done).toBe(true);
    await cp.close();
    db.close();
    expect(rows(file)).toBe(1);
  });

  it("restarts the WAL with the worker's own write, not in the gateway's next commit", async () => {
    const { db, file, errors, cp } = checkpointed({ everyMs: 20, startAtBytes: 64 * 1024 });
    const idBefore = (db.prepare('PRAGMA application_id').get() as { application_id: number }).application_id;
    write(db, 200); // ≈ 200 KiB of WAL: 50+ frames
    await until('a cycle that copied everything and restarted the WAL', () => cp.stats.restarts > 0);
    // No commit of this connection since: a WAL restarted by the worker holds only the worker's one page (a WAL
    // wholly copied but not restarted still counts every frame since its last restart).
    // The worker goes on checkpointing every 20 ms: a probe that meets one of its passes is held off (busy, log
    // -1) and asks again; so does one that meets its restart between the new WAL header (no frame: log 0) and
    // the commit of its one page (seen once in a CI run).
    const probe = new Database(file);
    const passive = probe.prepare('PRAGMA wal_checkpoint(PASSIVE)');
    const r = await untilValue(
      'a probe checkpoint not held off by the worker, nor in the middle of its restart',
      () => passive.get() as { busy: number; log: number; checkpointed: number },
      (a) => a.busy === 0 && a.log !== 0,
    );
    probe.close();
    expect(r.log).toBe(1);
    // The worker's write changed nothing: the application id and every row are as they were.
    expect((db.prepare('PRAGMA application_id').get() as { application_id: number }).application_id).toBe(
      idBefore,
    );
    expect(rows(file)).toBe(200);
    write(db, 50);
    await cp.close();
    db.close();
    expect(rows(file)).toBe(250);
    expect(errors).toEqual([]);
  });

  it("a complete cycle counts as SqliteStore's periodic sync: hot commits need no fsync of their own while cycles complete", async () => {
    // Deterministic part: the rule itself, on a gate whose checkpoints never run.
    {
      const { db, cp } = checkpointed({ everyMs: 60_000 });
      const gate = commitGateOf(db)!;
      const { store, skew, hot } = storeOn(db, 1000);
      skew.ms = 10_000; // the store's own last synced commit (at its construction) is past the bound
      gate.durableBefore = Date.now() + skew.ms;
      await hot();
      expect(store.syncedHotCommits).toBe(0); // the checkpoint synced everything before it: relaxed
      gate.durableBefore = Date.now() + skew.ms - 10_000;
      await hot();
      expect(store.syncedHotCommits).toBe(1); // the checkpoint is too old: this commit syncs itself
      await hot();
      expect(store.syncedHotCommits).toBe(1); // and counts as the sync for the next second
      await cp.close();
      db.close();
    }

    // With the worker: a commit every 2 ms for 1.5 s against a 200 ms bound.
    const run = async (everyMs: number) => {
      const { db, file, errors, cp } = checkpointed({ everyMs, startAtBytes: 16 * 1024 });
      const { store, hot } = storeOn(db, 200);
      write(db, 50); // past the start size
      await until('the first complete cycle', () => everyMs === 0 || commitGateOf(db)!.durableBefore > 0);
      const before = store.syncedHotCommits;
      const end = Date.now() + 1500;
      let commits = 0;
      while (Date.now() < end) {
        await hot();
        commits++;
        await new Promise((r) => setTimeout(r, 2)); // the pace of the load, not a wait for a condition
      }
      const synced = store.syncedHotCommits - before;
      await cp.close();
      db.close();
      expect(rows(file)).toBe(50 + commits);
      expect(errors).toEqual([]);
      return { synced, commits };
    };
    const withWorker = await run(50);
    const without = await run(0);
    expect(withWorker.commits).toBeGreaterThan(100);
    expect(without.synced).toBeGreaterThanOrEqual(5); // one every 200 ms
    expect(withWorker.synced).toBeLessThanOrEqual(1);
  });

  it('a WAL that does not restart (over maxWalFrames after a cycle) hands the checkpoint back to the connection', async () => {
    const { db, errors, cp } = checkpointed({
      everyMs: 20,
      startAtBytes: 16 * 1024,
      maxWalFrames: 1,
    });
    write(db, 100);
    await until('the fallback', () => cp.stats.fallback);
    expect(autoPages(db)).toBe(1000);
    expect(String(errors[0])).toMatch(/not restarting/);
    expect(commitGateOf(db)).toBeUndefined();
    await cp.close();
    db.close();
  });

  it('a WAL under the start size starts no thread; :memory: and 0 change nothing', async () => {
    const { db, file } = open();
    const cp = checkpointInBackground(db, file, { everyMs: 10, startAtBytes: 1 << 30 });
    write(db, 50);
    await new Promise((r) => setTimeout(r, 60));
    expect(cp.worker).toBeUndefined();
    await cp.close();
    db.close();

    const mem = new Database(':memory:');
    const none = checkpointInBackground(mem, ':memory:', { everyMs: 10 });
    expect(autoPages(mem)).toBe(1000);
    await none.close();
    mem.close();

    const other = open();
    const off = checkpointInBackground(other.db, other.file, { everyMs: 0 });
    expect(autoPages(other.db)).toBe(1000);
    await off.close();
    other.db.close();
  });

  it('a worker that dies hands the automatic checkpoint back to the connection, and says so', async () => {
    const { db, file, errors, cp } = checkpointed({
      everyMs: 20,
      startAtBytes: 16 * 1024,
    });
    write(db, 100);
    await until('the worker', () => cp.worker !== undefined && cp.stats.runs > 0);
    const gate = commitGateOf(db)!;
    const { store, hot } = storeOn(db, 50);
    const built = Date.now(); // the store's own last synced commit
    await cp.worker!.terminate();
    await until('the fallback', () => cp.stats.fallback);
    expect(autoPages(db)).toBe(1000);
    expect(String(errors[0])).toMatch(/worker exited/);
    // No cycle says the WAL is on disk any more (a live worker would keep this from ever holding): once the bound
    // has passed, a hot commit syncs itself again.
    await until('the bound past the last sync', () => Date.now() - Math.max(gate.durableBefore, built) > 60);
    await hot();
    expect(store.syncedHotCommits).toBe(1);
    write(db, 100);
    expect(rows(file)).toBe(201);
    await cp.close();
    db.close();
  });

  it('two checkpointers on one file (two processes on one DATA_DIR) both go on without errors', async () => {
    const { db, file } = open();
    const db2 = new Database(file);
    db2.pragma('busy_timeout = 5000');
    const errors: unknown[] = [];
    const onError = (e: unknown) => errors.push(e);
    const a = checkpointInBackground(db, file, { everyMs: 5, startAtBytes: 16 * 1024, onError });
    const b = checkpointInBackground(db2, file, { everyMs: 5, startAtBytes: 16 * 1024, onError });
    const ins2 = db2.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 0; i < 40; i++) {
      write(db, 25);
      for (let j = 0; j < 25; j++) ins2.run('y');
      await new Promise((r) => setTimeout(r, 3));
    }
    await until('both workers to checkpoint', () => a.stats.runs > 2 && b.stats.runs > 2);
    await Promise.all([a.close(), b.close()]);
    db2.close();
    db.close();
    expect(rows(file)).toBe(2000);
    expect(errors).toEqual([]);
  });

  it('the gateway store: SQLITE_CHECKPOINT_MS (default 500, 0 = off) reaches the connection, and close stops the worker', async () => {
    expect(loadConfig({}).sqliteCheckpointMs).toBe(500);
    expect(loadConfig({ SQLITE_CHECKPOINT_MS: '0' }).sqliteCheckpointMs).toBe(0);
    expect(() => loadConfig({ SQLITE_CHECKPOINT_MS: '-1' })).toThrow(/SQLITE_CHECKPOINT_MS/);
    const on = openStore({ dataDir: join(work, 'gw-on'), sqliteCheckpointMs: 500 });
    const off = openStore({ dataDir: join(work, 'gw-off'), sqliteCheckpointMs: 0 });
    if (on.kind !== 'sqlite' || off.kind !== 'sqlite') throw new Error('expected SQLite');
    expect(autoPages(on.db)).toBe(0);
    expect(autoPages(off.db)).toBe(1000);
    await on.close();
    await off.close();
  });
});
