import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adjustedPrice } from '../../core/context.js';
import { inWholeUnits } from '../../plugins/paid-state.js';
import { unadjustedBudget } from '../../plugins/reserve.js';

/**
 * The budget behind `affordable_max_tokens` and the clamp (plugins/reserve.ts): the largest price before a
 * pricing policy's adjustment and the X-Cashu charge step whose reserved amount still fits the balance.
 */
describe('unadjustedBudget', () => {
  it('is the balance itself without an adjustment or step, the last whole step with one', () => {
    expect(unadjustedBudget(10_000, undefined, undefined)).toBe(10_000);
    expect(unadjustedBudget(10_999, undefined, 1000)).toBe(10_000);
    expect(unadjustedBudget(10_000.7, undefined, undefined)).toBe(10_000);
  });

  it('undoes a multiplier and an added fee: × 2 + 100 msat on 10,000 leaves 4,950', () => {
    expect(unadjustedBudget(10_000, { multiplierPpm: 2_000_000, addMsat: 100 }, undefined)).toBe(4950);
    expect(unadjustedBudget(50, { addMsat: 100 }, undefined)).toBe(-1);
  });

  it('is the largest price whose adjusted, stepped amount fits (fast-check against the forward rule)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.option(fc.integer({ min: 1, max: 5_000_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: -5000, max: 5000 }), { nil: undefined }),
        fc.option(fc.constantFrom(1, 1000), { nil: undefined }),
        (available, ppm, add, step) => {
          const a = ppm === undefined && add === undefined ? undefined : { multiplierPpm: ppm, addMsat: add };
          const price = (m: number) => inWholeUnits(adjustedPrice(m, a), step);
          const b = unadjustedBudget(available, a, step);
          if (b >= 0) expect(price(b)).toBeLessThanOrEqual(available);
          expect(price(b + 1)).toBeGreaterThan(available);
        },
      ),
    );
  });
});
