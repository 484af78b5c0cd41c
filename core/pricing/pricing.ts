/**
 * The pricing service: the formula of ./formula.ts bound to configuration, the model catalogue's rates and
 * the BTC price. Synchronous on purpose (the meter and settle stages call it on the hot path); the BTC price
 * comes from a cache that ./btc-price.ts refreshes in the background.
 */

import { GatewayError } from '../errors.js';
import { emptyUsage, type Usage } from '../metering/usage.js';
import { type CallBound, callMsat, cardCharge } from './call-price.js';
import { completionCap } from './completion-cap.js';
import { DIMENSIONS, type DimensionKey } from './dimensions.js';
import {
  MissingPriceError,
  msatPerUsd,
  multiplier,
  type PriceTerms,
  priceTerms,
  pricingMode,
  termsMsat,
  unitTerms,
} from './formula.js';
import {
  affordableTokens,
  boundUnits,
  MissingRateError,
  modelCard,
  NO_FALLBACKS,
  type RateCard,
  tokenCard,
} from './rate-card.js';
import {
  add,
  ceil,
  cmp,
  div,
  floor,
  isZero,
  mul,
  mulInt,
  parseDecimal,
  type Rational,
  sub,
  toNumber,
  ZERO,
} from './rational.js';
import type {
  CostInput,
  CostResult,
  EstimateInput,
  EstimateResult,
  HostedTool,
  HostedTools,
  ImageVariant,
  ModelPrice,
  PricedEndpoint,
  Pricing,
  PricingConfig,
  PricingMode,
  PricingOptions,
  ReservationInput,
  ReservationResult,
  TokenEndpoint,
  UnitEndpoint,
  UsdRates,
} from './types.js';
import { isTokenEndpoint, isUnitEndpoint } from './types.js';

const ENDPOINT_PATHS: Record<UnitEndpoint, string> = {
  images: '/v1/images/*',
  audio: '/v1/audio/transcriptions and /v1/audio/translations',
  speech: '/v1/audio/speech',
};

function notPriced(model: string, what: string): GatewayError {
  return new GatewayError('model_not_priced', {
    message: `No price for model ${model}: ${what} (set it in models.json)`,
  });
}

/** The size an image call without `size` is priced at: the images API's default. */
export const DEFAULT_IMAGE_SIZE = '1024x1024';

/** USD per unit of a unit endpoint, exact, from the price book; throws model_not_priced when missing. */
export function unitUsd(
  model: string,
  rates: UsdRates,
  endpoint: UnitEndpoint,
  variant: ImageVariant | undefined,
): Rational {
  switch (endpoint) {
    case 'images': {
      // A call that names no size gets the API's default size, as the provider will make it.
      const size = variant?.size ?? DEFAULT_IMAGE_SIZE;
      const quality = variant?.quality ?? 'standard';
      const sized = rates.imageSizes?.[size]?.[quality];
      const usd = sized ?? rates.imageUsd;
      if (usd === undefined) {
        throw notPriced(
          model,
          `images ${size} ${quality} (image or image_sizes) for ${ENDPOINT_PATHS.images}`,
        );
      }
      return parseDecimal(usd);
    }
    case 'audio':
      if (rates.audioMinuteUsd === undefined) {
        throw notPriced(model, `audio_minute for ${ENDPOINT_PATHS.audio}`);
      }
      return div(parseDecimal(rates.audioMinuteUsd), parseDecimal(60_000)); // per millisecond
    case 'speech':
      if (rates.speech1kCharsUsd === undefined) {
        throw notPriced(model, `speech_1k_chars for ${ENDPOINT_PATHS.speech}`);
      }
      return div(parseDecimal(rates.speech1kCharsUsd), parseDecimal(1000)); // per character
  }
}

const MSAT_PER_BTC = 100_000_000_000;

