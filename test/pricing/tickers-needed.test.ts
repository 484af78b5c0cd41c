import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { tickersNeeded } from '../../core/pricing/formula.js';

/** No BTC ticker runs when nothing needs a BTC price: fixed pricing, or a pinned BTC_USD_PRICE. */
describe('tickersNeeded', () => {
  const pricing = (env: Record<string, string>) => loadConfig(env).pricing;

  it('fixed pricing (the default): no ticker', () => {
    expect(tickersNeeded(pricing({}))).toBe(false);
    expect(tickersNeeded(pricing({ FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '5' }))).toBe(false);
  });
  it('model pricing and token pricing: tickers, unless BTC_USD_PRICE pins the price', () => {
    expect(tickersNeeded(pricing({ FIXED_PRICING: 'false' }))).toBe(true);
    expect(
      tickersNeeded(
        pricing({ FIXED_PRICING: 'false', FIXED_PER_1K_INPUT_TOKENS: '1', FIXED_PER_1K_OUTPUT_TOKENS: '2' }),
      ),
    ).toBe(true);
    expect(tickersNeeded(pricing({ FIXED_PRICING: 'false', BTC_USD_PRICE: '50000' }))).toBe(false);
  });
});
