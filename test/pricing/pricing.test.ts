import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { GatewayError } from '../../core/errors.js';
import { simpleUsage } from '../../core/metering/usage.js';
import { createBtcPriceSource } from '../../core/pricing/btc-price.js';
import { priceMsat } from '../../core/pricing/formula.js';
import { createPricing } from '../../core/pricing/pricing.js';
import type { BtcPriceSource, Pricing, ReservationInput, UsdRates } from '../../core/pricing/types.js';
import { tokenPrices } from '../support/prices.js';

const RATES: Record<string, UsdRates> = {
  'gpt-test': { promptUsdPerToken: '0.0000025', completionUsdPerToken: '0.00001', requestUsd: '0' },
  'req-fee': { promptUsdPerToken: '0.000001', completionUsdPerToken: '0.000002', requestUsd: '0.001' },
  broken: { promptUsdPerToken: '-1', completionUsdPerToken: '0', requestUsd: '0' },
};
const rates = (m: string) => RATES[m];

function modelPricing(env: Record<string, string> = {}, btc?: BtcPriceSource) {
  const config = loadConfig({ FIXED_PRICING: 'false', BTC_USD_PRICE: '60000', ...env }).pricing;
  return { config, pricing: createPricing({ config, rates, btc: btc ?? createBtcPriceSource({ config }) }) };
}

function formula(env: Record<string, string>, model: string, p: number, c: number, btcUsd = '60000'): number {
  const config = loadConfig({ FIXED_PRICING: 'false', ...env }).pricing;
  return Number(
    priceMsat({
      mode: 'model',
      costPerRequestSats: config.costPerRequestSats,
      exchangeFee: config.exchangeFee,
      upstreamProviderFee: config.upstreamProviderFee,
      rates: RATES[model],
      btcUsd,
      promptTokens: p,
      completionTokens: c,
    }),
  );
}

/** Pricing from `env` alone (no model rates, no BTC price source). */
const envPricing = (env: Record<string, string>) => createPricing({ config: loadConfig(env).pricing });

/** What `pricing` charges a chat call of `p` prompt and `c` completion tokens on `model`. */
const chatCost = (pricing: Pricing, model: string, p: number, c: number) =>
  pricing.cost({ model, endpoint: 'chat', usage: simpleUsage(p, c) });

function expectGatewayError(fn: () => unknown, code: string, message?: RegExp) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe(code);
    if (message) expect((err as GatewayError).message).toMatch(message);
    return;
  }
  throw new Error(`expected ${code}`);
}

