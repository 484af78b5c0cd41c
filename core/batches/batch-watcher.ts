import type { Ledger, SettleResult } from '../ledger/types.js';
import type { Logger } from '../log.js';
import type { ObjectOwners } from '../objects/types.js';
import type { Pricing } from '../pricing/types.js';
import { type OpSpan, type OpSpanAttributes, spanStep, startOpSpan } from '../trace-context.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';
import { crashPoint } from '../wallet/context.js';
import { pollBackgroundResponse } from './background-responses.js';
import { providerCall, providerJson, providerLines } from './provider-call.js';
import { findCreatedBatch } from './reconcile.js';
import { type BatchOutcome, OutputPricer, settleBatch } from './settle-batch.js';
import type { BatchJob, BatchJobs } from './types.js';

/**
 * The durable settlement watcher (docs/pricing.md, "Batches"). Every process runs it; the jobs live in the money
 * store and each job claim holds the job for a while, so one process polls a batch at a time, a restarted or surviving process picks
 * up what a dead one held once its claim ran out, and the reservation of a batch is settled within one poll
 * after the provider reports a terminal state.
 *
 * Cadence: a pass runs every `pollMs`; a job polled in a pass is due again `pollMs` after that pass's claim (not
 * after the provider answered), and a pass claims the jobs due within half a poll of it, so the timer's jitter and
 * the provider's latency never push a job to the pass after next: each open batch is asked about once per pass.
 */

