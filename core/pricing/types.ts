/**
 * Public contract of the pricing service (docs/pricing.md). Stable: the paid-call plugins, the estimate and
 * models routes and the end-to-end tests are written against these types.
 *
 * Units: every amount the gateway charges is an integer number of millisatoshis (msat). Prices are computed
 * exactly with BigInt rationals from the decimal strings of the configuration and the model catalogue and
 * rounded UP ONCE per call, at the very end (see `priceMsat` in ./formula.ts and docs/pricing.md).
 *
 * Failure rules: the service MUST NOT price a call at zero because something is missing.
 * - model-based mode and an unknown model → `GatewayError('not_found', { message: 'Unknown model: …' })`;
 * - model-based mode and no fresh BTC price → `GatewayError('price_unavailable')` (503).
 */

import type { Config } from '../config.js';
import type { Usage } from '../metering/types.js';

/**
 * The priced dimensions of a metered call, by the names OpenRouter gives its price fields (models.json, a
 * provider's `pricing`, /v1/models and the `x-node-cost` breakdown use the same names). Each has its row in
 * `DIMENSIONS` (./dimensions.ts: the usage field it counts and its direction; test/pricing/dimensions.test.ts
 * checks that the two name the same keys).
 */
export type DimensionKey =
  | 'prompt'
  | 'input_cache_read'
  | 'input_cache_write'
  | 'input_cache_write_1h'
  | 'input_audio'
  | 'input_audio_cache_read'
  | 'input_image'
  | 'completion'
  | 'internal_reasoning'
  | 'output_audio'
  | 'web_search'
  | 'image_output'
  | 'code_interpreter'
  | 'file_search';
/** The dimensions besides the two base rates (`prompt`, `completion` are UsdRates' own fields). */
export type ExtraDimensionKey = Exclude<DimensionKey, 'prompt' | 'completion'>;

/** `loadConfig().pricing`. */
export type PricingConfig = Config['pricing'];

/**
 * Which of the three pricing models (docs/pricing.md) is active, derived from configuration:
 * - `fixed`: FIXED_PRICING=true → every call costs FIXED_COST_PER_REQUEST sats;
 * - `token`: FIXED_PRICING=false and FIXED_PER_1K_INPUT_TOKENS and FIXED_PER_1K_OUTPUT_TOKENS set → base fee
 *   (FIXED_COST_PER_REQUEST) + tokens × sats per 1k; no BTC price needed. Only one of the two set is refused
 *   (at start and in admin settings, naming the missing variable): a side is never silently free;
 * - `model`: FIXED_PRICING=false otherwise → per-model USD rates × BTC price × EXCHANGE_FEE ×
 *   UPSTREAM_PROVIDER_FEE, plus the base fee (FIXED_COST_PER_REQUEST, in sats, not multiplied).
 */
export type PricingMode = 'fixed' | 'token' | 'model';

/**
 * Per-model USD rates, as the decimal strings of models.json / the upstream model list (the price book).
 * Every field but `requestUsd` may be missing: a call that needs a missing price is refused
 * (`model_not_priced`), never priced at zero.
 */
export interface UsdRates {
  /** USD per prompt (input) token, e.g. "0.0000025". Chat, completions, responses, embeddings. */
  promptUsdPerToken?: string | undefined;
  /** USD per completion (output) token. Chat, completions, responses. */
  completionUsdPerToken?: string | undefined;
  /** USD per request, e.g. "0" (added to every model-priced call of the model). */
  requestUsd: string;
  /** USD per generated image, any size and quality (models.json `image`). */
  imageUsd?: string | undefined;
  /** USD per image by size, then quality (`image_sizes`); overrides `imageUsd`. */
  imageSizes?: Readonly<Record<string, Readonly<Record<string, string>>>> | undefined;
  /** USD per minute of input audio (`audio_minute`), charged pro rata to the millisecond. */
  audioMinuteUsd?: string | undefined;
  /** USD per 1,000 characters (Unicode code points) of speech input (`speech_1k_chars`). */
  speech1kCharsUsd?: string | undefined;
  /** USD per token of the other usage dimensions (`input_cache_read`, `input_cache_write`,
   *  `input_cache_write_1h`, `internal_reasoning`, `input_audio`, `output_audio`, `input_image`) and per call
   *  of `web_search`. An absent one is charged at its direction's base rate (prompt / completion / request). */
  dimensions?: Readonly<Partial<Record<ExtraDimensionKey, string>>> | undefined;
  /** Multiplier on the provider price of the whole call by the service tier the provider reports. */
  serviceTiers?: Readonly<Record<string, string>> | undefined;
  /** The most image output tokens one `image_generation` tool call bills (models.json `image_output_max_tokens`;
   *  default DEFAULT_IMAGE_OUTPUT_MAX_TOKENS). */
  imageOutputMaxTokens?: number | undefined;
}

