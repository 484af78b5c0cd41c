import type { ObjectOwners, OwnedObject } from '../objects/types.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';
import { providerCall, providerJson } from './provider-call.js';
import type { BatchJob } from './types.js';

/**
 * Finding a batch whose creation had no clear answer (docs/pricing.md, "Batches"): the create call was sent, then
 * timed out or lost its connection, so the provider may have made the batch. The provider's batch list (newest
 * first, paged with `after`) is searched for a batch made from the job's input file at or after the call; the
 * first such batch no other job owns is recorded as the job's (the ownership store's first record wins, so two
 * jobs never take one batch) and its id returned. A later pass finds the batch it recorded again (idempotent
 * across a crash between the record and the job's update).
 */

/** A provider `created_at` is whole seconds on the provider's clock: batches this much older still count. */
export const CREATED_SLACK_MS = 60_000;
/** Batches asked for per page, and pages read per search (the newest 2,000 batches of the provider key). */
export const LIST_PAGE = 100;
export const LIST_MAX_PAGES = 20;

/** The settlement job a batch's ownership record names (`meta: {"job": "b_…"}`). */
export function jobOfBatch(o: OwnedObject): string | undefined {
  if (o.meta === null) return undefined;
  try {
    const job = (JSON.parse(o.meta) as { job?: unknown }).job;
    return typeof job === 'string' ? job : undefined;
  } catch {
    return undefined;
  }
}

export async function findCreatedBatch(
  upstream: UpstreamClient,
  objects: ObjectOwners,
  job: BatchJob,
): Promise<string | null> {
  if (job.inputFileId === undefined) return null;
  const since = (job.attemptAtMs ?? job.createdAtMs) - CREATED_SLACK_MS;
  let after: string | undefined;
  for (let p = 0; p < LIST_MAX_PAGES; p++) {
    const query = new URLSearchParams({ limit: String(LIST_PAGE) });
    if (after !== undefined) query.set('after', after);
    const doc = providerJson(
      await providerCall(upstream, { method: 'GET', path: '/v1/batches', rawQuery: query.toString() }),
      'GET /v1/batches',
    );
    const data = (Array.isArray(doc.data) ? doc.data : []) as Array<Record<string, unknown> | null>;
    let older = false;
    for (const b of data) {
      if (b === null || typeof b !== 'object' || typeof b.id !== 'string') continue;
      if (typeof b.created_at === 'number' && b.created_at * 1000 < since) {
        older = true;
        continue;
      }
      if (b.input_file_id !== job.inputFileId) continue;
      const owner = await objects.get(b.id);
      if (owner !== null && jobOfBatch(owner) !== job.id) continue;
      if (owner === null) {
        await objects.record({
          id: b.id,
          kind: 'batch',
          accountId: job.accountId,
          keyId: job.keyId,
          createdAtMs: job.createdAtMs,
          meta: JSON.stringify({ job: job.id }),
        });
        const won = await objects.get(b.id);
        if (won === null || jobOfBatch(won) !== job.id) continue;
      }
      return b.id;
    }
    const last = data.at(-1);
    if (older || doc.has_more !== true || last === null || last === undefined || typeof last.id !== 'string')
      return null;
    after = last.id;
  }
  return null;
}
