import { checkBatchInput } from '../batches/batch-input.js';
import { batchFactor } from '../batches/batch-price.js';
import { providerCall } from '../batches/provider-call.js';
import { GatewayError } from '../errors.js';
import type { RouteModule } from '../http/router.js';
import { route } from '../http/router.js';
import { parseMultipart } from '../metering/call-units.js';
import type { Services } from '../plugin.js';
import { objectCaller, ownList, ownObject, passOn } from './provider-objects.js';

/**
 * The Files API (issue 24): paid-key routes relayed to the provider on the operator's key, each file recorded
 * against the key that uploaded it (core/objects/). Another key's file — a batch's output and error files
 * included — answers 404 to every read and delete, and lists show only the key's own files.
 *
 * Uploads (`multipart/form-data`, fields `purpose` and `file`) are held within MAX_BODY_BYTES. For
 * `purpose: "batch"` the JSONL is checked line by line and priced (core/batches/batch-input.ts) before
 * anything reaches the provider; its bound is recorded with the file. Other purposes are refused (400) unless
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
      const form = await parseMultipart(ctx.rawBody, type);
      const purpose = form.fields.purpose;
      const file = form.files.find((f) => f.field === 'file');
      if (typeof purpose !== 'string' || purpose === '') {
        throw new GatewayError('invalid_request', { message: 'purpose is required' });
      }
      if (file === undefined) throw new GatewayError('invalid_request', { message: 'file is required' });
      let meta: string | null = null;
      if (purpose === 'batch') {
        const pricing = services.pricing;
        if (pricing === undefined) throw new GatewayError('service_unavailable');
        meta = JSON.stringify(
          checkBatchInput(file.data, {
            pricing,
            catalog: services.catalog,
            maxLines: services.config.batches.maxLines,
            factorOf: (model) => batchFactor(services.catalog, services.config, model),
          }),
        );
      } else if (!services.config.batches.otherPurposes) {
        throw new GatewayError('invalid_request', {
          message: `Uploads with purpose "${purpose}" are not enabled on this node (FILES_OTHER_PURPOSES)`,
        });
      }
      const r = await providerCall(services.upstream, {
        method: 'POST',
        path: '/v1/files',
        headers: { 'content-type': type, accept: 'application/json' },
        body: ctx.rawBody,
      });
      const reply = passOn(r, 'POST /v1/files');
      if (r.status >= 200 && r.status < 300) {
        const id = (JSON.parse(r.body.toString('utf8')) as { id?: unknown }).id;
        if (typeof id !== 'string' || id === '') {
          throw new GatewayError('upstream_error', { message: 'The provider answered a file without an id' });
        }
        await c.objects.record({
          id,
          kind: 'file',
          accountId: c.info.key.accountId,
          keyId: c.info.key.keyId,
          createdAtMs: Date.now(),
          meta,
        });
      }
      return reply;
    },
    { json: false },
  );

  route(router, 'GET', '/v1/files', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const r = await providerCall(services.upstream, {
      method: 'GET',
      path: '/v1/files',
      rawQuery: ctx.rawQuery,
    });
    return ownList(c, r, 'file', 'GET /v1/files');
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
