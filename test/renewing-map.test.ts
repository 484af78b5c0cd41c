import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RenewingMap } from '../core/renewing-map.js';

/**
 * core/renewing-map.ts: a Map that moves its entries to a new one every so many deletes must read exactly as a
 * plain Map does, through every renewal. (What it is for, old-generation garbage, is measured in bench/:
 * bench/profile/map-churn.ts and scavenges.sh, not asserted here.)
 */
describe('RenewingMap', () => {
  it('answers get, has, size, delete, firstKey and iteration as a Map, for any sequence of sets and deletes', () => {
    const op = fc.oneof(
      fc.record({ set: fc.integer({ min: 0, max: 30 }), value: fc.integer() }),
      fc.record({ del: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ delFirst: fc.constant(true) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 300 }), (renewAfter, ops) => {
        const r = new RenewingMap<number, number>(renewAfter);
        const m = new Map<number, number>();
        for (const o of ops) {
          if ('set' in o) {
            expect(r.set(o.set, o.value)).toBe(r);
            m.set(o.set, o.value);
          } else if ('del' in o) {
            expect(r.delete(o.del)).toBe(m.delete(o.del));
          } else {
            const first = m.keys().next().value;
            expect(r.firstKey()).toBe(first);
            if (first !== undefined) expect(r.delete(first)).toBe(m.delete(first));
          }
          expect(r.size).toBe(m.size);
        }
        // Insertion order survives the renewals (a key set again keeps its place, as in a Map).
        expect([...r]).toEqual([...m]);
        expect([...r.keys()]).toEqual([...m.keys()]);
        for (let k = 0; k <= 30; k++) {
          expect(r.has(k)).toBe(m.has(k));
          expect(r.get(k)).toBe(m.get(k));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps its entries across many renewals of a busy table (the lease manager’s use: a set and a delete per call)', () => {
    const r = new RenewingMap<string, number>(16);
    const live: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      const id = `r~${i}`;
      r.set(id, i);
      live.push(id);
      if (live.length > 20) expect(r.delete(live.shift()!)).toBe(true);
    }
    expect(r.size).toBe(20);
    expect([...r.keys()]).toEqual(live);
    expect(r.get('r~9999')).toBe(9999);
    expect(r.get('r~0')).toBeUndefined();
    expect(r.delete('r~0')).toBe(false);
  });
});