/** `/v1/messages/count_tokens` and other unpaid relays: nothing in any mode. */
const FREE_TERMS: PriceTerms = {
  fixed: ZERO,
  perPrompt: ZERO,
  perCompletion: ZERO,
  perPromptBase: ZERO,
  perCompletionBase: ZERO,
};
const WEB_SEARCH_INDEX = DIMENSIONS.findIndex((d) => d.key === 'web_search');
/** The dimension each hosted tool is billed in. */
const TOOL_DIMENSION: Record<HostedTool, number> = {
  web_search: WEB_SEARCH_INDEX,
  image_generation: DIMENSIONS.findIndex((d) => d.key === 'image_output'),
  code_interpreter: DIMENSIONS.findIndex((d) => d.key === 'code_interpreter'),
  file_search: DIMENSIONS.findIndex((d) => d.key === 'file_search'),
};
/** The hosted tools' own dimensions (web_search aside, which predates them and is shown at its base rate). */
const HOSTED_DIMENSIONS = new Set([
  TOOL_DIMENSION.image_generation,
  TOOL_DIMENSION.code_interpreter,
  TOOL_DIMENSION.file_search,
]);
/** Image output tokens one image_generation call is bounded by when the price book sets none: gpt-image-1's
 *  largest high-quality image (1024×1536, 6,240 tokens). */
export const DEFAULT_IMAGE_OUTPUT_MAX_TOKENS = 6240;

/** The dearest tier multiplier a card knows, never below the standard price (1). */
function highestTier(card: RateCard): Rational {
  let best: Rational = { n: 1n, d: 1n };
  for (const t of card.tiers.values()) if (t.n * best.d > best.n * t.d) best = t;
  return best;
}

/**
 * The bound's provider units as a line in the completion cap c, `fixed + c × perToken`, for a call with several
 * choices or hosted tools; `choices` and the hosted tools' part (`toolFixed + c × toolPerToken`) are its terms.
 */
interface BoundLine {
  fixed: bigint;
  perToken: bigint;
  choices: number;
  toolFixed: bigint;
  toolPerToken: bigint;
}

/** The bound of a completion cap `completion` (on `line` when the call has one): what callMsat prices. */
function lineBound(
  line: BoundLine | undefined,
  promptTokens: number,
  completion: number,
  ws: number,
): CallBound {
  if (line === undefined) return { promptTokens, completionTokens: completion, webSearchCalls: ws };
  return {
    promptTokens,
    completionTokens: completion * line.choices,
    webSearchCalls: ws,
    toolUnits: line.toolFixed + BigInt(completion) * line.toolPerToken,
  };
}

/**
 * The pricing service (see the top of this file). A class, so that each of its steps is a method of its own; the
 * service handed out is a plain object of bound methods (createPricing).
 */
type CommonTerms = Pick<
  PricingConfig,
  'costPerRequestSats' | 'per1kInputSats' | 'per1kOutputSats' | 'exchangeFee' | 'upstreamProviderFee'
>;

class PricingService {
  readonly mode: PricingMode;
  private readonly config: PricingOptions['config'];
  private readonly minCompletion: number;
  private readonly defaultMaxCompletion: number;
  private readonly common: CommonTerms;
  private readonly staticTerms: PriceTerms | undefined;
  private readonly baseOnly: PriceTerms;
  /** Model terms cached per rates object (the catalogue hands out the same object) and BTC price string. */
  private readonly modelTerms = new WeakMap<UsdRates, { btcUsd: string; terms: PriceTerms }>();
  private readonly baseFee: Rational;
  private readonly nodeMultiplier: Rational | undefined;
  private readonly staticCard: RateCard | undefined;
  /** Token-metered calls are priced from rate cards (./rate-card.ts): built once per price book entry and BTC
   *  price, then every call is integer arithmetic. */
  private readonly modelCards = new WeakMap<UsdRates, { btcUsd: string; card: RateCard }>();

