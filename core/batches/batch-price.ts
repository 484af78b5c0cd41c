import type { Config } from '../config.js';
import { inputTotal, outputTotal, usageFromOpenAi, usageFromResponse } from '../metering/usage.js';
import { ceil, mulInt, parseDecimal } from '../pricing/rational.js';
import type { PricedEndpoint, Pricing } from '../pricing/types.js';
import type { ModelCatalog } from '../upstream/types.js';

/**
 * The batch price (docs/pricing.md, "Batches"): a batch line costs what the same call costs synchronously,
 * times the batch multiplier — the model's `pricing.batch` in models.json, else BATCH_PRICE_FACTOR (default
 * 0.5, the providers' discount) — rounded up to the msat once per line. In fixed pricing a line therefore costs
 * FIXED_COST_PER_REQUEST × the multiplier. Every line price of the gateway goes through `priceBatchLine`, the one
 * place that reads a line's usage and calls the pricing service.
 */

/** The batch multiplier of `model` (decimal string). */
export function batchFactor(catalog: ModelCatalog, config: Config, model: string): string {
  return catalog.get(model)?.pricing?.batch ?? config.batches.priceFactor;
}

/** `msat` × the multiplier, rounded up. */
export function atBatchPrice(msat: number, factor: string): number {
  return Number(ceil(mulInt(parseDecimal(factor), msat)));
}

export interface BatchLineInput {
  model: string;
  endpoint: PricedEndpoint;
  /** The provider's `usage` object of the answered line, as it reported it. */
  usage: unknown;
  /** The line's whole answer body: a Responses answer's `web_search_call` output items are priced per call. */
  body?: unknown;
  factor: string;
  btcUsd: string | undefined;
}

/**
 * What one answered line costs at the batch price, with its token counts; `undefined` when the line carries no
 * usable usage (then the caller charges its bound share: never free).
 */
export function priceBatchLine(
  pricing: Pricing,
  line: BatchLineInput,
): { msat: number; promptTokens: number; completionTokens: number } | undefined {
  // The normalised usage record (core/metering/usage.ts): a chat/embeddings line's OpenAI usage, or a
  // Responses line's; each dimension (cache reads, reasoning, …) priced at its own rate.
  const usage = usageFromOpenAi(line.usage) ?? usageFromResponse(line.body ?? { usage: line.usage });
  if (usage === undefined) return undefined;
  const cost = pricing.cost({ model: line.model, endpoint: line.endpoint, usage, btcUsd: line.btcUsd });
  return {
    msat: atBatchPrice(cost.msat, line.factor),
    promptTokens: inputTotal(usage),
    completionTokens: outputTotal(usage),
  };
}

/**
 * A batch's bound and the BTC price its lines are priced at, at the BTC price of the batch's creation (`usd`, the
 * current price; undefined: none known, or fixed pricing) rather than the input file's upload, however old the file
 * is. A price in msat is inversely proportional to the BTC price, so the upload's bound is rescaled, rounded up,
 * plus 1 msat per line for the per-line rounding: still an upper bound of every line at the new price.
 */
export function boundAtCreation(
  summary: { boundMsat: number; btcUsd: string | undefined; lines: number },
  usd: string | undefined,
): { boundMsat: number; btcUsd: string | undefined } {
  if (summary.btcUsd === undefined || usd === undefined || usd === summary.btcUsd) {
    return { boundMsat: summary.boundMsat, btcUsd: summary.btcUsd };
  }
  const then = Number(summary.btcUsd);
  const now = Number(usd);
  if (!(then > 0) || !(now > 0)) return { boundMsat: summary.boundMsat, btcUsd: summary.btcUsd };
  return { boundMsat: Math.ceil((summary.boundMsat * then) / now) + summary.lines, btcUsd: usd };
}
