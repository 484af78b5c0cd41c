import { join } from 'node:path';
import type Database from 'libsql';
import type { RedisClient, StoreConnection } from '../store/connection.js';
import {
  defineScriptSet,
  type LoadedScript,
  loadScriptFiles,
  type ScriptRunner,
  scriptDirOf,
} from '../store/lua-scripts.js';
import { migrate } from '../store/sqlite-migrations.js';

/**
 * Fixed-window request counters (minute / hour / day) for the limits that are not a key's own (per client IP,
 * failed admin logins): `hit` counts one request in every window of `limits` and answers whether it is over
 * any of them; `peek` answers without counting. The counters live in the same store as the ledger, so every
 * process of a node shares them: Redis keys `<prefix>:lim:{scope:subject}:<seconds>:<window>` with an expiry
 * (one Lua command, one hash slot per subject), SQLite table `limit_windows`; an in-memory map when the node
 * has no store (relay-only test set-ups).
 */

export type WindowSeconds = 60 | 3600 | 86400;

export interface WindowLimit {
  seconds: WindowSeconds;
  limit: number;
}

export interface WindowVerdict {
  allowed: boolean;
  /** The tightest window (the refused one when not allowed). */
  seconds: WindowSeconds;
  limit: number;
  remaining: number;
  /** Unix seconds when that window resets. */
  resetUnix: number;
}

interface Win {
  seconds: number;
  window: number;
  limit: number;
}

interface Backend {
  /**
   * Each window's count, after counting one (when `add` is 1 and no window is full yet), first element
   * 1 when a window was already full (then nothing was counted).
   */
  counts(key: string, windows: Win[], add: 0 | 1, nowMs: number): Promise<number[]>;
}

/** The limiter's one script (core/limits/redis/hit-n.lua), loaded once per process. */
let scripts: Map<'hit', LoadedScript> | undefined;

class RedisBackend implements Backend {
  private readonly run: ScriptRunner<'hit'>;
  constructor(
    redis: RedisClient,
    private readonly prefix: string,
  ) {
    scripts ??= loadScriptFiles<'hit'>({
      dir: join(scriptDirOf(import.meta.url, join('redis', 'hit-n.lua')), 'redis'),
      files: ['hit-n'],
      prefix: 'gwLimit',
      version: 1,
    });
    this.run = defineScriptSet(redis, scripts);
  }
  async counts(key: string, windows: Win[], add: 0 | 1): Promise<number[]> {
    const keys = windows.map((w) => `${this.prefix}:lim:{${key}}:${w.seconds}:${w.window}`);
    const r = (await this.run('hit', keys, [
      add,
      ...windows.map((w) => w.seconds + 60),
      ...windows.map((w) => w.limit),
    ])) as number[];
    return r.map(Number);
  }
}

class SqliteBackend implements Backend {
  private readonly get: Database.Statement;
  private readonly bump: Database.Statement;
  private readonly prune: Database.Statement;
  private lastPrune = 0;
  constructor(private readonly db: Database.Database) {
    migrate(db);
    this.get = db.prepare('SELECT n FROM limit_windows WHERE k = ? AND expires_at > ?');
    this.bump = db.prepare(
      `INSERT INTO limit_windows (k, n, expires_at) VALUES (?, 1, ?)
       ON CONFLICT(k) DO UPDATE SET n = CASE WHEN expires_at > ? THEN n + 1 ELSE 1 END, expires_at = excluded.expires_at`,
    );
    this.prune = db.prepare('DELETE FROM limit_windows WHERE expires_at <= ?');
  }
  async counts(key: string, windows: Win[], add: 0 | 1, nowMs: number): Promise<number[]> {
    const ks = windows.map((w) => `${key}:${w.seconds}:${w.window}`);
    const tx = this.db.transaction(() => {
      const out = ks.map((k) => Number((this.get.get(k, nowMs) as { n: number } | undefined)?.n ?? 0));
      const over = out.some((c, i) => c >= windows[i]!.limit);
      if (add === 1 && !over) {
        ks.forEach((k, i) => {
          const expires = (windows[i]!.window + 1) * windows[i]!.seconds * 1000;
          this.bump.run(k, expires, nowMs);
          out[i] = out[i]! + 1;
        });
      }
      if (nowMs - this.lastPrune > 60_000) {
        this.lastPrune = nowMs;
        this.prune.run(nowMs);
      }
      return [over ? 1 : 0, ...out];
    });
    return tx.immediate();
  }
}

class MemoryBackend implements Backend {
  private readonly m = new Map<string, { n: number; expires: number }>();
  async counts(key: string, windows: Win[], add: 0 | 1, nowMs: number): Promise<number[]> {
    const ks = windows.map((w) => `${key}:${w.seconds}:${w.window}`);
    const out = ks.map((k) => {
      const e = this.m.get(k);
      return e !== undefined && e.expires > nowMs ? e.n : 0;
    });
    const over = out.some((c, i) => c >= windows[i]!.limit);
    if (add === 1 && !over) {
      ks.forEach((k, i) => {
        out[i] = out[i]! + 1;
        this.m.set(k, { n: out[i]!, expires: (windows[i]!.window + 1) * windows[i]!.seconds * 1000 });
      });
    }
    if (this.m.size > 100_000) for (const [k, e] of this.m) if (e.expires <= nowMs) this.m.delete(k);
    return [over ? 1 : 0, ...out];
  }
}

export class WindowLimiter {
  private readonly backend: Backend;

  constructor(store: StoreConnection | undefined) {
    if (store?.kind === 'redis') this.backend = new RedisBackend(store.redis, store.prefix);
    else if (store?.kind === 'sqlite') this.backend = new SqliteBackend(store.db);
    else this.backend = new MemoryBackend();
  }

  /** Counts one request of `subject` in `scope` (unless a window is already full) and answers the verdict. */
  hit(
    scope: string,
    subject: string,
    limits: readonly WindowLimit[],
    nowMs = Date.now(),
  ): Promise<WindowVerdict> {
    return this.check(scope, subject, limits, 1, nowMs);
  }

  /** The verdict without counting. */
  peek(
    scope: string,
    subject: string,
    limits: readonly WindowLimit[],
    nowMs = Date.now(),
  ): Promise<WindowVerdict> {
    return this.check(scope, subject, limits, 0, nowMs);
  }

  private async check(
    scope: string,
    subject: string,
    limits: readonly WindowLimit[],
    add: 0 | 1,
    nowMs: number,
  ): Promise<WindowVerdict> {
    const windows = limits.map((l) => ({
      seconds: l.seconds,
      window: Math.floor(nowMs / 1000 / l.seconds),
      limit: l.limit,
    }));
    const [over, ...counts] = await this.backend.counts(`${scope}:${subject}`, windows, add, nowMs);
    // Refused: a window that was full before this request (nothing was counted then).
    let verdict: WindowVerdict | undefined;
    let tightest: WindowVerdict | undefined;
    limits.forEach((l, i) => {
      const c = counts[i]!;
      const v: WindowVerdict = {
        allowed: over === 1 ? c < l.limit : true,
        seconds: l.seconds,
        limit: l.limit,
        remaining: Math.max(0, l.limit - c),
        resetUnix: (windows[i]!.window + 1) * l.seconds,
      };
      if (!v.allowed && verdict === undefined) verdict = v;
      if (tightest === undefined || v.remaining < tightest.remaining) tightest = v;
    });
    return verdict ?? tightest!;
  }
}
