import { checkPrice, getJson, pick, type Ticker, trimBase } from './ticker.js';

/** Bitstamp ticker: GET /api/v2/ticker/btcusd/ → { last: "67000" }. */
export function bitstamp(baseUrl = 'https://www.bitstamp.net'): Ticker {
  const url = `${trimBase(baseUrl)}/api/v2/ticker/btcusd/`;
  return {
    name: 'bitstamp',
    fetchUsd: async (signal) => checkPrice(pick(await getJson(url, signal), 'last')),
  };
}
