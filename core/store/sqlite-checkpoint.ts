import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'libsql';

/**
 * WAL checkpoints off the event loop (SQLite store only).
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past `wal_autocheckpoint` pages
 * (1,000 by default): that commit fsyncs the WAL, copies every page into the database file and fsyncs it, on
 * the gateway's one thread. At a paced 1,000 paid calls a second that was a ≈ 260-page checkpoint every ≈ 2 s,
 * each a loop stall of 5–6 ms with two fsyncs in it (docs/benchmarks.md "WAL checkpoints off the loop").
 *
 * Here the gateway's connection turns the automatic checkpoint off and a worker thread with its own
 * connection to the same file checkpoints, every `everyMs`, in two passive passes:
 * 1. the bulk: `PRAGMA wal_checkpoint(PASSIVE)` copies every frame committed so far while the gateway goes on
 *    committing (a passive checkpoint waits for no reader or writer);
 * 2. the rest: the gateway holds its group commits (`CommitGate`: calls keep being served, only the hot
 *    commits wait, ≈ 1–3 ms) while a second passive pass copies the few frames written during the first. The
 *    WAL is then wholly in the database, and the next write starts it again from the beginning (step 3).
 *    From the bulk pass to the rest the worker holds a read snapshot open, so that no gateway commit in between
 *    can be that write.
 * Without the second pass the WAL is never wholly copied under a steady write load and grows without bound
 * (measured: 4.2 GB a minute in the soak at 1,000 req/s; SQLite restarts a WAL only when a writer finds every
 * frame backfilled).
 *
 * 3. the restart: when the second pass copied everything, the worker writes one page (page 1's application id,
 *    written back unchanged) while the commits are still held. That write is the one that starts the WAL again
 *    from its beginning, and SQLite fsyncs the new WAL header in the writer that restarts it: here, on the
 *    worker's thread, instead of inside the gateway's next commit (measured: with the synced hot commit below,
 *    42 fsyncs of 0.3–2.2 ms in 10 s on the event loop at 1,000 paid calls a second, none after). A writer
 *    holding the lock just then: skipped, the gateway's next commit restarts it as before.
 * The worker's connection is `synchronous = FULL`, so a checkpoint fsyncs the WAL before it copies and the
 * database after, as the automatic one did: what is durable is unchanged (docs/ledger.md, "Durability"). A cycle
 * whose second pass copied the whole WAL therefore made every commit before it durable: it says so through
 * `CommitGate.durableBefore`, and `SqliteStore`'s hot commits count it as their periodic sync (before, one hot
 * commit a second ran `FULL` on the event loop for that).
 * The worker starts when the WAL first reaches `startAtBytes` (a gateway that writes little never starts a
 * thread; tests open many). If it fails, exits, answers a pass late, or the WAL still grows past
 * `maxWalFrames` (writes outside the group commit, another process's readers), the connection takes the
 * automatic checkpoint back (`wal_autocheckpoint = 1000`) and `onError` is told: the WAL stays bounded.
 */

/**
 * Holds the hot group commits of one connection while the checkpoint's second pass runs (see above).
 * `SqliteStore` looks it up by connection (`commitGateOf`); none registered: commits never wait.
 */
export class CommitGate {
  private holding = false;
  private waiters: (() => void)[] = [];
  /**
   * Every commit made before this time (ms since the epoch) is on disk: a cycle whose second pass copied the
   * whole WAL began then, and SQLite syncs the database file after a complete checkpoint. `SqliteStore` counts
   * it as a synced commit (its hot commits then need no fsync of their own, `sqliteMaxUnsyncedMs`). 0: none yet.
   */
  durableBefore = 0;
  get held(): boolean {
    return this.holding;
  }
  hold(): void {
    this.holding = true;
  }
  release(): void {
    if (!this.holding) return;
    this.holding = false;
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }
  /** Runs `fn` once the gate is open (at once when it is). */
  whenOpen(fn: () => void): void {
    if (this.holding) this.waiters.push(fn);
    else fn();
  }
}

const gates = new WeakMap<object, CommitGate>();

/** The commit gate of a connection whose checkpoints run in the background, if any. */
export function commitGateOf(db: object): CommitGate | undefined {
  return gates.get(db);
}

export interface CheckpointOptions {
  /** Period of the passive checkpoint, ms (`SQLITE_CHECKPOINT_MS`). */
  everyMs: number;
  /** The WAL size at which the worker starts, bytes; default 1 MiB. */
  startAtBytes?: number;
  /** Frames in the WAL after a cycle past which the automatic checkpoint is taken back; default 20,000 (≈ 80 MB). */
  maxWalFrames?: number;
  /** Longest hold of the group commits for the second pass, ms; a later answer falls back. Default 250. */
  maxHoldMs?: number;
  /** A checkpoint that failed, or the worker gone (the automatic checkpoint is back on then). */
  onError?: (err: unknown) => void;
}

