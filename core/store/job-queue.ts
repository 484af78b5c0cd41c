import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import type Database from 'libsql';
import { defineScriptSet, loadScriptFiles, type ScriptRunner, scriptDirOf } from './lua-scripts.js';

/**
 * A durable job list in the money store, shared by every process: the batch settlement watcher's jobs
 * (core/batches/) and the expired-key sweep's (core/account/refund-sweep.ts). A job claim: a claimed job is
 * invisible to every process until `now + claimMs`, so one process works on a job at a time, and a job whose
 * process died is claimed again when its claim runs out. The work a job does must be idempotent (a second pass
 * after a crash must never pay or charge twice); the queue only decides whose turn it is.
 */
export interface JobQueue<T extends { id: string }> {
  /** Creates or replaces the job, due at `dueAtMs`. */
  put(job: T, dueAtMs: number): Promise<void>;
  get(id: string): Promise<T | null>;
  /** Up to `max` jobs due at `now`, each claimed until `now + claimMs`. */
  claim(now: number, claimMs: number, max: number): Promise<T[]>;
  /** Removes a finished (or abandoned) job. */
  remove(id: string): Promise<void>;
}

/** SQLite: one table `(id, due_at, job)` per queue (ledger migrations); a claim is one IMMEDIATE transaction. */
export class SqliteJobQueue<T extends { id: string }> implements JobQueue<T> {
  constructor(
    private readonly db: Database.Database,
    /** A table name from the migrations (never user input). */
    private readonly table: string,
  ) {}

  async put(job: T, dueAtMs: number): Promise<void> {
    this.db
      .prepare(`INSERT OR REPLACE INTO ${this.table} (id, due_at, job) VALUES (?, ?, ?)`)
      .run(job.id, dueAtMs, JSON.stringify(job));
  }

  async get(id: string): Promise<T | null> {
    const r = this.db.prepare(`SELECT job FROM ${this.table} WHERE id = ?`).get(id) as
      | { job: string }
      | undefined;
    return r === undefined ? null : (JSON.parse(r.job) as T);
  }

  async claim(now: number, claimMs: number, max: number): Promise<T[]> {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const rows = this.db
        .prepare(`SELECT id, job FROM ${this.table} WHERE due_at <= ? ORDER BY due_at LIMIT ?`)
        .all(now, max) as Array<{ id: string; job: string }>;
      const claim = this.db.prepare(`UPDATE ${this.table} SET due_at = ? WHERE id = ?`);
      for (const r of rows) claim.run(now + claimMs, r.id);
      this.db.exec('COMMIT');
      return rows.map((r) => JSON.parse(r.job) as T);
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  async remove(id: string): Promise<void> {
    this.db.prepare(`DELETE FROM ${this.table} WHERE id = ?`).run(id);
  }
}

type ScriptName = 'claim-jobs';
const JOB_SCRIPT_VERSION = 1;

/**
 * Redis: one hash of jobs and one due zset, both in the queue's own slot (`{<slot>}`), so the claim script
 * touches one slot (Redis Cluster serves it from one node). Such jobs are few and long: one slot is no bottleneck.
 */
export class RedisJobQueue<T extends { id: string }> implements JobQueue<T> {
  private readonly run: ScriptRunner<ScriptName>;
  private readonly jobsKey: string;
  private readonly dueKey: string;

  constructor(
    private readonly redis: Redis | Cluster,
    prefix: string,
    slot: string,
  ) {
    this.run = defineScriptSet(
      redis,
      loadScriptFiles<ScriptName>({
        dir: join(scriptDirOf(import.meta.url, join('redis', 'claim-jobs-2.lua')), 'redis'),
        files: ['claim-jobs-2'],
        prefix: 'gwJobs',
        version: JOB_SCRIPT_VERSION,
      }),
    );
    this.jobsKey = `${prefix}:{${slot}}:jobs`;
    this.dueKey = `${prefix}:{${slot}}:due`;
  }

  async put(job: T, dueAtMs: number): Promise<void> {
    await this.redis
      .multi()
      .hset(this.jobsKey, job.id, JSON.stringify(job))
      .zadd(this.dueKey, dueAtMs, job.id)
      .exec();
  }

  async get(id: string): Promise<T | null> {
    const raw = await this.redis.hget(this.jobsKey, id);
    return raw === null ? null : (JSON.parse(raw) as T);
  }

  async claim(now: number, claimMs: number, max: number): Promise<T[]> {
    const out = (await this.run('claim-jobs', [this.jobsKey, this.dueKey], [now, claimMs, max])) as string[];
    return out.map((raw) => JSON.parse(raw) as T);
  }

  async remove(id: string): Promise<void> {
    await this.redis.multi().hdel(this.jobsKey, id).zrem(this.dueKey, id).exec();
  }
}
