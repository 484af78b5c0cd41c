/**
 * BTC/USD price: the median of several public exchange tickers, cached, refreshed in the background, never
 * used when older than BTC_PRICE_MAX_AGE_MS (then pricing answers 503 `price_unavailable`, never a free
 * call). BTC_USD_PRICE pins a static price and disables the tickers.
 *
 * Why a median: one exchange answering garbage (or a stale cache in front of it) cannot move the price;
 * with two answers the median is their mean.
 */

import { ConfigError } from '../config.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { add, cmp, div, fromBigInt, parseDecimal, type Rational, toDecimalString } from './rational.js';
import { TICKERS, type Ticker } from './sources/index.js';
import type { BtcPriceSource, BtcQuote, PricingConfig } from './types.js';

export interface BtcPriceOptions {
  config: Pick<PricingConfig, 'btcUsdPrice' | 'btcPriceMaxAgeMs' | 'btcPriceSources'>;
  /** Per-ticker base URL overrides, by name (tests point them at a local fake ticker). */
  baseUrls?: Record<string, string> | undefined;
  /** Ready-made tickers; when set, `config.btcPriceSources` and `baseUrls` are ignored. */
  tickers?: Ticker[] | undefined;
  /** Background refresh period. Default: a third of the max age, at most 60 s. */
  refreshMs?: number | undefined;
  /** Per-ticker request timeout. Default 5 s. */
  timeoutMs?: number | undefined;
  now?: (() => number) | undefined;
  log?: Logger | undefined;
}

/** The median of positive decimal strings, as an exact decimal string. */
export function medianPrice(values: readonly string[]): string {
  if (values.length === 0) throw new RangeError('median of nothing');
  const sorted: Rational[] = values.map((v) => parseDecimal(v)).sort(cmp);
  const mid = sorted.length >> 1;
  const m = sorted.length % 2 === 1 ? sorted[mid]! : div(add(sorted[mid - 1]!, sorted[mid]!), fromBigInt(2n));
  return toDecimalString(m);
}

export function createBtcPriceSource(opts: BtcPriceOptions): BtcPriceSource {
  const now = opts.now ?? Date.now;
  const { config } = opts;
  if (config.btcUsdPrice !== undefined) {
    if (!(config.btcUsdPrice > 0)) throw new ConfigError('BTC_USD_PRICE must be > 0');
    const quote: BtcQuote = { usd: String(config.btcUsdPrice), at: now(), sources: ['static'] };
    return {
      current: () => quote,
      peek: () => quote,
      refresh: async () => quote,
      start() {},
      close() {},
    };
  }
  return new TickerPriceSource(opts, now);
}

class TickerPriceSource implements BtcPriceSource {
  private readonly tickers: Ticker[];
  private readonly maxAgeMs: number;
  private readonly refreshMs: number;
  private readonly timeoutMs: number;
  private quote: BtcQuote | undefined;
  private inflight: Promise<BtcQuote> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private abort = new AbortController();
  private closed = false;

  constructor(
    private readonly opts: BtcPriceOptions,
    private readonly now: () => number,
  ) {
    this.maxAgeMs = opts.config.btcPriceMaxAgeMs;
    this.refreshMs = opts.refreshMs ?? Math.max(1000, Math.min(60_000, Math.floor(this.maxAgeMs / 3)));
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.tickers =
      opts.tickers ??
      opts.config.btcPriceSources.map((name) => {
        const factory = TICKERS[name.toLowerCase()];
        if (!factory) {
          throw new ConfigError(
            `BTC_PRICE_SOURCES: unknown source ${name} (known: ${Object.keys(TICKERS).join(', ')})`,
          );
        }
        return factory(opts.baseUrls?.[name.toLowerCase()]);
      });
    if (this.tickers.length === 0)
      throw new ConfigError('BTC_PRICE_SOURCES is empty and BTC_USD_PRICE is not set');
  }

  peek(): BtcQuote | undefined {
    const q = this.quote;
    return q && this.now() - q.at <= this.maxAgeMs ? q : undefined;
  }

  current(): BtcQuote {
    const q = this.peek();
    if (q) return q;
    // Stale or missing: try again in the background so a later call can succeed; this call cannot wait.
    if (!this.inflight && !this.closed) this.refresh().catch(() => {});
    throw new GatewayError('price_unavailable', { details: { max_age_ms: this.maxAgeMs } });
  }

  refresh(): Promise<BtcQuote> {
    if (this.closed) return Promise.reject(new GatewayError('price_unavailable'));
    this.inflight ??= this.fetchAll().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  start(): void {
    if (this.timer || this.closed) return;
    if (!this.peek()) this.refresh().catch(() => {});
    this.timer = setInterval(() => {
      this.refresh().catch(() => {});
    }, this.refreshMs);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.abort.abort();
  }

  private async fetchAll(): Promise<BtcQuote> {
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.timeoutMs)]);
    const results = await Promise.allSettled(this.tickers.map((t) => t.fetchUsd(signal)));
    const prices: string[] = [];
    const sources: string[] = [];
    results.forEach((r, i) => {
      const name = this.tickers[i]!.name;
      if (r.status === 'fulfilled') {
        prices.push(r.value);
        sources.push(name);
      } else {
        this.opts.log?.warn({ ticker: name, err: String(r.reason) }, 'BTC price ticker failed');
      }
    });
    if (prices.length === 0) {
      throw new GatewayError('price_unavailable', { message: 'No BTC price ticker answered' });
    }
    const quote: BtcQuote = { usd: medianPrice(prices), at: this.now(), sources };
    this.quote = quote;
    return quote;
  }
}