  constructor(private readonly opts: PricingOptions) {
    const { config } = opts;
    const mode = pricingMode(config);
    const minCompletion = opts.minCompletionTokens ?? 16;
    const defaultMaxCompletion = opts.defaultMaxCompletionTokens ?? 4096;
    if (!Number.isSafeInteger(minCompletion) || minCompletion < 1)
      throw new RangeError('minCompletionTokens >= 1');
    if (!Number.isSafeInteger(defaultMaxCompletion) || defaultMaxCompletion < minCompletion) {
      throw new RangeError('defaultMaxCompletionTokens must be an integer >= minCompletionTokens');
    }
    if (mode === 'model' && (!opts.rates || !opts.btc)) {
      throw new RangeError('model-based pricing needs a rates lookup and a BTC price source');
    }
    const common = {
      costPerRequestSats: config.costPerRequestSats,
      per1kInputSats: config.per1kInputSats,
      per1kOutputSats: config.per1kOutputSats,
      exchangeFee: config.exchangeFee,
      upstreamProviderFee: config.upstreamProviderFee,
    };
    // Fixed and token terms do not depend on the model: computed once (this also validates the config).
    const staticTerms = mode === 'model' ? undefined : priceTerms({ mode, ...common });
    this.baseOnly = {
      fixed: priceTerms({ mode: 'fixed', ...common }).fixed,
      perPrompt: ZERO,
      perCompletion: ZERO,
      perPromptBase: ZERO,
      perCompletionBase: ZERO,
    };
    this.config = config;
    this.mode = mode;
    this.minCompletion = minCompletion;
    this.defaultMaxCompletion = defaultMaxCompletion;
    this.common = common;
    this.staticTerms = staticTerms;
    this.baseFee = this.baseOnly.fixed;
    this.nodeMultiplier =
      mode === 'model' ? multiplier(config.exchangeFee, config.upstreamProviderFee) : undefined;
    this.staticCard =
      mode === 'token'
        ? tokenCard(staticTerms!.perPrompt, staticTerms!.perCompletion, this.baseFee)
        : undefined;
  }

  private cardAt(model: string, rates: UsdRates, btcUsd: string): RateCard {
    const hit = this.modelCards.get(rates);
    if (hit && hit.btcUsd === btcUsd) return hit.card;
    let card: RateCard;
    try {
      card = modelCard(rates, mul(msatPerUsd(btcUsd), this.nodeMultiplier!), this.baseFee, false);
    } catch (err) {
      if (err instanceof MissingRateError) {
        throw notPriced(model, `${err.field} (USD per token) for token-metered endpoints`);
      }
      // A malformed or negative catalogue rate must never price a call at zero.
      throw new GatewayError('price_unavailable', {
        message: `No usable price for model: ${model}`,
        cause: err,
      });
    }
    this.modelCards.set(rates, { btcUsd, card });
    return card;
  }

  /** The rate card of a token-metered call (token or model mode) and the BTC price it was built at. */
  private cardFor(
    model: string,
    endpoint: TokenEndpoint,
    btcUsd?: string,
    override?: UsdRates,
  ): { card: RateCard; btcUsd: string | undefined } {
    if (this.staticCard) return { card: this.staticCard, btcUsd: undefined };
    const rates = override ?? this.ratesOf(model);
    const price = btcUsd ?? this.opts.btc!.current().usd;
    const card = this.cardAt(model, rates, price);
    // Embeddings produce no output: a missing completion price does not make them unpriceable.
    if (card.noOutput && endpoint !== 'embeddings') {
      throw notPriced(model, 'completion (USD per token) for token-metered endpoints');
    }
    return { card, btcUsd: price };
  }

  /** The service tier's multiplier (× an extra one, e.g. a batch discount); undefined for exactly 1. */
  private multiplierOf(
    card: RateCard,
    tier: string | undefined,
    extra: string | undefined,
  ): Rational | undefined {
    let m = this.chargedTier(card, tier);
    if (extra !== undefined) {
      let e: Rational;
      try {
        e = parseDecimal(extra);
      } catch (err) {
        throw new GatewayError('internal_error', { message: 'malformed price multiplier', cause: err });
      }
      m = m === undefined ? e : mul(m, e);
    }
    return m === undefined || m.n === m.d ? undefined : m;
  }

  /** The charge of a usage record on a card, with each charged dimension in the breakdown. */
  private cardCost(
    card: RateCard,
    usage: Usage,
    extra: string | undefined,
    btcUsd: string | undefined,
  ): CostResult {
    const charge = cardCharge(card, usage, this.multiplierOf(card, usage.serviceTier, extra));
    const unknownTier = !this.knownTier(card, usage.serviceTier);
    return {
      ...charge,
      ...(unknownTier ? { fallbacks: [...charge.fallbacks, 'service_tier' as const] } : {}),
      usd: this.usdOf(charge.msat, btcUsd),
      sats: Math.ceil(charge.msat / 1000),
    };
  }

