import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../config.js';
import type { UsdRates } from '../pricing/types.js';
import { parsePricing } from '../upstream/model-catalog.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';
import { Provider } from './provider.js';
import { BUILT_IN_POLICIES, POLICY_NAME_RE } from './routing-policy.js';
import type {
  ModelPrice,
  Provider as ProviderApi,
  ProviderSpec,
  Providers as ProvidersApi,
  ProvidersOptions,
  RoutingInfo,
  RoutingPolicy,
} from './types.js';

/**
 * The model providers the gateway relays to (docs/providers.md): one per entry of the providers file
 * (`PROVIDERS_PATH`, JSON or YAML), or the one `UPSTREAM_BASE_URL` names. Each provider has its own
 * keep-alive pool (`max_connections`, `timeout_ms`, extra `headers`, its own API key), the models it serves
 * (`"*"` = all), a `priority` (lower is tried first), a `weight`, and a circuit breaker.
 *
 * Routing (`ROUTING_POLICY`, or per model in the file's `routing`): the order in which a call's providers are
 * tried, given by a named `RoutingPolicy` (./routing-policy.ts: `priority` — the default —, `weighted`,
 * `cheapest`, `latency`, and any a plugin registers with `registerPolicy`).
 *
 * Breaker: `PROVIDER_BREAKER_FAILURES` consecutive failures (connect error, timeout before the head, 5xx, 429)
 * open it for `PROVIDER_BREAKER_COOLDOWN_MS`: while open the relay sends it nothing (it skips it); after the
 * cool-down exactly one call probes it (half-open; calls meanwhile skip it): success closes it, failure
 * opens it again. Status for /v1/providers: `down` (open), `degraded` (half-open, or failures since the last
 * success), `active`.
 */

/** The fields a provider's `pricing` may carry. */
const PROVIDER_PRICE_FIELDS = new Set([
  'prompt',
  'completion',
  'request',
  'input_cache_read',
  'input_cache_write',
  'input_cache_write_1h',
  'internal_reasoning',
  'input_audio',
  'input_audio_cache_read',
  'output_audio',
  'input_image',
  'web_search',
  'image',
  'service_tiers',
  'source',
  'updated_at',
]);
export interface ProvidersFile {
  providers: ProviderSpec[];
  /** Per-model routing policy names (built-in or registered by a plugin). */
  routing: Record<string, string>;
}

export class Providers implements ProvidersApi {
  readonly list: Provider[];
  /** Some provider declares its own prices (then reserve and settle look them up). */
  readonly priced: boolean;
  private readonly byName: Map<string, Provider>;
  private readonly info: RoutingInfo;
  /** Per-model routing policy names (the providers file's `routing`). */
  private readonly routing: Record<string, string>;
  private readonly policies = new Map<string, RoutingPolicy>(BUILT_IN_POLICIES.map((p) => [p.name, p]));
  /** Whether the relay skips a provider whose breaker refuses (see ProvidersOptions.skipOpenBreakers). */
  readonly skipOpenBreakers: boolean;
  /** Set once the policy names were checked against the registry (`checkPolicies`). */
  private checked = false;

  constructor(
    file: ProvidersFile,
    readonly opts: ProvidersOptions,
    /** Pre-built clients by provider name (tests, or the one-provider shorthand reusing its client). */
    clients: Record<string, UpstreamClient> = {},
  ) {
    this.list = file.providers.map((s) => new Provider(s, opts.breaker, clients[s.name]));
    this.byName = new Map(this.list.map((p) => [p.name, p]));
    this.priced = this.list.some((p) => Object.keys(p.spec.pricing).length > 0);
    this.routing = file.routing;
    this.info = { random: opts.random ?? Math.random };
    this.skipOpenBreakers = opts.skipOpenBreakers ?? true;
  }

  get(name: string): Provider | undefined {
    return this.byName.get(name);
  }

  /**
   * Adds a named routing policy (plugin kit: a plugin's factory calls it at start, before any call). MUST be
   * called before the pipeline is built; a name already taken (a built-in one included) is refused.
   */
  registerPolicy(policy: RoutingPolicy): void {
    const name = (policy as { name?: unknown } | null)?.name;
    if (typeof name !== 'string' || !POLICY_NAME_RE.test(name) || typeof policy.order !== 'function') {
      throw new ConfigError(
        'registerPolicy: a routing policy is {name: 1-63 letters, digits, "-" or "_", order(providers, model, info)}',
      );
    }
    if (this.policies.has(name))
      throw new ConfigError(`registerPolicy: a routing policy "${name}" exists already`);
    if (this.checked) throw new ConfigError(`registerPolicy("${name}"): too late, the node already started`);
    this.policies.set(name, policy);
  }

