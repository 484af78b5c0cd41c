/**
 * A local fake of the public BTC tickers (Coinbase, Kraken, Bitstamp, Gemini) on 127.0.0.1, one server for
 * all of them (their paths differ). Each ticker answers a settable price, an error, garbage, or hangs.
 * Tests never reach the internet.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type TickerName = 'coinbase' | 'kraken' | 'bitstamp' | 'gemini';
/** A price (decimal string) or a failure mode. */
export type TickerAnswer = string | { fail: 'http500' | 'garbage' | 'hang' };

export interface FakeTicker {
  baseUrl: string;
  /** `{ coinbase: baseUrl, … }` for createBtcPriceSource's baseUrls. */
  baseUrls: Record<TickerName, string>;
  set(name: TickerName, answer: TickerAnswer): void;
  hits: Record<TickerName, number>;
  close(): Promise<void>;
}

const PATHS: Record<string, TickerName> = {
  '/v2/prices/BTC-USD/spot': 'coinbase',
  '/0/public/Ticker?pair=XBTUSD': 'kraken',
  '/api/v2/ticker/btcusd/': 'bitstamp',
  '/v1/pubticker/btcusd': 'gemini',
};

function body(name: TickerName, price: string): unknown {
  switch (name) {
    case 'coinbase':
      return { data: { amount: price, base: 'BTC', currency: 'USD' } };
    case 'kraken':
      return { error: [], result: { XXBTZUSD: { a: [price, '1', '1.0'], c: [price, '0.001'] } } };
    case 'bitstamp':
      return { last: price, high: price, low: price, timestamp: '1700000000' };
    case 'gemini':
      return { bid: price, ask: price, last: price };
  }
}

export async function startFakeTicker(
  initial: Partial<Record<TickerName, TickerAnswer>> = {},
): Promise<FakeTicker> {
  const answers: Record<TickerName, TickerAnswer> = {
    coinbase: '60000',
    kraken: '60000',
    bitstamp: '60000',
    gemini: '60000',
    ...initial,
  };
  const hits: Record<TickerName, number> = { coinbase: 0, kraken: 0, bitstamp: 0, gemini: 0 };
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const name = PATHS[req.url ?? ''];
    if (!name) {
      res.writeHead(404).end();
      return;
    }
    hits[name]++;
    const answer = answers[name];
    if (typeof answer === 'string') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body(name, answer)));
    } else if (answer.fail === 'http500') {
      res.writeHead(500).end('oops');
    } else if (answer.fail === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"amount":"NaN"}}');
    } else {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    baseUrls: { coinbase: baseUrl, kraken: baseUrl, bitstamp: baseUrl, gemini: baseUrl },
    set: (name, answer) => {
      answers[name] = answer;
    },
    hits,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