  /**
   * A requested tier's multiplier sizes the reservation only when it raises the price. `default` (or none) is
   * the standard price; `auto` lets the provider choose, so it is bounded by the dearest tier the book knows; a
   * tier the book does not price is refused before anything is reserved (`service_tier_not_priced`).
   */
  private reserveMultiplier(card: RateCard, model: string, tier: string | undefined): Rational | undefined {
    if (tier === undefined || tier === 'default') return undefined;
    const t = tier === 'auto' ? highestTier(card) : card.tiers.get(tier);
    if (t === undefined) {
      throw new GatewayError('service_tier_not_priced', {
        message: `No price for service_tier "${tier.slice(0, 64)}" on model ${model}: its price book's service_tiers price ${
          card.tiers.size > 0 ? [...card.tiers.keys()].join(', ') : 'none'
        } (set it in models.json, or ask for the default tier)`,
      });
    }
    return t.n > t.d ? t : undefined;
  }

  /** A tier the book prices (or the standard one): charged at its own multiplier, not counted. */
  private knownTier(card: RateCard, tier: string | undefined): boolean {
    return tier === undefined || tier === 'default' || card.tiers.has(tier);
  }

  /**
   * The tier multiplier a charge uses: the reported tier's; a tier the book does not know is charged at the
   * dearest tier it knows (never below the standard price) and counted as an unpriced dimension.
   */
  private chargedTier(card: RateCard, tier: string | undefined): Rational | undefined {
    if (tier === undefined || tier === 'default') return undefined;
    return card.tiers.get(tier) ?? highestTier(card);
  }

  private ratesOf(model: string): UsdRates {
    const rates = this.opts.rates?.(model);
    if (!rates) throw new GatewayError('not_found', { message: `Unknown model: ${model}` });
    return rates;
  }

  private termsAt(model: string, rates: UsdRates, btcUsd: string): PriceTerms {
    const hit = this.modelTerms.get(rates);
    if (hit && hit.btcUsd === btcUsd) return hit.terms;
    let terms: PriceTerms;
    try {
      terms = priceTerms({ mode: 'model', ...this.common, rates, btcUsd });
    } catch (err) {
      if (err instanceof MissingPriceError) {
        throw notPriced(model, `${err.field} (USD per token) for token-metered endpoints`);
      }
      // A malformed or negative catalogue rate must never price a call at zero.
      throw new GatewayError('price_unavailable', {
        message: `No usable price for model: ${model}`,
        cause: err,
      });
    }
    this.modelTerms.set(rates, { btcUsd, terms });
    return terms;
  }

  /**
   * Terms for a call, and the BTC price they were computed at. Unit endpoints (images, audio, speech) are
   * priced from the model's price book in token and model mode alike (they have no tokens); FIXED_PRICING
   * keeps every call flat.
   */
  private resolve(
    model: string,
    endpoint: PricedEndpoint,
    btcUsd?: string,
    variant?: ImageVariant,
    override?: UsdRates,
  ): { terms: PriceTerms; btcUsd: string | undefined } {
    if (endpoint === 'free') return { terms: FREE_TERMS, btcUsd: undefined };
    if (this.mode === 'fixed') return { terms: this.staticTerms!, btcUsd: undefined };
    if (isUnitEndpoint(endpoint)) {
      const rates = override ?? this.ratesOf(model);
      const perUnit = unitUsd(model, rates, endpoint, variant);
      if (!this.opts.btc) throw new GatewayError('price_unavailable');
      const price = btcUsd ?? this.opts.btc.current().usd;
      try {
        return {
          terms: unitTerms({ ...this.common, unitUsd: perUnit, requestUsd: rates.requestUsd, btcUsd: price }),
          btcUsd: price,
        };
      } catch (err) {
        throw new GatewayError('price_unavailable', {
          message: `No usable price for model: ${model}`,
          cause: err,
        });
      }
    }
    if (this.staticTerms)
      return { terms: endpoint === 'other' ? this.baseOnly : this.staticTerms, btcUsd: undefined };
    // Non-metered calls without a known model pay the base fee only.
    if (endpoint === 'other' && !override && !this.opts.rates?.(model))
      return { terms: this.baseOnly, btcUsd: undefined };
    const known = override ?? this.ratesOf(model);
    const price = btcUsd ?? this.opts.btc!.current().usd;
    if (endpoint === 'other') {
      // Only the request price matters; a model without token prices still has one.
      const k = unitTerms({ ...this.common, unitUsd: ZERO, requestUsd: known.requestUsd, btcUsd: price });
      return { terms: { ...this.baseOnly, fixed: k.fixed }, btcUsd: price };
    }
    // Token-metered calls are priced from rate cards (cardFor); only the display terms come this way.
    return { terms: this.termsAt(model, known, price), btcUsd: price };
  }

