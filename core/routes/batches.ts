import { randomUUID } from 'node:crypto';
import type { BatchInputSummary } from '../batches/batch-input.js';
import { boundAtCreation } from '../batches/batch-price.js';
import { pendingMs, recordBatchFiles } from '../batches/batch-watcher.js';
import { type ProviderReply, providerCall } from '../batches/provider-call.js';
import type { BatchJob, BatchJobs } from '../batches/types.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { JsonBodyOf, RouteModule, RouteReply } from '../http/router.js';
import { route } from '../http/router.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import type { ObjectOwners } from '../objects/types.js';
import type { Services } from '../service-types.js';
import { inSpan, type OpSpan, startOpSpan } from '../trace-context.js';
import { objectCaller, ownList, ownObject, passOn } from './provider-objects.js';

/**
 * The Batch API (docs/pricing.md, "Batches"). Creation reserves the input file's bound (recorded at
 * upload) BEFORE the provider sees the batch: a balance that cannot cover it gets 402 with the bound as
 * `details.required`. The reservation is the ledger's call reservation (`admit` on the exact path) with an id no
 * process owns (`b_<uuid>`: `releaseOrphans` never touches it) and a lease longer than the provider's completion
 * window; the durable watcher (core/batches/batch-watcher.ts) settles it once the batch ends. A provider that
 * answers no (any non-2xx), or a call that never reached it, releases it at once. A call sent and then left without
 * a clear answer (a timeout, a dropped connection, an unreadable 2xx) keeps it: the provider may have made the
 * batch, so the job turns `reconcile` and the watcher searches the provider's batch list for it
 * (core/batches/reconcile.ts), settling it as usual if found and releasing it if not; the client gets 502
 * `batch_outcome_unknown`. Retrieve, list and cancel answer only for the key that created the batch (404
 * otherwise).
 */

