import type { PricedEndpoint } from '../pricing/types.js';
import type { JobQueue } from '../store/job-queue.js';

/**
 * A batch's settlement job, kept in the money store from before its reservation is made until it is settled
 * (docs/pricing.md, "Batches"). Its id is the reservation id (`b_<uuid>`): never owned by a process, so
 * `releaseOrphans` leaves it alone; its lease outlives the provider's completion window.
 *
 * States: `pending` (reserved, the provider has not answered the create call yet: a crash here leaves a job
 * the watcher releases after `pendingMs`: 10 minutes, at least twice the provider timeout), `open` (the provider has the batch: polled every BATCH_POLL_MS
 * until it ends, then settled once).
 */
export interface BatchJob {
  id: string;
  state: 'pending' | 'open';
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
}

/**
 * The durable job list of the settlement watcher (core/store/job-queue.ts): one process polls a batch at a time,
 * and a job whose process died is claimed again when its lease runs out (settlement is idempotent on the
 * reservation id, so a second pass never charges twice).
 */
export type BatchJobs = JobQueue<BatchJob>;
