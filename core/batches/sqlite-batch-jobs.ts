import type Database from 'libsql';
import type { BatchJob, BatchJobs } from './types.js';

/** SQLite batch jobs (table `batch_jobs`, ledger migration 6). A claim is one IMMEDIATE transaction. */
export class SqliteBatchJobs implements BatchJobs {
  constructor(private readonly db: Database.Database) {}

  async put(job: BatchJob, dueAtMs: number): Promise<void> {
    this.db
      .prepare('INSERT OR REPLACE INTO batch_jobs (id, due_at, job) VALUES (?, ?, ?)')
      .run(job.id, dueAtMs, JSON.stringify(job));
  }

  async get(id: string): Promise<BatchJob | null> {
    const r = this.db.prepare('SELECT job FROM batch_jobs WHERE id = ?').get(id) as
      | { job: string }
      | undefined;
    return r === undefined ? null : (JSON.parse(r.job) as BatchJob);
  }

  async claim(now: number, leaseMs: number, max: number): Promise<BatchJob[]> {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const rows = this.db
        .prepare('SELECT id, job FROM batch_jobs WHERE due_at <= ? ORDER BY due_at LIMIT ?')
        .all(now, max) as Array<{ id: string; job: string }>;
      const lease = this.db.prepare('UPDATE batch_jobs SET due_at = ? WHERE id = ?');
      for (const r of rows) lease.run(now + leaseMs, r.id);
      this.db.exec('COMMIT');
      return rows.map((r) => JSON.parse(r.job) as BatchJob);
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  async remove(id: string): Promise<void> {
    this.db.prepare('DELETE FROM batch_jobs WHERE id = ?').run(id);
  }
}