/** One checkpoint's answer, as the worker posts it (`busy`, `log` and `checkpointed` are SQLite's). */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
  ms: number;
  /** The worker's own write restarted the WAL after this pass (second passes only). */
  restarted?: boolean;
}

export interface Checkpointer {
  /** Checkpoints done so far and the last one's answer (tests, diagnostics). */
  readonly stats: {
    /** Cycles completed (both passes). */
    runs: number;
    /** The last second pass's answer: `checkpointed === log` means the whole WAL was copied. */
    last: CheckpointResult | undefined;
    fallback: boolean;
    /** The longest hold of the group commits so far, ms. */
    longestHoldMs: number;
    /** WAL restarts made by the worker's write (its header fsync off the event loop). */
    restarts: number;
  };
  /** The worker thread once started (undefined until the WAL reaches the start size; tests stop it to see the fallback). */
  readonly worker: Worker | undefined;
  /** Stops the worker; the caller closes its own connection after (its close checkpoints what is left). */
  close(): Promise<void>;
}

/** SQLite's default `wal_autocheckpoint`, restored when the worker is gone. */
const AUTO_CHECKPOINT_PAGES = 1000;

/*
 * The worker's whole program (CommonJS, evaluated: the gateway runs from dist/ and tests from sources, and a
 * worker file would need its own build entry). It opens the file and answers each message with one passive
 * checkpoint; after a second pass ('rest') that copied the whole WAL it also restarts the WAL by writing page 1's
 * application id back unchanged (its only write: no row, no schema; `synchronous = NORMAL` for it, as nothing in
 * it needs to be durable, so the one fsync left is the new WAL header's).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.libsql);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
db.pragma('synchronous = FULL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const appId = db.prepare('PRAGMA application_id');
// A read snapshot held from the bulk pass to the rest: while it is open no writer can start the WAL again, so
// the gateway's commits between the two passes append to it instead of restarting it (and syncing its header).
const pin = new Database(workerData.path);
const pinRead = pin.prepare('SELECT 1 FROM sqlite_master LIMIT 1');
let pinned = false;
function unpin() {
  if (!pinned) return;
  pinned = false;
  try { pin.exec('COMMIT'); } catch {}
}
function pinSnapshot() {
  unpin();
  try { pin.exec('BEGIN'); pinRead.get(); pinned = true; } catch { try { pin.exec('ROLLBACK'); } catch {} }
}
function restart() {
  db.exec('PRAGMA synchronous = NORMAL');
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('PRAGMA application_id = ' + Math.trunc(Number(appId.get().application_id)));
    db.exec('COMMIT');
    return true;
  } catch {
    // A writer held the lock (busy_timeout 0), or the write failed: the gateway's next commit restarts the WAL.
    if (db.inTransaction) try { db.exec('ROLLBACK'); } catch {}
    return false;
  } finally {
    db.exec('PRAGMA synchronous = FULL');
  }
}
parentPort.on('message', (m) => {
  if (m === 'close') { unpin(); pin.close(); db.close(); parentPort.close(); return; }
  const t0 = performance.now();
  try {
    if (m === 'rest') unpin();
    else pinSnapshot();
    const r = checkpoint.get();
    // A busy bulk pass is not followed by the rest: nothing is to be held for it.
    if (r.busy !== 0) unpin();
    const whole = r.busy === 0 && r.log > 0 && r.checkpointed === r.log;
    const restarted = m === 'rest' && whole ? restart() : false;
    parentPort.postMessage({ busy: r.busy, log: r.log, checkpointed: r.checkpointed, ms: performance.now() - t0, restarted });
  } catch (err) {
    unpin();
    parentPort.postMessage({ error: String(err && err.message || err), code: err && err.code });
  }
});
`;

type WorkerAnswer = CheckpointResult | { error: string; code?: string };

/**
 * Moves `db`'s WAL checkpoints to a worker thread (see above). `path` is the database file's path; ':memory:'
 * has no WAL and gets nothing done. The timer is unref'd: it never keeps a process alive.
 */
export function checkpointInBackground(
  db: Database.Database,
  path: string,
  opts: CheckpointOptions,
): Checkpointer {
  if (path === ':memory:' || opts.everyMs <= 0)
    return { stats: zeroStats(), worker: undefined, close: async () => {} };
  return new BackgroundCheckpointer(db, path, opts);
}

const zeroStats = (): Checkpointer['stats'] => ({
  runs: 0,
  last: undefined,
  fallback: false,
  longestHoldMs: 0,
  restarts: 0,
});

