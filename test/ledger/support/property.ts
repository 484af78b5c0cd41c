import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Admission, Ledger } from '../../../core/ledger/types.js';
import { admitInput, type Ctx, holdInput, settleInput, T0 } from './conformance.js';
import { randomTokenHash } from './harness.js';

type Op =
  | { t: 'credit'; who: number; amount: number }
  | { t: 'admit'; who: number; max: number; min: number; lease: number }
  | { t: 'settle'; which: number; cost: number }
  | { t: 'release'; which: number }
  | { t: 'hold'; who: number; amount: number }
  | { t: 'commit'; which: number }
  | { t: 'abort'; which: number }
  | { t: 'child'; who: number; fee: number; limit: number }
  | { t: 'tick'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('credit' as const), who: fc.nat(3), amount: fc.integer({ min: 1, max: 5000 }) }),
  fc.record({
    t: fc.constant('admit' as const),
    who: fc.nat(7),
    max: fc.nat(3000),
    min: fc.nat(500),
    lease: fc.integer({ min: 1, max: 5000 }),
  }),
  fc.record({ t: fc.constant('settle' as const), which: fc.nat(50), cost: fc.nat(4000) }),
  fc.record({ t: fc.constant('release' as const), which: fc.nat(50) }),
  fc.record({ t: fc.constant('hold' as const), who: fc.nat(3), amount: fc.integer({ min: 1, max: 3000 }) }),
  fc.record({ t: fc.constant('commit' as const), which: fc.nat(20) }),
  fc.record({ t: fc.constant('abort' as const), which: fc.nat(20) }),
  fc.record({
    t: fc.constant('child' as const),
    who: fc.nat(3),
    fee: fc.nat(300),
    limit: fc.integer({ min: 1, max: 2000 }),
  }),
  fc.record({ t: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 4000 }) }),
);

/** Model-free property: whatever sequence runs, every account keeps 0 ≤ reserved ≤ balance and the audit passes. */
async function runSequence(ledger: Ledger, ops: Op[]): Promise<void> {
  let now = T0;
  const parents: Array<{ apiKey: string; accountId: string }> = [];
  for (let i = 0; i < 4; i++) {
    const r = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: 1000, now });
    if (!r.ok) throw new Error(r.code);
    parents.push({ apiKey: r.apiKey, accountId: r.key.accountId });
  }
  const keys = parents.map((p) => p.apiKey);
  const adm: Admission[] = [];
  const holds: Array<{ accountId: string; holdId: string }> = [];
  const limits = { requestsPerMinute: 1000, tokensPerHour: 1_000_000, concurrent: 10 };
  for (const o of ops) {
    switch (o.t) {
      case 'credit':
        await ledger.credit({
          credential: { apiKey: parents[o.who]!.apiKey },
          tokenHash: randomTokenHash(),
          amountMsat: o.amount,
          kind: 'topup',
          now,
        });
        break;
      case 'admit': {
        const key = keys[o.who % keys.length]!;
        const r = await ledger.admit(
          admitInput(key, {
            maxMsat: Math.max(o.max, o.min),
            minMsat: o.min,
            expiresInMs: o.lease,
            limits,
            now,
          }),
        );
        if (r.ok) adm.push(r);
        break;
      }
      case 'settle': {
        const a = adm[o.which % Math.max(1, adm.length)];
        if (a)
          await ledger.settle(
            settleInput(a, { costMsat: o.cost, promptTokens: 1, completionTokens: 1, description: 'p', now }),
          );
        break;
      }
      case 'release': {
        const a = adm[o.which % Math.max(1, adm.length)];
        if (a) await ledger.release({ accountId: a.accountId, requestId: a.requestId, now });
        break;
      }
      case 'hold': {
        const p = parents[o.who]!;
        const holdId = `h${holds.length}`;
        const r = await ledger.holdWithdrawal(
          holdInput(p.apiKey, { amountMsat: o.amount, holdId, expiresInMs: 3000, now }),
        );
        if (r.ok) holds.push({ accountId: p.accountId, holdId });
        break;
      }
      case 'commit': {
        const h = holds[o.which % Math.max(1, holds.length)];
        if (h) await ledger.commitWithdrawal({ ...h, now });
        break;
      }
      case 'abort': {
        const h = holds[o.which % Math.max(1, holds.length)];
        if (h) await ledger.abortWithdrawal({ ...h, now });
        break;
      }
      case 'child': {
        const r = await ledger.createChildKeys({
          parent: { apiKey: parents[o.who]!.apiKey },
          count: 1,
          feePerKeyMsat: o.fee,
          balanceLimitMsat: o.limit,
          balanceLimitReset: 'daily',
          now,
        });
        if (r.ok) keys.push(...r.apiKeys);
        break;
      }
      case 'tick':
        now += o.ms;
        break;
    }
    for (const p of parents) {
      const info = await ledger.getKeyInfo({ apiKey: p.apiKey }, now);
      if (!info) continue;
      expect(info.account.reservedMsat).toBeGreaterThanOrEqual(0);
      expect(info.account.balanceMsat).toBeGreaterThanOrEqual(info.account.reservedMsat);
    }
  }
  const report = await ledger.checkConservation();
  expect(report.breaches).toEqual([]);
}

export function propertySuite(name: string, ctx: Ctx): void {
  describe(`${name}: property`, () => {
    it('random operation sequences keep every invariant and the audit passes', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40 }), async (ops) => {
          const { ledger } = await ctx.open();
          await runSequence(ledger, ops);
        }),
        { numRuns: 25 },
      );
    }, 60_000);
  });
}
