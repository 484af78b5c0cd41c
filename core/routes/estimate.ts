import { parseCredential } from '../auth/credentials.js';
import { GatewayError } from '../errors.js';
import type { RouteModule } from '../http/router.js';
import { route } from '../http/router.js';
import { countKeyRequest, limitAnonymous } from '../limits/request-limits.js';
import type { EstimateInput } from '../pricing/types.js';
import type { Services } from '../service-types.js';

/**
 * POST /v1/estimate (openapi/openapi.yaml): the price of a call with the given token counts under the current
 * pricing model; free, nothing is charged, credentials optional. A model the node does not serve is 404 in
 * every pricing mode (not only in model-based pricing, where there is no rate for it): an estimate for a call
 * that would be refused would mislead. An empty model list (provider unreachable, no models.json) cannot
 * tell, so then only the pricing service decides.
 */
export const estimateRoutes: RouteModule = (router, services: Services) => {
  route(router, 'POST', '/v1/estimate', async (ctx, body) => {
    const { pricing, catalog } = services;
    // Free, but limited: a named key counts against its requests/min, anyone else per client IP.
    const cred = parseCredential({ method: ctx.method, headers: ctx.headers });
    if (cred?.kind === 'api_key') await countKeyRequest(ctx, services, { apiKey: cred.apiKey });
    else await limitAnonymous(ctx, services);
    if (pricing === undefined) {
      throw new GatewayError('service_unavailable', { message: 'This node has no pricing configured' });
    }
    const input: EstimateInput = body;
    if (catalog.list().length > 0 && catalog.get(input.model) === undefined) {
      throw new GatewayError('not_found', { message: `Unknown model: ${input.model}` });
    }
    return { json: pricing.estimate(input) };
  });
};
