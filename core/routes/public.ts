import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ipaddr from 'ipaddr.js';
import { GatewayError } from '../errors.js';
import type { RouteModule } from '../http/router.js';
import type { Services } from '../plugin.js';
import type { CatalogModel } from '../upstream/model-catalog.js';

/**
 * Public, unauthenticated endpoints: GET /v1/models (also accepts `?api_key=`, ignored: listing is free),
 * /v1/info, /v1/providers and /v1/providers/{provider_name}. Prices are rendered as the spec's
 * `pricing { prompt, completion, unit: '1k tokens' }` in USD per 1,000 tokens, from the catalog's
 * USD-per-token strings.
 */

/** Endpoints the configured provider is reached through (the paid pipeline routes). */
export const PROVIDER_ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/responses',
];
const FEATURES = ['chat_completions', 'streaming', 'completions', 'embeddings', 'responses'];

export interface ModelListItem {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  context_length?: number;
  pricing?: { prompt: number; completion: number; unit: '1k tokens' };
}

/** USD per token (decimal string) → USD per 1,000 tokens, without float noise. */
export function per1k(usdPerToken: string): number {
  return Number((Number(usdPerToken) * 1000).toPrecision(12));
}

export function renderModel(m: CatalogModel): ModelListItem {
  const item: ModelListItem = { id: m.id, object: 'model', created: m.created, owned_by: m.owned_by };
  if (m.context_length !== undefined) item.context_length = m.context_length;
  if (m.pricing !== undefined) {
    item.pricing = {
      prompt: per1k(m.pricing.prompt),
      completion: per1k(m.pricing.completion),
      unit: '1k tokens',
    };
  }
  return item;
}

/** A provider's name from its base URL host: `api.openai.com` → `openai`; IPs and single labels as they are. */
export function providerName(baseUrl: string): string {
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return host;
  const labels = host.split('.');
  return labels.length >= 2 ? labels[labels.length - 2]! : host;
}

let cachedVersion: string | undefined;
/** The package version, found by walking up from this file (works from core/ and dist/core/). */
export function packageVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string };
      if (typeof pkg.version === 'string') {
        cachedVersion = pkg.version;
        return cachedVersion;
      }
    } catch {
      // not here; go up
    }
    dir = dirname(dir);
  }
  cachedVersion = '0.0.0';
  return cachedVersion;
}

function providerSummary(services: Services) {
  return {
    name: providerName(services.config.upstreamBaseUrl),
    models: services.catalog.list().map((m) => m.id),
    endpoints: PROVIDER_ENDPOINTS,
    status: 'active',
  };
}

export const publicRoutes: RouteModule = (router, services) => {
  const { catalog, config } = services;

  router.get('/v1/models', () => ({ json: { object: 'list', data: catalog.list().map(renderModel) } }));

  router.get('/v1/info', () => {
    const models: Record<string, ModelListItem> = {};
    for (const m of catalog.list()) models[m.id] = renderModel(m);
    return {
      json: {
        name: config.node.name,
        description: config.node.description,
        version: packageVersion(),
        npub: config.node.npub,
        mints: config.cashu.mints,
        models,
      },
    };
  });

  router.get('/v1/providers', () => ({ json: { providers: [providerSummary(services)] } }));

  router.get('/v1/providers/{provider_name}', (ctx) => {
    const summary = providerSummary(services);
    if (ctx.params.provider_name !== summary.name) {
      throw new GatewayError('not_found', { message: `Unknown provider "${ctx.params.provider_name}"` });
    }
    return {
      json: {
        name: summary.name,
        display_name: summary.name,
        description: `OpenAI-compatible provider at ${new URL(config.upstreamBaseUrl).host}`,
        models: catalog.list().map((m) => ({
          id: m.id,
          name: m.name,
          context_window: m.context_length ?? null,
          pricing:
            m.pricing === undefined
              ? null
              : {
                  prompt: per1k(m.pricing.prompt),
                  completion: per1k(m.pricing.completion),
                  unit: '1k tokens',
                },
        })),
        endpoints: PROVIDER_ENDPOINTS,
        features: FEATURES,
        status: 'active',
      },
    };
  });
};
