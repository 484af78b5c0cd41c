import { providerCall } from '../batches/provider-call.js';
import type { RouteModule } from '../http/router.js';
import { route } from '../http/router.js';
import type { Services } from '../service-types.js';
import { objectCaller, ownObject, passOn } from './provider-objects.js';

/**
 * Stored Responses API objects (docs/endpoints.md), ownership: `GET /v1/responses/{id}`, `…/input_items`,
 * `POST …/cancel` and `DELETE` answer only for the key that created the response (recorded by the `owner` pipeline stage from the
 * creating answer); any other key gets 404, because the provider key is shared. Reads are not charged.
 */
export const responsesRoutes: RouteModule = (router, services: Services) => {
  route(router, 'GET', '/v1/responses/{response_id}', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.response_id, 'response');
    const r = await providerCall(services.upstream, {
      method: 'GET',
      path: `/v1/responses/${encodeURIComponent(o.id)}`,
      rawQuery: ctx.rawQuery,
    });
    return passOn(r, 'GET /v1/responses/{response_id}');
  });

  route(router, 'GET', '/v1/responses/{response_id}/input_items', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.response_id, 'response');
    const r = await providerCall(services.upstream, {
      method: 'GET',
      path: `/v1/responses/${encodeURIComponent(o.id)}/input_items`,
      rawQuery: ctx.rawQuery,
    });
    return passOn(r, 'GET /v1/responses/{response_id}/input_items');
  });

  // A background response's cancel (its reservation is settled by the watcher at what the provider billed).
  route(router, 'POST', '/v1/responses/{response_id}/cancel', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.response_id, 'response');
    const r = await providerCall(services.upstream, {
      method: 'POST',
      path: `/v1/responses/${encodeURIComponent(o.id)}/cancel`,
      headers: { accept: 'application/json' },
    });
    return passOn(r, 'POST /v1/responses/{response_id}/cancel');
  });

  route(router, 'DELETE', '/v1/responses/{response_id}', async (ctx) => {
    const c = await objectCaller(ctx, services);
    const o = await ownObject(c, ctx.params.response_id, 'response');
    const r = await providerCall(services.upstream, {
      method: 'DELETE',
      path: `/v1/responses/${encodeURIComponent(o.id)}`,
    });
    const reply = passOn(r, 'DELETE /v1/responses/{response_id}');
    if (r.status >= 200 && r.status < 300) await c.objects.forget(o);
    return reply;
  });
};
