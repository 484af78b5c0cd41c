import { GatewayError } from '../errors.js';
import type { RouteHandler, RouteModule } from '../http/router.js';
import { limitAnonymous } from '../limits/request-limits.js';
import { TEXT_ENDPOINTS } from '../paid-routes.js';
import { EXTRA_DIMENSION_KEYS } from '../pricing/dimensions.js';
import { nodeCardPrices } from '../pricing/node-rates.js';
import type { RateCard } from '../pricing/rate-card.js';
import type { Pricing, UsdRates } from '../pricing/types.js';
import type { Provider } from '../providers/types.js';
import type { Services } from '../service-types.js';
import type { CatalogModel, ModelPricing } from '../upstream/types.js';
import { packageVersion } from '../version.js';

/**
 * Public, unauthenticated endpoints: GET /v1/models (also accepts `?api_key=`, ignored: listing is free),
 * /v1/info, /v1/providers and /v1/providers/{provider_name}. Prices are rendered as the documented
 * `pricing { prompt, completion, unit: '1k tokens' }` in USD per 1,000 tokens, from the catalog's
 * USD-per-token strings.
 */

const FEATURES = ['chat_completions', 'streaming', 'completions', 'embeddings', 'responses'];

export interface ModelListItem {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  permission: unknown[];
  root: string;
  parent: string | null;
  context_length?: number;
  pricing?: ModelListPricing;
  supports_vision?: boolean;
}

/** The model's `pricing` (USD per 1k tokens) plus, from the pricing service, what a call is charged. */
export interface ModelListPricing {
  prompt: number | null;
  completion: number | null;
  unit: '1k tokens';
  /** The price book's special prices, USD as the catalogue has them (multiplier not included). */
  image?: number;
  image_sizes?: Record<string, Record<string, number>>;
  audio_minute?: number;
  speech_1k_chars?: number;
  /** The other usage dimensions' USD per 1,000 tokens (web_search: per call), as the price book has them. */
  input_cache_read?: number;
  input_cache_write?: number;
  input_cache_write_1h?: number;
  internal_reasoning?: number;
  input_audio?: number;
  input_audio_cache_read?: number;
  output_audio?: number;
  input_image?: number;
  web_search?: number;
  image_output?: number;
  code_interpreter?: number;
  file_search?: number;
  service_tiers?: Record<string, number>;
  source?: string;
  updated_at?: string;
  /** What each dimension is charged, msats per 1,000 tokens (web_search per call), base rates filled in. */
  dimension_msats?: Record<string, number> | null;
  /** USD per request (fees included). */
  request?: number | null;
  /** The active pricing model: fixed, token or model. */
  mode?: string;
  /** msats (and the same in sats) per 1,000 prompt / completion tokens and per request. */
  prompt_msats?: number | null;
  completion_msats?: number | null;
  request_msats?: number | null;
  prompt_sats?: number | null;
  completion_sats?: number | null;
  request_sats?: number | null;
}

/**
 * A model item with the price the caller is charged (`pricing.modelPrice`: multiplier and fees included)
 * in msats and sats per 1k tokens and per request, next to the catalogue's USD `prompt`/`completion` (filled
 * from the pricing service only when the catalogue has none); null where a value needs a BTC price and
 * none is fresh. Models the pricing service cannot price are listed unchanged.
 */
export function withPrice(
  item: ModelListItem,
  pricing: Pricing | undefined,
  /** A provider's own rates instead of the price book's (GET /v1/providers/{name}). */
  rates?: UsdRates,
): ModelListItem {
  if (pricing === undefined) return item;
  let p: ReturnType<Pricing['modelPrice']>;
  try {
    p = pricing.modelPrice(item.id, rates);
  } catch {
    return item;
  }
  const usd = (v: number | null, msat: number | null) => v ?? (msat === 0 ? 0 : null);
  const sats = (msat: number | null) => (msat === null ? null : msat / 1000);
  item.pricing = {
    // The catalogue's USD rates stay as they were; the charged price follows.
    ...(item.pricing ?? {
      prompt: usd(p.promptUsdPer1k, p.promptMsatPer1k),
      completion: usd(p.completionUsdPer1k, p.completionMsatPer1k),
      unit: '1k tokens',
    }),
    request: usd(p.requestUsd, p.requestMsat),
    mode: p.mode,
    prompt_msats: p.promptMsatPer1k,
    completion_msats: p.completionMsatPer1k,
    request_msats: p.requestMsat,
    prompt_sats: sats(p.promptMsatPer1k),
    completion_sats: sats(p.completionMsatPer1k),
    request_sats: sats(p.requestMsat),
    dimension_msats: p.dimensionMsats,
  };
  return item;
}

