/**
 * The pricing formula (docs/pricing.md), exact. Every pricing model is linear in the token counts, so a price
 * is three exact msat terms — per call, per prompt token, per completion token — and the charge of a call is
 *
 *     msat = ceil( fixed + promptTokens × perPrompt + completionTokens × perCompletion )
 *
 * rounded up ONCE, at the end. Per mode (sats are × 1000 msat; USD are × 10^11 / BTC_USD msat):
 * - fixed: fixed = FIXED_COST_PER_REQUEST × 1000; no token terms.
 * - token: fixed = FIXED_COST_PER_REQUEST × 1000 (base fee); perPrompt = FIXED_PER_1K_INPUT_TOKENS
 *   (sats per 1000 tokens = msats per token), perCompletion = FIXED_PER_1K_OUTPUT_TOKENS (both must be
 *   set: `pricingMode` refuses one side alone).
 * - model: with m = EXCHANGE_FEE × UPSTREAM_PROVIDER_FEE and k = 10^11 / btcUsd (msat per USD):
 *   perPrompt = promptUsdPerToken × k × m, perCompletion = completionUsdPerToken × k × m,
 *   fixed = requestUsd × k × m + FIXED_COST_PER_REQUEST × 1000 (the base fee is in sats, not multiplied).
 * Tests and the end-to-end suites call `priceMsat` to check balances to the msat (docs/pricing.md has a
 * worked example).
 */

import { add, ceil, div, fromBigInt, mul, mulInt, parseDecimal, type Rational, ZERO } from './rational.js';
import type { PricingConfig, PricingMode, UsdRates } from './types.js';

export type Decimal = string | number;

/** Everything the formula depends on. Numbers are read through their shortest decimal string. */
export interface FormulaParams {
  mode: PricingMode;
  costPerRequestSats: Decimal;
  per1kInputSats?: Decimal | undefined;
  per1kOutputSats?: Decimal | undefined;
  exchangeFee?: Decimal | undefined;
  upstreamProviderFee?: Decimal | undefined;
  /** Model mode only. */
  rates?: UsdRates | undefined;
  /** Model mode only: USD per BTC, > 0. */
  btcUsd?: Decimal | undefined;
}

/** Exact msat terms of a price (see the module comment). `*Base` are the token terms without multiplier. */
export interface PriceTerms {
  fixed: Rational;
  perPrompt: Rational;
  perCompletion: Rational;
  perPromptBase: Rational;
  perCompletionBase: Rational;
}

const MSAT_PER_SAT = 1000n;
/** msats per BTC: 10^8 sats × 1000. */
const MSAT_PER_BTC = 100_000_000_000n;

/** The pricing mode selected by configuration (docs/pricing.md). */
export function pricingMode(config: PricingConfig): PricingMode {
  // Token mode needs both sides: one side left unset would make that side free without anyone deciding so.
  if (!config.fixed && (config.per1kInputSats === undefined) !== (config.per1kOutputSats === undefined)) {
    const missing =
      config.per1kInputSats === undefined ? 'FIXED_PER_1K_INPUT_TOKENS' : 'FIXED_PER_1K_OUTPUT_TOKENS';
    throw new RangeError(
      `${missing} is not set while its counterpart is: set both (0 makes a side free on purpose), or neither for model-based pricing`,
    );
  }
  if (config.fixed) return 'fixed';
  if (config.per1kInputSats !== undefined || config.per1kOutputSats !== undefined) return 'token';
  return 'model';
}

/**
 * Whether the BTC tickers run: only a mode that converts USD prices into msats needs a BTC price (model pricing,
 * and token pricing for unit-priced calls). Fixed pricing charges sats as configured, so no ticker runs and an
 * offline node logs no ticker failures (its `usd` display figures are then left out); BTC_USD_PRICE pins a price.
 */
export function tickersNeeded(config: PricingConfig): boolean {
  return config.btcUsdPrice === undefined && pricingMode(config) !== 'fixed';
}

/** The multiplier EXCHANGE_FEE × UPSTREAM_PROVIDER_FEE, exact. */
export function multiplier(exchangeFee: Decimal = 1.005, upstreamProviderFee: Decimal = 1.05): Rational {
  return mul(parseDecimal(exchangeFee), parseDecimal(upstreamProviderFee));
}

/** msats per USD at `btcUsd` USD per BTC. */
export function msatPerUsd(btcUsd: Decimal): Rational {
  const price = parseDecimal(btcUsd);
  if (price.n === 0n) throw new RangeError('BTC price must be > 0');
  return div(fromBigInt(MSAT_PER_BTC), price);
}

