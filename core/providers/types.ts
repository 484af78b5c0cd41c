import type { Logger } from '../log.js';
import type { RateCard, UsdRates } from '../pricing/types.js';
import type { ModelPricing } from '../upstream/types.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';
import type { UpstreamResponse } from '../upstream/upstream-response.js';

/**
 * The providers' types (provider.ts, providers.ts, routing-policy.ts and, for the nodes paid from the wallet,
 * paid-nodes.ts and the node-*.ts modules are the implementation): what the plugin contract (core/plugin.ts:
 * `Provider`, `Providers`, `RoutingPolicy`, `RoutingInfo`; `Services.providers`, `Services.nodes`) and the stages
 * name without importing the implementation, which parses and computes prices.
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

/** What a call asks of a node paid per call, for its bound (node-payment.ts `nodeCallBoundMsat`). */
export interface NodeCall {
  requestId: string;
  model: string | undefined;
  path: string;
  body: unknown;
  rawBytes: number;
}

/** One payment to a node (node-payment.ts `NodePayment`): the token sent, and what became of it. */
export interface NodeCallPayment {
  /** The provider paid. */
  readonly provider: string;
  /** The token's value. */
  readonly amountMsat: number;
  /** The request header that pays the call. */
  readonly headers: Record<string, string>;
  /**
   * The call ends with the answer's head only (an error, a refusal, or no answer at all: `up` undefined): the
   * change from the head, else our token back.
   */
  settleHead(up: Pick<UpstreamResponse, 'headers'> | undefined): void;
  /**
   * The answer as relayed to the user, without the node's change and cost; the payment settles when the body
   * ends. `onCost`: what the call cost the operator (the token less the change), told once when the answer ends.
   */
  wrap(up: UpstreamResponse, onCost?: (msat: number) => void): UpstreamResponse;
}

/** The per-call tokens of `"payment": "cashu"` nodes (node-payment.ts `NodePayer`). */
export interface NodeCallPayer {
  /**
   * Makes the token that pays `call` at node `p` (at least `atLeastMsat`), within the operator surplus.
   * @throws GatewayError `operator_wallet_insufficient`, `upstream_error` (the node's price is unknown).
   */
  pay(p: Provider, call: NodeCall, atLeastMsat?: number): Promise<NodeCallPayment>;
  /** A node's prices changed (it answered 402): read them again. */
  forgetPrices(p: Provider): void;
}

/** The nodes' advertised prices as `"pricing": "auto"` charges them (node-prices.ts `NodePrices`). */
export interface NodeRateCards {
  /**
   * An auto-priced provider's rate card for `model` (its node's price × markup), synchronously; undefined when the
   * node was never read or lists no price for it.
   */
  autoCard(p: Provider, model: string): RateCard | undefined;
}

/** The prepaid keys of `"payment": "cashu-balance"` nodes (node-accounts.ts `NodeAccounts`). */
export interface PrepaidNodeKeys {
  /**
   * The request headers that pay a call at `p` from its prepaid key, making the key first when none exists.
   * @throws GatewayError `operator_wallet_insufficient`, `upstream_error` (the key could not be made).
   */
  headers(p: Provider): Promise<Record<string, string>>;
  /** A call's answer ended; the node stated `costMsat` for it (undefined: it stated none). */
  spent(p: Provider, requestId: string, costMsat: number | undefined): void;
  /** The node refused a call: 402 (the key's balance is short: top up now), 401 (it does not know the key). */
  refused(p: Provider, status: number): void;
  /** The balance check (and top-up) of `p`, in the background. */
  check(p: Provider): void;
  /** Waits for the checks in flight (tests, shutdown). */
  settled(): Promise<void>;
  close(): void;
}

/**
 * The other nodes this one buys from, paid from the operator's wallet (`Services.nodes`; paid-nodes.ts): their
 * advertised prices, the per-call tokens and the prepaid keys.
 */
export interface PaidNodes {
  readonly prices: NodeRateCards;
  /** Per-call tokens (`cashu` providers). */
  readonly payer: NodeCallPayer;
  /** Prepaid keys (`cashu-balance` providers); undefined when none is configured. */
  readonly accounts: PrepaidNodeKeys | undefined;
  /** At start: reads the prices of every `"pricing": "auto"` node (one pricing none of its models stops the start). */
  start(log: Logger): Promise<void>;
  /** Stops the timers; a top-up in flight is waited for. */
  close(): Promise<void>;
}
