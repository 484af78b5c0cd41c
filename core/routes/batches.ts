import { randomUUID } from 'node:crypto';
import type { BatchInputSummary } from '../batches/batch-input.js';
import { pendingMs, recordBatchFiles } from '../batches/batch-watcher.js';
import { providerCall } from '../batches/provider-call.js';
import type { BatchJob } from '../batches/types.js';
import { GatewayError } from '../errors.js';
import type { RouteModule } from '../http/router.js';
import { route } from '../http/router.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import type { Services } from '../plugin.js';
import { objectCaller, ownList, ownObject, passOn } from './provider-objects.js';

/**
 * The Batch API (docs/pricing.md, "Batches"). Creation reserves the input file's bound (recorded at
 * upload) BEFORE the provider sees the batch: a balance that cannot cover it gets 402 with the bound as
 * `details.required`. The reservation is the ledger's call reservation (`admit` on the exact path) with an id no
 * process owns (`b_<uuid>`: `releaseOrphans` never touches it) and a lease longer than the provider's completion
 * window; the durable watcher (core/batches/batch-watcher.ts) settles it once the batch ends. A provider failure
 * releases it at once. Retrieve, list and cancel answer only for the key that created the batch (404 otherwise).
 */

/** The providers' completion window (24 h) plus a day: a batch's reservation never expires while it is open. */
export const BATCH_RESERVATION_MS = 48 * 3_600_000;

export const batchesRoutes: RouteModule = (router, services: Services) => {
  route(router, 'POST', '/v1/batches', async (ctx, body) => {
    const c = await objectCaller(ctx, services);
    const { ledger, batchJobs: jobs } = services;
    if (ledger === undefined || jobs === undefined) throw new GatewayError('service_unavailable');
    const file = await ownObject(c, body.input_file_id, 'file');
    const summary = file.meta === null ? undefined : (JSON.parse(file.meta) as BatchInputSummary);
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
      btcUsd: summary.btcUsd,
      reservedMsat: summary.boundMsat,
      lines: summary.lines,
      createdAtMs: now,
    };
    // Durable first: a process killed after the reservation and before the provider answered leaves a job the
    // watcher releases after `pendingMs`.
    await jobs.put(job, now + pendingMs(services.upstream.timeoutMs));
    const admitted = await ledger.admit({
      credential: c.credential,
      requestId: job.id,
      model: summary.model,
      clientIp: ctx.clientIp,
      maxMsat: summary.boundMsat,
      minMsat: summary.boundMsat,
      expiresInMs: BATCH_RESERVATION_MS,
      limits: services.config.limits,
      exactPath: true,
    });
    if (!admitted.ok) {
      await jobs.remove(job.id);
      throw ledgerRefusalToError(admitted);
    }
    let created: { id?: unknown } | undefined;
    try {
      const r = await providerCall(services.upstream, {
        method: 'POST',
        path: '/v1/batches',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: ctx.rawBody,
      });
      const reply = passOn(r, 'POST /v1/batches');
      if (r.status >= 200 && r.status < 300)
        created = JSON.parse(r.body.toString('utf8')) as { id?: unknown };
      if (created === undefined || typeof created.id !== 'string' || created.id === '') {
        await ledger.release({ accountId: job.accountId, requestId: job.id });
        await jobs.remove(job.id);
        if (created !== undefined) {
          throw new GatewayError('upstream_error', {
            message: 'The provider answered a batch without an id',
          });
        }
        return reply;
      }
      const batchId = created.id;
      await jobs.put({ ...job, state: 'open', batchId }, Date.now() + services.config.batches.pollMs);
      await c.objects.record({
        id: batchId,
        kind: 'batch',
        accountId: job.accountId,
        keyId: job.keyId,
        createdAtMs: now,
        meta: JSON.stringify({ job: job.id }),
      });
      return reply;
    } catch (err) {
      if (created === undefined) {
        await ledger.release({ accountId: job.accountId, requestId: job.id });
        await jobs.remove(job.id);
      }
      throw err;
    }
  });

  route(router, 'GET', '/v1/batches', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const r = await providerCall(services.upstream, {
      method: 'GET',
      path: '/v1/batches',
      rawQuery: ctx.rawQuery,
    });
    return ownList(c, r, 'batch', 'GET /v1/batches');
  });

  route(router, 'GET', '/v1/batches/{batch_id}', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.batch_id, 'batch');
    const r = await providerCall(services.upstream, {
      method: 'GET',
      path: `/v1/batches/${encodeURIComponent(o.id)}`,
    });
    const reply = passOn(r, 'GET /v1/batches/{batch_id}');
    // Its output and error files are the key's: readable by it (and only by it) as soon as they exist.
    if (r.status === 200) await recordBatchFiles(c.objects, o, JSON.parse(r.body.toString('utf8')));
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
