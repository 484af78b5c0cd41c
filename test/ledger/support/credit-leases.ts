import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LeasingLedger } from '../../../core/ledger/leasing.js';
import type { LeaseCall, LeaseInput, LeaseResult, Ledger, RateLimits } from '../../../core/ledger/types.js';
import { callRecord } from './audit-records.js';
import { admitInput, admitOk, BIG, type Ctx, dailyChildren, fund, rid, T0 } from './conformance.js';

const PID = 'abcdef012345';

/**
 * The refusal for money while a lease of another process (PID, which never answers a recall here) may hold it:
 * the store says `payment_required`; the credit-lease wrapper, after its recall's wait ran out, says
 * `balance_in_transit` (docs/ledger.md, "Recall"), never 402.
 */
function shortWhileLeased(ledger: Ledger): 'payment_required' | 'balance_in_transit' {
  return ledger instanceof LeasingLedger ? 'balance_in_transit' : 'payment_required';
}

function leaseId(pid = PID): string {
  return `l~${pid}~${randomUUID()}`;
}

function call(costMsat: number, atMs = T0, tokens = 10, apiKey?: string): LeaseCall {
  const requestId = rid();
  return {
    requestId,
    costMsat,
    promptTokens: tokens,
    completionTokens: 0,
    model: 'm',
    description: `m: ${tokens} tokens`,
    estimated: false,
    ...(apiKey !== undefined ? { auditRecord: callRecord(apiKey, requestId, atMs) } : {}),
    atMs,
  };
}

function step(
  ledger: Ledger,
  apiKey: string,
  id: string,
  seq: number,
  over: Partial<LeaseInput> = {},
): Promise<LeaseResult> {
  return ledger.lease({
    credential: { apiKey },
    leaseId: id,
    seq,
    wantMsat: 0,
    minMsat: 0,
    wantRequests: 0,
    usedRequests: 0,
    ttlMs: 5000,
    limits: BIG,
    calls: [],
    close: false,
    now: T0,
    ...over,
  });
}

/**
 * The credit-lease store step (Ledger.lease, docs/ledger.md "Credit leases") on every store: a lease is a
 * reservation, calls reported in a step are charged like settle (never beyond the lease + what is free),
 * steps replay by seq, expired and orphaned leases are released by the existing mechanisms.
 */
