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
 * each a loop stall of several milliseconds with two fsyncs in it (strace, docs/benchmarks.md "WAL checkpoints
 * off the loop").
 *
 * Here the gateway's connection turns the automatic checkpoint off and a worker thread with its own
 * connection to the same file runs `PRAGMA wal_checkpoint(PASSIVE)` every `everyMs`: a passive checkpoint
 * waits for no reader or writer, and the gateway's commits go on appending to the WAL while it copies. The
 * worker's connection is `synchronous = FULL`, so a checkpoint fsyncs the WAL before it copies and the
 * database after, as the automatic one did: what is durable is unchanged (docs/ledger.md, "Durability").
 *
 * The worker starts when the WAL first reaches `startAtBytes` (a gateway that writes little never starts a
 * thread; tests open many). If it fails or exits, the gateway's connection takes the automatic checkpoint
 * back (`wal_autocheckpoint = 1000`) and `onError` is told: the WAL never grows without bound.
 */

export interface CheckpointOptions {
  /** Period of the passive checkpoint, ms (`SQLITE_CHECKPOINT_MS`). */
  everyMs: number;
  /** The WAL size at which the worker starts, bytes; default 1 MiB. */
  startAtBytes?: number;
  /** A checkpoint that failed, or the worker gone (the automatic checkpoint is back on then). */
  onError?: (err: unknown) => void;
}

/** One checkpoint's answer, as the worker posts it (`busy`, `log` and `checkpointed` are SQLite's). */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
  ms: number;
}

export interface Checkpointer {
  /** Checkpoints done so far and the last one's answer (tests, diagnostics). */
  readonly stats: { runs: number; last: CheckpointResult | undefined; started: boolean; fallback: boolean };
  /** The worker thread once started (tests stop it to see the fallback). */
  readonly worker: Worker | undefined;
  /** Stops the worker; the caller closes its own connection after (its close checkpoints what is left). */
  close(): Promise<void>;
}

/** SQLite's default `wal_autocheckpoint`, restored when the worker is gone. */
const AUTO_CHECKPOINT_PAGES = 1000;

/*
 * The worker's whole program (CommonJS, evaluated: the gateway runs from dist/ and tests from sources, and a
 * worker file would need its own build entry). It opens the file, answers each message with one passive
 * checkpoint, and never writes anything else.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.libsql);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
db.pragma('synchronous = FULL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (m) => {
  if (m === 'close') { db.close(); parentPort.close(); return; }
  const t0 = performance.now();
  try {
    const r = checkpoint.get();
    parentPort.postMessage({ busy: r.busy, log: r.log, checkpointed: r.checkpointed, ms: performance.now() - t0 });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err), code: err && err.code });
  }
});
`;

/**
 * Moves `db`'s WAL checkpoints to a worker thread (see above). `path` is the database file's path; ':memory:'
 * has no WAL and gets nothing done. The timer is unref'd: it never keeps a process alive.
 */
export function checkpointInBackground(
  db: Database.Database,
  path: string,
  opts: CheckpointOptions,
): Checkpointer {
  const stats: Checkpointer['stats'] = { runs: 0, last: undefined, started: false, fallback: false };
  if (path === ':memory:' || opts.everyMs <= 0) return { stats, worker: undefined, close: async () => {} };
  const startAt = opts.startAtBytes ?? 1 << 20;
  db.pragma('wal_autocheckpoint = 0');
  let worker: Worker | undefined;
  let waiting = false;
  let closed = false;
  let exited: Promise<void> | undefined;

  const fallBack = (err: unknown): void => {
    if (closed || stats.fallback) return;
    stats.fallback = true;
    clearInterval(timer);
    try {
      db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    } catch {
      // The connection is closing: nothing to take back.
    }
    opts.onError?.(err);
  };

  const start = (): Worker => {
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, libsql: createRequire(import.meta.url).resolve('libsql') },
    });
    w.unref();
    w.on('message', (m: CheckpointResult | { error: string; code?: string }) => {
      waiting = false;
      if ('error' in m) {
        // Another process's checkpoint holds the lock: the next tick tries again.
        if (m.code === 'SQLITE_BUSY' || m.code === 'SQLITE_LOCKED') return;
        opts.onError?.(new Error(`WAL checkpoint failed: ${m.error}`));
        return;
      }
      stats.runs++;
      stats.last = m;
    });
    w.on('error', fallBack);
    exited = new Promise<void>((resolve) =>
      w.once('exit', (code) => {
        resolve();
        if (!closed) fallBack(new Error(`WAL checkpoint worker exited (code ${code})`));
      }),
    );
    stats.started = true;
    return w;
  };

  const walPath = `${path}-wal`;
  const tick = (): void => {
    if (worker === undefined) {
      let size = 0;
      try {
        size = statSync(walPath).size;
      } catch {
        return; // no WAL yet
      }
      if (size < startAt) return;
      worker = start();
    }
    if (waiting) return;
    waiting = true;
    worker.postMessage('check');
  };
  const timer = setInterval(tick, opts.everyMs);
  timer.unref();

  return {
    stats,
    get worker() {
      return worker;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      const w = worker;
      if (w === undefined || exited === undefined) return;
      w.postMessage('close'); // ignored by a worker already gone
      // A checkpoint in progress finishes first (messages are handled in order); a stuck one is cut short.
      const t = setTimeout(() => void w.terminate(), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
}
