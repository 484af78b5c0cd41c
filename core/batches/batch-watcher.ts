import type { Ledger, SettleResult } from '../ledger/types.js';
import type { Logger } from '../log.js';
import type { ObjectOwners } from '../objects/types.js';
import type { Pricing } from '../pricing/types.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';
import { crashPoint } from '../wallet/context.js';
import { providerCall, providerJson } from './provider-call.js';
import { type BatchOutcome, priceOutput, settleBatch } from './settle-batch.js';
import type { BatchJob, BatchJobs } from './types.js';

/**
 * The durable settlement watcher (docs/pricing.md, "Batches"). Every process runs it; the jobs live in the money
 * store and each claim is a lease, so one process polls a batch at a time, a restarted or surviving process picks
 * up what a dead one held once its lease ran out, and the reservation of a batch is settled within one poll
 * after the provider reports a terminal state.
 */

export const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/**
 * A pending job (the provider never answered the create call, or the process died first) is released after this:
 * 10 minutes, and at least twice the provider timeout, so a create call still waiting for its answer is never
 * released under it.
 */
export function pendingMs(upstreamTimeoutMs: number): number {
  return Math.max(10 * 60_000, 2 * upstreamTimeoutMs);
}

export interface BatchSettled {
  job: BatchJob;
  outcome: BatchOutcome;
  result: SettleResult;
}

export interface BatchWatcherOptions {
  jobs: BatchJobs;
  objects: ObjectOwners;
  ledger: Ledger;
  pricing: Pricing;
  upstream: UpstreamClient;
  log: Logger;
  pollMs: number;
  /** After a settlement (also its replay after a crash): webhook and audit record. */
  onSettled?: (s: BatchSettled) => void | Promise<void>;
  now?: () => number;
}

export class BatchWatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly now: () => number;
  /** A claim outlives a pass over one batch (its output file read and priced) by a wide margin. */
  private readonly claimMs: number;

  constructor(private readonly opts: BatchWatcherOptions) {
    this.now = opts.now ?? Date.now;
    this.claimMs = Math.max(2_000, 5 * opts.pollMs);
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick()
        .then(() => undefined)
        .catch((err: unknown) => this.opts.log.warn({ err }, 'batch watcher pass failed'))
        .finally(() => {
          this.running = undefined;
        });
    }, this.opts.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass: claims the due jobs and handles each (also called by tests). */
  async tick(max = 50): Promise<number> {
    const jobs = await this.opts.jobs.claim(this.now(), this.claimMs, max);
    for (const job of jobs) {
      try {
        await this.handle(job);
      } catch (err) {
        // Left claimed: retried when the lease runs out.
        this.opts.log.warn({ err, batch: job.batchId, job: job.id }, 'batch settlement step failed');
      }
    }
    return jobs.length;
  }

  private async handle(job: BatchJob): Promise<void> {
    const { jobs, ledger, upstream } = this.opts;
    if (job.state === 'pending' || job.batchId === null) {
      // The create call never completed here: give the reservation back (the job was due only after `pendingMs`).
      await ledger.release({ accountId: job.accountId, requestId: job.id });
      await jobs.remove(job.id);
      this.opts.log.warn({ job: job.id }, 'batch creation never completed: reservation released');
      return;
    }
    const batch = providerJson(
      await providerCall(upstream, { method: 'GET', path: `/v1/batches/${encodeURIComponent(job.batchId)}` }),
      'GET /v1/batches/{id}',
    );
    const status = String(batch.status);
    if (!TERMINAL.has(status)) {
      await jobs.put(job, this.now() + this.opts.pollMs);
      return;
    }
    await recordBatchFiles(this.opts.objects, job, batch);
    let output: Buffer | null = null;
    if (typeof batch.output_file_id === 'string' && batch.output_file_id !== '') {
      const r = await providerCall(upstream, {
        method: 'GET',
        path: `/v1/files/${encodeURIComponent(batch.output_file_id)}/content`,
        headers: {},
      });
      if (r.status !== 200) providerJson(r, 'GET /v1/files/{id}/content');
      output = r.body;
    }
    const priced = priceOutput(this.opts.pricing, job, output);
    const counts = batch.request_counts as { failed?: unknown } | undefined;
    const failed = typeof counts?.failed === 'number' ? counts.failed : job.lines - priced.answered;
    const outcome: BatchOutcome = { status, failed, ...priced };
    const result = await settleBatch(ledger, job, outcome);
    crashPoint('batch-settled');
    if (result.ok) {
      this.opts.log.info(
        { batch: job.batchId, chargedMsat: result.chargedMsat, replay: result.replay },
        'batch settled',
      );
      await this.opts.onSettled?.({ job, outcome, result });
    } else this.opts.log.warn({ job: job.id, code: result.code }, 'batch reservation was no longer open');
    await jobs.remove(job.id);
  }
}

/** The batch's output and error files belong to the batch's key (the provider made them under the shared key). */
export async function recordBatchFiles(
  objects: ObjectOwners,
  job: Pick<BatchJob, 'accountId' | 'keyId'>,
  batch: Record<string, unknown>,
): Promise<void> {
  for (const f of [batch.output_file_id, batch.error_file_id]) {
    if (typeof f !== 'string' || f === '') continue;
    await objects.record({
      id: f,
      kind: 'file',
      accountId: job.accountId,
      keyId: job.keyId,
      createdAtMs: Date.now(),
      meta: null,
    });
  }
}
