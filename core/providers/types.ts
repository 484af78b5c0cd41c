import type { UsdRates } from '../pricing/types.js';
import type { ModelPricing } from '../upstream/types.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';

/**
 * The providers' types (provider.ts, providers.ts and routing-policy.ts are the implementation): what the plugin
 * contract (core/plugin.ts: `Provider`, `Providers`, `RoutingPolicy`, `RoutingInfo`; `Services.providers`) and
 * the stages name without importing the implementation, which parses price books.
 */

export type ProviderStatus = 'active' | 'degraded' | 'down';

/** A provider's price of one model: the price book's token fields and `image` (models.json names), each
 *  optional. */
export type ModelPrice = Partial<Omit<ModelPricing, 'image_sizes' | 'audio_minute' | 'speech_1k_chars'>>;

export interface ProviderSpec {
  name: string;
  baseUrl: string;
  apiKey?: string | undefined;
  models: '*' | string[];
  priority: number;
  weight: number;
  timeoutMs: number;
  maxConnections: number;
  headers: Record<string, string>;
  /** The API it speaks (`"api"` in the file): `openai` (default) or `anthropic` (its key sent as `x-api-key`
   *  with `anthropic-version`). */
  api?: 'openai' | 'anthropic' | undefined;
  /** Per-model prices of this provider (USD decimal strings per token / per call), for `cheapest`. */
  pricing: Record<string, ModelPrice>;
  /** How calls routed here are paid (`"payment"` in the file): with the API key (default), `cashu` — another
   *  Cashu-priced node, each call paid with an `X-Cashu` token from the operator's wallet (node-payment.ts) — or
   *  `cashu-balance` — another node, paid from a prepaid key kept there and topped up from the wallet
   *  (node-accounts.ts). */
  payment?: 'cashu' | 'cashu-balance' | undefined;
  /** `cashu-balance`: the key's top-up (`topup_sats`) and the balance below which it is topped up
   *  (`min_balance_sats`), in msats. */
  prepaid?: { topupMsat: number; minBalanceMsat: number } | undefined;
  /** `"pricing": "auto"`: the calls it serves are charged at the node's advertised prices × `markup` (a decimal
   *  string ≥ 1), core/pricing/node-rates.ts. Its `pricing` object is then empty. */
  autoPricing?: { markup: string } | undefined;
}

export interface BreakerSnapshot {
  /** closed: calls go through; open: skipped until `retryAtMs`; half_open: the next call is a probe. */
  state: 'closed' | 'open' | 'half_open';
  consecutiveFailures: number;
  openedAtMs: number | null;
  retryAtMs: number | null;
}

export interface BreakerOptions {
  failures: number;
  cooldownMs: number;
}

/** A provider's circuit breaker (provider.ts `Breaker`; the rule is in providers.ts). */
export interface CircuitBreaker {
  /** Would a call be let through now (without claiming the half-open probe)? */
  allows(now?: number): boolean;
  /**
   * A call wants to go to this provider: true when it may. Closed: always. Open: never during the cool-down;
   * after it, the first caller claims the one half-open probe (true) and everyone else is refused (false) until
   * the probe's outcome is reported (`success`, `failure`, or `abandon`).
   */
  acquire(now?: number): boolean;
  success(): void;
  failure(now?: number): void;
  /** A call it let through ended with no verdict on the provider (the client went away): free the probe. */
  abandon(): void;
  status(now?: number): ProviderStatus;
  /** The breaker's state for an operator (the admin console): read only, changes nothing. */
  snapshot(now?: number): BreakerSnapshot;
}

/** One model provider (an entry of the providers file) with its pool and circuit breaker (provider.ts). */
export interface Provider {
  readonly spec: ProviderSpec;
  readonly name: string;
  readonly client: UpstreamClient;
  readonly breaker: CircuitBreaker;
  /** EWMA of the time to the response head, ms; null until measured. */
  readonly ttfbMs: number | null;
  /** The models it names, or null for "all". */
  readonly namedModels: string[] | null;
  serves(model: string | undefined): boolean;
  /**
   * The USD rates this provider charges for `model`: its declared `pricing` over the price book's rates (`base`);
   * undefined when it declares none for the model (the price book applies).
   */
  ratesFor(model: string, base: UsdRates | undefined): UsdRates | undefined;
  recordTtfb(ms: number): void;
  /** Prompt + completion USD per token for `cheapest`; Infinity when this provider declares no price. */
  priceScore(model: string | undefined): number;
}

/** What a policy may use besides the providers and the model. */
export interface RoutingInfo {
  /** Random numbers in [0, 1) (seeded in tests). */
  random(): number;
}

export interface RoutingPolicy {
  /** The name `ROUTING_POLICY` and the providers file's `routing` use: 1–63 letters, digits, `-`, `_`. */
  readonly name: string;
  /**
   * The providers to try for `model`, first to last. `providers` are those serving the model, in the file's
   * order (never empty). MUST be synchronous and cheap (it runs on every call); MUST NOT modify `providers`;
   * MAY leave some out (they are then never tried for this call) but MUST NOT add others.
   */
  order(providers: readonly Provider[], model: string | undefined, info: RoutingInfo): readonly Provider[];
}

/** The routing and breaker settings of the providers (providers.ts `Providers`). */
export interface ProvidersOptions {
  /** The node's default routing policy (`ROUTING_POLICY`): a built-in name or one a plugin registers. */
  policy: string;
  maxAttempts: number;
  breaker: BreakerOptions;
  /** Random numbers in [0, 1) for `weighted` (tests pass a seeded one). */
  random?: () => number;
  /**
   * An open breaker skips its provider (default true). False for the one-provider shorthand (UPSTREAM_BASE_URL
   * without a providers file): with nothing to fail over to, skipping would turn a short blip into an outage of
   * the whole cool-down, so there the breaker only reports `status`.
   */
  skipOpenBreakers?: boolean;
}

/** Every provider, its breaker and routing, as services expose them (`Services.providers`; providers.ts). */
export interface Providers {
  readonly opts: ProvidersOptions;
  readonly list: readonly Provider[];
  /** Some provider declares its own prices (then reserve and settle look them up). */
  readonly priced: boolean;
  /** Whether the relay skips a provider whose breaker refuses (the one-provider shorthand does not). */
  readonly skipOpenBreakers: boolean;
  get(name: string): Provider | undefined;
  /**
   * Adds a named routing policy (plugin kit: a plugin's factory calls it at start, before any call). MUST be
   * called before the pipeline is built; a name already taken (a built-in one included) is refused.
   */
  registerPolicy(policy: RoutingPolicy): void;
  /** The registered policy names (built-in first). */
  readonly policyNames: string[];
  /** Checks that every configured policy name is registered (once the plugins are built). */
  checkPolicies(): void;
  /** The providers serving `model`, in the file's order (no routing policy is asked). */
  serving(model: string | undefined): readonly Provider[];
  /** The USD rates a call of `model` served by `servedBy` is charged at (model-based pricing). */
  chargeRates(model: string, servedBy: string | undefined, base: UsdRates | undefined): UsdRates | undefined;
  /** The name of the policy that orders `model`'s providers. */
  policyFor(model: string | undefined): string;
  /** The providers serving `model`, in the order its routing policy gives (breakers not applied). */
  order(model: string | undefined): readonly Provider[];
  close(): Promise<void>;
}
