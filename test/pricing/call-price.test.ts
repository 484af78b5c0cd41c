import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { emptyUsage, type Usage } from '../../core/metering/usage.js';
import { createBtcPriceSource } from '../../core/pricing/btc-price.js';
import { type CallBound, callMsat } from '../../core/pricing/call-price.js';
import { DIMENSIONS } from '../../core/pricing/dimensions.js';
import { createPricing } from '../../core/pricing/pricing.js';
import { modelCard, type RateCard } from '../../core/pricing/rate-card.js';
import type { UsdRates } from '../../core/pricing/types.js';
import { BOOK_PRICES, TOKEN_PRICES } from '../support/prices.js';

/**
 * Reserve and settle price a token-metered call with one function (core/pricing/call-price.ts `callMsat`): the
 * reservation its bound, the charge the usage reported. As properties, over generated price books, bounds and
 * usages: a usage within the bound never costs more than the bound, and the bound's own token counts, put in the
 * dearest dimensions, cost exactly the bound.
 */

/** The token dimensions a bound covers (hosted tools are bounded per declared call, not per token). */
const TOKEN_DIMS = DIMENSIONS.map((d, i) => ({ ...d, i })).filter((d) => !('tool' in d));
const INPUT = TOKEN_DIMS.filter((d) => d.direction === 'input');
const OUTPUT = TOKEN_DIMS.filter((d) => d.direction === 'output');

/** A USD price per token: up to 6 significant digits at 10⁻⁹ … 10⁻⁴. */
const usdPrice = fc
  .tuple(fc.integer({ min: 0, max: 999_999 }), fc.integer({ min: 4, max: 9 }))
  .map(([n, e]) => (n / 10 ** (e + 6)).toFixed(e + 6));

/** A price book entry: base rates, some dimensions of their own, a per-call price, service tiers. */
const rates: fc.Arbitrary<UsdRates> = fc.record({
  promptUsdPerToken: usdPrice,
  completionUsdPerToken: usdPrice,
  requestUsd: fc.constantFrom('0', '0.00002', '0.0003'),
  dimensions: fc.record(
    {
      input_cache_read: usdPrice,
      input_cache_write: usdPrice,
      input_audio: usdPrice,
      input_image: usdPrice,
      internal_reasoning: usdPrice,
      output_audio: usdPrice,
      web_search: fc.constantFrom('0.01', '0.025', '0'),
    },
    { requiredKeys: [] },
  ),
  serviceTiers: fc.constant({ flex: '0.5', priority: '2' }),
});

/** `total` split into `parts` non-negative counts. */
function split(total: number, parts: number): fc.Arbitrary<number[]> {
  return fc
    .array(fc.integer({ min: 0, max: total }), { minLength: parts - 1, maxLength: parts - 1 })
    .map((cuts) => {
      const s = [0, ...cuts.sort((a, b) => a - b), total];
      return s.slice(1).map((v, i) => v - s[i]!);
    });
}

/** A bound and a usage within it: at most its prompt tokens over the input dimensions, at most its cap over
 *  the output ones, at most its web search calls. */
const boundAndUsage = fc
  .record({
    promptTokens: fc.integer({ min: 0, max: 200_000 }),
    completionTokens: fc.integer({ min: 0, max: 100_000 }),
    webSearchCalls: fc.integer({ min: 0, max: 3 }),
  })
  .chain((bound) =>
    fc
      .record({
        inputs: fc.integer({ min: 0, max: bound.promptTokens }).chain((n) => split(n, INPUT.length)),
        outputs: fc.integer({ min: 0, max: bound.completionTokens }).chain((n) => split(n, OUTPUT.length)),
        webSearch: fc.integer({ min: 0, max: bound.webSearchCalls }),
      })
      .map(({ inputs, outputs, webSearch }) => {
        const usage: Usage = emptyUsage();
        INPUT.forEach((d, k) => {
          usage[d.field] = inputs[k]!;
        });
        OUTPUT.forEach((d, k) => {
          usage[d.field] = outputs[k]!;
        });
        usage.webSearch = webSearch;
        return { bound: bound as CallBound, usage };
      }),
  );

/** A card at BTC $50,000 … $150,000 with the node's fee and a base fee of 0 … 2,000 msat. */
const card: fc.Arbitrary<RateCard> = fc
  .record({
    rates,
    btc: fc.integer({ min: 50_000, max: 150_000 }),
    fee: fc.constantFrom(1n, 2n),
    base: fc.constantFrom(0n, 1000n, 2000n),
  })
  .map(({ rates, btc, fee, base }) =>
    modelCard(rates, { n: 100_000_000_000n * fee, d: BigInt(btc) }, { n: base, d: 1n }, false),
  );

/** The multiplier both sides use: none, a discount, a surcharge. */
const multiplier = fc.constantFrom(undefined, { n: 1n, d: 2n }, { n: 2n, d: 1n }, { n: 3n, d: 2n });

