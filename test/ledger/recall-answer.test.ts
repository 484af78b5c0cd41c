import { afterEach, describe, expect, it } from 'vitest';
import { LeasingLedger } from '../../core/ledger/leasing.js';
import type { AdmitInput, AdmitResult, Ledger, OtherLease } from '../../core/ledger/types.js';

/**
 * The order of events behind a flake that CI hit on Redis (test/ledger/recall-in-transit.test.ts, "a lease
 * that is too small to matter"), replayed against a scripted store so it happens every time:
 * 1. the exact admit is refused (the rest of the key sits in another process's lease);
 * 2. the holder's own report step, made after the recall but before the holder read it, moves its lease's
 *    expiry past recall time + TTL, which the recall counts as an answer; the retry is refused again;
 * 3. the holder then answers for real and closes its lease: the next recall finds no lease left.
 * The call must be admitted once more then, and its refusal must name the balance as it is (1,500), not the
 * stale one (0).
 */

const TTL = 60_000;
const apiKey = `sk-${'a'.repeat(29)}`;
const limits = { requestsPerMinute: 1_000_000, tokensPerHour: 1_000_000_000, concurrent: 1_000_000 };
const refusal = (balance: number, required: number): AdmitResult => ({
  ok: false,
  code: 'payment_required',
  balance,
  required,
  shortfall: required - balance,
});

const opened: LeasingLedger[] = [];
afterEach(async () => {
  for (const l of opened.splice(0)) await l.close();
});

describe('a money recall whose holder stepped before it read the recall', () => {
  it('admits once more when the recalled lease is gone: the refusal names the balance as it is', async () => {
    const admits: AdmitResult[] = [refusal(0, 2000), refusal(0, 2000), refusal(1500, 2000)];
    let at = 0;
    const leaseId = 'l~holder0process~00000000-0000-0000-0000-000000000000';
    const listings: Array<(now: number) => OtherLease[]> = [
      // Before the recall: the holder's lease, stepped before it (expiry = that step + TTL).
      (now) => [{ id: leaseId, expiresAtMs: now - 10 + TTL }],
      // The recall's first look: an ordinary step of the holder's, made after the recall, moved the expiry on.
      () => [{ id: leaseId, expiresAtMs: at + TTL + 14 }],
      // The next recall: the holder answered it for real and closed the lease.
      () => [],
    ];
    let admitCalls = 0;
    let listingCalls = 0;
    const store = {
      kind: 'sqlite',
      admit: async (_input: AdmitInput) => admits[Math.min(admitCalls++, admits.length - 1)]!,
      otherLeases: async (_account: string, _process: string, now = Date.now()) =>
        listings[Math.min(listingCalls++, listings.length - 1)]!(now),
      recallLeases: async (_account: string, _kind: string, now = Date.now()) => {
        at = now;
      },
      close: async () => {},
    } as unknown as Ledger;
    const here = new LeasingLedger(store, { flushMs: 20, idleMs: 300, ttlMs: TTL, recallWaitMs: 2_000 });
    opened.push(here);
    const r = await here.admit({
      credential: { apiKey },
      requestId: 'big',
      model: 'm',
      maxMsat: 2000,
      minMsat: 2000,
      expiresInMs: TTL,
      limits,
    });
    expect(r).toEqual(refusal(1500, 2000));
    // Refused, recalled (answered by the ordinary step), refused, recalled (no lease left), admitted once more.
    expect(admitCalls).toBe(3);
  });
});