describe('createPricing: modes from configuration', () => {
  it('fixed (default): FIXED_COST_PER_REQUEST per call; fractional sats become msats', () => {
    const pricing = envPricing({ FIXED_COST_PER_REQUEST: '0.5' });
    expect(pricing.mode).toBe('fixed');
    const c = chatCost(pricing, 'anything', 9999, 9999);
    expect(c).toMatchObject({
      msat: 500,
      sats: 1,
      breakdown: { promptMsat: 0, completionMsat: 0, feesMsat: 500 },
    });
    const r = pricing.reservation({ model: 'x', endpoint: 'chat', promptTokensBound: 10, maxTokens: 5 });
    expect(r).toMatchObject({ maxMsat: 500, minMsat: 500, maxTokens: 5, lowered: false });
  });

  it('token: base fee + sats per 1k tokens, no BTC price needed', () => {
    const pricing = envPricing(tokenPrices('1', '0.5', '1.5'));
    expect(pricing.mode).toBe('token');
    const c = chatCost(pricing, 'unknown-is-fine', 333, 77);
    expect(c.msat).toBe(1000 + 166.5 + 115.5);
    expect(c.breakdown).toEqual({
      promptMsat: 166,
      completionMsat: 115,
      feesMsat: 1001,
      dimensions: { prompt: 166, completion: 115, fees: 1001 },
    });
    expect(c.usd).toBe(0);
    // A non-metered call pays the base fee only.
    expect(pricing.cost({ model: '', endpoint: 'other', usage: simpleUsage(50, 50) }).msat).toBe(1000);
  });

  it('usd is filled in fixed and token mode from the BTC price (x-node-cost.usd in every mode)', () => {
    for (const env of [
      { FIXED_COST_PER_REQUEST: '2', BTC_USD_PRICE: '50000' },
      {
        FIXED_PRICING: 'false',
        FIXED_COST_PER_REQUEST: '2',
        FIXED_PER_1K_INPUT_TOKENS: '1',
        FIXED_PER_1K_OUTPUT_TOKENS: '1',
        BTC_USD_PRICE: '50000',
      },
    ]) {
      const config = loadConfig(env).pricing;
      const pricing = createPricing({ config, btc: createBtcPriceSource({ config }) });
      const c = chatCost(pricing, 'm', 0, 0);
      // 2 sats = 2,000 msat at $50,000 per 10^11 msat = $0.001.
      expect(c.msat).toBe(2000);
      expect(c.usd).toBeCloseTo(0.001, 12);
    }
  });

  it('model: rates × BTC price × EXCHANGE_FEE × UPSTREAM_PROVIDER_FEE + base fee, exact to the msat', () => {
    const env = { FIXED_COST_PER_REQUEST: '0.25', EXCHANGE_FEE: '1.005', UPSTREAM_PROVIDER_FEE: '1.05' };
    const { pricing } = modelPricing(env);
    expect(pricing.mode).toBe('model');
    fc.assert(
      fc.property(
        fc.constantFrom('gpt-test', 'req-fee'),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (model, p, c) => {
          const got = chatCost(pricing, model, p, c);
          expect(got.msat).toBe(formula(env, model, p, c));
          const b = got.breakdown;
          expect(b.promptMsat + b.completionMsat + b.feesMsat).toBe(got.msat);
          expect(b.feesMsat).toBeGreaterThanOrEqual(250);
          expect(got.sats).toBe(Math.ceil(got.msat / 1000));
        },
      ),
      { numRuns: 200 },
    );
    const c = chatCost(pricing, 'gpt-test', 1000, 500);
    expect(c.usd).toBeCloseTo((c.msat / 1e11) * 60000, 12);
  });

  it('model: unknown model → 404 not_found; unusable rate → price_unavailable, never a free call', () => {
    const { pricing } = modelPricing();
    expectGatewayError(() => chatCost(pricing, 'nope', 1, 1), 'not_found', /^Unknown model: nope$/);
    expectGatewayError(() => pricing.modelPrice('nope'), 'not_found');
    expectGatewayError(() => chatCost(pricing, 'broken', 1, 1), 'price_unavailable');
  });

  it('model: no fresh BTC price → 503 price_unavailable; a reservation price lock still settles', () => {
    let fresh = true;
    const btc: BtcPriceSource = {
      current() {
        if (!fresh) throw new GatewayError('price_unavailable');
        return { usd: '50000', at: 0, sources: ['test'] };
      },
      peek: () => (fresh ? { usd: '50000', at: 0, sources: ['test'] } : undefined),
      refresh: async () => ({ usd: '50000', at: 0, sources: ['test'] }),
      start() {},
      close() {},
    };
    const { pricing } = modelPricing({ FIXED_COST_PER_REQUEST: '0' }, btc);
    const r = pricing.reservation({
      model: 'gpt-test',
      endpoint: 'chat',
      promptTokensBound: 100,
      maxTokens: 100,
    });
    expect(r.btcUsd).toBe('50000');
    fresh = false;
    expectGatewayError(() => chatCost(pricing, 'gpt-test', 10, 10), 'price_unavailable');
    expectGatewayError(
      () => pricing.reservation({ model: 'gpt-test', endpoint: 'chat', promptTokensBound: 1 }),
      'price_unavailable',
    );
    const settled = pricing.cost({
      model: 'gpt-test',
      endpoint: 'chat',
      usage: simpleUsage(90, 100),
      btcUsd: r.btcUsd,
    });
    expect(settled.msat).toBe(formula({ FIXED_COST_PER_REQUEST: '0' }, 'gpt-test', 90, 100, '50000'));
    expect(settled.msat).toBeLessThanOrEqual(r.maxMsat);
    // /v1/models never fails on a price outage: msat fields become null.
    expect(pricing.modelPrice('gpt-test')).toMatchObject({
      promptMsatPer1k: null,
      promptUsdPer1k: 0.002638125,
    });
  });
});

