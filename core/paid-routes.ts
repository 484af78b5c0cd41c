import type { PricedEndpoint } from './pricing/types.js';

/**
 * The paid routes, written once: the server registers them on the pipeline (core/server.ts), metrics label
 * them by template (core/metrics.ts), the stages read which metered API a call is (`pricedEndpointOf`), the
 * public routes list the provider's text endpoints, and a test ties the table to the OpenAPI document and
 * docs/architecture.md. Every other `/v1/...` path is the paid catch-all (`/v1/{path}`, priced per request).
 *
 * The multipart ones (audio uploads, image edits and variations) take their body as it is (`json: false`);
 * the reserve stage reads their model and units from it, and the upstream gets the original bytes.
 */
export interface PaidRoute {
  readonly method: 'POST';
  readonly path: string;
  /** Which metered API it is (how the call is priced and metered). */
  readonly endpoint: PricedEndpoint;
  /** Multipart body, passed through unparsed. */
  readonly multipart?: true;
}

export const PAID_ROUTES: readonly PaidRoute[] = [
  { method: 'POST', path: '/v1/chat/completions', endpoint: 'chat' },
  { method: 'POST', path: '/v1/completions', endpoint: 'completions' },
  { method: 'POST', path: '/v1/embeddings', endpoint: 'embeddings' },
  { method: 'POST', path: '/v1/responses', endpoint: 'responses' },
  { method: 'POST', path: '/v1/messages', endpoint: 'messages' },
  { method: 'POST', path: '/v1/messages/count_tokens', endpoint: 'free' },
  { method: 'POST', path: '/v1/images/generations', endpoint: 'images' },
  { method: 'POST', path: '/v1/images/edits', endpoint: 'images', multipart: true },
  { method: 'POST', path: '/v1/images/variations', endpoint: 'images', multipart: true },
  { method: 'POST', path: '/v1/audio/transcriptions', endpoint: 'audio', multipart: true },
  { method: 'POST', path: '/v1/audio/translations', endpoint: 'audio', multipart: true },
  { method: 'POST', path: '/v1/audio/speech', endpoint: 'speech' },
];

/** The template of every call through the catch-all. */
export const CATCH_ALL_TEMPLATE = '/v1/{path}';

const ENDPOINT_BY_PATH = new Map(PAID_ROUTES.map((r) => [r.path, r.endpoint]));

/** Which metered API a POST to this route template is; `other` for the catch-all and other methods. */
export function pricedEndpointOf(method: string, template: string): PricedEndpoint {
  if (method !== 'POST') return 'other';
  return ENDPOINT_BY_PATH.get(template) ?? 'other';
}

/** Whether this template is a paid route's own (not the catch-all). */
export function isPaidRoute(template: string): boolean {
  return ENDPOINT_BY_PATH.has(template);
}

/** The text endpoints a provider is reached through (token-metered; listed by GET /v1/providers). */
export const TEXT_ENDPOINTS: readonly string[] = PAID_ROUTES.filter(
  (r) =>
    r.endpoint === 'chat' ||
    r.endpoint === 'completions' ||
    r.endpoint === 'embeddings' ||
    r.endpoint === 'responses',
).map((r) => r.path);