  private toSafe(v: bigint): number {
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('amount exceeds the safe integer range');
    return Number(v);
  }

  private usdOf(msat: number, btcUsd: string | undefined): number {
    const price = btcUsd ?? this.opts.btc?.peek()?.usd;
    return price === undefined ? 0 : (msat * Number(price)) / MSAT_PER_BTC;
  }

  cost(input: CostInput): CostResult {
    if (this.mode !== 'fixed' && isTokenEndpoint(input.endpoint)) {
      const { card, btcUsd } = this.cardFor(input.model, input.endpoint, input.btcUsd, input.rates);
      return this.cardCost(card, input.usage ?? emptyUsage(), input.multiplier, btcUsd);
    }
    const { terms, btcUsd } = this.resolve(
      input.model,
      input.endpoint,
      input.btcUsd,
      input.variant,
      input.rates,
    );
    // Flat calls pay their terms' fixed part; unit endpoints carry their count in the prompt slot (unitTerms).
    const p = isUnitEndpoint(input.endpoint) && this.mode !== 'fixed' ? (input.units ?? 0) : 0;
    const msat = this.toSafe(termsMsat(terms, p, 0));
    const promptMsat = this.toSafe(floor(mulInt(terms.perPromptBase, p)));
    return {
      msat,
      breakdown: {
        promptMsat,
        completionMsat: 0,
        feesMsat: msat - promptMsat,
        dimensions: p > 0 ? { units: promptMsat, fees: msat - promptMsat } : { fees: msat },
      },
      fallbacks: NO_FALLBACKS,
      usd: this.usdOf(msat, btcUsd),
      sats: Math.ceil(msat / 1000),
    };
  }

  private affordableWith(terms: PriceTerms, promptTokens: number, availableMsat: number): number {
    const rest = sub(
      sub(parseDecimal(Math.max(0, Math.floor(availableMsat))), terms.fixed),
      mulInt(terms.perPrompt, promptTokens),
    );
    if (rest.n < 0n) return -1;
    if (isZero(terms.perCompletion)) return Number.POSITIVE_INFINITY;
    const n = floor(div(rest, terms.perCompletion));
    return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
  }

  reservation(input: ReservationInput): ReservationResult {
    if (this.mode !== 'fixed' && isTokenEndpoint(input.endpoint))
      return this.tokenReservation(input, input.endpoint);
    const { terms, btcUsd } = this.resolve(
      input.model,
      input.endpoint,
      undefined,
      input.variant,
      input.rates,
    );
    const exact = this.toSafe(
      termsMsat(terms, isUnitEndpoint(input.endpoint) && this.mode !== 'fixed' ? (input.units ?? 0) : 0, 0),
    );
    return { maxMsat: exact, minMsat: exact, maxTokens: input.maxTokens, lowered: false, btcUsd };
  }

