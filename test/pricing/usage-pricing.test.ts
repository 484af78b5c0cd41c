import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import type { GatewayError } from '../../core/errors.js';
import { emptyUsage, type Usage } from '../../core/metering/usage.js';
import { createBtcPriceSource } from '../../core/pricing/btc-price.js';
import { createPricing } from '../../core/pricing/pricing.js';
import type { CostResult, UsdRates } from '../../core/pricing/types.js';
import { BOOK_PRICES, tokenPrices } from '../support/prices.js';

/**
 * Every usage dimension priced at its own rate (OpenRouter's field names), rounded up once; absent prices at
 * their direction's base rate; the service tier's multiplier on the whole call; the breakdown naming each
 * charged dimension and summing to the charge. Rates are chosen so that 1 USD-micro per token is 1 msat
 * (BTC at $100,000, fees 1, no base fee): the figures below are worked by hand.
 */
const u = (f: Partial<Usage>): Usage => ({ ...emptyUsage(), ...f });

const RATES: Record<string, UsdRates> = {
  // 1 msat per prompt token, 2 per completion token; cache reads 10 %, cache writes 125 %, 1-hour writes 200 %
  cached: {
    promptUsdPerToken: '0.000001',
    completionUsdPerToken: '0.000002',
    requestUsd: '0',
    dimensions: {
      input_cache_read: '0.0000001',
      input_cache_write: '0.00000125',
      input_cache_write_1h: '0.000002',
      internal_reasoning: '0.000003',
      web_search: '0.01',
    },
    serviceTiers: { flex: '0.5', priority: '2' },
  },
  // only the two base rates: every other dimension falls back to them
  plain: { promptUsdPerToken: '0.000001', completionUsdPerToken: '0.000002', requestUsd: '0.00002' },
  // rates whose common denominator makes the number path overflow early: the BigInt path must agree
  odd: {
    promptUsdPerToken: '0.0000033',
    completionUsdPerToken: '0.0000177',
    requestUsd: '0.0003',
    dimensions: { input_cache_read: '0.00000033', internal_reasoning: '0.0000191' },
  },
};

function pricingAt(env: Record<string, string> = {}) {
  const config = loadConfig({ ...BOOK_PRICES, ...env }).pricing;
  return createPricing({ config, rates: (m) => RATES[m], btc: createBtcPriceSource({ config }) });
}

/** `c` charges `msat` in all, and its breakdown names exactly `dimensions`. */
function expectCharge(c: CostResult, msat: number, dimensions: CostResult['breakdown']['dimensions']): void {
  expect(c.msat).toBe(msat);
  expect(c.breakdown.dimensions).toEqual(dimensions);
}