  /** The registered policy names (built-in first). */
  get policyNames(): string[] {
    return [...this.policies.keys()];
  }

  /**
   * Checks that ROUTING_POLICY and every `routing` entry name a registered policy (called once the plugins,
   * which may register policies, are built); a start with an unknown name stops with a message naming it.
   */
  checkPolicies(): void {
    const known = () => this.policyNames.join(', ');
    if (!this.policies.has(this.opts.policy)) {
      throw new ConfigError(
        `ROUTING_POLICY names an unknown routing policy "${this.opts.policy}" (known: ${known()})`,
      );
    }
    for (const [model, name] of Object.entries(this.routing)) {
      if (!this.policies.has(name)) {
        throw new ConfigError(
          `PROVIDERS_PATH: routing["${model}"] names an unknown routing policy "${name}" (known: ${known()})`,
        );
      }
    }
    this.checked = true;
  }

  /** The providers serving `model`, in the file's order (no routing policy is asked). */
  serving(model: string | undefined): readonly Provider[] {
    return this.list.length === 1 && this.list[0]!.serves(model)
      ? this.list
      : this.list.filter((p) => p.serves(model));
  }

  /**
   * The USD rates a call of `model` served by `servedBy` is charged at (model-based pricing): that provider's
   * own prices; else the price book's (`base`); else — a model only providers price, served after failover by
   * one that declares none — the dearest price a serving provider declares, which is what the reservation
   * covered (never free, never unpriceable after the call). Undefined when nobody prices it.
   */
  chargeRates(model: string, servedBy: string | undefined, base: UsdRates | undefined): UsdRates | undefined {
    const own = servedBy === undefined ? undefined : this.byName.get(servedBy)?.ratesFor(model, base);
    if (own !== undefined || base !== undefined) return own ?? base;
    let dearest: Provider | undefined;
    for (const p of this.serving(model)) {
      if (p.spec.pricing[model] === undefined) continue;
      if (dearest === undefined || p.priceScore(model) > dearest.priceScore(model)) dearest = p;
    }
    return dearest?.ratesFor(model, base);
  }

  /** The name of the policy that orders `model`'s providers. */
  policyFor(model: string | undefined): string {
    return (model !== undefined ? this.routing[model] : undefined) ?? this.opts.policy;
  }

  /**
   * The providers serving `model`, in the order its routing policy gives. Circuit breakers are not applied
   * here: the relay skips a provider whose breaker refuses the call when it gets to it (`Breaker.acquire`).
   */
  order(model: string | undefined): readonly ProviderApi[] {
    // The one-provider shorthand (the common case): no allocation, no policy call.
    if (this.list.length === 1) return this.list[0]!.serves(model) ? this.list : [];
    const serving = this.list.filter((p) => p.serves(model));
    if (serving.length <= 1) return serving;
    const name = this.policyFor(model);
    const policy = this.policies.get(name);
    if (policy === undefined) throw new ConfigError(`unknown routing policy "${name}"`);
    return policy.order(serving, model, this.info);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.list.map((p) => p.client.close()));
  }
}

// ------------------------------------------------------------------ the file

const NAME_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/i;

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses and validates a providers file (JSON, or YAML when `format` says so — `readProvidersFile` decides by the
 * `.yaml`/`.yml` extension); every message names the entry (`providers[1] ("b")`). `env` resolves
 * `api_key_env`. Defaults: models "*", priority 1, weight 1, and the connection/timeout defaults given.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: validates the providers file field by field in the file's order, every message naming its entry
