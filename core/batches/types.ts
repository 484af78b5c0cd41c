import type { PricedEndpoint } from '../pricing/types.js';
import type { JobQueue } from '../store/job-queue.js';

/**
 * A batch's settlement job, kept in the money store from before its reservation is made until it is settled
 * (docs/pricing.md, "Batches"). Its id is the reservation id (`b_<uuid>`): never owned by a process, so
 * `releaseOrphans` leaves it alone; its lease outlives the provider's completion window.
 *
 * States: `pending` (reserved, the provider has not answered the create call yet: a crash here leaves a job
 * the watcher reconciles after `pendingMs`: 10 minutes, at least twice the provider timeout), `reconcile` (the
 * create call was sent but had no clear answer, a timeout or a dropped connection: the provider may have made the
 * batch, so the reservation is kept and the watcher looks for it in the provider's batch list, once per
 * BATCH_POLL_MS, at most BATCH_RECONCILE_POLLS times, before releasing it), `open` (the provider has the batch:
 * polled every BATCH_POLL_MS until it ends, then settled once).
 */
export interface BatchJob {
  id: string;
  state: 'pending' | 'reconcile' | 'open';
  accountId: string;
  keyId: string;
  /** The key's parent (child keys): its webhooks see the child's batch.completed too. */
  parentKeyId: string | null;
  /** The provider's batch id (null while pending). */
  batchId: string | null;
  model: string;
  endpoint: PricedEndpoint;
  /** The batch price multiplier (decimal string). */
  factor: string;
  /** The BTC price the input file's bound was computed at (model pricing); lines are priced at it. */
  btcUsd: string | undefined;
  reservedMsat: number;
  lines: number;
  createdAtMs: number;
  /** The input file (absent in jobs written before reconciliation existed: such a pending job is released). */
  inputFileId?: string;
  /** When the create call was sent: a batch the provider made for it was made at or after this. */
  attemptAtMs?: number;
  /** `reconcile`: the provider's batch list was searched this many times without finding the batch. */
  reconcilePolls?: number;
  /** Failed reads of an ended batch's output file (5xx, no answer): after BATCH_RECONCILE_POLLS, its reservation. */
  outputReads?: number;
  /**
   * `response`: a background response (core/batches/background-responses.ts), not a batch: `batchId` is the
   * provider's response id, polled with `GET /v1/responses/{id}` and settled from its usage.
   */
  kind?: 'response';
  /** msats in one whole unit of the eCash token that paid it (1,000 for `sat`): the charge is rounded up to it. */
  chargeStep?: number;
  /**
   * The W3C `traceparent` of the span that made the job (the batch's creation, the background response's call),
   * when tracing was on: the settlement's span links to it (README, "Tracing"). Not a secret.
   */
  traceparent?: string;
}

/**
 * The durable job list of the settlement watcher (core/store/job-queue.ts): one process polls a batch at a time,
 * and a job whose process died is claimed again when its claim runs out (settlement is idempotent on the
 * reservation id, so a second pass never charges twice).
 */
export type BatchJobs = JobQueue<BatchJob>;
