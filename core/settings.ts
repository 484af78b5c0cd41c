import { GatewayError } from './errors.js';
import { REDACTED, redactUrl } from './log.js';
import { tickersNeeded } from './pricing/formula.js';
import { createPricing } from './pricing/pricing.js';
import type { PricingConfig } from './pricing/types.js';
import type { Services } from './service-types.js';
import type { StoreConnection } from './store/connection.js';
import { loadSettings } from './store/settings-store.js';

/**
 * Operator settings for GET/PATCH /admin/api/settings (docs/endpoints.md, "Admin"; openapi/openapi.yaml).
 *
 * Shown: the configuration variables of the README's table and the other operator settings, named after their
 * environment variable in lower case. Secrets (`admin_password`, `upstream_api_key`, `cashu_seed`, the
 * password inside `redis_url` and userinfo inside `upstream_base_url`) are `"[redacted]"` when set, null when
 * not — never their value.
 *
 * Changeable at run time (`RUNTIME_SETTINGS`): the pricing numbers (`fixed_pricing`,
 * `fixed_cost_per_request`, `fixed_per_1k_input_tokens`, `fixed_per_1k_output_tokens`, `exchange_fee`,
 * `upstream_provider_fee`), `child_key_cost_msats`, and `node_name`, `node_description`, `node_npub`. A
 * change is validated (a pricing service is built from it first), applied in memory to this process and
 * persisted in the store (core/store/settings-store.ts: one atomic merge), and re-applied over the
 * environment at the next start, before the gateway listens (core/services.ts). The document also names `upstream_base_url`,
 * `upstream_api_key` and `cashu_mints`: they need a restart (connections, the wallet's mints), so a PATCH
 * changing them is refused with 400 — except the value `"[redacted]"` for the key, which keeps it.
 *
 * Every process sharing the store applies a change within 2 s: the PATCH bumps the `settings` signal's version
 * (core/store/signals.ts: Redis pub/sub with a version check, a version poll on SQLite), and each process, on
 * seeing a newer version, reloads the persisted settings and applies them (`reloadSettings`), logging the
 * version. `version` in the view is the last version this process applied (0: none since the store began).
 */

export const RUNTIME_SETTINGS = [
  'fixed_pricing',
  'fixed_cost_per_request',
  'fixed_per_1k_input_tokens',
  'fixed_per_1k_output_tokens',
  'exchange_fee',
  'upstream_provider_fee',
  'child_key_cost_msats',
  'node_name',
  'node_description',
  'node_npub',
] as const;
export type RuntimeSetting = (typeof RUNTIME_SETTINGS)[number];
export type SettingsPatch = Partial<Record<RuntimeSetting, unknown>>;

const RESTART_SETTINGS = ['upstream_base_url', 'upstream_api_key', 'cashu_mints'] as const;

const secret = (v: string | undefined): string | null => (v === undefined ? null : REDACTED);

/** The settings as GET /admin/api/settings shows them (redacted). */
export function settingsView(services: Services, storeKind: string | undefined) {
  const c = services.config;
  return {
    upstream_base_url: redactUrl(c.upstreamBaseUrl),
    upstream_api_key: secret(c.upstreamApiKey),
    admin_password: secret(c.adminPassword),
    fixed_pricing: c.pricing.fixed,
    fixed_cost_per_request: c.pricing.costPerRequestSats,
    fixed_per_1k_input_tokens: c.pricing.per1kInputSats ?? null,
    fixed_per_1k_output_tokens: c.pricing.per1kOutputSats ?? null,
    exchange_fee: c.pricing.exchangeFee,
    upstream_provider_fee: c.pricing.upstreamProviderFee,
    btc_usd_price: c.pricing.btcUsdPrice ?? null,
    pricing_mode: services.pricing?.mode ?? null,
    child_key_cost_msats: c.childKeyCostMsats,
    node_name: c.node.name,
    node_description: c.node.description,
    node_npub: c.node.npub,
    cashu_mints: c.cashu.mints,
    cashu_seed: secret(c.cashu.seed),
    redis_url: redactUrl(c.redis?.url),
    store: storeKind ?? null,
    rate_limit_requests_per_minute: c.limits.requestsPerMinute,
    rate_limit_tokens_per_hour: c.limits.tokensPerHour,
    rate_limit_concurrent: c.limits.concurrent,
    max_body_bytes: c.maxBodyBytes,
    http_engine: c.httpEngine,
    runtime_changeable: [...RUNTIME_SETTINGS],
    version: services.signals?.version('settings') ?? 0,
  };
}

function bad(message: string): GatewayError {
  return new GatewayError('invalid_request', { message });
}

