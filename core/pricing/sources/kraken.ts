import { checkPrice, getJson, pick, type Ticker, trimBase } from './ticker.js';

/** Kraken ticker: GET /0/public/Ticker?pair=XBTUSD → { error: [], result: { XXBTZUSD: { c: ["67000.1", …] } } }. */
export function kraken(baseUrl = 'https://api.kraken.com'): Ticker {
  const url = `${trimBase(baseUrl)}/0/public/Ticker?pair=XBTUSD`;
  return {
    name: 'kraken',
    fetchUsd: async (signal) => {
      const body = await getJson(url, signal);
      const errors = pick(body, 'error');
      if (Array.isArray(errors) && errors.length > 0) throw new Error('kraken reported an error');
      const result = pick(body, 'result');
      // The pair key is XXBTZUSD today; take the only entry rather than hard-coding Kraken's naming.
      const entry = result && typeof result === 'object' ? Object.values(result)[0] : undefined;
      return checkPrice(pick(entry, 'c', 0));
    },
  };
}