describe('pricing a usage record', () => {
  const pricing = pricingAt();

  it("the issue's cached call: 800 cache reads and 100 cache writes of 1,000 prompt tokens cost 1,105, not 1,800", () => {
    const c = pricing.cost({
      model: 'cached',
      endpoint: 'chat',
      usage: u({ input: 100, cacheRead: 800, cacheWrite: 100, output: 400 }),
    });
    expect(c.msat).toBe(1105); // 100 + 80 + 125 + 800
    expect(c.breakdown).toEqual({
      promptMsat: 305,
      completionMsat: 800,
      feesMsat: 0,
      dimensions: { prompt: 100, input_cache_read: 80, input_cache_write: 125, completion: 800, fees: 0 },
    });
    expect(c.fallbacks).toEqual([]);
  });

  it('reasoning at internal_reasoning, 1-hour cache writes, web search per call', () => {
    const c = pricing.cost({
      model: 'cached',
      endpoint: 'responses',
      usage: u({ input: 10, cacheWrite1h: 50, output: 20, reasoning: 30, webSearch: 2 }),
    });
    // 10 + 100 + 40 + 90 + 2 × $0.01 (= 10,000 msat each at $100,000)
    expectCharge(c, 20_240, {
      prompt: 10,
      input_cache_write_1h: 100,
      completion: 40,
      internal_reasoning: 90,
      web_search: 20_000,
      fees: 0,
    });
    expect(c.breakdown.feesMsat).toBe(20_000); // web search calls are neither prompt nor completion
  });

  it('the service tier the provider reports multiplies the whole call (flex 0.5, priority 2); unknown tiers 1', () => {
    const usage = (serviceTier: string) => u({ input: 101, output: 50, serviceTier });
    const at = (tier: string) => pricing.cost({ model: 'cached', endpoint: 'chat', usage: usage(tier) });
    expect(at('default').msat).toBe(201);
    expectCharge(at('flex'), 101, { prompt: 50, completion: 50, fees: 1 }); // 100.5 rounded up once
    expect(at('priority').msat).toBe(402);
  });

  it('an extra multiplier (a batch discount) composes with the tier', () => {
    const c = pricing.cost({
      model: 'cached',
      endpoint: 'chat',
      usage: u({ input: 100, output: 100, serviceTier: 'flex' }),
      multiplier: '0.5',
    });
    expect(c.msat).toBe(75); // 300 × 0.5 × 0.5
  });

  it('an absent dimension price is charged at its base rate and reported as a fallback, never free', () => {
    const c = pricing.cost({
      model: 'plain',
      endpoint: 'chat',
      usage: u({
        input: 10,
        cacheRead: 20,
        cacheWrite: 30,
        inputAudio: 5,
        output: 7,
        reasoning: 3,
        outputAudio: 4,
        webSearch: 1,
      }),
    });
    // inputs 65 × 1, outputs 14 × 2, the web search call at the request price ($0.00002 = 20 msat), + the request
    expect(c.msat).toBe(65 + 28 + 20 + 20);
    expect(c.fallbacks).toEqual([
      'input_cache_read',
      'input_cache_write',
      'input_audio',
      'internal_reasoning',
      'output_audio',
      'web_search',
    ]);
    expect(c.breakdown.dimensions).toMatchObject({
      input_cache_read: 20,
      internal_reasoning: 6,
      web_search: 20,
      request: 20,
    });
  });

  it('a reported web search on a model with no web_search price and request "0" is free, and reported as a fallback', () => {
    const free: UsdRates = {
      promptUsdPerToken: '0.000001',
      completionUsdPerToken: '0.000002',
      requestUsd: '0',
    };
    const config = loadConfig(BOOK_PRICES).pricing;
    const p = createPricing({ config, rates: () => free, btc: createBtcPriceSource({ config }) });
    const c = p.cost({
      model: 'free-search',
      endpoint: 'responses',
      usage: u({ input: 6, output: 8, webSearch: 2 }),
    });
    expectCharge(c, 6 + 16, { prompt: 6, completion: 16, web_search: 0, fees: 0 });
    expect(c.fallbacks).toEqual(['web_search']);
  });

  it('token pricing has no per-call price: a reported web search costs nothing there and is reported as a fallback', () => {
    const config = loadConfig(tokenPrices('0', '1', '2')).pricing;
    const p = createPricing({ config });
    const c = p.cost({
      model: 'any',
      endpoint: 'chat',
      usage: u({ input: 10, cacheRead: 5, output: 4, webSearch: 3 }),
    });
    // every input token at 1 msat, every output token at 2, the searches at nothing
    expect(c.msat).toBe(15 + 8);
    expect(c.fallbacks).toEqual(['web_search']);
    expect(p.cost({ model: 'any', endpoint: 'chat', usage: u({ input: 10, output: 4 }) }).fallbacks).toEqual(
      [],
    );
  });

  it('the breakdown always sums to the charge, and the number path equals exact rationals (fast-check)', () => {
    const fees = pricingAt({
      EXCHANGE_FEE: '1.005',
      UPSTREAM_PROVIDER_FEE: '1.05',
      FIXED_COST_PER_REQUEST: '0.3',
      BTC_USD_PRICE: '97123.45',
    });
    const n = () => fc.integer({ min: 0, max: 3_000_000 });
    fc.assert(
      fc.property(
        fc.constantFrom('cached', 'plain', 'odd'),
        n(),
        n(),
        n(),
        n(),
        n(),
        fc.constantFrom(undefined, 'flex', 'x'),
        (model, input, cacheRead, cacheWrite, output, reasoning, tier) => {
          const usage = u({
            input,
            cacheRead,
            cacheWrite,
            output,
            reasoning,
            ...(tier ? { serviceTier: tier } : {}),
          });
          const c = fees.cost({ model, endpoint: 'chat', usage });
          const parts = Object.values(c.breakdown.dimensions).reduce((a, b) => a + (b ?? 0), 0);
          expect(parts).toBe(c.msat);
          expect(c.breakdown.promptMsat + c.breakdown.completionMsat + c.breakdown.feesMsat).toBe(c.msat);
          // Independent exact reference: Σ count × USD price × 10^11 / BTC × 1.05525 × tier + 300, rounded up once.
          const r = RATES[model]!;
          const d = r.dimensions ?? {};
          const price = (v: string | undefined, base: string) => v ?? base;
          const dec = (s: string) => {
            const [i, f = ''] = s.split('.');
            return { n: BigInt(i! + f), d: 10n ** BigInt(f.length) };
          };
          let num = 0n;
          const den = 10n ** 12n;
          const addUsd = (k: number, s: string) => {
            const q = dec(s);
            num += (BigInt(k) * q.n * den) / q.d;
          };
          addUsd(input, r.promptUsdPerToken!);
          addUsd(cacheRead, price(d.input_cache_read, r.promptUsdPerToken!));
          addUsd(cacheWrite, price(d.input_cache_write, r.promptUsdPerToken!));
          addUsd(output, r.completionUsdPerToken!);
          addUsd(reasoning, price(d.internal_reasoning, r.completionUsdPerToken!));
          addUsd(1, r.requestUsd);
          // A tier the book does not know ('x') is charged at the dearest it knows (cached: priority × 2).
          const t =
            model === 'cached' && tier === 'flex'
              ? [1n, 2n]
              : model === 'cached' && tier === 'x'
                ? [2n, 1n]
                : [1n, 1n];
          // msat = num/10^12 × 10^13/9712345 × 42210/40000 × t + 300
          const n2 = num * 10n ** 13n * 42210n * t[0]! + 300n * den * 9712345n * 40000n * t[1]!;
          const d2 = den * 9712345n * 40000n * t[1]!;
          const want = (n2 + d2 - 1n) / d2;
          expect(BigInt(c.msat)).toBe(want);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reservation: the prompt bound at the dearest input price, the cap at the dearest output price, a raising tier', () => {
    // dearest input: 1-hour writes at 2 msat; dearest output: reasoning at 3 msat
    const reserve = (over: Partial<Parameters<typeof pricing.reservation>[0]> = {}) =>
      pricing.reservation({
        model: 'cached',
        endpoint: 'chat',
        promptTokensBound: 100,
        maxTokens: 10,
        ...over,
      });
    expect(reserve().maxMsat).toBe(230);
    expect(reserve({ serviceTier: 'priority' }).maxMsat).toBe(460);
    // A discount tier the provider may not grant does not shrink the bound.
    expect(reserve({ serviceTier: 'flex' }).maxMsat).toBe(230);
    expect(reserve({ endpoint: 'responses', webSearchCalls: 1 }).maxMsat).toBe(10_230);
    expect(pricing.affordableMaxTokens('cached', 100, 260, 'chat')).toBe(20);
  });

  it('a call declaring a web search tool for a model without a web_search price is refused before any money moves', () => {
    try {
      pricing.reservation({
        model: 'plain',
        endpoint: 'responses',
        promptTokensBound: 10,
        maxTokens: 10,
        webSearchCalls: 1,
      });
      throw new Error('expected model_not_priced');
    } catch (err) {
      expect((err as GatewayError).code).toBe('model_not_priced');
      expect((err as GatewayError).message).toMatch(/web_search/);
    }
  });

  it('modelPrice shows every dimension charged per 1k tokens (per call for web_search), base rates filled in', () => {
    expect(pricing.modelPrice('plain').dimensionMsats).toEqual({
      prompt: 1000,
      input_cache_read: 1000,
      input_cache_write: 1000,
      input_cache_write_1h: 1000,
      input_audio: 1000,
      input_audio_cache_read: 1000,
      input_image: 1000,
      completion: 2000,
      internal_reasoning: 2000,
      output_audio: 2000,
      web_search: 20,
    });
    expect(pricing.modelPrice('cached').dimensionMsats).toMatchObject({
      input_cache_read: 100,
      web_search: 10_000,
    });
  });
});