/** USD per token (decimal string) → USD per 1,000 tokens, without float noise; null when unpriced. */
export function per1k(usdPerToken: string | undefined): number | null {
  return usdPerToken === undefined ? null : Number((Number(usdPerToken) * 1000).toPrecision(12));
}

/** The catalogue's USD prices as the model list shows them (`pricing` plus the special prices). */
export function listPricing(p: ModelPricing): ModelListPricing {
  const out: ModelListPricing = {
    prompt: per1k(p.prompt),
    completion: per1k(p.completion),
    unit: '1k tokens',
  };
  if (p.image !== undefined) out.image = Number(p.image);
  if (p.image_sizes !== undefined) {
    out.image_sizes = Object.fromEntries(
      Object.entries(p.image_sizes).map(([size, q]) => [
        size,
        Object.fromEntries(Object.entries(q).map(([quality, usd]) => [quality, Number(usd)])),
      ]),
    );
  }
  if (p.audio_minute !== undefined) out.audio_minute = Number(p.audio_minute);
  if (p.speech_1k_chars !== undefined) out.speech_1k_chars = Number(p.speech_1k_chars);
  for (const k of EXTRA_DIMENSION_KEYS) {
    const v = p[k];
    if (v === undefined) continue;
    out[k] = k === 'web_search' || k === 'code_interpreter' || k === 'file_search' ? Number(v) : per1k(v)!;
  }
  if (p.service_tiers !== undefined) {
    out.service_tiers = Object.fromEntries(Object.entries(p.service_tiers).map(([t, m]) => [t, Number(m)]));
  }
  if (p.source !== undefined) out.source = p.source;
  if (p.updated_at !== undefined) out.updated_at = p.updated_at;
  return out;
}

export function renderModel(m: CatalogModel): ModelListItem {
  const item: ModelListItem = {
    id: m.id,
    object: 'model',
    created: m.created,
    owned_by: m.owned_by,
    // The OpenAI model object's fields: permission as given (empty when none), root, parent.
    permission: m.permission ?? [],
    root: m.id,
    parent: null,
  };
  if (m.context_length !== undefined) item.context_length = m.context_length;
  if (m.pricing !== undefined) item.pricing = listPricing(m.pricing);
  if (m.supports_vision !== undefined) item.supports_vision = m.supports_vision;
  return item;
}

/** A provider's name from its base URL host: `api.openai.com` → `openai`; IPs and single labels as they are. */
export { providerName } from '../providers/providers.js';

/** The package version (also the listing's `version` tag). */
export { packageVersion };

/** The models a provider serves: those it names, else the whole catalogue. */
function providerModels(p: Provider, services: Services): CatalogModel[] {
  return services.catalog.list().filter((m) => p.serves(m.id));
}

function providerSummary(p: Provider, services: Services) {
  return {
    name: p.name,
    models: providerModels(p, services).map((m) => m.id),
    endpoints: TEXT_ENDPOINTS,
    status: p.breaker.status(),
    priority: p.spec.priority,
    weight: p.spec.weight,
    routing: services.config.routingPolicy,
  };
}

/** A model's `pricing` as an auto-priced provider charges it (the msats of its rate card; `mode` "auto"). */
function autoListPricing(m: CatalogModel, card: RateCard): ModelListPricing {
  const c = nodeCardPrices(card);
  return {
    ...(m.pricing === undefined
      ? { prompt: null, completion: null, unit: '1k tokens' as const }
      : listPricing(m.pricing)),
    mode: 'auto',
    prompt_msats: c.promptMsatPer1k,
    completion_msats: c.completionMsatPer1k,
    request_msats: c.requestMsat,
    prompt_sats: c.promptMsatPer1k / 1000,
    completion_sats: c.completionMsatPer1k / 1000,
    request_sats: c.requestMsat / 1000,
    dimension_msats: c.dimensionMsats,
  };
}

/**
 * /v1/models for a model that only `"pricing": "auto"` providers serve (a reseller's usual set-up): what a call
 * is charged — the dearest of their prices, as the reservation is sized for — instead of this node's own pricing,
 * which those calls do not use. Undefined when another provider serves it too, or no node priced it yet.
 */
function autoListed(m: CatalogModel, services: Services): ModelListItem | undefined {
  const serving = services.providers.serving(m.id);
  if (serving.length === 0 || serving.some((p) => p.spec.autoPricing === undefined)) return undefined;
  let dearest: { card: RateCard; score: number } | undefined;
  for (const p of serving) {
    const card = services.nodes?.prices.autoCard(p, m.id);
    if (card === undefined) continue;
    const c = nodeCardPrices(card);
    const score = c.promptMsatPer1k + c.completionMsatPer1k + c.requestMsat;
    if (dearest === undefined || score > dearest.score) dearest = { card, score };
  }
  if (dearest === undefined) return undefined;
  const item = renderModel(m);
  item.pricing = autoListPricing(m, dearest.card);
  return item;
}

