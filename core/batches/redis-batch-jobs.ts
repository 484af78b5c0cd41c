import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { defineScriptSet, loadScriptFiles, type ScriptRunner, scriptDirOf } from '../store/lua-scripts.js';
import type { BatchJob, BatchJobs } from './types.js';

type ScriptName = 'claim-batches';
const BATCH_SCRIPT_VERSION = 1;

/**
 * Redis batch jobs: one hash of jobs and one due zset, both in the `{batches}` slot, so the claim script touches
 * one slot (Redis Cluster serves it from one node). Batches are few and long: one slot is no bottleneck.
 */
export class RedisBatchJobs implements BatchJobs {
  private readonly run: ScriptRunner<ScriptName>;
  private readonly jobsKey: string;
  private readonly dueKey: string;

  constructor(
    private readonly redis: Redis | Cluster,
    prefix: string,
  ) {
    this.run = defineScriptSet(
      redis,
      loadScriptFiles<ScriptName>({
        dir: join(scriptDirOf(import.meta.url, join('redis', 'claim-batches-2.lua')), 'redis'),
        files: ['claim-batches-2'],
        prefix: 'gwBatches',
        version: BATCH_SCRIPT_VERSION,
      }),
    );
    this.jobsKey = `${prefix}:{batches}:jobs`;
    this.dueKey = `${prefix}:{batches}:due`;
  }

  async put(job: BatchJob, dueAtMs: number): Promise<void> {
    await this.redis
      .multi()
      .hset(this.jobsKey, job.id, JSON.stringify(job))
      .zadd(this.dueKey, dueAtMs, job.id)
      .exec();
  }

  async get(id: string): Promise<BatchJob | null> {
    const raw = await this.redis.hget(this.jobsKey, id);
    return raw === null ? null : (JSON.parse(raw) as BatchJob);
  }

  async claim(now: number, leaseMs: number, max: number): Promise<BatchJob[]> {
    const out = (await this.run(
      'claim-batches',
      [this.jobsKey, this.dueKey],
      [now, leaseMs, max],
    )) as string[];
    return out.map((raw) => JSON.parse(raw) as BatchJob);
  }

  async remove(id: string): Promise<void> {
    await this.redis.multi().hdel(this.jobsKey, id).zrem(this.dueKey, id).exec();
  }
}
