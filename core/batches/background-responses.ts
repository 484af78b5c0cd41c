import { randomUUID } from 'node:crypto';
import { settlementAuditRecord } from '../audit/audit-log.js';
import type { Ledger, SettleResult } from '../ledger/types.js';
import { inputTotal, outputTotal, type Usage, usageFromResponse } from '../metering/usage.js';
import type { Pricing } from '../pricing/types.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';
import { providerCall } from './provider-call.js';
import type { BatchJob } from './types.js';

/**
 * Background responses (`POST /v1/responses` with `background: true`) are billed like batches (docs/pricing.md,
 * "Background responses"). The provider answers at once (`queued`) and bills the response when it ends, however it
 * is read later, so its reservation is kept: made with an id no process owns (`g_<uuid>`) and a batch's expiry, on
 * the exact path (never from a credit lease). The settle stage hands it to a job in the batch jobs' queue (kind
 * `response`), and the batch watcher polls `GET /v1/responses/{id}` at the provider every BATCH_POLL_MS until the
 * response ends, then settles once from its usage:
 *
 * - `completed` / `incomplete`: its usage, priced as the synchronous call (the reservation's BTC price); one that
 *   reports none is charged its reservation (never free);
 * - `failed` / `cancelled`: what the provider billed (its usage, when it reports one), the rest released;
 * - gone at the provider (404: the owner deleted it before it ended): its reservation, since it ran unseen.
 */

/** A background response's reservation lives as long as a batch's (the provider's window plus a day). */
export const BACKGROUND_RESERVATION_MS = 48 * 3_600_000;

const ENDED = new Set(['completed', 'incomplete', 'failed', 'cancelled']);
const BILLED_AS_ANSWERED = new Set(['completed', 'incomplete']);

/** A Responses call the provider runs in the background (a stream is answered while it runs: not one). */
export function isBackgroundResponse(endpoint: string, body: unknown): boolean {
  const b = body as { background?: unknown; stream?: unknown } | null;
  return endpoint === 'responses' && b !== null && typeof b === 'object' && b.background === true;
}

/** The reservation id of a background response: owned by no process, so `releaseOrphans` leaves it alone. */
export function backgroundReservationId(): string {
  return `g_${randomUUID()}`;
}

/** The provider answered the creating call with a response still running: `{id, status}` of it, else undefined. */
export function runningResponse(body: unknown): { id: string; status: string } | undefined {
  const b = body as { id?: unknown; status?: unknown } | null;
  if (b === null || typeof b !== 'object' || typeof b.id !== 'string' || b.id === '') return undefined;
  const status = typeof b.status === 'string' ? b.status : '';
  return ENDED.has(status) ? undefined : { id: b.id, status };
}

export interface ResponseWatchDeps {
  ledger: Ledger;
  pricing: Pricing;
  upstream: UpstreamClient;
}

/** What one poll found: still running (poll again), or settled. */
export type ResponsePoll = { running: true } | { running: false; status: string; result: SettleResult };

/** Asks the provider about a background response once; settles it when it ended. */
export async function pollBackgroundResponse(deps: ResponseWatchDeps, job: BatchJob): Promise<ResponsePoll> {
  const responseId = job.batchId ?? '';
  const r = await providerCall(deps.upstream, {
    method: 'GET',
    path: `/v1/responses/${encodeURIComponent(responseId)}`,
  });
  if (r.status === 404) {
    // Deleted before it ended: it ran (and was billed) unseen. Never free, never polled forever.
    return {
      running: false,
      status: 'gone',
      result: await settleResponse(deps.ledger, job, job.reservedMsat, 'gone'),
    };
  }
  if (r.status < 200 || r.status >= 300) {
    throw new Error(`GET /v1/responses/{id} answered ${r.status}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(r.body.toString('utf8'));
  } catch {
    throw new Error('GET /v1/responses/{id} answered a body that is not JSON');
  }
  const status = String((body as { status?: unknown } | null)?.status ?? '');
  if (!ENDED.has(status)) return { running: true };
  const usage = usageFromResponse(body);
  let msat: number;
  let tokens: Usage | undefined;
  if (usage !== undefined) {
    tokens = usage;
    msat = deps.pricing.cost({
      model: job.model,
      endpoint: 'responses',
      usage,
      btcUsd: job.btcUsd,
    }).msat;
  } else msat = BILLED_AS_ANSWERED.has(status) ? job.reservedMsat : 0;
  const step = job.chargeStep ?? 1;
  if (step > 1) msat = Math.ceil(msat / step) * step;
  return { running: false, status, result: await settleResponse(deps.ledger, job, msat, status, tokens) };
}

function settleResponse(
  ledger: Ledger,
  job: BatchJob,
  costMsat: number,
  status: string,
  usage?: Usage,
): Promise<SettleResult> {
  return ledger.settle({
    accountId: job.accountId,
    requestId: job.id,
    costMsat,
    promptTokens: usage ? inputTotal(usage) : 0,
    completionTokens: usage ? outputTotal(usage) : 0,
    model: job.model,
    description: `Background response ${job.batchId ?? job.id} ${status}${usage === undefined && costMsat > 0 ? ' (no usage: its reservation)' : ''}`,
    estimated: usage === undefined,
    auditRecord: settlementAuditRecord({
      atMs: Date.now(),
      requestId: job.id,
      keyId: job.keyId,
      endpoint: '/v1/responses',
      method: 'POST',
      status: 200,
    }),
  });
}