  /** The bound of a token-metered call: prompt bound at the dearest input price + the completion cap at
   *  the dearest output price (× the choices asked for; + declared web search calls and hosted tool calls), at
   *  the requested tier's multiplier when above 1. */
  private tokenReservation(input: ReservationInput, endpoint: TokenEndpoint): ReservationResult {
    const { card, btcUsd } = this.cardFor(input.model, endpoint, undefined, input.rates);
    const ws = input.webSearchCalls ?? 0;
    if (ws > 0 && this.mode === 'model' && (card.fallback & (1 << WEB_SEARCH_INDEX)) !== 0) {
      throw notPriced(input.model, 'web_search (USD per call) for calls with a web search tool');
    }
    const m = this.reserveMultiplier(card, input.model, input.serviceTier);
    const pb = input.promptTokensBound;
    const callerMax = input.maxTokens;
    const line = this.boundLine(card, input, ws);
    // The bound priced by the one function settle charges usage with (./call-price.ts).
    const at = (completion: number) => callMsat(card, { bound: lineBound(line, pb, completion, ws) }, m);
    if (endpoint === 'embeddings') {
      const flat = at(0);
      return { maxMsat: flat, minMsat: flat, maxTokens: callerMax, lowered: false, btcUsd };
    }
    const minTokens = callerMax === undefined ? this.minCompletion : Math.min(this.minCompletion, callerMax);
    const { cap, told } = completionCap(endpoint, callerMax, input.contextLength, this.defaultMaxCompletion);
    const minMsat = at(minTokens);
    const maxMsat = at(cap);
    const available = input.availableMsat;
    if (callerMax !== undefined || available === undefined || maxMsat <= available) {
      return { maxMsat, minMsat, maxTokens: told ? cap : callerMax, lowered: told, btcUsd };
    }
    // The balance cannot cover the model's maximum and the caller set no limit: forward a lower max_tokens.
    const afford =
      line === undefined
        ? affordableTokens(card, pb, ws, available, m)
        : this.affordableOnLine(card, line, available, m);
    const lowered = afford >= minTokens ? Math.min(afford, cap) : minTokens;
    return { maxMsat: at(lowered), minMsat, maxTokens: lowered, lowered: true, btcUsd };
  }

  /**
   * The bound's provider units as a line in the completion cap c: `fixed + c × perToken`, for a call with several
   * choices or hosted tools (undefined otherwise: the plain bound, boundUnits). Each choice may use the whole cap;
   * each hosted-tool call may be the dearest declared one; an image_generation call bills its image output bound
   * and, as input, what its image model may read (the prompt bound and the choices' output).
   */
  private boundLine(card: RateCard, input: ReservationInput, ws: number): BoundLine | undefined {
    const k = input.choices ?? 1;
    const tools = input.hostedTools;
    if (k <= 1 && (tools === undefined || tools.tools.length === 0)) return undefined;
    const pb = BigInt(input.promptTokensBound);
    let fixed = BigInt(boundUnits(card, input.promptTokensBound, 0, ws));
    const choices = Math.max(1, k);
    const perToken = BigInt(choices) * card.maxOut;
    if (tools === undefined || tools.tools.length === 0 || tools.calls <= 0)
      return { fixed, perToken, choices, toolFixed: 0n, toolPerToken: 0n };
    let callFixed = 0n;
    let callPerToken = 0n;
    for (const { tool, declaredAs } of tools.tools) {
      const i = TOOL_DIMENSION[tool];
      if (this.mode !== 'model' || (card.fallback & (1 << i)) !== 0) {
        const what = `${DIMENSIONS[i]!.key} (${tool === 'image_generation' ? 'USD per image output token' : 'USD per call'}) for calls declaring ${declaredAs}`;
        // A web search tool in `tools` keeps the refusal it always had.
        if (tool === 'web_search' && /^web_search/.test(declaredAs) && declaredAs !== 'web_search_options') {
          throw notPriced(input.model, what);
        }
        throw new GatewayError('tool_not_priced', {
          message: `No price for model ${input.model}: ${what} (set it in models.json)`,
        });
      }
      if (tool === 'image_generation') {
        const images = BigInt(this.imageOutputMaxTokens(input)) * card.u[i]!;
        const f = images + pb * card.maxIn;
        const per = BigInt(Math.max(1, k)) * card.maxIn;
        // Each term at its largest over the declared tools: a bound of any one tool's call.
        callFixed = f > callFixed ? f : callFixed;
        callPerToken = per > callPerToken ? per : callPerToken;
      } else if (card.u[i]! > callFixed) {
        callFixed = card.u[i]!;
      }
    }
    const calls = BigInt(tools.calls);
    fixed += calls * callFixed;
    return {
      fixed,
      perToken: perToken + calls * callPerToken,
      choices,
      toolFixed: calls * callFixed,
      toolPerToken: calls * callPerToken,
    };
  }