/** The bound's counts in the dearest input and output dimensions of `c`. */
function dearestUsage(c: RateCard, bound: CallBound): Usage {
  const usage = emptyUsage();
  const dearest = (dims: typeof TOKEN_DIMS) =>
    dims.reduce((best, d) => (c.u[d.i]! > c.u[best.i]! ? d : best), dims[0]!);
  usage[dearest(INPUT).field] += bound.promptTokens;
  usage[dearest(OUTPUT).field] += bound.completionTokens;
  usage.webSearch = bound.webSearchCalls;
  return usage;
}

describe('one price function for the reservation and the charge (callMsat)', () => {
  it('a usage within the bound costs at most the bound, at any multiplier (fast-check)', () => {
    fc.assert(
      fc.property(card, boundAndUsage, multiplier, (c, { bound, usage }, m) => {
        expect(callMsat(c, { usage }, m)).toBeLessThanOrEqual(callMsat(c, { bound }, m));
      }),
      { numRuns: 2000 },
    );
  });

  it("the bound's own token counts cost exactly the bound (fast-check)", () => {
    fc.assert(
      fc.property(card, boundAndUsage, multiplier, (c, { bound }, m) => {
        expect(callMsat(c, { usage: dearestUsage(c, bound) }, m)).toBe(callMsat(c, { bound }, m));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("the pricing service: settle's cost never above reserve's bound", () => {
  const models: Record<string, UsdRates> = {};
  const pricingAt = (env: Record<string, string>) => {
    const config = loadConfig(env).pricing;
    return createPricing({ config, rates: (m) => models[m], btc: createBtcPriceSource({ config }) });
  };
  const book = pricingAt(BOOK_PRICES);
  const token = pricingAt(TOKEN_PRICES);
  // Token pricing knows no tiers (one asked for is refused): the standard price only.
  const tiers = {
    model: fc.constantFrom(undefined, 'default', 'flex', 'priority'),
    token: fc.constantFrom(undefined, 'default'),
  };

  for (const [mode, pricing] of [
    ['model', book],
    ['token', token],
  ] as const) {
    it(`${mode} pricing: cost(usage within the bound, the tier asked for) ≤ reservation(bound).maxMsat; equal for the bound's counts (fast-check)`, () => {
      let n = 0;
      fc.assert(
        fc.property(rates, boundAndUsage, tiers[mode], (book, { bound, usage }, serviceTier) => {
          const model = `m${n++}`;
          // A web search price always (a call declaring the tool is refused without one).
          const r = { ...book, dimensions: { web_search: '0.01', ...book.dimensions } };
          models[model] = r;
          const reserved = pricing.reservation({
            model,
            endpoint: 'chat',
            promptTokensBound: bound.promptTokens,
            maxTokens: bound.completionTokens,
            webSearchCalls: bound.webSearchCalls,
            serviceTier,
          });
          // Token pricing prices no web search: the bound and the charge both leave it out.
          const charged = pricing.cost({
            model,
            endpoint: 'chat',
            usage: { ...usage, ...(mode === 'token' ? { webSearch: 0 } : {}), serviceTier },
            btcUsd: reserved.btcUsd,
          });
          expect(charged.msat).toBeLessThanOrEqual(reserved.maxMsat);
          if (serviceTier === undefined || serviceTier === 'default') {
            // The same token counts in the dearest dimensions: the charge is the reservation, to the msat.
            const usd = r.dimensions ?? {};
            const inPrices = [
              r.promptUsdPerToken,
              usd.input_cache_read,
              usd.input_cache_write,
              usd.input_audio,
              usd.input_image,
            ];
            const outPrices = [r.completionUsdPerToken, usd.internal_reasoning, usd.output_audio];
            const argmax = (ps: (string | undefined)[]) =>
              ps.reduce((b, p, i) => (p !== undefined && Number(p) > Number(ps[b] ?? -1) ? i : b), 0);
            const same = emptyUsage();
            const inFields = ['input', 'cacheRead', 'cacheWrite', 'inputAudio', 'inputImage'] as const;
            const outFields = ['output', 'reasoning', 'outputAudio'] as const;
            same[mode === 'token' ? 'input' : inFields[argmax(inPrices)]!] = bound.promptTokens;
            same[mode === 'token' ? 'output' : outFields[argmax(outPrices)]!] = bound.completionTokens;
            same.webSearch = mode === 'token' ? 0 : bound.webSearchCalls;
            const exact = pricing.cost({ model, endpoint: 'chat', usage: same, btcUsd: reserved.btcUsd });
            if (mode === 'model' || bound.webSearchCalls === 0) expect(exact.msat).toBe(reserved.maxMsat);
          }
          delete models[model];
        }),
        { numRuns: 2000 },
      );
    });
  }
});
