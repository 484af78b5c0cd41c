import { describe, expect, it } from 'vitest';
import { orphanReport } from '../../core/ledger/owner.js';

/** A restart warns "released what stopped processes held" only when something was released. */
describe('orphanReport', () => {
  it('leases released: a warning', () => {
    expect(orphanReport({ processes: 1, released: 2 })).toEqual({
      level: 'warn',
      msg: 'released what stopped processes held',
    });
  });
  it('stopped processes that held nothing (a clean restart): info, not a warning', () => {
    expect(orphanReport({ processes: 1, released: 0 })).toEqual({
      level: 'info',
      msg: 'forgot stopped processes (they held nothing)',
    });
  });
  it('nothing found: nothing logged', () => {
    expect(orphanReport({ processes: 0, released: 0 })).toBeUndefined();
  });
});
