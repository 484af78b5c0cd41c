import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type LeaseOptions, LeasingLedger } from '../../core/ledger/leasing.js';
import type { AdmitInput, AdmitResult, Ledger, RateLimits } from '../../core/ledger/types.js';
import { overriding } from '../support/fakes.js';
import { until } from '../support/until.js';
import { callRecord } from './support/audit-records.js';
import { admitInput, BIG, fund, settleInput } from './support/conformance.js';
import { redisFactory, type StoreHarness, sqliteFactory } from './support/harness.js';

/**
 * The in-memory lease manager (core/ledger/leasing.ts) over both stores: calls admitted and settled in memory
 * are charged exactly as the per-call path charges them, reads see every answered call, a nearly empty key
 * spends its last msat, rate limits stay exact, idle leases are returned.
 */

for (const factory of [sqliteFactory(), redisFactory()]) {
  describe(`lease manager on ${factory.name}`, () => {
    const open: Array<{ h: StoreHarness; m: LeasingLedger }> = [];
    /** A lease manager over a fresh store; `steps` stand in for the store ledger's own (observed) steps. */
    async function start(
      opts: Partial<LeaseOptions> = {},
      steps: (inner: Ledger) => Partial<Ledger> = () => ({}),
    ) {
      const h = await factory.create();
      const inner = overriding(h.ledger, steps(h.ledger));
      const m = new LeasingLedger(inner, { flushMs: 20, idleMs: 200, ttlMs: 5000, ...opts });
      open.push({ h, m });
      return m;
    }
    /** A lease manager over a fresh store (`start`) and a key funded there with `msat` now. */
    async function startFunded(msat: number, opts?: Parameters<typeof start>[0]) {
      const m = await start(opts);
      return { m, k: await fund(m, msat, Date.now()) };
    }
    const harnessOf = (m: LeasingLedger): StoreHarness => open.find((x) => x.m === m)!.h;
    /** The account of `apiKey` as `l` reads it. */
    const accountOf = async (l: Ledger, apiKey: string) => (await l.getKeyInfo({ apiKey }))?.account;
    afterEach(async () => {
      for (const { h, m } of open.splice(0)) {
        await m.flushAll(true);
        expect((await h.ledger.checkConservation()).breaches).toEqual([]);
        await m.close();
        await h.close();
      }
    });
    afterAll(() => factory.teardown());

    const admit = (m: LeasingLedger, apiKey: string, max: number, limits: RateLimits = BIG, min = 1) =>
      m.admit(
        admitInput(apiKey, { clientIp: '10.1.2.3', maxMsat: max, minMsat: min, expiresInMs: 60_000, limits }),
      );
    async function call(m: LeasingLedger, apiKey: string, max: number, cost: number) {
      const a = await admit(m, apiKey, max);
      if (!a.ok) return a;
      return m.settle(
        settleInput(a, {
          costMsat: cost,
          promptTokens: 5,
          completionTokens: 7,
          description: 'm: 12 tokens',
          auditRecord: callRecord(apiKey, a.requestId, Date.now(), { ip: '10.1.2.3' }),
        }),
      );
    }

    it('charges in-memory calls exactly, one transaction and audit record each, visible to the next read', async () => {
      const { m, k } = await startFunded(100_000);
      for (let i = 0; i < 10; i++)
        expect(await call(m, k.apiKey, 500, 321)).toMatchObject({ chargedMsat: 321 });
      expect(m.stats()).toMatchObject({ leases: 1, openCalls: 0 });
      // Read-your-writes: the read reports the queued calls and returns the lease first.
      const info = await m.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.account).toMatchObject({
        balanceMsat: 96_790,
        reservedMsat: 0,
        spentMsat: 3210,
        requests: 10,
      });
      expect(info?.usage).toMatchObject({ totalRequests: 10, totalSpentMsat: 3210 });
      const txs = await m.listTransactions({ apiKey: k.apiKey });
      expect(txs?.transactions.filter((t) => t.type === 'usage').map((t) => t.amountMsat)).toEqual(
        Array(10).fill(-321),
      );
      const log = await harnessOf(m).auditLog(m).list({ account: k.accountId, limit: 100 });
      expect(log.data).toHaveLength(10);
      expect(log.data[0]).toMatchObject({ cost_msats: 321, ip_address: '10.1.2.3', response_status: 200 });
    });

    it('admits in memory: one store step for many calls', async () => {
      let steps = 0;
      let admits = 0;
      const m = await start({ flushMs: 60_000 }, (inner) => ({
        lease: (x) => {
          steps++;
          return inner.lease(x);
        },
        admit: (x) => {
          admits++;
          return inner.admit(x);
        },
      }));
      const k = await fund(m, 1_000_000, Date.now());
      steps = 0; // counted from the first call on
      admits = 0;
      for (let i = 0; i < 12; i++)
        expect(await call(m, k.apiKey, 1000, 900)).toMatchObject({ chargedMsat: 900 });
      // The first call of a cold key goes the exact way; the next one opens the lease, which takes the rest.
      expect({ steps, admits }).toEqual({ steps: 1, admits: 1 });
      expect(m.stats()).toMatchObject({ leases: 1, queuedCalls: 11 });
      expect((await accountOf(m, k.apiKey))?.balanceMsat).toBe(1_000_000 - 12 * 900);
    });

    it('a cold key goes the exact way: no lease for a call after idleMs without one; the next call opens it', async () => {
      const seen: string[] = [];
      const m = await start({ idleMs: 150 }, (inner) => ({
        lease: (x) => {
          seen.push(x.close ? 'close' : x.calls.length > 0 ? 'report' : 'open');
          return inner.lease(x);
        },
        admit: (x) => {
          seen.push('admit');
          return inner.admit(x);
        },
      }));
      const k = await fund(m, 100_000, Date.now());
      expect(await call(m, k.apiKey, 1000, 10)).toMatchObject({
        chargedMsat: 10,
        transactionId: expect.not.stringMatching(/^lease:/),
      });
      expect(m.stats().leases).toBe(0);
      expect(await call(m, k.apiKey, 1000, 10)).toMatchObject({
        chargedMsat: 10,
        transactionId: expect.stringMatching(/^lease:/),
      });
      expect(seen).toEqual(['admit', 'open']);
      expect(m.stats().leases).toBe(1);
      // Idle: the lease is returned; the key is cold again and its next call is exact once more.
      await until('the idle lease returned', () => m.stats().leases === 0, 5_000);
      expect(m.stats().leases).toBe(0);
      seen.length = 0;
      await call(m, k.apiKey, 1000, 10);
      expect(seen).toEqual(['admit']);
      expect(await accountOf(m, k.apiKey)).toMatchObject({
        balanceMsat: 99_970,
        reservedMsat: 0,
        requests: 3,
      });
    });

    it('cold keys hold no lease record: many keys called once each keep only their call time', async () => {
      const m = await start({ idleMs: 60_000 });
      const keys = [];
      for (let i = 0; i < 20; i++) keys.push(await fund(m, 10_000, Date.now()));
      for (const k of keys)
        expect(await call(m, k.apiKey, 1000, 10)).toMatchObject({
          chargedMsat: 10,
          transactionId: expect.not.stringMatching(/^lease:/),
        });
      expect(m.stats()).toMatchObject({ leases: 0, records: 0, openCalls: 0 });
      // A second call within idleMs opens the key's lease, as for a key called once before.
      for (const k of keys.slice(0, 3))
        expect(await call(m, k.apiKey, 1000, 10)).toMatchObject({
          chargedMsat: 10,
          transactionId: expect.stringMatching(/^lease:/),
        });
      expect(m.stats()).toMatchObject({ leases: 3, records: 3 });
      for (const [i, k] of keys.slice(0, 4).entries())
        expect(await accountOf(m, k.apiKey)).toMatchObject({
          balanceMsat: i < 3 ? 10_000 - 20 : 10_000 - 10,
          reservedMsat: 0,
        });
    });

    it('a holder reads recalls every flush without the store signals, every 250 ms with them (a backstop)', async () => {
      const reads = { plain: 0, signalled: 0 };
      const held = async (which: keyof typeof reads, opts: { notify?: () => void }) => {
        const m = await start(opts, (inner) => ({
          recalledSince: (since: number) => {
            reads[which]++;
            return inner.recalledSince(since);
          },
        }));
        const k = await fund(m, 100_000, Date.now());
        // Two calls within idleMs: the second opens the key's lease, which the process then holds.
        for (let i = 0; i < 2; i++)
          expect(await call(m, k.apiKey, 500, 10)).toMatchObject({ chargedMsat: 10 });
        expect(m.stats()).toMatchObject({ leases: 1 });
        const before = reads[which];
        await new Promise((r) => setTimeout(r, 600));
        return reads[which] - before;
      };
      // flushMs 20: a read every 20 ms (≈ 30 in 600 ms; fewer when timers run late on a busy machine).
      expect(await held('plain', {})).toBeGreaterThanOrEqual(8);
      // On the signals (notify set; `wake()` answers a signalled recall at once): at most one read per 250 ms.
      expect(await held('signalled', { notify: () => {} })).toBeLessThanOrEqual(3);
    });

    it('a nearly empty key spends its last msat (the exact path after the lease shrinks)', async () => {
      const { m, k } = await startFunded(1000);
      const charged: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await call(m, k.apiKey, 300, 300);
        if (!r.ok) throw new Error(r.code);
        charged.push(r.chargedMsat);
      }
      expect(charged).toEqual([300, 300, 300, 100]);
      expect(await admit(m, k.apiKey, 300)).toEqual({
        ok: false,
        code: 'payment_required',
        balance: 0,
        required: 1,
        shortfall: 1,
      });
      expect(await accountOf(m, k.apiKey)).toMatchObject({
        balanceMsat: 0,
        reservedMsat: 0,
        spentMsat: 1000,
      });
    });

    it('requests per minute stay exact: 6 admitted with remaining 5…0, the 7th refused', async () => {
      const { m, k } = await startFunded(100_000);
      const limits = { ...BIG, requestsPerMinute: 6 };
      const remaining: number[] = [];
      for (let i = 0; i < 6; i++) {
        const a = await admit(m, k.apiKey, 100, limits);
        if (!a.ok) throw new Error(a.code);
        remaining.push(a.rateLimit.remaining);
        await m.release({ accountId: a.accountId, requestId: a.requestId });
      }
      expect(remaining).toEqual([5, 4, 3, 2, 1, 0]);
      expect(await admit(m, k.apiKey, 100, limits)).toMatchObject({
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: { type: 'requests_per_minute', limit: 6, remaining: 0 },
      });
    });

    it('returns an idle lease: nothing reserved within the idle time after the last call', async () => {
      const { m, k } = await startFunded(50_000, { idleMs: 100 });
      // Two calls: the first (a cold key's) goes the exact way, the second opens the lease.
      await call(m, k.apiKey, 1000, 10);
      await call(m, k.apiKey, 1000, 10);
      expect((await accountOf(m.inner, k.apiKey))?.reservedMsat).toBeGreaterThan(0);
      await until('the idle lease returned', () => m.stats().leases === 0, 5_000);
      expect(m.stats().leases).toBe(0);
      expect(await accountOf(m.inner, k.apiKey)).toMatchObject({
        balanceMsat: 49_980,
        reservedMsat: 0,
      });
    });

    it('settle and release of in-memory calls are idempotent', async () => {
      const { m, k } = await startFunded(10_000);
      const a = await admit(m, k.apiKey, 100);
      if (!a.ok) throw new Error(a.code);
      const s = {
        accountId: a.accountId,
        requestId: a.requestId,
        costMsat: 60,
        promptTokens: 1,
        completionTokens: 1,
        model: 'm',
        description: 'd',
        estimated: false,
      };
      const first = await m.settle(s);
      expect(first).toMatchObject({ replay: false, chargedMsat: 60, releasedMsat: 40 });
      // The repeat is the first answer, every field, as a replay (the finished-call memory rebuilds it).
      expect(await m.settle(s)).toEqual({ ...first, replay: true });
      expect(await m.release({ accountId: a.accountId, requestId: a.requestId })).toEqual({
        ok: false,
        code: 'already_settled',
      });
      // A call released in memory: its repeat is the same release, a settle after it is refused.
      const b = await admit(m, k.apiKey, 100);
      if (!b.ok) throw new Error(b.code);
      const rel = { accountId: b.accountId, requestId: b.requestId };
      const released = await m.release(rel);
      expect(released).toEqual({ ok: true, status: 'released', replay: false, releasedMsat: 100 });
      expect(await m.release(rel)).toEqual({ ...released, replay: true });
      expect(await m.settle({ ...s, requestId: b.requestId })).toEqual({
        ok: false,
        code: 'already_released',
      });
      expect((await accountOf(m, k.apiKey))?.balanceMsat).toBe(9940);
    });

    it('a step whose answer was lost admits nothing in memory until it is answered: the store may have shrunk the lease', async () => {
      // The store applies each lease step; while `lost`, its answer never arrives (a connection reset after the
      // write). No timer resends meanwhile (flushMs and idleMs of a minute), so only admissions act.
      let lost = false;
      const m = await start({ flushMs: 60_000, idleMs: 60_000, ttlMs: 120_000 }, (inner) => ({
        lease: async (x) => {
          const r = await inner.lease(x);
          if (lost) throw new Error('connection reset');
          return r;
        },
      }));
      const limits: RateLimits = { ...BIG, concurrent: 4 };
      const k = await fund(m, 1_000_000, Date.now());
      const open = (maxMsat = 1000) =>
        m.admit(admitInput(k.apiKey, { maxMsat, minMsat: 1, expiresInMs: 600_000, limits }));
      const first = await open(); // cold: the exact way
      if (!first.ok) throw new Error(first.code);
      await m.settle(settleInput(first, { costMsat: 1 }));
      const a = await open();
      const b = await open();
      expect([a.ok, b.ok]).toEqual([true, true]);
      expect(m.stats()).toMatchObject({ leases: 1, openCalls: 2 });
      if (!b.ok) throw new Error(b.code);
      await m.settle(settleInput(b, { costMsat: 1 }));
      // An exact call shrinks the lease to its one open call first: the store applies it, the answer is lost.
      lost = true;
      await expect(
        m.admit(
          admitInput(k.apiKey, { maxMsat: 1000, minMsat: 1, expiresInMs: 600_000, limits, exactPath: true }),
        ),
      ).rejects.toThrow('connection reset');
      // Admitting in memory now would trust the slots and slice the lease had before that step.
      await open().catch(() => undefined);
      await open().catch(() => undefined);
      lost = false;
      // Another process fills the key's concurrency up to the limit in the store.
      let others = 0;
      for (let i = 0; i < 6; i++) {
        const r = await harnessOf(m).ledger.admit(
          admitInput(k.apiKey, { maxMsat: 1000, minMsat: 1, expiresInMs: 600_000, limits }),
        );
        if (r.ok) others++;
      }
      expect(m.stats().openCalls + others).toBeLessThanOrEqual(4);
      // And no msat of the lease's old slice is spent in memory: the store covers every open call's bound.
      const info = await harnessOf(m).ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info!.account.reservedMsat).toBeGreaterThanOrEqual(1000 * (m.stats().openCalls + others));
    });
    it('a close decided while another step was in flight keeps the lease when a call was admitted in memory meanwhile', async () => {
      // A step waiting for the one in flight (here: an exact call's "give back what the lease holds beyond its
      // open calls", which closes a lease with none) runs as soon as that step is answered, yet callers whose
      // continuations were already queued (another call's settle answered in the same read from the store)
      // run first and may admit a call in memory. Closing the lease then would hand its slots back to the store
      // under that open call (3 processes at RATE_LIMIT_CONCURRENT=4 saw 5 calls open). Every point at which
      // the call can come in is tried: `hops` microtasks after the in-flight step's answer arrives.
      let gate: Promise<void> | null = null;
      let reached: () => void = () => {};
      let inject: (() => void) | null = null;
      const m = await start({ flushMs: 60_000, idleMs: 60_000, ttlMs: 120_000 }, (inner) => ({
        lease: async (x) => {
          const r = await inner.lease(x);
          if (gate) {
            const g = gate;
            gate = null;
            reached();
            await g;
            inject?.();
          }
          return r;
        },
      }));
      const limits: RateLimits = { ...BIG, concurrent: 4 };
      const input = (apiKey: string, over: Partial<AdmitInput> = {}) =>
        admitInput(apiKey, { maxMsat: 1000, minMsat: 1, expiresInMs: 600_000, limits, ...over });
      for (let hops = 0; hops < 12; hops++) {
        const k = await fund(m, 1_000_000, Date.now());
        const mine: Array<{ accountId: string; requestId: string }> = [];
        const ok = (a: AdmitResult) => {
          if (!a.ok) throw new Error(a.code);
          return a;
        };
        mine.push(ok(await m.admit(input(k.apiKey)))); // a cold key: the exact way, kept open
        const first = ok(await m.admit(input(k.apiKey))); // opens the lease, admitted in memory
        await m.settle(settleInput(first, { costMsat: 1 }));
        // A step reporting that call is in flight (its answer held back) when an exact call asks for the lease
        // back: no call is open in memory, so it asks to close it, and waits for the step in flight.
        let release!: () => void;
        gate = new Promise<void>((r) => {
          release = r;
        });
        const atGate = new Promise<void>((r) => {
          reached = r;
        });
        const flushed = m.flushAll(false);
        await atGate;
        const exact = m.admit(input(k.apiKey, { exactPath: true }));
        // Another caller comes in `hops` microtasks after the in-flight step's answer arrived.
        let late!: Promise<AdmitResult>;
        inject = () => {
          let p = Promise.resolve();
          for (let i = 0; i < hops; i++) p = p.then(() => {});
          late = p.then(() => m.admit(input(k.apiKey)));
        };
        release();
        await flushed;
        mine.push(ok(await exact));
        inject = null;
        mine.push(ok(await late));
        // Another process fills the key's concurrency in the store: never beyond the limit with this one's calls.
        const others: Array<{ accountId: string; requestId: string }> = [];
        for (let i = 0; i < 6; i++) {
          const r = await harnessOf(m).ledger.admit(input(k.apiKey));
          if (r.ok) others.push(r);
        }
        expect(mine.length + others.length, `hops ${hops}`).toBeLessThanOrEqual(4);
        for (const c of others) await harnessOf(m).ledger.release(c);
        for (const c of mine) await m.release(c);
      }
    });
  });
}
