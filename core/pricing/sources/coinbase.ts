import { checkPrice, getJson, pick, type Ticker, trimBase } from './ticker.js';

/** Coinbase spot price: GET /v2/prices/BTC-USD/spot → { data: { amount: "67000.01" } }. */
export function coinbase(baseUrl = 'https://api.coinbase.com'): Ticker {
  const url = `${trimBase(baseUrl)}/v2/prices/BTC-USD/spot`;
  return {
    name: 'coinbase',
    fetchUsd: async (signal) => checkPrice(pick(await getJson(url, signal), 'data', 'amount')),
  };
}