export function creditLeaseSuite(name: string, ctx: Ctx): void {
  describe(`${name}: credit leases (store step)`, () => {
    it('opens a slice, records reported calls per call (tx + audit), renews, replays by seq, closes', async () => {
      const h = await ctx.open();
      const { ledger } = h;
      const k = await fund(ledger, 10_000);
      const id = leaseId();
      const o = await step(ledger, k.apiKey, id, 1, { wantMsat: 3000, minMsat: 100, wantRequests: 5 });
      expect(o).toMatchObject({
        ok: true,
        open: true,
        replay: false,
        grantedMsat: 3000,
        availableMsat: 7000,
        balanceMsat: 10_000,
        requestSlots: 5,
        requestsCounted: 5,
        otherOpen: 0,
        chargedMsat: [],
        key: { accountId: k.accountId },
      });
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }, T0))?.account).toMatchObject({
        balanceMsat: 10_000,
        reservedMsat: 3000,
      });
      // Another caller cannot take what the lease holds.
      const other = await ledger.admit(
        admitInput(k.apiKey, { maxMsat: 7001, minMsat: 7001, expiresInMs: 1000, now: T0 }),
      );
      expect(other).toMatchObject({
        ok: false,
        code: shortWhileLeased(ledger),
        balance: 7000,
        required: 7001,
        shortfall: 1,
      });
      if (!other.ok && other.code === 'payment_required') expect(Object.keys(other)).toHaveLength(5);

      const calls = [call(1200, T0 + 10, 7, k.apiKey), call(500, T0 + 20, 3, k.apiKey)];
      const s2 = { wantMsat: 3000, wantRequests: 5, usedRequests: 2, calls, now: T0 + 30 };
      const r = await step(ledger, k.apiKey, id, 2, s2);
      expect(r).toMatchObject({
        ok: true,
        open: true,
        replay: false,
        chargedMsat: [1200, 500],
        grantedMsat: 3000,
        balanceMsat: 8300,
        availableMsat: 5300,
        requestSlots: 5,
        requestsCounted: 7, // 2 used + 5 new; the 3 unused of the first grant went back
        tokensLeft: BIG.tokensPerHour - 10,
      });
      // The same step again (a retry): same answer, nothing charged twice.
      expect(await step(ledger, k.apiKey, id, 2, s2)).toMatchObject({
        replay: true,
        chargedMsat: [1200, 500],
        balanceMsat: 8300,
      });
      const txs = await ledger.listTransactions({ apiKey: k.apiKey });
      expect(txs?.transactions.map((t) => [t.type, t.amountMsat, t.balanceAfterMsat, t.timestampMs])).toEqual(
        [
          ['usage', -500, 8300, T0 + 20],
          ['usage', -1200, 8800, T0 + 10],
          ['deposit', 10_000, 10_000, T0],
        ],
      );
      // Each reported call's audit record, written by the step that charged it (the replay wrote none).
      const log = await h.auditLog().list({ account: k.accountId, limit: 10 });
      expect(
        log.data.map((x) => [x.request_id, x.cost_msats, x.ip_address, x.response_status, x.timestamp]),
      ).toEqual([
        [calls[1]!.requestId, 500, '10.0.0.1', 200, new Date(T0 + 20).toISOString()],
        [calls[0]!.requestId, 1200, '10.0.0.1', 200, new Date(T0 + 10).toISOString()],
      ]);
      const c = await step(ledger, k.apiKey, id, 3, { close: true, usedRequests: 1, now: T0 + 40 });
      expect(c).toMatchObject({
        ok: true,
        open: false,
        grantedMsat: 0,
        availableMsat: 8300,
        requestsCounted: 3,
      });
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey }, T0 + 40);
      expect(info?.account).toMatchObject({
        balanceMsat: 8300,
        reservedMsat: 0,
        spentMsat: 1700,
        requests: 2,
      });
      expect(info?.usage).toMatchObject({ totalRequests: 2, totalSpentMsat: 1700, reservedMsat: 0 });
    });

    it('a step reporting more calls than the history keeps: every charge, the newest transactions in order, every audit record', async () => {
      // The Redis step writes a step's transactions with one LPUSH and its audit records with one trim after
      // them (includes/history.lua): the list and the stream must read as if each call had been written alone.
      const h = await ctx.open({ txRetention: 5 });
      const { ledger } = h;
      const k = await fund(ledger, 1_000_000);
      const id = leaseId();
      await step(ledger, k.apiKey, id, 1, { wantMsat: 100_000, minMsat: 1 });
      const calls = Array.from({ length: 130 }, (_, i) => call(100 + i, T0 + 1 + i, 1, k.apiKey));
      const r = await step(ledger, k.apiKey, id, 2, {
        wantMsat: 100_000,
        usedRequests: 130,
        calls,
        now: T0 + 200,
      });
      const costs = calls.map((c) => c.costMsat);
      const total = costs.reduce((a, b) => a + b, 0);
      expect(r).toMatchObject({ ok: true, chargedMsat: costs, balanceMsat: 1_000_000 - total });
      const txs = await ledger.listTransactions({ apiKey: k.apiKey }, { limit: 10 });
      expect(txs?.total).toBe(5);
      let after = 1_000_000 - total;
      const newest = [];
      for (let i = 129; i >= 125; i--) {
        newest.push(['usage', -costs[i]!, after, T0 + 1 + i]);
        after += costs[i]!;
      }
      expect(txs?.transactions.map((t) => [t.type, t.amountMsat, t.balanceAfterMsat, t.timestampMs])).toEqual(
        newest,
      );
      const log = await h.auditLog().list({ account: k.accountId, limit: 200 });
      expect(log.data.map((x) => [x.request_id, x.cost_msats])).toEqual(
        calls.map((c) => [c.requestId, c.costMsat]).reverse(),
      );
      await step(ledger, k.apiKey, id, 3, { close: true, now: T0 + 300 });
    });

    it('never charges beyond the lease and what is free; the last msat is spent exactly', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const id = leaseId();
      expect(await step(ledger, k.apiKey, id, 1, { wantMsat: 1000, minMsat: 1 })).toMatchObject({
        grantedMsat: 1000,
      });
      const r = await step(ledger, k.apiKey, id, 2, { wantMsat: 1000, calls: [call(999), call(5)] });
      expect(r).toMatchObject({ chargedMsat: [999, 1], balanceMsat: 0, grantedMsat: 0, availableMsat: 0 });
      const again = await step(ledger, k.apiKey, id, 3, { close: true });
      expect(again).toMatchObject({ open: false, balanceMsat: 0 });
    });

    it('opening refuses like admit: no money, bad key, rate limits, limited children', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      expect(await step(ledger, k.apiKey, leaseId(), 1, { wantMsat: 5000, minMsat: 1001 })).toEqual({
        ok: false,
        code: 'payment_required',
        balance: 1000,
        required: 1001,
        shortfall: 1,
      });
      expect(await step(ledger, `sk-${'x'.repeat(29)}`, leaseId(), 1, { wantMsat: 1 })).toEqual({
        ok: false,
        code: 'invalid_api_key',
      });
      const limits: RateLimits = { requestsPerMinute: 3, tokensPerHour: 1000, concurrent: 5 };
      const g = await step(ledger, k.apiKey, leaseId(), 1, { wantMsat: 100, wantRequests: 10, limits });
      expect(g).toMatchObject({ ok: true, requestSlots: 3, requestsCounted: 3 });
      expect(
        await step(ledger, k.apiKey, leaseId(), 1, { wantMsat: 100, wantRequests: 10, limits }),
      ).toMatchObject({
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: { type: 'requests_per_minute', limit: 3, remaining: 0 },
      });
      const ch = await dailyChildren(ledger, k.apiKey, { count: 1, feePerKeyMsat: 0, balanceLimitMsat: 50 });
      expect(await step(ledger, ch.apiKeys[0]!, leaseId(), 1, { wantMsat: 10 })).toEqual({
        ok: false,
        code: 'lease_unsupported',
      });
    });

    it('a lease that ran out is released by the sweep; its late report is charged once from what is free', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const id = leaseId();
      await step(ledger, k.apiKey, id, 1, { wantMsat: 600, ttlMs: 1000 });
      expect(await ledger.sweepExpired(T0 + 999)).toBe(0);
      expect(await ledger.sweepExpired(T0 + 1000)).toBe(1);
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }, T0 + 1000))?.account.reservedMsat).toBe(0);
      const late = { wantMsat: 600, calls: [call(300, T0 + 900)], now: T0 + 1100 };
      expect(await step(ledger, k.apiKey, id, 2, late)).toMatchObject({
        ok: true,
        open: false,
        grantedMsat: 0,
        chargedMsat: [300],
        balanceMsat: 700,
      });
      expect(await step(ledger, k.apiKey, id, 2, late)).toMatchObject({ replay: true, balanceMsat: 700 });
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }, T0 + 1100))?.account).toMatchObject({
        balanceMsat: 700,
        reservedMsat: 0,
      });
    });

    it('an admit past the TTL takes the money of an expired lease', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      await step(ledger, k.apiKey, leaseId(), 1, { wantMsat: 1000, ttlMs: 1000 });
      await expect(admitOk(ledger, k.apiKey, 1000, 1000, T0 + 999)).rejects.toThrow(shortWhileLeased(ledger));
      expect((await admitOk(ledger, k.apiKey, 1000, 1000, T0 + 1000)).reservedMsat).toBe(1000);
    });

    it("a dead process's lease is released by releaseOrphans, a live one's kept", async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const dead = '0123456789ab';
      const live = 'ba9876543210';
      await ledger.heartbeat(dead, T0);
      await ledger.heartbeat(live, T0 + 4000);
      await step(ledger, k.apiKey, leaseId(dead), 1, { wantMsat: 400, ttlMs: 600_000 });
      await step(ledger, k.apiKey, leaseId(live), 1, { wantMsat: 300, ttlMs: 600_000 });
      expect(await ledger.releaseOrphans(3000, T0 + 5000)).toEqual({ processes: 1, released: 1 });
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }, T0 + 5000))?.account.reservedMsat).toBe(300);
      expect(await ledger.releaseOrphans(3000, T0 + 5000)).toEqual({ processes: 0, released: 0 });
    });

    it('a lease holds concurrency slots within the limit; closing and the sweep give back exactly those', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 100_000);
      const L: RateLimits = { ...BIG, concurrent: 5 };
      // Plain calls of another process (the exact path, also through the lease wrapper).
      const plain = (now = T0) =>
        ledger.admit(
          admitInput(k.apiKey, {
            requestId: `r~0123456789ab~${randomUUID()}`,
            maxMsat: 10,
            minMsat: 10,
            expiresInMs: 60_000,
            limits: L,
            now,
          }),
        );
      const full = {
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: { type: 'concurrent_requests', limit: 5 },
      };
      const a = leaseId();
      const b = leaseId();
      expect(
        await step(ledger, k.apiKey, a, 1, { wantMsat: 1000, wantConcurrent: 3, limits: L }),
      ).toMatchObject({
        open: true,
        concurrentSlots: 3,
        otherOpen: 0,
      });
      expect((await plain()).ok).toBe(true);
      expect((await plain()).ok).toBe(true);
      expect(await plain()).toMatchObject(full); // 3 leased + 2 plain
      expect(
        await step(ledger, k.apiKey, b, 1, { wantMsat: 100, wantConcurrent: 2, limits: L }),
      ).toMatchObject(full);
      // Shrinking to its one open call frees 2 slots, which the other lease takes (it wanted 3).
      expect(
        await step(ledger, k.apiKey, a, 2, { wantMsat: 1000, wantConcurrent: 1, openCalls: 1, limits: L }),
      ).toMatchObject({ concurrentSlots: 1, otherOpen: 2 });
      expect(
        await step(ledger, k.apiKey, b, 1, { wantMsat: 100, wantConcurrent: 3, limits: L }),
      ).toMatchObject({
        concurrentSlots: 2,
        otherOpen: 3,
      });
      // Never below the calls open under the lease, even past the limit's share.
      expect(
        await step(ledger, k.apiKey, b, 2, { wantMsat: 100, wantConcurrent: 0, openCalls: 2, limits: L }),
      ).toMatchObject({ concurrentSlots: 2 });
      expect(await plain()).toMatchObject(full);
      // Closing gives back its 1 slot.
      expect(await step(ledger, k.apiKey, a, 3, { close: true, limits: L })).toMatchObject({
        open: false,
        concurrentSlots: 0,
        otherOpen: 4,
      });
      expect((await plain()).ok).toBe(true);
      expect(await plain()).toMatchObject(full);
      // The sweep of the expired lease gives back its 2 slots, not 1.
      expect(await ledger.sweepExpired(T0 + 5000)).toBe(1);
      expect((await plain(T0 + 5000)).ok).toBe(true);
      expect((await plain(T0 + 5000)).ok).toBe(true);
      expect(await plain(T0 + 5000)).toMatchObject(full);
    });

    it("recall: other processes' open leases are listed; recalls are posted and polled by kind", async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1000);
      const other = '0123456789ab';
      const mine = leaseId();
      const theirs = leaseId(other);
      await step(ledger, k.apiKey, mine, 1, { wantMsat: 300, ttlMs: 1000 });
      await step(ledger, k.apiKey, theirs, 1, { wantMsat: 300, ttlMs: 2000 });
      // A plain reservation (of the other process: through the lease wrapper too it stays one) is no lease.
      const plain = await ledger.admit(
        admitInput(k.apiKey, {
          requestId: `r~${other}~${randomUUID()}`,
          maxMsat: 100,
          minMsat: 100,
          expiresInMs: 60_000,
          now: T0,
        }),
      );
      expect(plain).toMatchObject({ ok: true, reservedMsat: 100 });
      expect(await ledger.otherLeases(k.accountId, PID, T0)).toEqual([
        { id: theirs, expiresAtMs: T0 + 2000 },
      ]);
      expect(await ledger.otherLeases(k.accountId, other, T0)).toEqual([
        { id: mine, expiresAtMs: T0 + 1000 },
      ]);
      expect(await ledger.otherLeases(k.accountId, other, T0 + 1000)).toEqual([]); // expired
      await step(ledger, k.apiKey, theirs, 2, { close: true, now: T0 + 10 });
      expect(await ledger.otherLeases(k.accountId, PID, T0 + 10)).toEqual([]); // returned

      await ledger.recallLeases(k.accountId, 'report', T0 + 20);
      await ledger.recallLeases(k.accountId, 'money', T0 + 30);
      await ledger.recallLeases(k.accountId, 'money', T0 + 25); // an older recall never moves it back
      const mineOnly = async (since: number) =>
        (await ledger.recalledSince(since))
          .filter((r) => r.accountId === k.accountId)
          .sort((a, b) => a.atMs - b.atMs);
      expect(await mineOnly(T0)).toEqual([
        { accountId: k.accountId, kind: 'report', atMs: T0 + 20 },
        { accountId: k.accountId, kind: 'money', atMs: T0 + 30 },
      ]);
      expect(await mineOnly(T0 + 21)).toEqual([{ accountId: k.accountId, kind: 'money', atMs: T0 + 30 }]);
    });
  });
}
