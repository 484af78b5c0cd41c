import {
  type BatchInputSummary,
  type CheckBatchInputOptions,
  withStoredContext,
} from '../batches/batch-input.js';
import { batchFactor } from '../batches/batch-price.js';
import { providerCall } from '../batches/provider-call.js';
import { GatewayError } from '../errors.js';
import type { RouteModule } from '../http/router.js';
import { route } from '../http/router.js';
import { storedFileMeta } from '../objects/stored-file.js';
import { type ObjectOwners, type OwnedObject, ownedBy, storedTokens } from '../objects/types.js';
import type { Pricing } from '../pricing/types.js';
import type { Services } from '../service-types.js';
import { withUpload } from './file-upload.js';
import { objectCaller, ownList, ownObject, passOn } from './provider-objects.js';

/**
 * The Files API (docs/pricing.md, "Batches"): paid-key routes relayed to the provider on the operator's key, each file recorded
 * against the key that uploaded it (core/objects/). Another key's file — a batch's output and error files
 * included — answers 404 to every read and delete, and the list is the key's own files, paged from the ownership
 * store (./provider-objects.ts, `ownList`).
 *
 * Uploads (`multipart/form-data`, fields `purpose` and `file`) stream through, never held whole
 * (./file-upload.ts): the body, at most FILES_MAX_BYTES, is spooled to a temporary file while, for
 * `purpose: "batch"`, the JSONL is checked line by line and priced (core/batches/batch-input.ts); only a file that
 * passed is relayed, and its bound is recorded with it. Other purposes are refused (400) unless
 * FILES_OTHER_PURPOSES=true.
 */

export const filesRoutes: RouteModule = (router, services: Services) => {
  route(
    router,
    'POST',
    '/v1/files',
    async (ctx) => {
      const c = await objectCaller(ctx, services);
      const type = ctx.headers['content-type'] ?? '';
      if (!/^multipart\/form-data/i.test(type)) {
        throw new GatewayError('unsupported_media_type', {
          message: `Content-Type must be multipart/form-data (got ${type || 'none'})`,
        });
      }
      const pricing = services.pricing;
      if (pricing === undefined) throw new GatewayError('service_unavailable');
      const body = ctx.bodyStream;
      if (body === undefined) throw new Error('POST /v1/files is registered without a streamed body');
      const options = {
        contentType: type,
        batch: batchCheck(services, pricing),
        otherPurposes: services.config.batches.otherPurposes,
      };
      return withUpload(body, options, async (upload) => {
        const batch =
          upload.batch &&
          (await ownedBatchInput(upload.batch, c, pricing, services.config.storedContextMaxTokens));
        const r = await providerCall(services.upstream, {
          method: 'POST',
          path: '/v1/files',
          headers: { accept: 'application/json' },
          body: await upload.providerBody(),
          cancel: ctx,
        });
        const reply = passOn(r, 'POST /v1/files');
        if (r.status >= 200 && r.status < 300) {
          const id = (JSON.parse(r.body.toString('utf8')) as { id?: unknown }).id;
          if (typeof id !== 'string' || id === '') {
            throw new GatewayError('upstream_error', {
              message: 'The provider answered a file without an id',
            });
          }
          await c.objects.record({
            id,
            kind: 'file',
            accountId: c.info.key.accountId,
            keyId: c.info.key.keyId,
            createdAtMs: Date.now(),
            // A batch input's priced summary; another file's size when it bounds its tokens (a call naming it).
            meta:
              batch === undefined
                ? storedFileMeta(upload.file.bytes, upload.file.text)
                : JSON.stringify({ ...batch, refs: undefined, continued: undefined }),
          });
        }
        return reply;
      });
    },
    { streamBody: { maxBytes: services.config.batches.filesMaxBytes } },
  );

  route(router, 'GET', '/v1/files', async (ctx) => {
    const c = await objectCaller(ctx, services);
    return ownList(c, services.upstream, ctx.rawQuery, 'file');
  });

  route(router, 'GET', '/v1/files/{file_id}', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.file_id, 'file');
    const r = await providerCall(services.upstream, {
      method: 'GET',
      path: `/v1/files/${encodeURIComponent(o.id)}`,
    });
    return passOn(r, 'GET /v1/files/{file_id}');
  });

  route(router, 'GET', '/v1/files/{file_id}/content', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.file_id, 'file');
    const r = await providerCall(services.upstream, {
      method: 'GET',
      path: `/v1/files/${encodeURIComponent(o.id)}/content`,
      headers: {},
    });
    return passOn(r, 'GET /v1/files/{file_id}/content');
  });

  route(router, 'DELETE', '/v1/files/{file_id}', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.file_id, 'file');
    const r = await providerCall(services.upstream, {
      method: 'DELETE',
      path: `/v1/files/${encodeURIComponent(o.id)}`,
    });
    const reply = passOn(r, 'DELETE /v1/files/{file_id}');
    if (r.status >= 200 && r.status < 300) await c.objects.forget(o);
    return reply;
  });
};

/**
 * A checked batch input whose every named object is the uploading key's: a line naming another key's stored
 * response or file is refused (404, as the call itself would be) before the provider sees the file. A line
 * continuing a stored response is billed its whole context: its bound is raised by it (docs/pricing.md).
 */
async function ownedBatchInput(
  input: BatchInputSummary,
  c: { objects: ObjectOwners; info: { key: { keyId: string } } },
  pricing: Pricing,
  storedContextMaxTokens: number | undefined,
): Promise<BatchInputSummary> {
  const responses = new Map<string, OwnedObject>();
  for (const ref of input.refs ?? []) {
    const o = await ownedBy(c.objects, ref.id, ref.kind, c.info.key.keyId);
    if (o === null) {
      throw new GatewayError('not_found', {
        message: `Batch input line ${ref.line}: no such ${ref.kind}: ${ref.id}`,
        details: { line: ref.line },
      });
    }
    if (ref.kind === 'response') responses.set(ref.id, o);
  }
  return withStoredContext(
    input,
    pricing,
    (line) => {
      const o = responses.get(line.responseId);
      const t = o === undefined ? undefined : storedTokens(o);
      return t === undefined ? undefined : t.input_tokens + t.output_tokens;
    },
    storedContextMaxTokens,
  );
}

/** How a batch input file is checked and priced: the synchronous call's bound rules, at the batch factor. */
function batchCheck(services: Services, pricing: Pricing): CheckBatchInputOptions {
  const { config, catalog } = services;
  return {
    pricing,
    catalog,
    maxLines: config.batches.maxLines,
    maxLineBytes: config.maxBodyBytes,
    factorOf: (model: string) => batchFactor(catalog, config, model),
    imageMaxTokens: config.imageMaxTokens,
    referenceMaxTokens: config.referenceMaxTokens,
    storedContextMaxTokens: config.storedContextMaxTokens,
    webSearchContentTokens: config.webSearchContentTokens,
  };
}