  private imageOutputMaxTokens(input: ReservationInput): number {
    const rates = input.rates ?? this.opts.rates?.(input.model);
    return rates?.imageOutputMaxTokens ?? DEFAULT_IMAGE_OUTPUT_MAX_TOKENS;
  }

  /** The most completion tokens whose bound on `line` costs at most `availableMsat`; -1 when none fit. */
  private affordableOnLine(
    card: RateCard,
    line: { fixed: bigint; perToken: bigint },
    availableMsat: number,
    multiplier: Rational | undefined,
  ): number {
    const mm = multiplier ?? { n: 1n, d: 1n };
    const rest = BigInt(Math.max(0, Math.floor(availableMsat))) * card.baseFee.d - card.baseFee.n;
    if (rest < 0n) return -1;
    if (card.f.n === 0n || mm.n === 0n) return Number.POSITIVE_INFINITY;
    const maxS = (rest * card.f.d * mm.d) / (card.baseFee.d * card.f.n * mm.n);
    const left = maxS - line.fixed;
    if (left < 0n) return -1;
    if (line.perToken === 0n) return Number.POSITIVE_INFINITY;
    const q = left / line.perToken;
    return q > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(q);
  }

  affordableMaxTokens(
    model: string,
    promptTokensBound: number,
    availableMsat: number,
    endpoint: PricedEndpoint = 'chat',
    rates?: UsdRates,
    extra?: {
      serviceTier?: string | undefined;
      webSearchCalls?: number | undefined;
      choices?: number | undefined;
      hostedTools?: HostedTools | undefined;
    },
  ): number {
    if (this.mode !== 'fixed' && isTokenEndpoint(endpoint)) {
      const { card } = this.cardFor(model, endpoint, undefined, rates);
      const ws = extra?.webSearchCalls ?? 0;
      const m = this.reserveMultiplier(card, model, extra?.serviceTier);
      const line = this.boundLine(
        card,
        {
          model,
          endpoint,
          promptTokensBound,
          rates,
          choices: extra?.choices,
          hostedTools: extra?.hostedTools,
        },
        ws,
      );
      return line === undefined
        ? affordableTokens(card, promptTokensBound, ws, availableMsat, m)
        : this.affordableOnLine(card, line, availableMsat, m);
    }
    return this.affordableWith(
      this.resolve(model, endpoint, undefined, undefined, rates).terms,
      promptTokensBound,
      availableMsat,
    );
  }

  estimate(input: EstimateInput): EstimateResult {
    const cached = input.cached_tokens ?? 0;
    for (const v of [input.prompt_tokens, input.max_tokens, cached]) {
      if (!Number.isSafeInteger(v) || v < 0) {
        throw new GatewayError('invalid_request', {
          message: 'prompt_tokens, max_tokens and cached_tokens must be integers >= 0',
        });
      }
    }
    if (cached > input.prompt_tokens) {
      throw new GatewayError('invalid_request', {
        message: 'cached_tokens counts the cached part of prompt_tokens: it cannot exceed it',
      });
    }
    const usage = emptyUsage();
    usage.input = input.prompt_tokens - cached;
    usage.cacheRead = cached;
    usage.output = input.max_tokens;
    const c = this.cost({ model: input.model, endpoint: 'chat', usage });
    return {
      estimated_cost_sats: c.sats,
      estimated_cost_msats: c.msat,
      breakdown: {
        prompt: c.breakdown.promptMsat,
        completion: c.breakdown.completionMsat,
        fees: c.breakdown.feesMsat,
        dimensions: c.breakdown.dimensions,
      },
    };
  }