export const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/**
 * A pending job (the process that sent the create call died before its answer) is reconciled after this: 10
 * minutes, and at least twice the provider timeout, so a create call still waiting for its answer is never taken
 * over under it.
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
  /** Searches of the provider's batch list for a batch whose creation had no clear answer (./reconcile.ts). */
  reconcilePolls: number;
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
    const at = this.now();
    const jobs = await this.opts.jobs.claim(at + Math.floor(this.opts.pollMs / 2), this.claimMs, max);
    for (const job of jobs) {
      try {
        await this.handle(job, at);
      } catch (err) {
        // Left claimed: retried when the claim runs out.
        this.opts.log.warn({ err, batch: job.batchId, job: job.id }, 'batch settlement step failed');
      }
    }
    return jobs.length;
  }

  /** `at`: the pass's claim time; the job's next poll is due a poll after it. */
  private async handle(job: BatchJob, at: number): Promise<void> {
    if (job.kind === 'response') return this.pollResponse(job, at);
    if (job.state === 'open' && job.batchId !== null) return this.poll(job, job.batchId, at);
    if (job.state === 'pending' && job.inputFileId === undefined) {
      // A job from before reconciliation existed: nothing to search the provider's list with.
      await this.opts.ledger.release({ accountId: job.accountId, requestId: job.id });
      await this.opts.jobs.remove(job.id);
      this.opts.log.warn({ job: job.id }, 'batch creation never completed: reservation released');
      return;
    }
    // `pending` (the process that sent the create call died before the answer; due only after `pendingMs`) or
    // `reconcile`: the provider may have made the batch.
    return this.reconcile(
      { ...job, state: 'reconcile', attemptAtMs: job.attemptAtMs ?? job.createdAtMs },
      at,
    );
  }

  private async reconcile(job: BatchJob, at: number): Promise<void> {
    const { jobs, ledger, upstream, objects, log } = this.opts;
    const batchId = await findCreatedBatch(upstream, objects, job);
    if (batchId !== null) {
      const open: BatchJob = { ...job, state: 'open', batchId };
      await jobs.put(open, at + this.opts.pollMs);
      log.warn({ job: job.id, batch: batchId }, 'batch creation reconciled: the provider made the batch');
      return this.poll(open, batchId, at);
    }
    const polls = (job.reconcilePolls ?? 0) + 1;
    if (polls < this.opts.reconcilePolls) {
      await jobs.put({ ...job, reconcilePolls: polls }, at + this.opts.pollMs);
      return;
    }
    await ledger.release({ accountId: job.accountId, requestId: job.id });
    await jobs.remove(job.id);
    log.warn(
      { job: job.id, polls },
      'batch creation reconciled: the provider never made the batch, reservation released',
    );
  }

  /** A failed read of an ended batch's output: false (due again after a poll) until it failed `reconcilePolls` times. */
  private async outputFailed(job: BatchJob, at: number, err: unknown): Promise<boolean> {
    const reads = (job.outputReads ?? 0) + 1;
    this.opts.log.warn({ job: job.id, batch: job.batchId, reads, err }, 'batch output could not be read');
    if (reads >= this.opts.reconcilePolls) return true;
    await this.opts.jobs.put({ ...job, outputReads: reads }, at + this.opts.pollMs);
    return false;
  }

  /** A background response: polled until it ended, then settled once (./background-responses.ts). */
  private async pollResponse(job: BatchJob, at: number): Promise<void> {
    const { jobs, log } = this.opts;
    // Traced when it settles (README, "Tracing"): a `response settle` span linked to the call that started it.
    const span = startOpSpan('response settle', () => jobAttributes(job), { link: job.traceparent });
    let r: Awaited<ReturnType<typeof pollBackgroundResponse>>;
    try {
      r = await pollBackgroundResponse(this.opts, job);
    } catch (err) {
      span?.end(err);
      throw err;
    }
    if (r.running) {
      await jobs.put(job, at + this.opts.pollMs);
      return;
    }
    span?.set({ 'gateway.response.status': r.status, ...settledAttributes(r.result) });
    span?.end(r.result.ok ? undefined : { code: r.result.code });
    crashPoint('batch-settled');
    if (r.result.ok) {
      log.info(
        {
          response: job.batchId,
          status: r.status,
          chargedMsat: r.result.chargedMsat,
          replay: r.result.replay,
        },
        'background response settled',
      );
    } else
      log.warn({ job: job.id, code: r.result.code }, 'background response reservation was no longer open');
    await jobs.remove(job.id);
  }

  /**
   * Settles the job's batch now when the provider says it ended (the `GET /v1/batches/{id}` that first sees it
   * ended, before it answers: its files are named to the key only once it is settled). No job (settled already)
   * or a batch still running: nothing. Settlement is idempotent, so a watcher pass doing the same meanwhile
   * charges nothing twice.
   */
  async settleIfEnded(jobId: string): Promise<void> {
    const job = await this.opts.jobs.get(jobId);
    if (job === null || job.kind === 'response' || job.state !== 'open' || job.batchId === null) return;
    await this.poll(job, job.batchId, this.now());
  }

  private async poll(job: BatchJob, batchId: string, at: number): Promise<void> {
    // Traced when it settles (README, "Tracing"): a `batch settle` span linked to the batch's creation, with the
    // steps `output` (the output file read and priced) and `settle` (the ledger's charge).
    const span = startOpSpan('batch settle', () => jobAttributes(job), { link: job.traceparent });
    try {
      await this.pollTraced(job, batchId, at, span);
    } catch (err) {
      span?.end(err);
      throw err;
    }
  }

  private async pollTraced(
    job: BatchJob,
    batchId: string,
    at: number,
    span: OpSpan | undefined,
  ): Promise<void> {
    const { jobs, ledger, upstream } = this.opts;
    const batch = providerJson(
      await providerCall(upstream, { method: 'GET', path: `/v1/batches/${encodeURIComponent(batchId)}` }),
      'GET /v1/batches/{id}',
    );
    const status = String(batch.status);
    if (!TERMINAL.has(status)) {
      await jobs.put(job, at + this.opts.pollMs);
      return;
    }
    const output = span?.child('output');
    // The output file is priced line by line as it arrives: never held whole (a 200 MB output is fine).
    const pricer = new OutputPricer(this.opts.pricing, job);
    /** The output file exists and cannot be read: the whole reservation (the lines ran, unseen). */
    let unreadable = false;
    if (typeof batch.output_file_id === 'string' && batch.output_file_id !== '') {
      let status: number | undefined;
      try {
        status = await providerLines(
          upstream,
          `/v1/files/${encodeURIComponent(batch.output_file_id)}/content`,
          (line) => pricer.line(line),
        );
      } catch (err) {
        if (!(await this.outputFailed(job, at, err))) return;
        unreadable = true;
      }
      if (status !== undefined && status !== 200) {
        // Gone (deleted, expired: any 4xx) is final; a 5xx is retried a bounded number of times.
        if (status >= 500 && !(await this.outputFailed(job, at, `status ${status}`))) return;
        unreadable = true;
      }
    }
    output?.end();
    const priced = unreadable
      ? {
          answered: job.lines,
          lines: job.lines,
          costMsat: job.reservedMsat,
          promptTokens: 0,
          completionTokens: 0,
        }
      : pricer.result();
    const counts = batch.request_counts as { failed?: unknown } | undefined;
    const failed = typeof counts?.failed === 'number' ? counts.failed : job.lines - priced.answered;
    const outcome: BatchOutcome = {
      status: unreadable ? `${status} (output unreadable)` : status,
      failed,
      ...priced,
    };
    const result = await spanStep(span, 'settle', () => settleBatch(ledger, job, outcome));
    span?.set({
      'gateway.batch.status': outcome.status,
      'gateway.batch.answered': outcome.answered,
      'gateway.batch.failed': outcome.failed,
      'gen_ai.usage.input_tokens': outcome.promptTokens,
      'gen_ai.usage.output_tokens': outcome.completionTokens,
      'gateway.msats.cost': outcome.costMsat,
      ...settledAttributes(result),
    });
    // Only now are its output and error files the key's (readable and deletable by it).
    await recordBatchFiles(this.opts.objects, job, batch);
    crashPoint('batch-settled');
    if (result.ok) {
      this.opts.log.info(
        { batch: job.batchId, chargedMsat: result.chargedMsat, replay: result.replay },
        'batch settled',
      );
      await this.opts.onSettled?.({ job, outcome, result });
    } else this.opts.log.warn({ job: job.id, code: result.code }, 'batch reservation was no longer open');
    await jobs.remove(job.id);
    span?.end(result.ok ? undefined : { code: result.code });
  }
}

/** What a settlement span says of its job: ids, model and the reservation (never a credential). */
function jobAttributes(job: BatchJob): OpSpanAttributes {
  return {
    'gateway.job_id': job.id,
    'gateway.key_id': job.keyId,
    'gen_ai.request.model': job.model,
    'gateway.msats.reserved': job.reservedMsat,
    ...(job.kind === 'response'
      ? { 'gen_ai.response.id': job.batchId ?? undefined }
      : { 'gateway.batch.id': job.batchId ?? undefined, 'gateway.batch.lines': job.lines }),
  };
}

/** The ledger's answer to a settlement, in msats. */
function settledAttributes(r: SettleResult): OpSpanAttributes {
  return r.ok
    ? {
        'gateway.msats.charged': r.chargedMsat,
        'gateway.msats.released': r.releasedMsat,
        'gateway.msats.balance_after': r.balanceMsat,
        'gateway.settle.replay': r.replay,
      }
    : { 'gateway.settle.refused': r.code };
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