export function parseProvidersFile(
  text: string,
  env: Record<string, string | undefined>,
  defaults: { timeoutMs: number; maxConnections: number },
  where = 'PROVIDERS_PATH',
  format: 'json' | 'yaml' = 'json',
): ProvidersFile {
  let doc: unknown;
  try {
    // YAML's own parser, strict about duplicate keys; the same document shape as JSON.
    doc = format === 'yaml' ? parseYaml(text, { uniqueKeys: true }) : JSON.parse(text);
  } catch (err) {
    throw new ConfigError(
      `${where}: not valid ${format === 'yaml' ? 'YAML' : 'JSON'} (${(err as Error).message})`,
    );
  }
  if (!isObj(doc) || !Array.isArray(doc.providers) || doc.providers.length === 0) {
    throw new ConfigError(`${where}: expected {"providers": [ … at least one … ]}`);
  }
  const known = new Set(['providers', 'routing']);
  for (const k of Object.keys(doc))
    if (!known.has(k)) throw new ConfigError(`${where}: unknown field "${k}"`);
  const names = new Set<string>();
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: one provider entry's fields checked in the file's order, every message naming the entry
  const providers = doc.providers.map((raw, i): ProviderSpec => {
    const at = `${where}: providers[${i}]${isObj(raw) && typeof raw.name === 'string' ? ` ("${raw.name}")` : ''}`;
    if (!isObj(raw)) throw new ConfigError(`${at}: must be an object`);
    const allowed = new Set([
      'name',
      'base_url',
      'api_key',
      'api_key_env',
      'models',
      'priority',
      'weight',
      'timeout_ms',
      'max_connections',
      'headers',
      'pricing',
      'api',
      'payment',
      'topup_sats',
      'min_balance_sats',
      'markup',
    ]);
    for (const k of Object.keys(raw))
      if (!allowed.has(k)) throw new ConfigError(`${at}: unknown field "${k}"`);
    const name = raw.name;
    if (typeof name !== 'string' || !NAME_RE.test(name)) {
      throw new ConfigError(`${at}: "name" must be 1-63 letters, digits, "-" or "_"`);
    }
    if (names.has(name)) throw new ConfigError(`${at}: duplicate name`);
    names.add(name);
    const baseUrl = raw.base_url;
    let url: URL;
    try {
      url = new URL(String(baseUrl));
    } catch {
      throw new ConfigError(`${at}: "base_url" must be an absolute http(s) URL`);
    }
    if (typeof baseUrl !== 'string' || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ConfigError(`${at}: "base_url" must be an absolute http(s) URL`);
    }
    if (url.username || url.password) {
      throw new ConfigError(`${at}: "base_url" must not carry credentials (use api_key / api_key_env)`);
    }
    if (raw.api_key !== undefined && raw.api_key_env !== undefined) {
      throw new ConfigError(`${at}: give "api_key" or "api_key_env", not both`);
    }
    let apiKey: string | undefined;
    if (raw.api_key !== undefined) {
      if (typeof raw.api_key !== 'string' || raw.api_key === '')
        throw new ConfigError(`${at}: "api_key" must be a string`);
      apiKey = raw.api_key;
    }
    if (raw.api_key_env !== undefined) {
      if (typeof raw.api_key_env !== 'string')
        throw new ConfigError(`${at}: "api_key_env" must be a variable name`);
      apiKey = env[raw.api_key_env];
      if (!apiKey) throw new ConfigError(`${at}: the variable ${raw.api_key_env} (api_key_env) is not set`);
    }
    if (
      raw.payment !== undefined &&
      raw.payment !== 'api_key' &&
      raw.payment !== 'cashu' &&
      raw.payment !== 'cashu-balance'
    ) {
      throw new ConfigError(
        `${at}: "payment" must be "api_key" (the default) or "cashu" (eCash per call) or "cashu-balance" (a prepaid key at the node)`,
      );
    }
    const payment = raw.payment === 'cashu' || raw.payment === 'cashu-balance' ? raw.payment : undefined;
    if (payment !== undefined && apiKey !== undefined) {
      throw new ConfigError(`${at}: a "payment": "${payment}" node is paid with eCash; give it no "api_key"`);
    }
    if (payment !== undefined && raw.api === 'anthropic') {
      throw new ConfigError(`${at}: a "payment": "${payment}" node speaks the gateway's own (openai) API`);
    }
    const prepaid = parsePrepaid(at, raw, payment);
    const autoPricing = parseAutoPricing(at, raw, payment);
    let models: '*' | string[] = '*';
    if (raw.models !== undefined) {
      const m = raw.models;
      const list = Array.isArray(m) ? m : [m];
      if (list.length === 0 || !list.every((x) => typeof x === 'string' && x !== '')) {
        throw new ConfigError(`${at}: "models" must be "*" or a non-empty list of model ids`);
      }
      models = list.includes('*') ? '*' : (list as string[]);
    }
    const int = (field: string, v: unknown, def: number, min: number, max: number): number => {
      if (v === undefined) return def;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
        throw new ConfigError(`${at}: "${field}" must be an integer from ${min} to ${max}`);
      }
      return v;
    };
    const headers: Record<string, string> = {};
    if (raw.headers !== undefined) {
      if (!isObj(raw.headers)) throw new ConfigError(`${at}: "headers" must be an object of strings`);
      for (const [k, v] of Object.entries(raw.headers)) {
        if (typeof v !== 'string' || !/^[a-z0-9-]+$/i.test(k)) {
          throw new ConfigError(`${at}: "headers" must map header names to strings`);
        }
        headers[k.toLowerCase()] = v;
      }
    }
    const pricing: Record<string, ModelPrice> = {};
    if (raw.pricing !== undefined && autoPricing === undefined) {
      if (!isObj(raw.pricing)) throw new ConfigError(`${at}: "pricing" must map model ids to prices`);
      for (const [model, p] of Object.entries(raw.pricing)) {
        if (!isObj(p)) throw new ConfigError(`${at}: pricing["${model}"] must be an object`);
        for (const [k, v] of Object.entries(p)) {
          if (!PROVIDER_PRICE_FIELDS.has(k)) {
            throw new ConfigError(`${at}: pricing["${model}"]: unknown field "${k}"`);
          }
          if (k === 'service_tiers') {
            if (!isObj(v)) {
              throw new ConfigError(
                `${at}: pricing["${model}"].service_tiers must map tier names to multipliers (e.g. {"flex": "0.5", "priority": "2"})`,
              );
            }
            for (const [tier, m] of Object.entries(v)) {
              if (typeof m !== 'string' || !/^\d+(\.\d+)?$/.test(m) || Number(m) <= 0) {
                throw new ConfigError(
                  `${at}: pricing["${model}"].service_tiers["${tier}"] must be a multiplier > 0 as a decimal string (quoted in YAML, e.g. "0.5")`,
                );
              }
            }
          } else if (k === 'source' || k === 'updated_at') {
            if (typeof v !== 'string')
              throw new ConfigError(`${at}: pricing["${model}"].${k} must be a string`);
          } else if (typeof v !== 'string' || !/^\d+(\.\d+)?$/.test(v)) {
            throw new ConfigError(
              `${at}: pricing["${model}"].${k} must be a USD decimal string (quoted in YAML, e.g. "0.000001")`,
            );
          }
        }
        const parsed = parsePricing(p);
        if (typeof parsed === 'string') throw new ConfigError(`${at}: pricing["${model}"].${parsed}`);
        // `request` stays unset when the provider does not name it (the price book's applies then).
        const { request: _default, ...price } = parsed;
        pricing[model] = p.request === undefined ? price : { ...price, request: parsed.request };
      }
    }
    if (raw.api !== undefined && raw.api !== 'openai' && raw.api !== 'anthropic') {
      throw new ConfigError(`${at}: "api" must be "openai" or "anthropic"`);
    }
    return {
      name,
      ...(raw.api === 'anthropic' ? { api: 'anthropic' as const } : {}),
      ...(payment !== undefined ? { payment } : {}),
      ...(prepaid !== undefined ? { prepaid } : {}),
      ...(autoPricing !== undefined ? { autoPricing } : {}),
      baseUrl: baseUrl.replace(/\/+$/, ''),
      ...(apiKey !== undefined ? { apiKey } : {}),
      models,
      priority: int('priority', raw.priority, 1, 0, 1_000_000),
      weight: int('weight', raw.weight, 1, 1, 1_000_000),
      timeoutMs: int('timeout_ms', raw.timeout_ms, defaults.timeoutMs, 1, 3_600_000),
      maxConnections: int('max_connections', raw.max_connections, defaults.maxConnections, 1, 100_000),
      headers,
      pricing,
    };
  });
  // Policy names are checked against the registry once plugins registered theirs (Providers.checkPolicies).
  const routing: Record<string, string> = {};
  if (doc.routing !== undefined) {
    if (!isObj(doc.routing)) throw new ConfigError(`${where}: "routing" must map model ids to a policy`);
    for (const [model, policy] of Object.entries(doc.routing)) {
      if (typeof policy !== 'string' || !POLICY_NAME_RE.test(policy)) {
        throw new ConfigError(`${where}: routing["${model}"] must be a routing policy name`);
      }
      routing[model] = policy;
    }
  }
  return { providers, routing };
}

