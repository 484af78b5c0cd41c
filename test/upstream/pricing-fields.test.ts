import { describe, expect, it } from 'vitest';
import { parsePricing } from '../../core/upstream/model-catalog.js';

/** models.json `pricing` (and a provider's, parsed the same way): what the pricing service cannot use is refused
 *  at load with a message naming the field, never at call time. */
describe('price book fields at load', () => {
  it('a service tier multiplier must be a decimal > 0 the pricing service parses', () => {
    expect(parsePricing({ prompt: '0.000001', service_tiers: { flex: 0.5, priority: '2' } })).toMatchObject({
      service_tiers: { flex: '0.5', priority: '2' },
    });
    for (const m of ['0', 0, '1e-999', 'fast', null, -1]) {
      expect(parsePricing({ prompt: '0.000001', service_tiers: { flex: m } }), String(m)).toBe(
        'service_tiers.flex must be a decimal string > 0 (a multiplier, e.g. "0.5")',
      );
    }
  });

  it('a price whose exponent the pricing service cannot parse is refused, not priced at call time', () => {
    expect(parsePricing({ prompt: '1e-7', completion: '2e-7' })).toMatchObject({ prompt: '1e-7' });
    expect(parsePricing({ prompt: '1e-999' })).toBe('prompt must be a decimal string (USD)');
    expect(parsePricing({ prompt: '0.000001', web_search: `0.${'1'.repeat(70)}` })).toBe(
      'web_search must be a decimal string (USD)',
    );
  });
});
