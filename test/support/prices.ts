/**
 * Prices from the price book alone (models.json, a provider's own prices): BTC at $100,000 and no exchange or
 * provider fee, so 1 USD = 1,000,000 msat and a charge is the USD price × 10⁶; no per-call fee.
 */
export const BOOK_PRICES = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '0',
  BTC_USD_PRICE: '100000',
  EXCHANGE_FEE: '1',
  UPSTREAM_PROVIDER_FEE: '1',
};

/** Token pricing by configuration, no price book: 2 sats a call + 7 sats per 1k prompt and 13 per 1k completion tokens. */
export const TOKEN_PRICES = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '2',
  FIXED_PER_1K_INPUT_TOKENS: '7',
  FIXED_PER_1K_OUTPUT_TOKENS: '13',
};

/** Token pricing by configuration at other rates: `perCall` sats a call + `in1k` / `out1k` sats per 1k tokens. */
export function tokenPrices(perCall: string, in1k: string, out1k: string) {
  return {
    FIXED_PRICING: 'false',
    FIXED_COST_PER_REQUEST: perCall,
    FIXED_PER_1K_INPUT_TOKENS: in1k,
    FIXED_PER_1K_OUTPUT_TOKENS: out1k,
  };
}