/** The most a `topup_sats` or `min_balance_sats` may be: 1 BTC. */
const MAX_PREPAID_SATS = 100_000_000;

/**
 * `"payment": "cashu-balance"`'s `topup_sats` (what the key is created with and each top-up adds) and
 * `min_balance_sats` (the balance at the node below which it is topped up): both required there, refused
 * elsewhere; the minimum below the top-up, so that one top-up lifts a balance that fell below it clear of it.
 */
function parsePrepaid(
  at: string,
  raw: Json,
  payment: 'cashu' | 'cashu-balance' | undefined,
): { topupMsat: number; minBalanceMsat: number } | undefined {
  if (payment !== 'cashu-balance') {
    for (const f of ['topup_sats', 'min_balance_sats']) {
      if (raw[f] !== undefined) {
        throw new ConfigError(`${at}: "${f}" is only for a "payment": "cashu-balance" node`);
      }
    }
    return undefined;
  }
  const sats = (f: string): number => {
    const v = raw[f];
    if (v === undefined) {
      throw new ConfigError(
        `${at}: a "payment": "cashu-balance" node needs "${f}" (${f === 'topup_sats' ? 'what its prepaid key is created with and each top-up adds' : 'the balance below which its key is topped up'}, in sats)`,
      );
    }
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > MAX_PREPAID_SATS) {
      throw new ConfigError(`${at}: "${f}" must be an integer from 1 to ${MAX_PREPAID_SATS} (sats)`);
    }
    return v;
  };
  const topup = sats('topup_sats');
  const min = sats('min_balance_sats');
  if (min >= topup) {
    throw new ConfigError(
      `${at}: "min_balance_sats" (${min}) must be below "topup_sats" (${topup}): a top-up must lift the balance clear of the minimum it was made for`,
    );
  }
  return { topupMsat: topup * 1000, minBalanceMsat: min * 1000 };
}

