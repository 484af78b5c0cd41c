import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { GatewayError } from '../../core/errors.js';
import { createBtcPriceSource, medianPrice } from '../../core/pricing/btc-price.js';
import type { BtcPriceSource } from '../../core/pricing/types.js';
import { codeOf } from '../support/errors.js';
import { type FakeTicker, startFakeTicker } from '../support/fake-ticker.js';

const open: { ticker?: FakeTicker; source?: BtcPriceSource }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.source?.close();
    await o.ticker?.close();
  }
});

async function setup(
  sources: string,
  answers: Parameters<typeof startFakeTicker>[0],
  extra: { maxAge?: number } = {},
) {
  const ticker = await startFakeTicker(answers);
  let clock = 1_000_000;
  const config = loadConfig({
    BTC_PRICE_SOURCES: sources,
    BTC_PRICE_MAX_AGE_MS: String(extra.maxAge ?? 60_000),
  }).pricing;
  const source = createBtcPriceSource({
    config,
    baseUrls: ticker.baseUrls,
    timeoutMs: 1_500, // a loopback answer under a loaded machine (suites run side by side) may take a few hundred ms
    now: () => clock,
  });
  open.push({ ticker, source });
  return { ticker, source, advance: (ms: number) => (clock += ms) };
}

describe('BTC price from exchange tickers (local fake ticker server)', () => {
  it('the median of the answers (odd count) and the mean of the middle two (even count)', async () => {
    const { source } = await setup('coinbase,kraken,bitstamp', {
      coinbase: '60000',
      kraken: '61000.5',
      bitstamp: '90000',
    });
    const q = await source.refresh();
    expect(q.usd).toBe('61000.5');
    expect(q.sources.sort()).toEqual(['bitstamp', 'coinbase', 'kraken']);
    expect(source.current()).toEqual(q);
    expect(medianPrice(['60000.01', '60000.02'])).toBe('60000.015');
    const four = await setup('coinbase,kraken,bitstamp,gemini', {
      coinbase: '1',
      kraken: '50000',
      bitstamp: '50001',
      gemini: '1e',
    });
    expect((await four.source.refresh()).usd).toBe('50000'); // gemini's garbage is ignored; median of 1, 50000, 50001
  });

  it('failing tickers are skipped; all failing → price_unavailable, never a price', async () => {
    const { ticker, source } = await setup('coinbase,kraken,bitstamp', {
      coinbase: { fail: 'http500' },
      kraken: { fail: 'garbage' },
      bitstamp: '65000',
    });
    expect((await source.refresh()).usd).toBe('65000');
    ticker.set('bitstamp', { fail: 'hang' }); // times out after 1.5 s
    await expect(source.refresh()).rejects.toMatchObject({ code: 'price_unavailable' });
    expect(source.current().usd).toBe('65000'); // the cached quote is still fresh
  });

  it('a quote older than BTC_PRICE_MAX_AGE_MS is not used; current() then refreshes in the background', async () => {
    const { ticker, source, advance } = await setup('coinbase', { coinbase: '70000' }, { maxAge: 10_000 });
    expect(codeOf(() => source.current())).toBe('price_unavailable'); // nothing fetched yet → kicks a refresh
    await expect.poll(() => source.peek()?.usd, { timeout: 5000 }).toBe('70000');
    advance(10_000);
    expect(source.current().usd).toBe('70000'); // exactly max age: still fresh
    advance(1);
    ticker.set('coinbase', { fail: 'http500' });
    expect(source.peek()).toBeUndefined();
    expect(codeOf(() => source.current())).toBe('price_unavailable');
    ticker.set('coinbase', '71000');
    await expect.poll(() => source.peek()?.usd, { timeout: 5000 }).toBe('71000');
  });

  it('start() fetches at once and keeps refreshing; close() stops it', async () => {
    const ticker = await startFakeTicker({ kraken: '80000' });
    const config = loadConfig({ BTC_PRICE_SOURCES: 'kraken' }).pricing;
    const source = createBtcPriceSource({ config, baseUrls: ticker.baseUrls, refreshMs: 50 });
    open.push({ ticker, source });
    source.start();
    source.start(); // idempotent
    await expect.poll(() => source.peek()?.usd, { timeout: 5000 }).toBe('80000');
    ticker.set('kraken', '80100');
    await expect.poll(() => source.peek()?.usd, { timeout: 5000 }).toBe('80100');
    source.close();
    await new Promise((r) => setTimeout(r, 100)); // a request sent just before close() may still land
    const hits = ticker.hits.kraken;
    await new Promise((r) => setTimeout(r, 200)); // a negative over a window: no refresh after close()
    expect(ticker.hits.kraken).toBe(hits);
    await expect(source.refresh()).rejects.toBeInstanceOf(GatewayError);
  });

  it('BTC_USD_PRICE pins a static price and contacts no ticker', async () => {
    const ticker = await startFakeTicker();
    open.push({ ticker });
    const config = loadConfig({ BTC_USD_PRICE: '12345.67', BTC_PRICE_MAX_AGE_MS: '1' }).pricing;
    const source = createBtcPriceSource({ config, baseUrls: ticker.baseUrls, now: () => Date.now() + 1e9 });
    source.start();
    expect(source.current()).toMatchObject({ usd: '12345.67', sources: ['static'] });
    expect(await source.refresh()).toMatchObject({ usd: '12345.67' });
    expect(Object.values(ticker.hits).reduce((a, b) => a + b, 0)).toBe(0);
    expect(() => createBtcPriceSource({ config: { ...config, btcUsdPrice: 0 } })).toThrow(ConfigError);
  });

  it('an unknown source name is a configuration error', () => {
    const config = loadConfig({ BTC_PRICE_SOURCES: 'coinbase,mtgox' }).pricing;
    expect(() => createBtcPriceSource({ config })).toThrow(/mtgox/);
  });
});
