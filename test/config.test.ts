import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../core/config.js';

describe('loadConfig', () => {
  it('applies the spec defaults with an empty environment', () => {
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
});