describe('reservation bounds', () => {
  const env = { FIXED_COST_PER_REQUEST: '1' };
  const { pricing } = modelPricing(env);
  const at = (p: number, c: number) => formula(env, 'gpt-test', p, c);
  /** The reservation of a gpt-test call (a chat call unless `input` names another endpoint). */
  const reserve = (input: Omit<ReservationInput, 'model' | 'endpoint'> & Partial<ReservationInput>) =>
    pricing.reservation({ model: 'gpt-test', endpoint: 'chat', ...input });

  it("the caller's max_tokens bounds the completion and is forwarded unchanged", () => {
    const r = reserve({ promptTokensBound: 500, maxTokens: 200 });
    expect(r).toMatchObject({ maxMsat: at(500, 200), minMsat: at(500, 16), maxTokens: 200, lowered: false });
    const tiny = reserve({ promptTokensBound: 5, maxTokens: 3 });
    expect(tiny.minMsat).toBe(at(5, 3));
  });

  it('without max_tokens: the whole context window bounds it; an unknown window gets a cap the provider is told', () => {
    const ctx = reserve({ promptTokensBound: 1000, contextLength: 8192 });
    // Not 8,192 − 1,000: a real prompt far below its byte bound leaves the provider room for more output.
    expect(ctx).toMatchObject({ maxMsat: at(1000, 8192), maxTokens: undefined, lowered: false });
    const def = reserve({ promptTokensBound: 1000 });
    expect(def).toMatchObject({ maxMsat: at(1000, 4096), maxTokens: 4096, lowered: true });
    // The legacy completions API's own default (16) is what such a call gets.
    const legacy = reserve({ endpoint: 'completions', promptTokensBound: 1000 });
    expect(legacy).toMatchObject({ maxMsat: at(1000, 16), maxTokens: 16, lowered: true });
  });

  it('whatever the real prompt below its bound, what the provider may bill is within the reservation', () => {
    // The provider fits prompt p and output o into the window: p ≤ bound, o ≤ context − p (or the cap it is
    // told). Its bill at the dearest rates never exceeds the reservation, with or without the caller's cap.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 1, max: 200_000 }),
        fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: undefined }),
        fc.boolean(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (pb, window, callerMax, windowKnown, share) => {
          const r = reserve({
            promptTokensBound: pb,
            maxTokens: callerMax,
            contextLength: windowKnown ? window : undefined,
          });
          const p = Math.floor(pb * share);
          const told = r.maxTokens ?? Number.POSITIVE_INFINITY;
          const room = windowKnown ? Math.max(0, window - p) : Number.POSITIVE_INFINITY;
          const o = Math.min(told, room);
          expect(Number.isFinite(o)).toBe(true);
          expect(at(p, o)).toBeLessThanOrEqual(r.maxMsat);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('lowers max_tokens to what the balance affords when the caller set none', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 0, max: 300_000 }),
        (pb, available) => {
          const r = reserve({ promptTokensBound: pb, contextLength: 128_000, availableMsat: available });
          expect(r.minMsat).toBe(at(pb, 16));
          if (at(pb, 128_000) <= available) {
            expect(r).toMatchObject({ lowered: false, maxTokens: undefined });
          } else if (r.minMsat <= available) {
            expect(r.lowered).toBe(true);
            const n = r.maxTokens!;
            expect(r.maxMsat).toBe(at(pb, n));
            expect(r.maxMsat).toBeLessThanOrEqual(available);
            expect(at(pb, n + 1)).toBeGreaterThan(available); // the most it affords
            expect(pricing.affordableMaxTokens('gpt-test', pb, available)).toBe(n);
          } else {
            // Not even a minimal answer: the caller answers 402 (minMsat > available).
            expect(r).toMatchObject({ lowered: true, maxTokens: 16 });
            expect(r.minMsat).toBeGreaterThan(available);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('affordableMaxTokens: -1 when nothing fits, Infinity when completions are free', () => {
    expect(pricing.affordableMaxTokens('gpt-test', 10, 0)).toBe(-1);
    const free = envPricing({
      FIXED_PRICING: 'false',
      FIXED_PER_1K_INPUT_TOKENS: '1',
      FIXED_PER_1K_OUTPUT_TOKENS: '0',
    });
    expect(free.affordableMaxTokens('m', 10, 1_000_000)).toBe(Number.POSITIVE_INFINITY);
    const r = free.reservation({ model: 'm', endpoint: 'chat', promptTokensBound: 10, availableMsat: 1_010 });
    // Not lowered below the cap it is told (the window is unknown): free completions fit whatever the balance.
    expect(r).toMatchObject({ maxTokens: 4096, lowered: true });
  });

  it('token pricing with one side unset is refused at start and at run time (never a silent 0)', () => {
    expect(() => loadConfig({ FIXED_PRICING: 'false', FIXED_PER_1K_INPUT_TOKENS: '5' })).toThrow(
      /FIXED_PER_1K_OUTPUT_TOKENS is not set while FIXED_PER_1K_INPUT_TOKENS is/,
    );
    expect(() => loadConfig({ FIXED_PRICING: 'false', FIXED_PER_1K_OUTPUT_TOKENS: '5' })).toThrow(
      /FIXED_PER_1K_INPUT_TOKENS is not set/,
    );
    // Flat pricing ignores the token settings, so it is not refused.
    expect(() => loadConfig({ FIXED_PRICING: 'true', FIXED_PER_1K_INPUT_TOKENS: '5' })).not.toThrow();
    // The admin settings build a pricing service first: the same half setting is refused there.
    const cfg = loadConfig({ FIXED_PRICING: 'true', FIXED_PER_1K_INPUT_TOKENS: '5' }).pricing;
    expect(() => createPricing({ config: { ...cfg, fixed: false } })).toThrow(/FIXED_PER_1K_OUTPUT_TOKENS/);
  });

  it('embeddings and other calls reserve a flat amount', () => {
    const e = reserve({ endpoint: 'embeddings', promptTokensBound: 300 });
    expect(e).toMatchObject({ maxMsat: at(300, 0), minMsat: at(300, 0) });
    const o = pricing.reservation({ model: 'not-a-model', endpoint: 'other', promptTokensBound: 300 });
    expect(o).toMatchObject({ maxMsat: 1000, minMsat: 1000 });
    const withFee = modelPricing({ FIXED_COST_PER_REQUEST: '0' }).pricing;
    const feeOnly = withFee.cost({
      model: 'req-fee',
      endpoint: 'other',
      usage: simpleUsage(99, 99),
    });
    expect(feeOnly.msat).toBe(formula({ FIXED_COST_PER_REQUEST: '0' }, 'req-fee', 0, 0));
  });
});

describe('estimate and modelPrice', () => {
  it('estimate: the cost of prompt_tokens + max_tokens, sats rounded up, breakdown in msats', () => {
    const env = { FIXED_COST_PER_REQUEST: '1' };
    const { pricing } = modelPricing(env);
    const e = pricing.estimate({ model: 'gpt-test', prompt_tokens: 1000, max_tokens: 500 });
    expect(e.estimated_cost_msats).toBe(formula(env, 'gpt-test', 1000, 500));
    expect(e.estimated_cost_sats).toBe(Math.ceil(e.estimated_cost_msats / 1000));
    expect(e.breakdown.prompt + e.breakdown.completion + e.breakdown.fees).toBe(e.estimated_cost_msats);
    // 1,000 × $0.0000025 at $60,000 = 4,166.67 msat × 1.05525 = 4,396.875 → 4,396; 500 × $0.00001 → 8,793.75
    // → 8,793; the charge 1,000 + 4,396.875 + 8,793.75 = 14,190.625 → 14,191; fees (base fee + rounding) 1,002.
    // No other dimension: the dimensions are the same three figures.
    const figures = { prompt: 4396, completion: 8793, fees: 1002 };
    expect(e.breakdown).toEqual({ ...figures, dimensions: figures });
    expect(e.estimated_cost_msats).toBe(14_191);
    // 600 of the 1,000 prompt tokens cached: gpt-test has no input_cache_read price, so they are charged at
    // the prompt rate (never free) — the same total, the cached part named apart.
    const cached = pricing.estimate({
      model: 'gpt-test',
      prompt_tokens: 1000,
      max_tokens: 500,
      cached_tokens: 600,
    });
    expect(cached.estimated_cost_msats).toBe(14_191);
    expect(cached.breakdown.dimensions).toEqual({
      prompt: 1758,
      input_cache_read: 2638,
      completion: 8793,
      fees: 1002,
    });
    expectGatewayError(
      () => pricing.estimate({ model: 'gpt-test', prompt_tokens: 10, max_tokens: 1, cached_tokens: 11 }),
      'invalid_request',
    );
    expectGatewayError(
      () => pricing.estimate({ model: 'gpt-test', prompt_tokens: -1, max_tokens: 1 }),
      'invalid_request',
    );
  });

  it('modelPrice: USD and msats per 1k tokens, multiplier included', () => {
    const { pricing } = modelPricing({ FIXED_COST_PER_REQUEST: '0' });
    const p = pricing.modelPrice('gpt-test');
    expect(p.mode).toBe('model');
    expect(p.promptUsdPer1k).toBeCloseTo(0.0025 * 1.05525, 15);
    expect(p.completionUsdPer1k).toBeCloseTo(0.01 * 1.05525, 15);
    expect(p.requestUsd).toBe(0);
    // 0.0025 USD per 1k at 60000 USD/BTC = 4166.67 msat × 1.05525 = 4396.875 → 4397
    expect(p.promptMsatPer1k).toBe(4397);
    expect(p.requestMsat).toBe(0);
    const fixed = envPricing({}).modelPrice('x');
    expect(fixed).toMatchObject({ mode: 'fixed', requestMsat: 1000, promptMsatPer1k: 0, requestUsd: null });
  });
});
