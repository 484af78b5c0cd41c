import fc from 'fast-check';
import { expect } from 'vitest';
import type { Ledger } from '../../../core/ledger/types.js';
import { admitInput, BIG, settleInput } from './conformance.js';

/**
 * The property both batching stores must keep (SQLite's group commit, Redis's batched exact path): rounds of
 * steps asked for together answer exactly like the same steps run one at a time, and leave the same balances,
 * usage and a clean audit. Three keys, ten request ids per key, so steps of one round often meet.
 */

export type RoundOp =
  | { t: 'admit'; key: number; req: number; max: number; min: number }
  | { t: 'settle'; key: number; req: number; cost: number }
  | { t: 'release'; key: number; req: number }
  | { t: 'count'; key: number };

export interface RoundsSide {
  ledger: Ledger;
  keys: Array<{ apiKey: string; accountId: string }>;
}

/** Rounds of 1–12 steps, 1–5 rounds; request counts (`count`) only where the store batches them. */
export function roundsOf(withCount: boolean): fc.Arbitrary<RoundOp[][]> {
  const steps: Array<fc.Arbitrary<RoundOp>> = [
    fc.record({
      t: fc.constant('admit' as const),
      key: fc.nat(2),
      req: fc.nat(9),
      max: fc.integer({ min: 1, max: 4_000 }),
      min: fc.integer({ min: 0, max: 2_000 }),
    }),
    fc.record({
      t: fc.constant('settle' as const),
      key: fc.nat(2),
      req: fc.nat(9),
      cost: fc.integer({ min: 0, max: 5_000 }),
    }),
    fc.record({ t: fc.constant('release' as const), key: fc.nat(2), req: fc.nat(9) }),
  ];
  if (withCount) steps.push(fc.record({ t: fc.constant('count' as const), key: fc.nat(2) }));
  return fc.array(fc.array(fc.oneof(...steps), { minLength: 1, maxLength: 12 }), {
    minLength: 1,
    maxLength: 5,
  });
}

const NOW = 1_800_000_000_000;

function runOp(side: RoundsSide, o: RoundOp): Promise<object> {
  const { ledger: l, keys } = side;
  const k = keys[o.key]!;
  if (o.t === 'count')
    return l.countRequest({ credential: { apiKey: k.apiKey }, requestsPerMinute: 5, now: NOW });
  const requestId = `r${o.key}-${o.req}`;
  if (o.t === 'admit')
    return l.admit(
      admitInput(k.apiKey, {
        requestId,
        maxMsat: Math.max(o.max, o.min),
        minMsat: o.min,
        expiresInMs: 60_000,
        limits: BIG,
        now: NOW,
      }),
    );
  if (o.t === 'settle')
    return l.settle(settleInput({ accountId: k.accountId, requestId }, { costMsat: o.cost, now: NOW }));
  return l.release({ accountId: k.accountId, requestId, now: NOW });
}

/** An answer without what differs between two stores by construction (ids). */
function shape(r: object): object {
  const { transactionId: _t, accountId: _a, key: _k, ...rest } = r as Record<string, unknown>;
  return rest;
}

/** Plays `plan` on both sides (`together`: each round at once; `single`: one step at a time) and compares. */
export async function playRounds(plan: RoundOp[][], together: RoundsSide, single: RoundsSide): Promise<void> {
  for (const round of plan) {
    const a = await Promise.all(round.map((o) => runOp(together, o)));
    const b = [];
    for (const o of round) b.push(await runOp(single, o));
    expect(a.map(shape)).toEqual(b.map(shape));
  }
  for (let i = 0; i < together.keys.length; i++) {
    const x = await together.ledger.getKeyInfo({ apiKey: together.keys[i]!.apiKey });
    const y = await single.ledger.getKeyInfo({ apiKey: single.keys[i]!.apiKey });
    expect([x?.account.balanceMsat, x?.account.reservedMsat, x?.usage]).toEqual([
      y?.account.balanceMsat,
      y?.account.reservedMsat,
      y?.usage,
    ]);
  }
  expect((await together.ledger.checkConservation()).ok).toBe(true);
}
