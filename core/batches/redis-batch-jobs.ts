import type { Cluster, Redis } from 'ioredis';
import { RedisJobQueue } from '../store/job-queue.js';
import type { BatchJob } from './types.js';

/** Redis batch jobs: the durable job queue (core/store/job-queue.ts) in the `{batches}` slot. */
export class RedisBatchJobs extends RedisJobQueue<BatchJob> {
  constructor(redis: Redis | Cluster, prefix: string) {
    super(redis, prefix, 'batches');
  }
}
