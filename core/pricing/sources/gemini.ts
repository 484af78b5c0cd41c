import { checkPrice, getJson, pick, type Ticker, trimBase } from './ticker.js';

/** Gemini ticker: GET /v1/pubticker/btcusd → { last: "67000.00" }. */
export function gemini(baseUrl = 'https://api.gemini.com'): Ticker {
  const url = `${trimBase(baseUrl)}/v1/pubticker/btcusd`;
  return {
    name: 'gemini',
    fetchUsd: async (signal) => checkPrice(pick(await getJson(url, signal), 'last')),
  };
}
