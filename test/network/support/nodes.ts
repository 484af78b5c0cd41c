import type { upstreamPaidMsatsTotal } from '../../../core/metrics.js';

/**
 * What the reselling tests share (pay-nodes, pay-nodes-balance, network-view): node B's model-based prices,
 * node A's flat price, and the operator's eCash a wallet holds.
 */

/** B's prices for model-based pricing: advertised 2,111 / 4,221 msat per 1k tokens, 1,000 per call. */
export const B_MODEL_ENV = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '1',
  BTC_USD_PRICE: '50000',
  EXCHANGE_FEE: '1.005',
  UPSTREAM_PROVIDER_FEE: '1.05',
};
/** A's own price: a flat 5 sats per call. */
export const A_PRICE = 5000;
export const A_ENV = { FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '5' };

/** A counter's value for the series with these labels (0 when there is none yet). */
export async function counter(
  c: typeof upstreamPaidMsatsTotal,
  labels: Record<string, string>,
): Promise<number> {
  const v = (await c.get()).values.find((x) =>
    Object.entries(labels).every(([k, val]) => (x.labels as Record<string, unknown>)[k] === val),
  );
  return v?.value ?? 0;
}