/** Server-side tools the provider bills beside the tokens (docs/pricing.md "The bound"). */
export type HostedTool = 'web_search' | 'image_generation' | 'code_interpreter' | 'file_search';

/** The hosted tools a call declares and the most calls the provider may make to them (all tools together). */
export interface HostedTools {
  /** Each declared tool with the request field that declared it (named in a refusal). */
  tools: readonly { tool: HostedTool; declaredAs: string }[];
  /** The most hosted-tool calls the provider may make for this call (`max_tool_calls`, `max_uses`, or 1). */
  calls: number;
}

/** The size and quality of an image call (image_sizes lookup; quality `standard` when the call names none). */
export interface ImageVariant {
  size?: string | undefined;
  quality?: string | undefined;
}

/** The model catalogue's rate lookup (H1's `usdRates`); `undefined` = unknown model. */
export type RatesLookup = (modelId: string) => UsdRates | undefined;

/**
 * What kind of call is priced. Chat, completions, embeddings and responses calls are metered by tokens;
 * `images` by images returned, `audio` (transcriptions, translations) by milliseconds of input audio, `speech`
 * by characters of input — their count is the call's `units`; `other` (any other proxied call) pays the
 * per-request price only.
 */
export type PricedEndpoint =
  | 'chat'
  | 'completions'
  | 'embeddings'
  | 'responses'
  | 'messages'
  | 'images'
  | 'audio'
  | 'speech'
  | 'other'
  | 'free';

/** Endpoints metered by tokens (the normalised usage record). */
export type TokenEndpoint = 'chat' | 'completions' | 'embeddings' | 'responses' | 'messages';
export function isTokenEndpoint(e: PricedEndpoint): e is TokenEndpoint {
  return e === 'chat' || e === 'completions' || e === 'embeddings' || e === 'responses' || e === 'messages';
}

/** Endpoints priced per unit (images, milliseconds of audio, characters) from the price book. */
export type UnitEndpoint = 'images' | 'audio' | 'speech';
export function isUnitEndpoint(e: PricedEndpoint): e is UnitEndpoint {
  return e === 'images' || e === 'audio' || e === 'speech';
}

/** A BTC/USD price snapshot. `usd` is an exact positive decimal string (the median of the tickers). */
export interface BtcQuote {
  usd: string;
  /** Epoch ms when the quote was obtained (for a pinned price: when the source was created). */
  at: number;
  /** Names of the tickers whose answers formed the median, or ['static'] for BTC_USD_PRICE. */
  sources: string[];
}

/**
 * Source of the BTC price. Reads are synchronous (the cache); fetching happens in the background.
 * Implementations: `createBtcPriceSource()` in ./btc-price.ts (tickers, median, cache, staleness bound,
 * static pin).
 */
export interface BtcPriceSource {
  /** The cached quote if it is younger than `btcPriceMaxAgeMs`; otherwise throws `price_unavailable` (and,
   *  if nothing is in flight, kicks off a background refresh so a later call may succeed). */
  current(): BtcQuote;
  /** Like `current()` but returns `undefined` instead of throwing (for display: /v1/models, usd fields). */
  peek(): BtcQuote | undefined;
  /** Fetch all tickers now (single-flight) and cache the median. Rejects with `price_unavailable` when no
   *  ticker answered. Call it once at start-up (failure is not fatal) before `start()`. */
  refresh(): Promise<BtcQuote>;
  /** Start the background refresh timer (unref'd). Idempotent. */
  start(): void;
  /** Stop the timer and abort in-flight requests. Idempotent. */
  close(): void;
}

/** Input of `Pricing.cost`: the metered usage of one call. */
export interface CostInput {
  model: string;
  endpoint: PricedEndpoint;
  /** What the call consumed (token endpoints); absent = nothing metered (flat, unit and `other` calls). */
  usage?: Usage | undefined;
  /** A multiplier on the provider price of the whole call besides the service tier's (e.g. a batch
   *  discount "0.5"); decimal string. */
  multiplier?: string | undefined;
  /** Price this call with this BTC price (the `btcUsd` of its reservation) instead of the current one, so
   *  settlement never fails on a price outage and matches what was reserved. */
  btcUsd?: string | undefined;
  /** Unit endpoints: images returned, milliseconds of audio, or characters (token counts are then 0). */
  units?: number | undefined;
  /** Images: size and quality. */
  variant?: ImageVariant | undefined;
  /** Rates to use instead of the price book's for the model (the serving provider's prices). */
  rates?: UsdRates | undefined;
}

