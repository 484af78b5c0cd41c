import { describe, expect, expectTypeOf, it } from 'vitest';
import { DIMENSIONS } from '../../core/pricing/dimensions.js';
import type { DimensionKey } from '../../core/pricing/types.js';

/**
 * The dimension keys are written out in core/pricing/types.ts (so that the pipeline names them without reaching
 * the pricing modules) and listed with their usage field in core/pricing/dimensions.ts: the two must agree.
 */
describe('the priced dimensions', () => {
  it('DIMENSIONS has one row per DimensionKey, no more, no less (checked by the type check)', () => {
    expectTypeOf<(typeof DIMENSIONS)[number]['key']>().toEqualTypeOf<DimensionKey>();
    expect(new Set(DIMENSIONS.map((d) => d.key)).size).toBe(DIMENSIONS.length);
  });
});