class BackgroundCheckpointer implements Checkpointer {
  readonly stats = zeroStats();
  private readonly gate = new CommitGate();
  private readonly timer: NodeJS.Timeout;
  private readonly walPath: string;
  private readonly startAt: number;
  private readonly maxFrames: number;
  private readonly maxHoldMs: number;
  private w: Worker | undefined;
  /** The pass in flight: none, the bulk (commits go on), or the rest (commits held since `heldAt`). */
  private phase: 'idle' | 'bulk' | 'rest' = 'idle';
  private heldAt = 0;
  /** When the second pass in flight was asked for (ms since the epoch): what it copies was committed before. */
  private restAskedAt = 0;
  private holdTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private exited: Promise<void> | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly opts: CheckpointOptions,
  ) {
    this.walPath = `${path}-wal`;
    this.startAt = opts.startAtBytes ?? 1 << 20;
    this.maxFrames = opts.maxWalFrames ?? 20_000;
    this.maxHoldMs = opts.maxHoldMs ?? 250;
    db.pragma('wal_autocheckpoint = 0');
    gates.set(db, this.gate);
    this.timer = setInterval(() => this.tick(), opts.everyMs);
    this.timer.unref();
  }

  get worker(): Worker | undefined {
    return this.w;
  }

  /** Every `everyMs`: starts the worker once the WAL is big enough, then a cycle when none is in flight. */
  private tick(): void {
    if (this.w === undefined) {
      let size = 0;
      try {
        size = statSync(this.walPath).size;
      } catch {
        return; // no WAL yet
      }
      if (size < this.startAt) return;
      this.w = this.start();
    }
    if (this.phase !== 'idle') return;
    this.phase = 'bulk';
    this.w.postMessage('check');
  }

  private start(): Worker {
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path: this.path, libsql: createRequire(import.meta.url).resolve('libsql') },
    });
    w.unref();
    w.on('message', (m: WorkerAnswer) => this.answered(w, m));
    w.on('error', (err) => this.fallBack(err));
    this.exited = new Promise<void>((resolve) =>
      w.once('exit', (code) => {
        resolve();
        if (!this.closed) this.fallBack(new Error(`WAL checkpoint worker exited (code ${code})`));
      }),
    );
    return w;
  }

  private answered(w: Worker, m: WorkerAnswer): void {
    const was = this.phase;
    this.phase = 'idle';
    if (was === 'rest') this.open();
    if (this.stats.fallback || this.closed) return;
    if ('error' in m) {
      // Another process's checkpoint holds the lock: the next tick tries again.
      if (m.code === 'SQLITE_BUSY' || m.code === 'SQLITE_LOCKED') return;
      this.opts.onError?.(new Error(`WAL checkpoint failed: ${m.error}`));
      return;
    }
    if (was === 'bulk') {
      if (m.busy !== 0) return; // another checkpoint ran: the next tick
      // The rest, with the group commits held: nothing is appended while it copies.
      this.phase = 'rest';
      this.gate.hold();
      this.heldAt = performance.now();
      this.holdTimer = setTimeout(
        () => this.fallBack(new Error(`WAL checkpoint's second pass took over ${this.maxHoldMs} ms`)),
        this.maxHoldMs,
      );
      this.holdTimer.unref();
      this.restAskedAt = Date.now();
      w.postMessage('rest');
      return;
    }
    this.stats.runs++;
    this.stats.last = m;
    if (m.restarted === true) this.stats.restarts++;
    // A complete copy: SQLite synced the database after it, so every commit made before the pass is on disk.
    if (m.busy === 0 && m.checkpointed === m.log) {
      this.gate.durableBefore = Math.max(this.gate.durableBefore, this.restAskedAt);
    }
    if (m.log > this.maxFrames) {
      this.fallBack(
        new Error(
          `the WAL holds ${m.log} frames after a checkpoint (over ${this.maxFrames}): it is not restarting`,
        ),
      );
    }
  }

  /** Opens the gate (the held commits run on the next turn). */
  private open(): void {
    if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    if (this.gate.held) {
      this.stats.longestHoldMs = Math.max(this.stats.longestHoldMs, performance.now() - this.heldAt);
    }
    this.gate.release();
  }

  /** The worker is gone or not keeping up: SQLite's own checkpoint comes back, the gate goes. */
  private fallBack(err: unknown): void {
    this.open();
    gates.delete(this.db);
    if (this.closed || this.stats.fallback) return;
    this.stats.fallback = true;
    clearInterval(this.timer);
    try {
      this.db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    } catch {
      // The connection is closing: nothing to take back.
    }
    this.opts.onError?.(err);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.open();
    gates.delete(this.db);
    const w = this.w;
    if (w === undefined || this.exited === undefined) return;
    w.postMessage('close'); // ignored by a worker already gone
    // A checkpoint in progress finishes first (messages are handled in order); a stuck one is cut short.
    const t = setTimeout(() => void w.terminate(), 5_000);
    await this.exited;
    clearTimeout(t);
  }
}