/** Result of `Pricing.cost`. `msat` is what is charged; the rest is for display (the `x-node-cost` block). */
export interface CostResult {
  /** Integer msats, rounded up once. */
  msat: number;
  /** Integer msats; promptMsat + completionMsat + feesMsat (+ unitRoundingMsat) === msat. prompt/completion are the charged costs
   *  (multipliers included) of the input and output dimensions, each rounded down (unit endpoints: the units'
   *  un-multiplied cost is `promptMsat`); fees are the rest: request fee, web search calls, base fee, rounding.
   *  `dimensions` names each charged dimension (OpenRouter names, plus `request` and `fees` = base fee and
   *  rounding); its values sum to `msat`. `unitRoundingMsat`: the rounding up to whole units of the eCash
   *  token paying the call, X-Cashu or bearer (plugins/settle.ts), counted in `fees` of `dimensions` too. */
  breakdown: {
    promptMsat: number;
    completionMsat: number;
    feesMsat: number;
    dimensions: Partial<Record<DimensionKey | 'request' | 'units' | 'fees', number>>;
    unitRoundingMsat?: number;
  };
  /** Dimensions this call used that have no price of their own and were charged at their direction's base
   *  rate (counted in `gateway_unpriced_dimension_total`). */
  fallbacks: readonly (DimensionKey | 'service_tier')[];
  /** Approximate USD value of `msat` (float, display only); 0 when no BTC price is known (fixed/token mode). */
  usd: number;
  /** `msat` in whole sats, rounded up (display only; `msat` is authoritative). */
  sats: number;
}

/** Input of `Pricing.reservation`. */
export interface ReservationInput {
  model: string;
  endpoint: PricedEndpoint;
  /** A safe upper bound of the prompt tokens (`promptTokensUpperBound` in core/metering). */
  promptTokensBound: number;
  /** The caller's `max_tokens` / `max_completion_tokens` / `max_output_tokens`, if set. */
  maxTokens?: number | undefined;
  /** The model's context length, if known: bounds the completion when the caller set no max_tokens. */
  contextLength?: number | undefined;
  /** Spendable balance: when the caller set no max_tokens and this cannot cover the maximum, the
   *  completion is lowered to what it affords. */
  availableMsat?: number | undefined;
  /** Unit endpoints: the units to reserve for (images asked for, milliseconds, characters). */
  units?: number | undefined;
  /** Images: size and quality. */
  variant?: ImageVariant | undefined;
  /** Rates to use instead of the price book's for the model (a provider's prices). */
  rates?: UsdRates | undefined;
  /** The `service_tier` the call asks for: its multiplier (when above 1) sizes the reservation. */
  serviceTier?: string | undefined;
  /** Web search calls to reserve for (the call declares a web search tool). */
  webSearchCalls?: number | undefined;
  /** Output choices (`n`, `best_of`): the completion cap is reserved this many times. Default 1. */
  choices?: number | undefined;
  /** Hosted tools the call declares: each needs its price (else `tool_not_priced`); the bound adds `calls` times
   *  the dearest one's call (an image_generation call: its image output bound and its input). */
  hostedTools?: HostedTools | undefined;
}

/** Result of `Pricing.reservation`. The caller answers 402 when `minMsat > availableMsat`. */
export interface ReservationResult {
  /** Cost of prompt bound + the completion cap (`maxTokens` when set). Reserve this much. */
  maxMsat: number;
  /** Cost of prompt bound + a minimal completion: below this, not even a minimal answer is affordable. */
  minMsat: number;
  /** The max_tokens to forward: the caller's; or, when the caller set none and the balance cannot cover the
   *  cap, lowered to what `availableMsat` affords (never below the minimal completion); else undefined. */
  maxTokens: number | undefined;
  /** True when `maxTokens` was set by the gateway (the request body must be rewritten). */
  lowered: boolean;
  /** The BTC price used (model mode); pass it to `cost()` at settlement. */
  btcUsd: string | undefined;
}

/** Input of POST /v1/estimate (openapi/openapi.yaml). */
export interface EstimateInput {
  model: string;
  prompt_tokens: number;
  max_tokens: number;
  /** Of `prompt_tokens`, how many are read from the prompt cache (priced at `input_cache_read`). */
  cached_tokens?: number | undefined;
}

/** Output of POST /v1/estimate. Breakdown values are integer msats (they sum to `estimated_cost_msats`). */
export interface EstimateResult {
  /** Whole sats, rounded up. */
  estimated_cost_sats: number;
  estimated_cost_msats: number;
  breakdown: {
    prompt: number;
    completion: number;
    fees: number;
    dimensions: Partial<Record<DimensionKey | 'request' | 'fees', number>>;
  };
}

