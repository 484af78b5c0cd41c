import { RedisObjectOwners } from '../objects/redis-object-owners.js';
import { SqliteObjectOwners } from '../objects/sqlite-object-owners.js';
import type { ObjectOwners } from '../objects/types.js';
import type { Services } from '../service-types.js';
import type { StoreConnection } from '../store/connection.js';
import { type BatchSettled, BatchWatcher } from './batch-watcher.js';
import { RedisBatchJobs } from './redis-batch-jobs.js';
import { SqliteBatchJobs } from './sqlite-batch-jobs.js';
import type { BatchJobs } from './types.js';

/**
 * Builds the ownership store, the batch jobs and the settlement watcher on the money store, and starts the
 * watcher (every process runs one; the claims keep them from polling the same batch at once).
 */
export function startBatchServices(
  services: Services,
  store: StoreConnection,
): { objects: ObjectOwners; jobs: BatchJobs; watcher?: BatchWatcher; close(): Promise<void> } {
  const objects =
    store.kind === 'redis'
      ? new RedisObjectOwners(store.redis, store.prefix)
      : new SqliteObjectOwners(store.db);
  const jobs =
    store.kind === 'redis' ? new RedisBatchJobs(store.redis, store.prefix) : new SqliteBatchJobs(store.db);
  const { ledger, pricing } = services;
  if (ledger === undefined || pricing === undefined) {
    return { objects, jobs, close: async () => {} };
  }
  const watcher = new BatchWatcher({
    jobs,
    objects,
    ledger,
    pricing,
    upstream: services.upstream,
    log: services.log,
    pollMs: services.config.batches.pollMs,
    reconcilePolls: services.config.batches.reconcilePolls,
    onSettled: (s) => onSettled(services, s),
  });
  watcher.start();
  return { objects, jobs, watcher, close: () => watcher.stop() };
}

/** A settled batch: the audit trail's record and the `batch.completed` webhook event. */
async function onSettled(services: Services, s: BatchSettled): Promise<void> {
  const { job, outcome, result } = s;
  if (!result.ok) return;
  const keyRef = await services.ledger?.findKeyById(job.keyId);
  if (keyRef) {
    services.audit?.record({
      atMs: Date.now(),
      requestId: job.id,
      subject: { credential: keyRef },
      endpoint: `/v1/batches/${job.batchId}`,
      method: 'SETTLE',
      ip: '',
      userAgent: undefined,
      costMsat: result.chargedMsat,
      status: 200,
    });
  }
  await services.events?.batchCompleted(
    { accountId: job.accountId, keyId: job.keyId, parentKeyId: job.parentKeyId },
    `evt_batch_${job.id}`,
    {
      batch_id: job.batchId,
      status: outcome.status,
      lines: outcome.lines,
      answered: outcome.answered,
      failed: outcome.failed,
      charged_msats: result.chargedMsat,
      reserved_msats: job.reservedMsat,
      transaction_id: result.transactionId,
    },
  );
}
