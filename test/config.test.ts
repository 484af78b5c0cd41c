import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../core/config.js';
import { simpleUsage } from '../core/metering/usage.js';
import { createBtcPriceSource } from '../core/pricing/btc-price.js';
import { createPricing } from '../core/pricing/pricing.js';

describe('loadConfig', () => {
  it('applies the documented defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8000);
    expect(c.maxBodyBytes).toBe(10 * 1024 * 1024);
    expect(c.limits).toEqual({ requestsPerMinute: 1000, tokensPerHour: 1_000_000, concurrent: 10 });
    expect(c.pricing.exchangeFee).toBe(1.005);
    expect(c.pricing.upstreamProviderFee).toBe(1.05);
    expect(c.redis).toBeUndefined();
  });

  it('names the variable on bad values and never echoes secrets', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ HTTP_ENGINE: 'express' })).toThrow(ConfigError);
    expect(() => loadConfig({ FIXED_PRICING: 'maybe' })).toThrow(/FIXED_PRICING/);
    expect(() => loadConfig({ CASHU_MINTS: 'not a url' })).toThrow(/CASHU_MINTS/);
    let message = '';
    try {
      loadConfig({ UPSTREAM_BASE_URL: 'secret-sk-abc' });
    } catch (e) {
      message = String(e);
    }
    // It must fail (naming the variable) AND not echo the value.
    expect(message).toMatch(/UPSTREAM_BASE_URL/);
    expect(message).not.toContain('secret-sk-abc');
  });

  it('parses lists and strips trailing slashes from URLs', () => {
    const c = loadConfig({ CASHU_MINTS: 'http://a:1/, http://b:2', UPSTREAM_BASE_URL: 'http://u/v1/' });
    expect(c.cashu.mints).toEqual(['http://a:1', 'http://b:2']);
    expect(c.upstreamBaseUrl).toBe('http://u/v1');
  });

  it('FIXED_COST_PER_REQUEST: unset, 0 in model pricing and 1 in fixed and token pricing; set, the value given', () => {
    const fee = (env: Record<string, string>) => loadConfig(env).pricing.costPerRequestSats;
    const MODEL = { FIXED_PRICING: 'false' };
    const TOKEN = {
      FIXED_PRICING: 'false',
      FIXED_PER_1K_INPUT_TOKENS: '7',
      FIXED_PER_1K_OUTPUT_TOKENS: '13',
    };
    expect(fee(MODEL)).toBe(0);
    expect(fee(TOKEN)).toBe(1);
    expect(fee({})).toBe(1);
    expect(fee({ ...MODEL, FIXED_COST_PER_REQUEST: '3' })).toBe(3);
    expect(fee({ ...MODEL, FIXED_COST_PER_REQUEST: '0.25' })).toBe(0.25);
    expect(fee({ ...TOKEN, FIXED_COST_PER_REQUEST: '0' })).toBe(0);
    expect(() => fee({ ...MODEL, FIXED_COST_PER_REQUEST: '-1' })).toThrow(/FIXED_COST_PER_REQUEST/);
    // And the charge follows it: model pricing at $100,000 per BTC, fees 1, $0.000001 / $0.000002 per token,
    // 10 prompt + 5 completion tokens = 20 msat, + the base fee only when set (3 sats = 3,000 msat).
    const rates = () => ({
      promptUsdPerToken: '0.000001',
      completionUsdPerToken: '0.000002',
      requestUsd: '0',
    });
    const charge = (env: Record<string, string>) => {
      const config = loadConfig({
        ...MODEL,
        BTC_USD_PRICE: '100000',
        EXCHANGE_FEE: '1',
        UPSTREAM_PROVIDER_FEE: '1',
        ...env,
      }).pricing;
      const pricing = createPricing({ config, rates, btc: createBtcPriceSource({ config }) });
      return pricing.cost({ model: 'm', endpoint: 'chat', usage: simpleUsage(10, 5) }).msat;
    };
    expect(charge({})).toBe(20);
    expect(charge({ FIXED_COST_PER_REQUEST: '3' })).toBe(3020);
    // Token pricing, unset: 1 sat a call + 10 × 7 + 5 × 13 msat.
    const token = createPricing({ config: loadConfig(TOKEN).pricing });
    expect(token.cost({ model: 'm', endpoint: 'chat', usage: simpleUsage(10, 5) }).msat).toBe(1000 + 70 + 65);
  });
});
