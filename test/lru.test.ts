import fc from 'fast-check';
import { LRUCache } from 'lru-cache';
import { describe, expect, it } from 'vitest';
import { lazyLru } from '../core/lru.js';

/** core/lru.ts: a count-bounded LRU without preallocation keeps lru-cache's `max` semantics. */
describe('lazyLru', () => {
  it('holds at most `count` entries and evicts as lru-cache with `max` does, for any sequence of sets and gets', () => {
    const op = fc.oneof(
      fc.record({ set: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ get: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ del: fc.integer({ min: 0, max: 40 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(op, { maxLength: 200 }), (count, ops) => {
        const lazy = lazyLru<number, number>(count);
        const eager = new LRUCache<number, number>({ max: count });
        for (const o of ops) {
          if ('set' in o) {
            lazy.set(o.set, o.set * 2);
            eager.set(o.set, o.set * 2);
          } else if ('get' in o) expect(lazy.get(o.get)).toBe(eager.get(o.get));
          else expect(lazy.delete(o.del)).toBe(eager.delete(o.del));
          expect(lazy.size).toBeLessThanOrEqual(count);
          expect([...lazy.keys()]).toEqual([...eager.keys()]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('passes its other options through (a TTL on a given clock)', () => {
    let now = 1_000;
    const c = lazyLru<string, number>(10, { ttl: 100, perf: { now: () => now }, ttlResolution: 0 });
    c.set('a', 1);
    now += 99;
    expect(c.get('a')).toBe(1);
    now += 2;
    expect(c.get('a')).toBeUndefined();
  });
});
