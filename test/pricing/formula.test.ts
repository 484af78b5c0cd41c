import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { priceMsat } from '../../core/pricing/formula.js';
import { parseDecimal, toDecimalString } from '../../core/pricing/rational.js';

/**
 * An independent reference of the pricing formula (docs/pricing.md), written from its words with every decimal scaled to
 * 10^18 (all inputs in these tests have at most 18 fraction digits):
 *   base USD = p/1000 × (1000·promptRate) + c/1000 × (1000·completionRate) + request fee
 *   sats = base USD / BTC × 10^8;  final = sats × EXCHANGE_FEE × UPSTREAM_PROVIDER_FEE;  msat = final × 1000
 * plus the base fee (FIXED_COST_PER_REQUEST sats), rounded up once.
 */
const S = 10n ** 18n;
function scaled(dec: string): bigint {
  const [i = '0', f = ''] = dec.split('.');
  return BigInt(i) * S + BigInt((f + '0'.repeat(18)).slice(0, 18));
}
function ceilDiv(n: bigint, d: bigint): bigint {
  return (n + d - 1n) / d;
}
function referenceModelMsat(a: {
  p: number;
  c: number;
  pr: string;
  cr: string;
  req: string;
  btc: string;
  ef: string;
  pf: string;
  base: string;
}): bigint {
  const usd = BigInt(a.p) * scaled(a.pr) + BigInt(a.c) * scaled(a.cr) + scaled(a.req); // × 10^18
  // msat = usd/10^18 × 10^8 × 1000 / (BTC/10^18) × (EF/10^18) × (PF/10^18) + BASE/10^18 × 1000
  const num1 = usd * 100_000_000_000n * scaled(a.ef) * scaled(a.pf);
  const den1 = scaled(a.btc) * S * S;
  const num = num1 * S + scaled(a.base) * 1000n * den1;
  return ceilDiv(num, den1 * S);
}
function referenceTokenMsat(p: number, c: number, inK: string, outK: string, base: string): bigint {
  // sats = base + p/1000 × inK + c/1000 × outK; msat = sats × 1000
  const num = (scaled(base) * 1000n + (BigInt(p) * scaled(inK) + BigInt(c) * scaled(outK))) * 1000n;
  return ceilDiv(num, 1000n * S);
}

/** Decimal strings with up to `scale` fraction digits. */
const decimal = (maxInt: number, scale: number) =>
  fc
    .tuple(fc.integer({ min: 0, max: maxInt }), fc.integer({ min: 0, max: 10 ** Math.min(scale, 9) - 1 }))
    .map(([i, f]) => `${i}.${String(f).padStart(Math.min(scale, 9), '0')}`.replace(/\.?0+$/, '') || '0');
const rate = fc
  .tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 4, max: 12 }))
  .map(([d, s]) => toDecimalString({ n: BigInt(d), d: 10n ** BigInt(s) }));

describe('pricing formula, exact to the msat', () => {
  it('model-based: equals the independent BigInt reference', () => {
    fc.assert(
      fc.property(
        fc.record({
          p: fc.integer({ min: 0, max: 2_000_000 }),
          c: fc.integer({ min: 0, max: 200_000 }),
          pr: rate,
          cr: rate,
          req: fc.oneof(fc.constant('0'), rate),
          btc: fc
            .tuple(fc.integer({ min: 1000, max: 500_000 }), fc.integer({ min: 0, max: 99 }))
            .map(([i, f]) => `${i}.${f}`),
          ef: fc.oneof(fc.constant('1.005'), decimal(2, 4)),
          pf: fc.oneof(fc.constant('1.05'), decimal(2, 4)),
          base: fc.oneof(fc.constant('0'), decimal(5, 3)),
        }),
        (a) => {
          const got = priceMsat({
            mode: 'model',
            costPerRequestSats: a.base,
            exchangeFee: a.ef,
            upstreamProviderFee: a.pf,
            rates: { promptUsdPerToken: a.pr, completionUsdPerToken: a.cr, requestUsd: a.req },
            btcUsd: a.btc,
            promptTokens: a.p,
            completionTokens: a.c,
          });
          expect(got).toBe(referenceModelMsat(a));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('token-based: equals the reference; fractional sats become msats', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5_000_000 }),
        fc.integer({ min: 0, max: 500_000 }),
        decimal(20, 3),
        decimal(20, 3),
        decimal(5, 3),
        (p, c, inK, outK, base) => {
          const got = priceMsat({
            mode: 'token',
            costPerRequestSats: base,
            per1kInputSats: inK,
            per1kOutputSats: outK,
            promptTokens: p,
            completionTokens: c,
          });
          expect(got).toBe(referenceTokenMsat(p, c, inK, outK, base));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fixed: the flat price, whatever the tokens; 0.5 sat is 500 msat', () => {
    for (const [sats, msat] of [
      [1, 1000n],
      [0.5, 500n],
      [0.0015, 2n],
      [0, 0n],
    ] as const) {
      expect(
        priceMsat({ mode: 'fixed', costPerRequestSats: sats, promptTokens: 123, completionTokens: 456 }),
      ).toBe(msat);
    }
  });

  it('rounds up once over the total, not per part', () => {
    // 1 prompt token at 0.5 msat + 1 completion token at 0.5 msat = exactly 1 msat (per-part rounding would give 2).
    const t = {
      mode: 'token',
      costPerRequestSats: 0,
      per1kInputSats: '0.5',
      per1kOutputSats: '0.5',
    } as const;
    expect(priceMsat({ ...t, promptTokens: 1, completionTokens: 1 })).toBe(1n);
    expect(priceMsat({ ...t, promptTokens: 1, completionTokens: 2 })).toBe(2n); // 1.5 → 2
  });

  it('the worked example of docs/pricing.md', () => {
    const example = {
      mode: 'model',
      exchangeFee: 1.005,
      upstreamProviderFee: 1.05,
      rates: { promptUsdPerToken: '0.0000025', completionUsdPerToken: '0.00001', requestUsd: '0' },
      btcUsd: '60000',
      promptTokens: 1000,
      completionTokens: 500,
    } as const;
    // 0.0075 USD = 12.5 sats = 12500 msat; × 1.05525 = 13190.625 → 13191; + 1 sat base fee = 14191.
    expect(priceMsat({ ...example, costPerRequestSats: 0 })).toBe(13191n);
    expect(priceMsat({ ...example, costPerRequestSats: 1 })).toBe(14191n);
  });

  it('numbers from the environment are read exactly (1.005 is not 1.00499999…)', () => {
    expect(parseDecimal(1.005)).toEqual({ n: 201n, d: 200n });
    expect(parseDecimal('1e-7')).toEqual({ n: 1n, d: 10_000_000n });
    expect(() => parseDecimal('-1')).toThrow(RangeError);
    expect(() => parseDecimal('abc')).toThrow(RangeError);
  });
});
