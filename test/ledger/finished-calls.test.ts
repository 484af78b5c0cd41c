import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Finished, FinishedCalls } from '../../core/ledger/finished-calls.js';
import { RecentIds } from '../../core/ledger/recent-ids.js';

/**
 * core/ledger/finished-calls.ts: the lease manager's memory of the last N calls it finished, for idempotent
 * repeats. Whatever the sequence, it holds exactly the last N distinct ids and answers each with the numbers it
 * was given (msat amounts up to 2^53 - 1 kept exactly).
 */
const amount = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constant(Number.MAX_SAFE_INTEGER));

const result = (id: string) =>
  fc.oneof(
    fc.record({ chargedMsat: amount, releasedMsat: amount, overrunMsat: amount, balanceMsat: amount }).map(
      (n): Finished => ({
        ok: true,
        status: 'settled',
        replay: false,
        ...n,
        transactionId: `lease:${id}`,
      }),
    ),
    amount.map((releasedMsat): Finished => ({ ok: true, status: 'released', replay: false, releasedMsat })),
  );

describe('FinishedCalls', () => {
  it('holds the last `capacity` ids finished and answers each exactly as given', () => {
    const step = fc
      .integer({ min: 0, max: 40 })
      .chain((n) => result(`r~${n}`).map((r) => ({ id: `r~${n}`, r })));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(step, { maxLength: 200 }), (capacity, steps) => {
        const f = new FinishedCalls(capacity);
        // The reference: ids in the order first finished (a repeat is written again in place), the last
        // `capacity` of them kept.
        const order: string[] = [];
        const answers = new Map<string, Finished>();
        for (const { id, r } of steps) {
          f.set(id, r);
          if (!answers.has(id)) {
            order.push(id);
            if (order.length > capacity) answers.delete(order.shift()!);
          }
          answers.set(id, r);
          expect(f.size).toBe(answers.size);
        }
        for (let n = 0; n <= 40; n++) {
          const id = `r~${n}`;
          expect(f.has(id)).toBe(answers.has(id));
          expect(f.get(id)).toEqual(answers.get(id));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a full memory over many turns of the ring: the newest kept, the older forgotten', () => {
    const f = new FinishedCalls(1000);
    for (let i = 0; i < 25_000; i++) {
      f.set(`r~${i}`, { ok: true, status: 'released', replay: false, releasedMsat: i });
    }
    expect(f.size).toBe(1000);
    expect(f.get('r~23999')).toBeUndefined();
    expect(f.get('r~24000')).toEqual({ ok: true, status: 'released', replay: false, releasedMsat: 24000 });
    expect(f.get('r~24999')).toMatchObject({ releasedMsat: 24999 });
  });

  it('refuses a settle whose transaction id is not the call’s lease id (the answer could not be rebuilt)', () => {
    const f = new FinishedCalls(4);
    const r: Finished = {
      ok: true,
      status: 'settled',
      replay: false,
      chargedMsat: 1,
      releasedMsat: 0,
      overrunMsat: 0,
      balanceMsat: 5,
      transactionId: 'acct-7',
    };
    expect(() => f.set('r~1', r)).toThrow(/not the call's lease id/);
    expect(f.has('r~1')).toBe(false);
  });
});

describe('RecentIds', () => {
  it('holds the last `capacity` distinct ids added, each with its own slot, kept while it is held', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 300 }),
        (capacity, adds) => {
          const r = new RecentIds(capacity);
          const order: string[] = [];
          const slots = new Map<string, number>();
          for (const n of adds) {
            const id = `r~${n}`;
            const slot = r.add(id);
            expect(slot).toBeGreaterThanOrEqual(0);
            expect(slot).toBeLessThan(capacity);
            if (slots.has(id)) expect(slot).toBe(slots.get(id));
            else {
              order.push(id);
              if (order.length > capacity) slots.delete(order.shift()!);
              slots.set(id, slot);
            }
            expect(r.size).toBe(order.length);
            // No two held ids share a slot.
            expect(new Set(slots.values()).size).toBe(slots.size);
          }
          for (let n = 0; n <= 40; n++) {
            const id = `r~${n}`;
            expect(r.has(id)).toBe(slots.has(id));
            expect(r.slotOf(id)).toBe(slots.get(id));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
