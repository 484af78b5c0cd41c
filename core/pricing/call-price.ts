/**
 * The price of a token-metered call: ONE function, `callMsat`, for the reservation (reserve stage) and the charge
 * (settle stage), so the two cannot disagree. Both are provider units on the same rate card (./rate-card.ts),
 * rounded up once at the same multiplier; only the quantity differs:
 *
 * - reserve, `{ bound }`: the prompt bound at the dearest input price, the output cap (× choices) at the dearest
 *   output price, the declared web search calls at the web search price, plus the hosted tools' bound;
 * - settle, `{ usage }`: each dimension the provider reported at its own price.
 *
 * Every dimension's price is at most its direction's dearest, so a usage within the bound never costs more than
 * the bound, and the same token counts in the dearest dimensions cost exactly the bound
 * (test/pricing/call-price.test.ts checks both as properties).
 */

import type { Usage } from '../metering/types.js';
import { DIMENSIONS, type DimensionKey, dimensionCount } from './dimensions.js';
import { boundUnits, NO_FALLBACKS, partMsat, providerUnits, type RateCard, unitsMsat } from './rate-card.js';
import type { Rational } from './rational.js';
import type { CostResult } from './types.js';

/** A reservation's bound, in the quantities the provider may bill. */
export interface CallBound {
  /** Prompt tokens (at the dearest input price). */
  promptTokens: number;
  /** Output tokens, every choice's cap (at the dearest output price). */
  completionTokens: number;
  /** Web search calls (at the web search price). */
  webSearchCalls: number;
  /** The declared hosted tools' calls, in provider units (pricing.ts boundLine); none when undefined. */
  toolUnits?: bigint | undefined;
}

/** What a call is priced on: the usage the provider reported (settle) or the reservation's bound (reserve). */
export type CallQuantity = { readonly usage: Usage } | { readonly bound: CallBound };

/** The provider units (S of ./rate-card.ts) of a quantity. */
export function quantityUnits(card: RateCard, q: CallQuantity): number | bigint {
  if ('usage' in q) return providerUnits(card, q.usage);
  const b = q.bound;
  const plain = boundUnits(card, b.promptTokens, b.completionTokens, b.webSearchCalls);
  return b.toolUnits === undefined ? plain : BigInt(plain) + b.toolUnits;
}

/** The msats of a token-metered call on `card` (× `multiplier`: tier, batch), rounded up once. */
export function callMsat(card: RateCard, q: CallQuantity, multiplier?: Rational): number {
  return unitsMsat(card, quantityUnits(card, q), multiplier);
}

/**
 * The charge of `usage` on `card` (× `multiplier`), with each charged dimension in the breakdown: every part
 * floored, `fees` the request price plus the one rounding up, so the parts sum to the charge. One definition for
 * the pricing service (core/pricing/pricing.ts) and auto-priced nodes (core/pricing/node-rates.ts).
 */
export function cardCharge(
  card: RateCard,
  usage: Usage,
  multiplier?: Rational,
): Pick<CostResult, 'msat' | 'breakdown' | 'fallbacks'> {
  const msat = callMsat(card, { usage }, multiplier);
  const dimensions: CostResult['breakdown']['dimensions'] = {};
  let prompt = 0;
  let completion = 0;
  let used = 0;
  let fallbacks: DimensionKey[] | undefined;
  for (let i = 0; i < DIMENSIONS.length; i++) {
    const k = dimensionCount(usage, i);
    if (k === 0) continue;
    const d = DIMENSIONS[i]!;
    const part = partMsat(card, k, card.u[i]!, multiplier);
    dimensions[d.key] = part;
    used += part;
    if (d.direction === 'input') prompt += part;
    else if (d.direction === 'output') completion += part;
    if ((card.fallback & (1 << i)) !== 0) {
      fallbacks ??= [];
      fallbacks.push(d.key);
    }
  }
  if (card.request > 0n) {
    const part = partMsat(card, 1, card.request, multiplier);
    dimensions.request = part;
    used += part;
  }
  // The base fee and the one rounding up: what makes the parts sum to the charge.
  dimensions.fees = msat - used;
  return {
    msat,
    breakdown: {
      promptMsat: prompt,
      completionMsat: completion,
      feesMsat: msat - prompt - completion,
      dimensions,
    },
    fallbacks: fallbacks ?? NO_FALLBACKS,
  };
}
