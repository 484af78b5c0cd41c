import type { Usage } from '../metering/types.js';
import { callMsat, cardCharge } from './call-price.js';
import { completionCap, MIN_COMPLETION_TOKENS } from './completion-cap.js';
import { DIMENSIONS, type DimensionKey, type ExtraDimensionKey } from './dimensions.js';
import { affordableTokens, modelCard, type RateCard } from './rate-card.js';
import { add, ceil, mul, parseDecimal, ZERO } from './rational.js';
import type { CostResult, TokenEndpoint } from './types.js';

/**
 * `"pricing": "auto"` (docs/providers.md): a call served by another node is charged at the prices that node
 * advertises in its `GET /v1/models` (`pricing.prompt_msats` / `completion_msats` per 1,000 tokens,
 * `request_msats` per call, `dimension_msats` per 1,000 tokens of each other usage dimension and per web search
 * call) × the provider's `markup`. The same exact arithmetic as every other price (./rate-card.ts): the advertised
 * numbers are read as exact decimals, the markup is a decimal string, and the call's charge is rounded up ONCE,
 *
 *     msat = ceil( (request + Σ count_i × price_i / 1000) × markup )
 *
 * A dimension the node gives no price for is charged at its direction's base rate (prompt, completion, or the
 * request price per web search call), never at zero. Service-tier multipliers are not advertised: not applied.
 */

/** A node's advertised price of one model (msats), as read from its `/v1/models`. */
export interface NodeRates {
  promptMsatPer1k: number;
  completionMsatPer1k: number;
  requestMsat: number;
  /** msats per 1,000 tokens of each other dimension (`web_search`: per call), when the node lists them. */
  dimensionMsats?: Partial<Record<DimensionKey, number>> | undefined;
}

const HOSTED_KEYS = new Set<string>(['image_output', 'code_interpreter', 'file_search']);

/** `v` msats per 1,000 as an exact decimal string per one (the number's shortest text, its exponent less 3). */
function perOne(v: number): string {
  const s = String(v);
  const m = /^(.*?)[eE]([+-]?\d+)$/.exec(s);
  return m ? `${m[1]}e${Number(m[2]) - 3}` : `${s}e-3`;
}

/**
 * The rate card of `rates` × `markup`: the price book's card machinery with msats in place of USD and the markup
 * as the factor. @throws RangeError on a malformed number or markup (the caller leaves the model unpriced).
 */
export function nodeRateCard(rates: NodeRates, markup: string): RateCard {
  const dimensions: Partial<Record<ExtraDimensionKey, string>> = {};
  for (const d of DIMENSIONS) {
    if (d.key === 'prompt' || d.key === 'completion') continue;
    const v = rates.dimensionMsats?.[d.key];
    if (v === undefined) continue;
    dimensions[d.key] = d.direction === 'call' ? String(v) : perOne(v);
  }
  return modelCard(
    {
      promptUsdPerToken: perOne(rates.promptMsatPer1k),
      completionUsdPerToken: perOne(rates.completionMsatPer1k),
      requestUsd: String(rates.requestMsat),
      dimensions,
    },
    parseDecimal(markup),
    ZERO,
    true,
  );
}

/**
 * What `usage` costs on an auto-priced card, with the same breakdown the pricing service gives (each charged
 * dimension floored, `fees` the request price and the one rounding up). `btcUsd`: for the display `usd` only.
 */
export function nodeCallCost(card: RateCard, usage: Usage, btcUsd: string | undefined): CostResult {
  const charge = cardCharge(card, usage);
  const msat = charge.msat;
  return {
    ...charge,
    // Display only (docs/pricing.md): the charge is `msat`.
    usd: btcUsd === undefined ? 0 : (msat * Number(btcUsd)) / 100_000_000_000,
    sats: Math.ceil(msat / 1000),
  };
}

/** What the reserve stage needs of a token-metered call to bound its cost (ReservationInput's fields). */
export interface NodeBoundInput {
  endpoint: TokenEndpoint;
  promptTokensBound: number;
  maxTokens?: number | undefined;
  contextLength?: number | undefined;
  webSearchCalls?: number | undefined;
  /** Output choices (`n`, `best_of`): the completion cap is bounded this many times. */
  choices?: number | undefined;
}

/**
 * The reservation bounds of a call on an auto-priced card, as the pricing service bounds its own (pricing.ts
 * `tokenReservation`): the prompt bound at the dearest input price + the completion cap (./completion-cap.ts) at
 * the dearest output price; `minMsat` with a minimal answer. `maxTokens`: the cap the provider must be told
 * (the caller's, or the gateway's when nothing else bounds the output), else undefined.
 */
export function nodeCallBound(
  card: RateCard,
  input: NodeBoundInput,
): { maxMsat: number; minMsat: number; maxTokens: number | undefined } {
  const ws = input.webSearchCalls ?? 0;
  const pb = input.promptTokensBound;
  const k = Math.max(1, input.choices ?? 1);
  // The bound priced by the one function settle charges usage with (./call-price.ts).
  const at = (completion: number) =>
    callMsat(card, { bound: { promptTokens: pb, completionTokens: completion * k, webSearchCalls: ws } });
  if (input.endpoint === 'embeddings') {
    const flat = at(0);
    return { maxMsat: flat, minMsat: flat, maxTokens: input.maxTokens };
  }
  const callerMax = input.maxTokens;
  const minTokens =
    callerMax === undefined ? MIN_COMPLETION_TOKENS : Math.min(MIN_COMPLETION_TOKENS, callerMax);
  const { cap, told } = completionCap(input.endpoint, callerMax, input.contextLength);
  return { maxMsat: at(cap), minMsat: at(minTokens), maxTokens: told ? cap : callerMax };
}

/** The most completion tokens `availableMsat` affords on an auto-priced card (-1: none; Infinity: free). */
export function nodeAffordableTokens(
  card: RateCard,
  promptTokensBound: number,
  availableMsat: number,
  webSearchCalls = 0,
): number {
  return affordableTokens(card, promptTokensBound, webSearchCalls, availableMsat);
}

/** What an auto-priced card charges, for display (/v1/providers/{name}): msats per 1,000 tokens of each dimension
 *  (`web_search`: per call) and per request, each rounded up (a call is rounded once over its total). */
export function nodeCardPrices(card: RateCard): {
  promptMsatPer1k: number;
  completionMsatPer1k: number;
  requestMsat: number;
  dimensionMsats: Partial<Record<DimensionKey, number>>;
} {
  const dimensionMsats: Partial<Record<DimensionKey, number>> = {};
  DIMENSIONS.forEach((d, i) => {
    // Hosted tools a node does not price are not sold through it (shown only when priced).
    if (HOSTED_KEYS.has(d.key) && (card.fallback & (1 << i)) !== 0) return;
    const per = d.direction === 'call' ? 1n : 1000n;
    dimensionMsats[d.key] = Number(ceil(mul(card.f, { n: card.u[i]! * per, d: 1n })));
  });
  return {
    promptMsatPer1k: dimensionMsats.prompt!,
    completionMsatPer1k: dimensionMsats.completion!,
    requestMsat: Number(ceil(add(card.baseFee, mul(card.f, { n: card.request, d: 1n })))),
    dimensionMsats,
  };
}