/** Checks a patch beyond the schema; returns only the runtime fields. Throws 400 on anything else. */
export function validatePatch(services: Services, body: Record<string, unknown>): SettingsPatch {
  const out: SettingsPatch = {};
  for (const [k, v] of Object.entries(body)) {
    if ((RESTART_SETTINGS as readonly string[]).includes(k)) {
      if (k === 'upstream_api_key' && v === REDACTED) continue;
      if (k === 'cashu_mints' && JSON.stringify(v) === JSON.stringify(services.config.cashu.mints)) continue;
      if (k === 'upstream_base_url' && v === redactUrl(services.config.upstreamBaseUrl)) continue;
      throw bad(`${k} cannot change at run time: set its environment variable and restart`);
    }
    if (!(RUNTIME_SETTINGS as readonly string[]).includes(k)) throw bad(`Unknown setting: ${k}`);
    const num = (min: number, max = Number.MAX_SAFE_INTEGER, nullable = false) => {
      if (v === null && nullable) return;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
        throw bad(`${k} must be a number from ${min} to ${max}${nullable ? ' or null' : ''}`);
      }
    };
    switch (k as RuntimeSetting) {
      case 'fixed_pricing':
        if (typeof v !== 'boolean') throw bad('fixed_pricing must be true or false');
        break;
      case 'fixed_cost_per_request':
        num(0, 1e9);
        break;
      case 'fixed_per_1k_input_tokens':
      case 'fixed_per_1k_output_tokens':
        num(0, 1e9, true);
        break;
      case 'exchange_fee':
      case 'upstream_provider_fee':
        num(0, 10);
        break;
      case 'child_key_cost_msats':
        num(0, 1e15);
        if (!Number.isInteger(v)) throw bad('child_key_cost_msats must be an integer');
        break;
      default:
        if (typeof v !== 'string' || v.length > 2000)
          throw bad(`${k} must be a string of at most 2000 chars`);
    }
    out[k as RuntimeSetting] = v;
  }
  return out;
}

/** The pricing configuration with a patch applied (the config object itself is not touched). */
function patchedPricing(base: PricingConfig, p: SettingsPatch): PricingConfig {
  const next = { ...base };
  if (p.fixed_pricing !== undefined) next.fixed = p.fixed_pricing as boolean;
  if (p.fixed_cost_per_request !== undefined) next.costPerRequestSats = p.fixed_cost_per_request as number;
  if (p.fixed_per_1k_input_tokens !== undefined) {
    next.per1kInputSats = (p.fixed_per_1k_input_tokens as number | null) ?? undefined;
  }
  if (p.fixed_per_1k_output_tokens !== undefined) {
    next.per1kOutputSats = (p.fixed_per_1k_output_tokens as number | null) ?? undefined;
  }
  if (p.exchange_fee !== undefined) next.exchangeFee = p.exchange_fee as number;
  if (p.upstream_provider_fee !== undefined) next.upstreamProviderFee = p.upstream_provider_fee as number;
  return next;
}

/**
 * Prepares a validated patch: the new pricing service is built now (a configuration it rejects throws 400
 * and changes nothing); the returned function applies it to this process — the new pricing service replaces
 * the old one in the pricing holder (core/pricing/holder.ts), so every stage prices with the new terms from
 * the next call on.
 */
export function preparePatch(services: Services, p: SettingsPatch): () => void {
  const c = services.config;
  const pricingKeys = Object.keys(p).filter((k) => k.startsWith('fixed_') || k.endsWith('_fee'));
  let nextPricing: PricingConfig | undefined;
  let built: ReturnType<typeof createPricing> | undefined;
  if (pricingKeys.length > 0) {
    nextPricing = patchedPricing(c.pricing, p);
    try {
      built = createPricing({
        config: nextPricing,
        rates: (id) => services.catalog.usdRates(id),
        btc: services.btc,
      });
    } catch (err) {
      throw bad(`These pricing settings are not usable: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return () => applyPrepared(services, p, nextPricing, built);
}

/** The runtime settings persisted in the store (only the known ones), validated; unknown keys dropped. */
export async function loadPersistedSettings(
  services: Services,
  store: StoreConnection,
): Promise<SettingsPatch> {
  const saved = await loadSettings(store);
  const known: Record<string, unknown> = {};
  for (const k of RUNTIME_SETTINGS) if (k in saved) known[k] = saved[k];
  return validatePatch(services, known);
}

/** Reloads the persisted settings and applies them (another process changed them: signal `settings`). */
export async function reloadSettings(
  services: Services,
  store: StoreConnection,
  version: number,
): Promise<void> {
  const saved = await loadPersistedSettings(services, store);
  if (Object.keys(saved).length > 0) applyPatch(services, saved);
  services.log.info({ version, changed: Object.keys(saved) }, 'admin settings version applied');
}

/** Validates and applies a patch at once. */
export function applyPatch(services: Services, p: SettingsPatch): void {
  preparePatch(services, p)();
}

function applyPrepared(
  services: Services,
  p: SettingsPatch,
  nextPricing: PricingConfig | undefined,
  built: ReturnType<typeof createPricing> | undefined,
): void {
  const c = services.config;
  if (nextPricing !== undefined && built !== undefined) {
    // The config object is shared (settingsView reads it); the pricing service is swapped in its holder, so
    // every stage holding the holder prices with the new terms from the next call on.
    Object.assign(c.pricing, nextPricing);
    services.pricing?.swap(built);
    if (services.btc !== undefined && tickersNeeded(c.pricing)) {
      // Fixed pricing runs no ticker (core/services.ts); switching to token or model pricing starts it (a no-op
      // when it runs already; it fetches a first price when it has none).
      services.btc.start();
    }
  }
  if (p.child_key_cost_msats !== undefined) c.childKeyCostMsats = p.child_key_cost_msats as number;
  if (p.node_name !== undefined) c.node.name = p.node_name as string;
  if (p.node_description !== undefined) c.node.description = p.node_description as string;
  if (p.node_npub !== undefined) c.node.npub = p.node_npub as string;
}
