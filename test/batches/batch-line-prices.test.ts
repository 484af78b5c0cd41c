import { describe, expect, it } from 'vitest';
import { boundAtCreation } from '../../core/batches/batch-price.js';
import { priceOutput } from '../../core/batches/settle-batch.js';
import type { BatchJob } from '../../core/batches/types.js';
import { loadConfig } from '../../core/config.js';
import { createBtcPriceSource } from '../../core/pricing/btc-price.js';
import { createPricing } from '../../core/pricing/pricing.js';
import type { UsdRates } from '../../core/pricing/types.js';

/**
 * Batch lines priced as the provider bills them (issue 34, item 7): a Responses line's web searches are charged per
 * call, and a batch is bounded and priced at the BTC price of its creation, not of its input file's upload.
 *
 * Model pricing, BTC 100,000 USD, fees 1: 1 msat per prompt token, 2 per completion token, 10,000 per web search.
 */
const RATES: UsdRates = {
  promptUsdPerToken: '0.000001',
  completionUsdPerToken: '0.000002',
  requestUsd: '0',
  dimensions: { web_search: '0.01' },
};
const config = loadConfig({
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '0',
  BTC_USD_PRICE: '100000',
  EXCHANGE_FEE: '1',
  UPSTREAM_PROVIDER_FEE: '1',
}).pricing;
const pricing = createPricing({ config, rates: () => RATES, btc: createBtcPriceSource({ config }) });

describe('batch line prices', () => {
  it('a Responses line with 2 web search calls: 10 + 8 × 2 + 2 × 10,000 = 20,026 msat, 10,013 at the batch factor', () => {
    const job = {
      model: 'm',
      endpoint: 'responses',
      factor: '0.5',
      btcUsd: '100000',
      reservedMsat: 50_000,
      lines: 1,
    } as BatchJob;
    const body = {
      output: [{ type: 'web_search_call' }, { type: 'web_search_call' }, { type: 'message', content: [] }],
      usage: { input_tokens: 10, output_tokens: 8 },
    };
    const line = JSON.stringify({ response: { status_code: 200, body } });
    expect(priceOutput(pricing, job, Buffer.from(line))).toMatchObject({ answered: 1, costMsat: 10_013 });
  });

  it('the bound of a file uploaded at BTC 100,000 and batched at 50,000: twice the msats, plus 1 per line', () => {
    const summary = { boundMsat: 312, btcUsd: '100000', lines: 3 };
    expect(boundAtCreation(summary, '50000')).toEqual({ boundMsat: 627, btcUsd: '50000' });
    // At a higher price: fewer msats, still rounded up.
    expect(boundAtCreation(summary, '300000')).toEqual({ boundMsat: 107, btcUsd: '300000' });
    // The same price, no current price, or fixed pricing (no BTC price): as uploaded.
    expect(boundAtCreation(summary, '100000')).toEqual({ boundMsat: 312, btcUsd: '100000' });
    expect(boundAtCreation(summary, undefined)).toEqual({ boundMsat: 312, btcUsd: '100000' });
    expect(boundAtCreation({ ...summary, btcUsd: undefined }, '50000')).toEqual({
      boundMsat: 312,
      btcUsd: undefined,
    });
  });
});
