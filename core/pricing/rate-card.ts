/**
 * A model's rate card: its per-dimension prices at one BTC price, precomputed once so that pricing a call
 * is integer arithmetic — no decimal parsing, no fraction reduction per call.
 *
 * Every price of the card (USD per token, per call) is an exact rational; the card writes them over ONE
 * common denominator, so each price is an integer `u[i]` and a call's provider price is the integer
 *
 *     S = request + Σ count_i × u[i]
 *
 * and its charge, rounded up ONCE, is
 *
 *     msat = ceil( baseFee + S × tier × F )      with F = msat per unit of S (10^11 / BTC_USD × EXCHANGE_FEE ×
 *                                                UPSTREAM_PROVIDER_FEE / denominator), tier the service-tier
 *                                                multiplier (and any batch multiplier), baseFee in msats.
 *
 * While S × F's numerator stays below 2^53 (the common case) this is plain number arithmetic; beyond it, or
 * with a multiplier other than 1, one BigInt multiply and divide. Token mode is the same card with
 * F = 1 / denominator (the per-1k sats prices are msats per token) and no request or per-call prices.
 */

import type { Usage } from '../metering/types.js';
import { DIMENSIONS, type DimensionKey, dimensionCount } from './dimensions.js';
import { ceil, floor, mul, parseDecimal, type Rational } from './rational.js';
import type { RateCard, UsdRates } from './types.js';

// The card's type is in ./types.ts (the paid nodes' `autoCard` returns one); it is built and read here.
export type { RateCard };

const SAFE = Number.MAX_SAFE_INTEGER;
const SAFE_N = BigInt(SAFE);
const D = DIMENSIONS.length;
const WEB_SEARCH = DIMENSIONS.findIndex((d) => d.key === 'web_search');

