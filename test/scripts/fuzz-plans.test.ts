import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  documentedOperations,
  type FuzzPlan,
  planArbitrary,
  UWS_LIMITS,
  uwsKnownLimit,
} from '../../scripts/fuzz/requests.js';

/**
 * The fuzzer's plan generator (scripts/fuzz/requests.ts): with the uWS limits it never draws a plan the uWS
 * parser drops, and still draws every other value of every limited field; without limits it draws the limited
 * values too. (A run against uWS used to draw every plan and drop the 9 in 10 it could not send.)
 */
describe('fuzz plan generator', () => {
  const ops = documentedOperations();
  const seen = (plans: FuzzPlan[], field: 'headerTrick' | 'pathTrick' | 'framing' | 'method') =>
    new Set(plans.map((p) => p[field]).filter((v) => v !== undefined));

  it('with the uWS limits: no limited plan, every other value of each limited field, every operation', () => {
    const plans = fc.sample(planArbitrary(ops, UWS_LIMITS), { numRuns: 1500, seed: 7 });
    expect(plans.filter(uwsKnownLimit)).toEqual([]);
    expect([...seen(plans, 'headerTrick')].sort()).toEqual(['dup-auth', 'dup-host', 'none']);
    expect([...seen(plans, 'pathTrick')].sort()).toEqual([
      'dot-segment',
      'encoded-dot',
      'encoded-slash',
      'none',
    ]);
    expect([...seen(plans, 'framing')].sort()).toEqual(['cl', 'cl-dup', 'cl-short']);
    expect([...seen(plans, 'method')].sort()).toEqual(['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT']);
    expect(new Set(plans.map((p) => p.op)).size).toBe(ops.length);
  });

  it('without limits: the limited values are drawn too', () => {
    const plans = fc.sample(planArbitrary(ops), { numRuns: 1500, seed: 7 });
    for (const field of ['headerTrick', 'pathTrick', 'framing', 'method'] as const) {
      for (const v of UWS_LIMITS[field]) expect(seen(plans, field)).toContain(v);
    }
  });

  it('limits that leave a field no value are refused', () => {
    expect(() =>
      planArbitrary(ops, {
        framing: ['cl', 'cl-short', 'cl-dup', 'cl-te', 'chunked', 'te-list', 'te-unknown'],
      }),
    ).toThrow(/without values/);
  });
});
