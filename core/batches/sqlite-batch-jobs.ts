import type Database from 'libsql';
import { SqliteJobQueue } from '../store/job-queue.js';
import type { BatchJob } from './types.js';

/** SQLite batch jobs: the durable job queue (core/store/job-queue.ts) on table `batch_jobs` (ledger migration 6). */
export class SqliteBatchJobs extends SqliteJobQueue<BatchJob> {
  constructor(db: Database.Database) {
    super(db, 'batch_jobs');
  }
}