/** Failures before any byte of the request could reach the provider: nothing can have been made. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

function neverSent(err: unknown): boolean {
  const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
  const code = (cause as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && NOT_SENT.has(code);
}

/** The providers' completion window (24 h) plus a day: a batch's reservation never expires while it is open. */
export const BATCH_RESERVATION_MS = 48 * 3_600_000;

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route module: the /v1/batches routes registered in order; the count is the route table
export const batchesRoutes: RouteModule = (router, services: Services) => {
  // Traced (README, "Tracing") as a `batch create` span in the client's trace; the job keeps its traceparent so
  // that the watcher's settlement span links back to it.
  route(router, 'POST', '/v1/batches', (ctx, body) =>
    inSpan(startOpSpan('batch create', {}, { parent: ctx.headers.traceparent }), (span) =>
      createBatch(ctx, body, span),
    ),
  );

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a batch's steps in order (input file checked, reserved, created at the provider, recorded); each refusal releases what the steps before it took
  async function createBatch(
    ctx: RequestContext,
    body: JsonBodyOf<'/v1/batches', 'POST'>,
    span: OpSpan | undefined,
  ): Promise<RouteReply> {
    const c = await objectCaller(ctx, services);
    const { ledger, batchJobs: jobs } = services;
    if (ledger === undefined || jobs === undefined) throw new GatewayError('service_unavailable');
    const file = await ownObject(c, body.input_file_id, 'file');
    const meta = file.meta === null ? undefined : (JSON.parse(file.meta) as Partial<BatchInputSummary>);
    // Only a batch input's record carries its priced summary (another file's may carry its size).
    const summary = typeof meta?.url === 'string' ? (meta as BatchInputSummary) : undefined;
    if (summary === undefined) {
      throw new GatewayError('invalid_request', {
        message: `File ${file.id} was not uploaded with purpose "batch"`,
      });
    }
    if (body.endpoint !== summary.url) {
      throw new GatewayError('invalid_request', {
        message: `endpoint ${body.endpoint} does not match the input file's url ${summary.url}`,
      });
    }
    const now = Date.now();
    // Priced at the BTC price of the creation, not of the (possibly old) upload.
    const priced = boundAtCreation(
      summary,
      summary.btcUsd === undefined ? undefined : services.btc?.peek()?.usd,
    );
    const job: BatchJob = {
      id: `b_${randomUUID()}`,
      state: 'pending',
      accountId: c.info.key.accountId,
      keyId: c.info.key.keyId,
      parentKeyId: c.info.key.parentKeyId,
      batchId: null,
      model: summary.model,
      endpoint: summary.endpoint,
      factor: summary.factor,
      btcUsd: priced.btcUsd,
      reservedMsat: priced.boundMsat,
      lines: summary.lines,
      createdAtMs: now,
      inputFileId: file.id,
      // Paid from a `sat` token's identity: settled in whole sats, so no sub-sat rest is left that no refund pays.
      ...(c.unit === 'sat' ? { chargeStep: 1000 } : {}),
      ...(span !== undefined ? { traceparent: span.traceparent() } : {}),
    };
    span?.set({
      'gateway.job_id': job.id,
      'gateway.key_id': job.keyId,
      'gen_ai.request.model': job.model,
      'gateway.batch.endpoint': body.endpoint,
      'gateway.batch.lines': job.lines,
      'gateway.msats.reserved': job.reservedMsat,
    });
    // Durable first: a process killed after the reservation and before the provider answered leaves a job the
    // watcher reconciles after `pendingMs` (the provider may have made the batch).
    await jobs.put(job, now + pendingMs(services.upstream.timeoutMs));
    const admitted = await ledger.admit({
      credential: c.credential,
      requestId: job.id,
      model: summary.model,
      clientIp: ctx.clientIp,
      maxMsat: priced.boundMsat,
      minMsat: priced.boundMsat,
      expiresInMs: BATCH_RESERVATION_MS,
      limits: services.config.limits,
      exactPath: true,
    });
    if (!admitted.ok) {
      await jobs.remove(job.id);
      throw ledgerRefusalToError(admitted);
    }
    const attemptAtMs = Date.now();
    let r: ProviderReply;
    try {
      r = await providerCall(services.upstream, {
        method: 'POST',
        path: '/v1/batches',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: ctx.rawBody,
      });
    } catch (err) {
      if (neverSent(err)) {
        await ledger.release({ accountId: job.accountId, requestId: job.id });
        await jobs.remove(job.id);
        throw err;
      }
      // Sent, and no answer: the provider may have made the batch. The reservation stays until the watcher
      // finds it (then it is settled as usual) or is sure it was never made.
      return reconcileLater(jobs, job, attemptAtMs, err);
    }
    if (r.status === 502 || r.status === 504) {
      // A proxy's or gateway's 502/504 in front of the provider: the create call may have reached it and made
      // the batch. An unknown outcome, reconciled like a dropped connection.
      return reconcileLater(jobs, job, attemptAtMs, new Error(`the provider answered ${r.status}`));
    }
    if (r.status < 200 || r.status >= 300) {
      // The provider answered no: nothing was made.
      await ledger.release({ accountId: job.accountId, requestId: job.id });
      await jobs.remove(job.id);
      return passOn(r, 'POST /v1/batches');
    }
    let id: unknown;
    try {
      id = (JSON.parse(r.body.toString('utf8')) as { id?: unknown } | null)?.id;
    } catch {
      id = undefined;
    }
    // A 2xx the gateway cannot read may still be a batch made.
    if (typeof id !== 'string' || id === '') return reconcileLater(jobs, job, attemptAtMs, undefined);
    await c.objects.record({
      id,
      kind: 'batch',
      accountId: job.accountId,
      keyId: job.keyId,
      createdAtMs: now,
      meta: JSON.stringify({ job: job.id }),
    });
    await jobs.put({ ...job, state: 'open', batchId: id }, Date.now() + services.config.batches.pollMs);
    span?.set({ 'gateway.batch.id': id });
    return passOn(r, 'POST /v1/batches');
  }

  /** The settlement job of a batch the key owns while it is not settled yet, else undefined. */
  async function openJobOf(objects: ObjectOwners, batchId: string): Promise<string | undefined> {
    const o = await objects.get(batchId);
    if (o === null || o.meta === null || services.batchJobs === undefined) return undefined;
    const jobId = (JSON.parse(o.meta) as { job?: unknown }).job;
    if (typeof jobId !== 'string') return undefined;
    return (await services.batchJobs.get(jobId)) === null ? undefined : jobId;
  }

  async function reconcileLater(
    jobs: BatchJobs,
    job: BatchJob,
    attemptAtMs: number,
    cause: unknown,
  ): Promise<never> {
    await jobs.put(
      { ...job, state: 'reconcile', attemptAtMs, reconcilePolls: 0 },
      Date.now() + services.config.batches.pollMs,
    );
    services.log.warn({ job: job.id, err: cause }, 'batch creation had no clear answer: reconciling');
    throw new GatewayError('batch_outcome_unknown', {
      details: { input_file_id: job.inputFileId ?? null },
      cause,
    });
  }

  route(router, 'GET', '/v1/batches', async (ctx) => {
    const c = await objectCaller(ctx, services);
    // The key's batches, paged from the ownership store; their output and error files become the key's too.
    // Only a settled batch's (its job is gone); the watcher, or the GET of the batch, settles the others first.
    return ownList(c, services.upstream, ctx.rawQuery, 'batch', async (b) => {
      if (typeof b.id !== 'string' || (await openJobOf(c.objects, b.id)) !== undefined) return;
      await recordBatchFiles(c.objects, c.info.key, b);
    });
  });

  route(router, 'GET', '/v1/batches/{batch_id}', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.batch_id, 'batch');
    // The GET that first sees the batch ended settles it before answering (its output cannot be deleted, or read
    // for free, before it is priced): the watcher's step, idempotent.
    const jobId = await openJobOf(c.objects, o.id);
    if (jobId !== undefined) {
      try {
        await services.batchWatcher?.settleIfEnded(jobId);
      } catch (err) {
        // Not settled yet (the watcher retries): its files stay unnamed to the key meanwhile.
        services.log.warn({ err, batch: o.id }, 'batch not settled at GET');
      }
    }
    const r = await providerCall(services.upstream, {
      method: 'GET',
      path: `/v1/batches/${encodeURIComponent(o.id)}`,
    });
    const reply = passOn(r, 'GET /v1/batches/{batch_id}');
    // Its output and error files are the key's (readable and deletable by it, and only by it) once it is settled.
    if (r.status === 200 && (await openJobOf(c.objects, o.id)) === undefined) {
      await recordBatchFiles(c.objects, o, JSON.parse(r.body.toString('utf8')));
    }
    return reply;
  });

  route(router, 'POST', '/v1/batches/{batch_id}/cancel', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.batch_id, 'batch');
    const r = await providerCall(services.upstream, {
      method: 'POST',
      path: `/v1/batches/${encodeURIComponent(o.id)}/cancel`,
    });
    return passOn(r, 'POST /v1/batches/{batch_id}/cancel');
  });
};