/**
 * A model's price as this provider charges it: `"pricing": "auto"`, its node's advertised msats × markup (any
 * pricing mode); under model-based pricing, the provider's own `pricing` (USD per token and per call, over the
 * price book's) is what a call it serves is charged, so that is shown, with the charged msats; otherwise the price
 * book's USD prices, as /v1/models has them.
 */
function providerPricing(p: Provider, m: CatalogModel, services: Services): { pricing?: ModelListPricing } {
  // `"pricing": "auto"`: its node's advertised price × markup, in every pricing mode (core/pricing/node-rates.ts).
  const card = p.spec.autoPricing !== undefined ? services.nodes?.prices.autoCard(p, m.id) : undefined;
  if (card !== undefined) return { pricing: autoListPricing(m, card) };
  const own =
    services.pricing?.mode === 'model' ? p.ratesFor(m.id, services.catalog.usdRates(m.id)) : undefined;
  if (own === undefined) return m.pricing === undefined ? {} : { pricing: listPricing(m.pricing) };
  const item = renderModel(m);
  item.pricing = {
    ...item.pricing,
    prompt: per1k(own.promptUsdPerToken),
    completion: per1k(own.completionUsdPerToken),
    unit: '1k tokens',
  };
  return { pricing: withPrice(item, services.pricing, own).pricing! };
}

export const publicRoutes: RouteModule = (router, services) => {
  const { catalog, config } = services;
  // Every route here builds its answer per call: each request counts per client IP like any caller with no
  // usable credential (RATE_LIMIT_IP_PER_*, the same windows; credentials are not read here). /healthz,
  // /readyz and /metrics (core/routes/health.ts) stay unlimited for probes and scrapers.
  const get = (template: string, handler: RouteHandler) =>
    router.get(template, async (ctx) => {
      await limitAnonymous(ctx, services);
      return handler(ctx);
    });

  const listed = (m: CatalogModel) => autoListed(m, services) ?? withPrice(renderModel(m), services.pricing);
  get('/v1/models', () => ({
    json: { object: 'list', data: catalog.list().map(listed) },
  }));

  // The SDKs' models.retrieve: public like the list. (Ids with a slash cannot be named in one path segment.)
  get('/v1/models/{model}', (ctx) => {
    const m = catalog.get(ctx.params.model ?? '');
    if (m === undefined)
      throw new GatewayError('not_found', { message: `Unknown model: ${ctx.params.model}` });
    return { json: listed(m) };
  });

  get('/v1/info', () => {
    const models: Record<string, ModelListItem> = {};
    for (const m of catalog.list()) models[m.id] = renderModel(m);
    return {
      json: {
        name: config.node.name,
        description: config.node.description,
        version: packageVersion(),
        npub: services.network?.npub ?? config.node.npub,
        mints: config.cashu.mints,
        // The ways an unpaid call can be paid here (README "Paying"): the Lightning doors need the doors service
        // (a wallet and a store), the Cashu door a wallet.
        payment_doors: services.doors
          ? [...services.doors.config.doors]
          : services.wallet && config.doors.offered.includes('cashu')
            ? ['cashu']
            : [],
        models,
      },
    };
  });

  get('/v1/providers', () => ({
    json: { providers: services.providers.list.map((p) => providerSummary(p, services)) },
  }));

  get('/v1/providers/{provider_name}', (ctx) => {
    const p = services.providers.get(ctx.params.provider_name ?? '');
    if (p === undefined) {
      throw new GatewayError('not_found', { message: `Unknown provider "${ctx.params.provider_name}"` });
    }
    return {
      json: {
        name: p.name,
        display_name: p.name,
        // The host only: never the path, a key, or credentials of the URL.
        description: `OpenAI-compatible provider at ${new URL(p.spec.baseUrl).host}`,
        models: providerModels(p, services).map((m) => ({
          id: m.id,
          name: m.name,
          context_window: m.context_length ?? null,
          ...providerPricing(p, m, services),
        })),
        endpoints: TEXT_ENDPOINTS,
        features: FEATURES,
        status: p.breaker.status(),
        priority: p.spec.priority,
        weight: p.spec.weight,
        ttfb_ms: p.ttfbMs === null ? null : Math.round(p.ttfbMs * 10) / 10,
      },
    };
  });
};