  /** msats per 1,000 tokens of each dimension (per call for web_search), rounded up; display only. */
  private cardPrices(card: RateCard): Partial<Record<DimensionKey, number>> {
    const out: Partial<Record<DimensionKey, number>> = {};
    DIMENSIONS.forEach((d, i) => {
      // A hosted tool without its own price is refused, not charged at a base rate: not shown.
      if (HOSTED_DIMENSIONS.has(i) && (card.fallback & (1 << i)) !== 0) return;
      const per = d.direction === 'call' ? 1n : 1000n;
      out[d.key] = this.toSafe(ceil(mul(card.f, { n: card.u[i]! * per, d: 1n })));
    });
    return out;
  }

  modelPrice(model: string, override?: UsdRates): ModelPrice {
    const perK = (r: Rational) => this.toSafe(ceil(mulInt(r, 1000)));
    const peek = this.opts.btc?.peek()?.usd;
    const usdPerMsat = peek === undefined ? undefined : div(parseDecimal(peek), parseDecimal(MSAT_PER_BTC));
    const usd = (msat: Rational) => (usdPerMsat === undefined ? null : toNumber(mul(msat, usdPerMsat)));
    if (this.staticTerms) {
      const t = this.staticTerms;
      return {
        mode: this.mode,
        promptUsdPer1k: usd(mulInt(t.perPrompt, 1000)),
        completionUsdPer1k: usd(mulInt(t.perCompletion, 1000)),
        requestUsd: usd(t.fixed),
        promptMsatPer1k: perK(t.perPrompt),
        completionMsatPer1k: perK(t.perCompletion),
        requestMsat: this.toSafe(ceil(t.fixed)),
        dimensionMsats: this.staticCard ? this.cardPrices(this.staticCard) : null,
      };
    }
    const rates = override ?? this.ratesOf(model);
    let m: Rational;
    let prompt: Rational | undefined;
    let completion: Rational | undefined;
    let request: Rational;
    try {
      m = mul(parseDecimal(this.config.exchangeFee), parseDecimal(this.config.upstreamProviderFee));
      const per = (v: string | undefined) => (v === undefined ? undefined : mul(parseDecimal(v), m));
      prompt = per(rates.promptUsdPerToken);
      completion = per(rates.completionUsdPerToken);
      request = mul(parseDecimal(rates.requestUsd), m);
    } catch (err) {
      throw new GatewayError('price_unavailable', {
        message: `No usable price for model: ${model}`,
        cause: err,
      });
    }
    const baseFeeMsat = this.baseOnly.fixed;
    // A model without token prices (an image or audio model) shows null token prices.
    const terms =
      peek === undefined || prompt === undefined || completion === undefined
        ? undefined
        : this.termsAt(model, rates, peek);
    return {
      mode: this.mode,
      promptUsdPer1k: prompt === undefined ? null : toNumber(mulInt(prompt, 1000)),
      completionUsdPer1k: completion === undefined ? null : toNumber(mulInt(completion, 1000)),
      requestUsd:
        usdPerMsat !== undefined
          ? toNumber(add(request, mul(baseFeeMsat, usdPerMsat)))
          : cmp(baseFeeMsat, ZERO) === 0
            ? toNumber(request)
            : null,
      dimensionMsats: terms ? this.cardPrices(this.cardAt(model, rates, peek!)) : null,
      promptMsatPer1k: terms ? perK(terms.perPrompt) : null,
      completionMsatPer1k: terms ? perK(terms.perCompletion) : null,
      requestMsat:
        terms !== undefined
          ? this.toSafe(ceil(terms.fixed))
          : peek !== undefined
            ? this.toSafe(
                ceil(
                  unitTerms({ ...this.common, unitUsd: ZERO, requestUsd: rates.requestUsd, btcUsd: peek })
                    .fixed,
                ),
              )
            : null,
    };
  }
}

export function createPricing(opts: PricingOptions): Pricing {
  const p = new PricingService(opts);
  return {
    mode: p.mode,
    cost: p.cost.bind(p),
    reservation: p.reservation.bind(p),
    affordableMaxTokens: p.affordableMaxTokens.bind(p),
    estimate: p.estimate.bind(p),
    modelPrice: p.modelPrice.bind(p),
  };
}
