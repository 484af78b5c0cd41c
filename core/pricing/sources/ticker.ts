/**
 * One public exchange ticker: fetches the BTC/USD last price as an exact decimal string. Tickers know
 * nothing about caching or medians (./../btc-price.ts does that); base URLs are overridable for tests.
 */

export interface Ticker {
  readonly name: string;
  /** Resolves with a positive decimal string (e.g. "67012.5"); rejects on any failure. */
  fetchUsd(signal: AbortSignal): Promise<string>;
}

export type TickerFactory = (baseUrl?: string) => Ticker;

/** Plausibility bounds: an answer outside them is a broken ticker, not a price. */
const MIN_USD = 1;
const MAX_USD = 100_000_000;
const DECIMAL = /^\d{1,12}(\.\d{1,12})?$/;

/** GET a small JSON document (bounded size) from a ticker. */
export async function getJson(url: string, signal: AbortSignal): Promise<unknown> {
  const res = await fetch(url, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`HTTP ${res.status}`);
  }
  const text = await res.text();
  if (text.length > 64 * 1024) throw new Error('ticker answer too large');
  return JSON.parse(text) as unknown;
}

/** Validates a ticker's price (string or number) and returns it as a decimal string. */
export function checkPrice(value: unknown): string {
  const s = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof s !== 'string' || !DECIMAL.test(s)) throw new Error('ticker answer has no valid price');
  const n = Number(s);
  if (n < MIN_USD || n > MAX_USD) throw new Error('ticker price out of plausible range');
  return s;
}

/** Reads a nested property without trusting the shape. */
export function pick(obj: unknown, ...path: (string | number)[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

export function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}