/** A model's price for /v1/models. `null` where a value needs a BTC price and none is fresh. */
export interface ModelPrice {
  mode: PricingMode;
  /** What the caller pays, in USD, per 1,000 prompt / completion tokens and per request (multiplier
   *  included). Float, display only. */
  promptUsdPer1k: number | null;
  completionUsdPer1k: number | null;
  requestUsd: number | null;
  /** The same in msats (rounded up; display only — a call is rounded once over its total). */
  promptMsatPer1k: number | null;
  completionMsatPer1k: number | null;
  requestMsat: number | null;
  /** What each usage dimension is charged, msats per 1,000 tokens (`web_search`: per call), absent prices at
   *  their base rate; null while no fresh BTC price exists (model mode) or the model has no token prices. */
  dimensionMsats: Partial<Record<DimensionKey, number>> | null;
}

/** The pricing service. All methods are synchronous (the BTC price is read from a cache). */
export interface Pricing {
  readonly mode: PricingMode;
  /** Cost of a metered call. Throws not_found (unknown model, model mode) or price_unavailable. */
  cost(input: CostInput): CostResult;
  /** Bounds for the reservation and the max_tokens to forward. Same errors as `cost`. */
  reservation(input: ReservationInput): ReservationResult;
  /** Largest completion token count whose cost with `promptTokensBound` prompt tokens is ≤ availableMsat:
   *  -1 when not even zero completion tokens fit; `Infinity` when completion tokens are free. */
  affordableMaxTokens(
    model: string,
    promptTokensBound: number,
    availableMsat: number,
    endpoint?: PricedEndpoint,
    /** Rates to use instead of the price book's (the provider's prices the reservation was made at). */
    rates?: UsdRates,
    /** The reservation's service tier and web search calls (ReservationInput). */
    extra?: {
      serviceTier?: string | undefined;
      webSearchCalls?: number | undefined;
      choices?: number | undefined;
      hostedTools?: HostedTools | undefined;
    },
  ): number;
  /** POST /v1/estimate. */
  estimate(input: EstimateInput): EstimateResult;
  /** Per-model price for /v1/models (`rates`: a provider's own instead of the price book's, for
   *  /v1/providers/{name}). Throws not_found for an unknown model in model mode; never price_unavailable
   *  (fields become null). */
  modelPrice(model: string, rates?: UsdRates): ModelPrice;
}

/**
 * The pricing service as services expose it (`Services.pricing`; ./holder.ts `PricingHolder`): one object whose
 * terms the admin settings swap at run time.
 */
export interface PricingService extends Pricing {
  /** Replaces the terms; the next call prices with `next`. */
  swap(next: Pricing): void;
}

/** Options of `createPricing` (./pricing.ts). */
export interface PricingOptions {
  config: PricingConfig;
  /** Required in model mode; ignored otherwise. */
  rates?: RatesLookup | undefined;
  /** Required in model mode (and used for the display `usd` field otherwise, when present). */
  btc?: BtcPriceSource | undefined;
  /** Completion tokens of a "minimal answer" (minMsat). Default 16. */
  minCompletionTokens?: number | undefined;
  /** Completion cap when the caller set no max_tokens and the context length is unknown. Default 4096. */
  defaultMaxCompletionTokens?: number | undefined;
}

/** n / d with d > 0. Not necessarily reduced (callers only add, multiply, compare and round; ./rational.ts). */
export interface Rational {
  readonly n: bigint;
  readonly d: bigint;
}

/**
 * A model's rate card: its per-dimension prices at one BTC price over one common denominator, so that pricing a
 * call is integer arithmetic (built and read in ./rate-card.ts, which explains the formula). Named here because
 * the paid nodes' service hands out the cards of auto-priced nodes (core/providers/types.ts `autoCard`).
 */
export interface RateCard {
  /** Integer prices per dimension (in the order of ./dimensions.ts `DIMENSIONS`) over the card's common
   *  denominator. */
  readonly u: readonly bigint[];
  readonly un: readonly number[];
  /** Per-call provider price (`request`) over the same denominator. */
  readonly request: bigint;
  /** Bit i set: dimension i has no price of its own and is charged at its direction's base rate. */
  readonly fallback: number;
  /** The completion price is missing (only embeddings, which produce no output, can be priced). */
  readonly noOutput: boolean;
  /** The largest input-direction and output-direction price (the reservation's per-token bound). */
  readonly maxIn: bigint;
  readonly maxOut: bigint;
  /** msats per unit of S, the provider price over the denominator (F in ./rate-card.ts), exact. */
  readonly f: Rational;
  /** The base fee in msats (FIXED_COST_PER_REQUEST × 1000), exact. */
  readonly baseFee: Rational;
  /** Number path: msat = ceil((S × a + b) / c) when S ≤ maxS; maxS is -1 when a, b or c is not safe. */
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly maxS: number;
  /** F's numerator and denominator as numbers (-1 when not safe), for breakdown parts without BigInt. */
  readonly fn: number;
  readonly fd: number;
  readonly maxInN: number;
  readonly maxOutN: number;
  /** Service-tier multipliers by tier name (models.json `service_tiers`). */
  readonly tiers: ReadonlyMap<string, Rational>;
}
