import { bitstamp } from './bitstamp.js';
import { coinbase } from './coinbase.js';
import { gemini } from './gemini.js';
import { kraken } from './kraken.js';
import type { TickerFactory } from './ticker.js';

export type { Ticker, TickerFactory } from './ticker.js';

/** Known tickers by the names BTC_PRICE_SOURCES uses. */
export const TICKERS: Readonly<Record<string, TickerFactory>> = { coinbase, kraken, bitstamp, gemini };