/** A price the price book does not have and no fallback covers. */
export class MissingRateError extends RangeError {
  constructor(readonly field: string) {
    super(`no ${field} price`);
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function safe(v: bigint): number {
  return v <= SAFE_N ? Number(v) : -1;
}

const PROMPT_INDEX = DIMENSIONS.findIndex((d) => d.key === 'prompt');
const COMPLETION_INDEX = DIMENSIONS.findIndex((d) => d.key === 'completion');

/**
 * Builds a card. `prices[i]` is dimension i's exact price (USD or msat per unit) or undefined (then the
 * direction's base rate: `prompt` for input, `completion` for output, `request` per call); `factor` turns
 * the provider price into msats.
 */
function build(
  prices: readonly (Rational | undefined)[],
  request: Rational,
  factor: Rational,
  baseFee: Rational,
  tiers: ReadonlyMap<string, Rational>,
  requireOutput: boolean,
): RateCard {
  const prompt = prices[PROMPT_INDEX];
  const completion = prices[COMPLETION_INDEX];
  if (prompt === undefined) throw new MissingRateError('prompt');
  if (completion === undefined && requireOutput) throw new MissingRateError('completion');
  let fallback = 0;
  const resolved: Rational[] = [];
  for (let i = 0; i < D; i++) {
    let p = prices[i];
    if (p === undefined) {
      fallback |= 1 << i;
      const dir = DIMENSIONS[i]!.direction;
      p = dir === 'input' ? prompt : dir === 'output' ? (completion ?? { n: 0n, d: 1n }) : request;
    }
    resolved.push(p);
  }
  let den = request.d;
  for (const p of resolved) den = (den / gcd(den, p.d)) * p.d;
  const u = resolved.map((p) => p.n * (den / p.d));
  const req = request.n * (den / request.d);
  let maxIn = 0n;
  let maxOut = 0n;
  DIMENSIONS.forEach((d, i) => {
    // A hosted tool's tokens are bounded per declared tool call (pricing.ts boundLine), not as every token.
    if ('tool' in d) return;
    if (d.direction === 'input' && u[i]! > maxIn) maxIn = u[i]!;
    if (d.direction === 'output' && u[i]! > maxOut) maxOut = u[i]!;
  });
  // F = factor / den; msat = (S × F.n × baseFee.d + baseFee.n × F.d) / (F.d × baseFee.d)
  const f = mul(factor, { n: 1n, d: den });
  const a = f.n * baseFee.d;
  const b = baseFee.n * f.d;
  const c = f.d * baseFee.d;
  const an = safe(a);
  const bn = safe(b);
  const cn = safe(c);
  const maxS = an > 0 && bn >= 0 && cn > 0 ? Math.floor((SAFE - bn) / an) : an === 0 ? SAFE : -1;
  return {
    u,
    un: u.map((x) => safe(x)),
    request: req,
    fallback,
    noOutput: completion === undefined,
    maxIn,
    maxOut,
    f,
    baseFee,
    a: an,
    b: bn,
    c: cn,
    maxS,
    fn: safe(f.n),
    fd: safe(f.d),
    maxInN: safe(maxIn),
    maxOutN: safe(maxOut),
    tiers,
  };
}

const dec = (v: string | undefined) => (v === undefined ? undefined : parseDecimal(v));

/** The card of a model's USD price book at `msatPerUsd` (10^11 / BTC_USD × the node's multiplier). */
export function modelCard(
  rates: UsdRates,
  msatPerUsdMultiplied: Rational,
  baseFee: Rational,
  requireOutput: boolean,
): RateCard {
  const prices = DIMENSIONS.map((d) =>
    d.key === 'prompt'
      ? dec(rates.promptUsdPerToken)
      : d.key === 'completion'
        ? dec(rates.completionUsdPerToken)
        : dec(rates.dimensions?.[d.key as Exclude<DimensionKey, 'prompt' | 'completion'>]),
  );
  const tiers = new Map<string, Rational>();
  for (const [name, m] of Object.entries(rates.serviceTiers ?? {})) tiers.set(name, parseDecimal(m));
  return build(prices, parseDecimal(rates.requestUsd), msatPerUsdMultiplied, baseFee, tiers, requireOutput);
}

/**
 * Token mode: every input dimension at `perInput`, every output one at `perOutput` msats per token. Per-call
 * dimensions (web search) have no price here: left to the fallback, they cost the request price (none) and a
 * reported one counts in `gateway_unpriced_dimension_total`.
 */
export function tokenCard(perInput: Rational, perOutput: Rational, baseFee: Rational): RateCard {
  const prices = DIMENSIONS.map((d) =>
    d.direction === 'input' ? perInput : d.direction === 'output' ? perOutput : undefined,
  );
  return build(prices, { n: 0n, d: 1n }, { n: 1n, d: 1n }, baseFee, new Map(), true);
}

/** S of a usage record (number while exact, else BigInt). */
export function providerUnits(card: RateCard, usage: Usage): number | bigint {
  let s = card.request <= SAFE_N ? Number(card.request) : -1;
  for (let i = 0; i < D && s >= 0; i++) {
    const k = dimensionCount(usage, i);
    if (k === 0) continue;
    const ui = card.un[i]!;
    s = ui < 0 ? -1 : s + k * ui;
    if (s > SAFE) s = -1;
  }
  if (s >= 0) return s;
  let big = card.request;
  for (let i = 0; i < D; i++) big += BigInt(dimensionCount(usage, i)) * card.u[i]!;
  return big;
}

/** The exact charge of `s` provider units with `multiplier` (tier × batch), rounded up once. */
export function unitsMsat(card: RateCard, s: number | bigint, multiplier?: Rational): number {
  if (multiplier === undefined && typeof s === 'number' && s <= card.maxS) {
    const num = s * card.a + card.b;
    return ceilDiv(num, card.c);
  }
  const m = multiplier ?? { n: 1n, d: 1n };
  const exact = {
    n: BigInt(s) * card.f.n * m.n * card.baseFee.d + card.baseFee.n * card.f.d * m.d,
    d: card.f.d * m.d * card.baseFee.d,
  };
  const v = ceil(exact);
  if (v > SAFE_N) throw new RangeError('amount exceeds the safe integer range');
  return Number(v);
}

/** msats of `k` units at integer price `ui` (floored; one breakdown part). */
export function partMsat(card: RateCard, k: number, ui: bigint, multiplier?: Rational): number {
  if (multiplier === undefined && card.fn >= 0 && card.fd > 0 && ui <= SAFE_N) {
    const units = k * Number(ui);
    if (units <= SAFE && (card.fn === 0 || units <= SAFE / card.fn)) {
      return floorDiv(units * card.fn, card.fd);
    }
  }
  const m = multiplier ?? { n: 1n, d: 1n };
  return Number(floor({ n: BigInt(k) * ui * card.f.n * m.n, d: card.f.d * m.d }));
}

/**
 * Provider units of a reservation bound: `promptTokens` at the dearest input price, `completionTokens` at the
 * dearest output price, `webSearchCalls` at the web search price, plus the request price.
 */
export function boundUnits(
  card: RateCard,
  promptTokens: number,
  completionTokens: number,
  webSearchCalls: number,
): number | bigint {
  const ws = card.un[WEB_SEARCH]!;
  const req = safe(card.request);
  if (card.maxInN >= 0 && card.maxOutN >= 0 && ws >= 0 && req >= 0) {
    const s = req + promptTokens * card.maxInN + completionTokens * card.maxOutN + webSearchCalls * ws;
    if (s <= SAFE) return s;
  }
  return (
    card.request +
    BigInt(promptTokens) * card.maxIn +
    BigInt(completionTokens) * card.maxOut +
    BigInt(webSearchCalls) * card.u[WEB_SEARCH]!
  );
}

/**
 * The most completion tokens whose bound with `promptTokens` (and `webSearchCalls`) costs at most
 * `availableMsat`: -1 when not even zero fit, Infinity when output is free.
 */
export function affordableTokens(
  card: RateCard,
  promptTokens: number,
  webSearchCalls: number,
  availableMsat: number,
  multiplier?: Rational,
): number {
  const m = multiplier ?? { n: 1n, d: 1n };
  // ceil(baseFee + S × f × m) ≤ A  ⟺  S ≤ (A − baseFee) / (f × m)
  const rest = BigInt(Math.max(0, Math.floor(availableMsat))) * card.baseFee.d - card.baseFee.n;
  if (rest < 0n) return -1;
  const fixed = boundUnits(card, promptTokens, 0, webSearchCalls);
  if (card.f.n === 0n || m.n === 0n) return Number.POSITIVE_INFINITY; // every provider price is 0
  const maxS = (rest * card.f.d * m.d) / (card.baseFee.d * card.f.n * m.n);
  const left = maxS - BigInt(fixed);
  if (left < 0n) return -1;
  if (card.maxOut === 0n) return Number.POSITIVE_INFINITY;
  const k = left / card.maxOut;
  return k > SAFE_N ? SAFE : Number(k);
}

/** floor(num / den) for non-negative safe integers, exactly. */
function floorDiv(num: number, den: number): number {
  let q = Math.floor(num / den);
  if (q * den > num) q--;
  else if ((q + 1) * den <= num) q++;
  return q;
}

/** ceil(num / den) for non-negative safe integers, exactly. */
function ceilDiv(num: number, den: number): number {
  const q = floorDiv(num, den);
  return q * den < num ? q + 1 : q;
}

export { WEB_SEARCH };

/** No fallback dimension: one shared, frozen empty list (most charges). */
export const NO_FALLBACKS: readonly DimensionKey[] = Object.freeze([]);