/** Exact msat terms of a price. Throws RangeError on malformed numbers or a missing model-mode input. */
export function priceTerms(p: FormulaParams): PriceTerms {
  const baseFee = mulInt(parseDecimal(p.costPerRequestSats), MSAT_PER_SAT);
  switch (p.mode) {
    case 'fixed':
      return {
        fixed: baseFee,
        perPrompt: ZERO,
        perCompletion: ZERO,
        perPromptBase: ZERO,
        perCompletionBase: ZERO,
      };
    case 'token': {
      // sats per 1000 tokens × 1000 msat/sat ÷ 1000 tokens = msats per token: the number itself.
      const perPrompt = p.per1kInputSats === undefined ? ZERO : parseDecimal(p.per1kInputSats);
      const perCompletion = p.per1kOutputSats === undefined ? ZERO : parseDecimal(p.per1kOutputSats);
      return {
        fixed: baseFee,
        perPrompt,
        perCompletion,
        perPromptBase: perPrompt,
        perCompletionBase: perCompletion,
      };
    }
    case 'model': {
      if (!p.rates) throw new RangeError('model mode needs rates');
      if (p.btcUsd === undefined) throw new RangeError('model mode needs a BTC price');
      if (p.rates.promptUsdPerToken === undefined) throw new MissingPriceError('prompt');
      if (p.rates.completionUsdPerToken === undefined) throw new MissingPriceError('completion');
      const k = msatPerUsd(p.btcUsd);
      const m = multiplier(p.exchangeFee, p.upstreamProviderFee);
      const perPromptBase = mul(parseDecimal(p.rates.promptUsdPerToken), k);
      const perCompletionBase = mul(parseDecimal(p.rates.completionUsdPerToken), k);
      return {
        fixed: add(mul(mul(parseDecimal(p.rates.requestUsd), k), m), baseFee),
        perPrompt: mul(perPromptBase, m),
        perCompletion: mul(perCompletionBase, m),
        perPromptBase,
        perCompletionBase,
      };
    }
  }
}

/** A price the price book does not have; the pricing service answers `model_not_priced`. */
export class MissingPriceError extends RangeError {
  constructor(readonly field: string) {
    super(`no ${field} price`);
  }
}

/**
 * Terms of a call priced per unit (an image, a millisecond of audio, a character of speech input): the unit
 * price sits in the prompt slot, so `exactMsat(terms, units, 0)` is
 *     requestUsd × k × m + FIXED_COST_PER_REQUEST × 1000 + units × unitUsd × k × m
 * with k = 10^11 / btcUsd and m = EXCHANGE_FEE × UPSTREAM_PROVIDER_FEE, rounded up once like every price.
 */
export function unitTerms(p: {
  unitUsd: Rational;
  requestUsd: Decimal;
  btcUsd: Decimal;
  costPerRequestSats: Decimal;
  exchangeFee?: Decimal | undefined;
  upstreamProviderFee?: Decimal | undefined;
}): PriceTerms {
  const k = msatPerUsd(p.btcUsd);
  const m = multiplier(p.exchangeFee, p.upstreamProviderFee);
  const baseFee = mulInt(parseDecimal(p.costPerRequestSats), MSAT_PER_SAT);
  const perPromptBase = mul(p.unitUsd, k);
  return {
    fixed: add(mul(mul(parseDecimal(p.requestUsd), k), m), baseFee),
    perPrompt: mul(perPromptBase, m),
    perCompletion: ZERO,
    perPromptBase,
    perCompletionBase: ZERO,
  };
}

/** The exact (unrounded) msat cost of a call under `terms`. */
export function exactMsat(terms: PriceTerms, promptTokens: number, completionTokens: number): Rational {
  return add(
    add(terms.fixed, mulInt(terms.perPrompt, checkCount(promptTokens))),
    mulInt(terms.perCompletion, checkCount(completionTokens)),
  );
}

/** THE formula: the integer msats charged for a call, rounded up once. */
export function priceMsat(p: FormulaParams & { promptTokens: number; completionTokens: number }): bigint {
  return ceil(exactMsat(priceTerms(p), p.promptTokens, p.completionTokens));
}

/** Same as `priceMsat` from ready terms. */
export function termsMsat(terms: PriceTerms, promptTokens: number, completionTokens: number): bigint {
  return ceil(exactMsat(terms, promptTokens, completionTokens));
}

function checkCount(n: number): bigint {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new RangeError(`token count must be a non-negative integer: ${n}`);
  return BigInt(n);
}