/** The most a `markup` may be (a price × 100). */
const MAX_MARKUP = 100;

/**
 * `"pricing": "auto"` (the node's advertised prices × `markup`, a decimal string from 1 to MAX_MARKUP with at most
 * 6 decimals, default "1"): only for a node paid from the wallet, the one kind of provider that advertises its
 * prices in msats. `markup` without it is refused.
 */
function parseAutoPricing(
  at: string,
  raw: Json,
  payment: 'cashu' | 'cashu-balance' | undefined,
): { markup: string } | undefined {
  if (raw.pricing !== 'auto') {
    if (raw.markup !== undefined) throw new ConfigError(`${at}: "markup" goes with "pricing": "auto"`);
    if (typeof raw.pricing === 'string') {
      throw new ConfigError(`${at}: "pricing" must be "auto" or map model ids to prices`);
    }
    return undefined;
  }
  if (payment === undefined) {
    throw new ConfigError(
      `${at}: "pricing": "auto" charges a node's advertised prices: only a "payment": "cashu" or "cashu-balance" node advertises them`,
    );
  }
  const m = raw.markup ?? '1';
  if (typeof m !== 'string' || !/^\d{1,3}(\.\d{1,6})?$/.test(m)) {
    throw new ConfigError(
      `${at}: "markup" must be a decimal string with at most 6 decimals, e.g. "1.05" (quoted, also in YAML)`,
    );
  }
  // Validation only (the price is computed from the string, exactly: core/pricing/node-rates.ts).
  if (Number(m) < 1) {
    throw new ConfigError(
      `${at}: "markup" must be at least "1" (the node's own price): "${m}" sells below cost`,
    );
  }
  if (Number(m) > MAX_MARKUP) throw new ConfigError(`${at}: "markup" must be at most "${MAX_MARKUP}"`);
  return { markup: m };
}

export function readProvidersFile(
  path: string,
  env: Record<string, string | undefined>,
  defaults: { timeoutMs: number; maxConnections: number },
): ProvidersFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `PROVIDERS_PATH: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const format = /\.ya?ml$/i.test(path) ? 'yaml' : 'json';
  return parseProvidersFile(text, env, defaults, `PROVIDERS_PATH (${path})`, format);
}

/** A short name for a base URL: `api.openai.com` → `openai`, an IP stays itself. */
export function providerName(baseUrl: string): string {
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return host;
  const labels = host.split('.');
  return labels.length >= 2 ? labels[labels.length - 2]! : host;
}
