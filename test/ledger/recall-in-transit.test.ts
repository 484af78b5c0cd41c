import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLedger } from '../../core/ledger/index.js';
import { type LeaseOptions, LeasingLedger } from '../../core/ledger/leasing.js';
import type { AdmitResult, Ledger } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { StoreSignals } from '../../core/store/signals.js';
import { randomTokenHash } from './support/harness.js';
import { dropConnections, leaseSteps } from './support/other-process.js';

/**
 * A recall past its wait (docs/ledger.md, "Recall"): the money a call needs sits in a credit lease of another
 * process that does not answer — its event loop stalled, or cut off from the store. The call is not refused
 * for money (402 `payment_required`) while that lease may hold it: it is answered `balance_in_transit` with
 * when to retry, and once the lease is given back the money is spent to the last msat. A key disabled
 * meanwhile says that a process has not applied it yet, and until when. A live holder answers through the
 * store's signal (Redis pub/sub; SQLite the version table), and the recall does not wait for its next poll.
 */

const limits = { requestsPerMinute: 1_000_000, tokensPerHour: 1_000_000_000, concurrent: 1_000_000 };
const conns: StoreConnection[] = [];
const dirs: string[] = [];
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => undefined);
  await dropConnections(conns, dirs);
});

const stores = [
  {
    name: 'Redis',
    open(): StoreConnection {
      const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
      return openStore({ redisUrl: url, redisPrefix: `rit${randomBytes(5).toString('hex')}` });
    },
  },
  {
    name: 'SQLite',
    open(): StoreConnection {
      const dir = mkdtempSync(join(tmpdir(), 'gw-transit-'));
      dirs.push(dir);
      return openStore({ dataDir: dir, sqliteFile: 'ledger.db' });
    },
  },
];

/** LEASE_TTL_MS of every process here: long, so no lease expires while a loaded machine runs the test. */
const TTL = 60_000;
const processId = () => randomBytes(6).toString('hex');

function leasing(ledger: Ledger, opts: Partial<LeaseOptions> = {}): LeasingLedger {
  const l = new LeasingLedger(ledger, { flushMs: 20, idleMs: 300, ttlMs: TTL, ...opts });
  closers.push(() => l.close().catch(() => undefined));
  return l;
}

function admit(l: Ledger, apiKey: string, requestId: string, msat: number): Promise<AdmitResult> {
  return l.admit({
    credential: { apiKey },
    requestId,
    model: 'm',
    maxMsat: msat,
    minMsat: msat,
    expiresInMs: 60_000,
    limits,
  });
}

function settle(l: Ledger, accountId: string, requestId: string, costMsat: number) {
  return l.settle({
    accountId,
    requestId,
    costMsat,
    promptTokens: 1,
    completionTokens: 1,
    model: 'm',
    description: 'd',
    estimated: false,
  });
}

describe.each(stores)('a recall past its wait on $name', (store) => {
  async function setUp(depositMsat: number) {
    const conn = store.open();
    conns.push(conn);
    if (conn.kind === 'redis') await conn.ready(10_000);
    const ledger = await createLedger(conn, { warn: () => {} });
    const d = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: depositMsat });
    if (!d.ok) throw new Error(d.code);
    return { conn, ledger, apiKey: d.apiKey, accountId: d.key.accountId };
  }

  /**
   * A lease of `msat` opened by another process that then answers nothing (it steps again only when told). Its
   * TTL is the processes' LEASE_TTL_MS (TTL below): a recall counts a lease as answered when a step after it
   * moved its expiry beyond the recall's time + that TTL.
   */
  async function stalledLease(ledger: Ledger, apiKey: string, msat: number, ttlMs = TTL) {
    const leaseId = `l~${processId()}~${randomBytes(8).toString('hex')}`;
    const step = leaseSteps(ledger, apiKey, leaseId, { msat, ttlMs, limits });
    const opened = await step(1, false);
    expect(opened).toMatchObject({ ok: true, open: true, grantedMsat: msat });
    return { giveBack: () => step(2, true) };
  }

  it('money held by a lease that does not answer: 503 balance_in_transit with a retry time, never 402; spent once it is given back', async () => {
    const { ledger, apiKey, accountId } = await setUp(10_000);
    const stalled = await stalledLease(ledger, apiKey, 6_000);
    const here = leasing(ledger, { processId: processId(), recallWaitMs: 200 });
    // What is free (4,000 msat) is spent as usual.
    let served = 0;
    let refused: AdmitResult | undefined;
    for (let i = 0; i < 20 && refused === undefined; i++) {
      const a = await admit(here, apiKey, `c-${i}`, 1000);
      if (!a.ok) refused = a;
      else {
        await settle(here, a.accountId, a.requestId, 1000);
        served++;
      }
    }
    expect(served).toBe(4);
    // The rest is in the other process's lease, which did not answer within the 200 ms wait.
    expect(refused).toMatchObject({
      ok: false,
      code: 'balance_in_transit',
      balance: 0,
      required: 1000,
      shortfall: 1000,
    });
    if (refused?.ok !== false || refused.code !== 'balance_in_transit') return;
    expect(refused.retryAfterMs).toBeGreaterThanOrEqual(1000);
    const [lease] = await ledger.otherLeases(accountId, 'none');
    expect(refused.heldUntilMs).toBe(lease!.expiresAtMs);
    // Its holder comes back and returns the slice: the next calls spend it to the last msat.
    await stalled.giveBack();
    for (let i = 0; i < 20; i++) {
      const a = await admit(here, apiKey, `after-${i}`, 1000);
      if (!a.ok) {
        // No lease of another process is left: now it is a refusal for money.
        expect(a.code).toBe('payment_required');
        break;
      }
      await settle(here, a.accountId, a.requestId, 1000);
      served++;
    }
    expect(served).toBe(10);
    await here.close();
    const info = await ledger.getKeyInfo({ apiKey });
    expect(info?.account).toMatchObject({ balanceMsat: 0, spentMsat: 10_000, reservedMsat: 0 });
    expect((await ledger.checkConservation()).breaches).toEqual([]);
  });

  it('a lease that is too small to matter still answers its recall the honest way: 402 once every holder answered', async () => {
    const { ledger, apiKey } = await setUp(3_000);
    const holder = leasing(ledger, { processId: processId(), idleMs: 60_000 });
    // The holder spends 1,000 and keeps a lease of the rest; this process then wants more than the key has.
    const a = await admit(holder, apiKey, 'h-0', 1000);
    expect(a.ok).toBe(true);
    if (a.ok) await settle(holder, a.accountId, a.requestId, 1000);
    const b = await admit(holder, apiKey, 'h-1', 500);
    expect(b.ok).toBe(true);
    if (b.ok) await settle(holder, b.accountId, b.requestId, 500);
    expect(holder.stats().leases).toBe(1);
    const here = leasing(ledger, { processId: processId(), recallWaitMs: 20_000 });
    // 1,500 msat are left in all: a 2,000 msat call is refused for money once the holder has answered.
    const r = await admit(here, apiKey, 'big', 2000);
    expect(r).toMatchObject({ ok: false, code: 'payment_required', balance: 1500, shortfall: 500 });
    expect(holder.stats().leases).toBe(0);
  });

  it('a key disabled while a lease does not answer says so, and until when; with every holder answering it says applied', async () => {
    const { ledger, apiKey, accountId } = await setUp(10_000);
    await stalledLease(ledger, apiKey, 6_000);
    const here = leasing(ledger, { processId: processId(), recallWaitMs: 200 });
    const r = await here.updateKey({ credential: { apiKey } }, { disabled: true });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [lease] = await ledger.otherLeases(accountId, 'none');
    expect(r.pendingLeases).toEqual({ count: 1, appliedByMs: lease!.expiresAtMs });
    expect(await admit(here, apiKey, 'after-disable', 1000)).toMatchObject({
      ok: false,
      code: 'key_disabled',
    });

    // A live holder answers the recall: the answer says every process applied it, and its lease is closed.
    const two = await setUp(10_000);
    const holder = leasing(two.ledger, { processId: processId(), idleMs: 60_000 });
    for (const id of ['h-0', 'h-1']) {
      const a = await admit(holder, two.apiKey, id, 1000);
      expect(a.ok).toBe(true);
      if (a.ok) await settle(holder, a.accountId, a.requestId, 1000);
    }
    expect(holder.stats().leases).toBe(1);
    const there = leasing(two.ledger, { processId: processId(), recallWaitMs: 20_000 });
    const applied = await there.updateKey({ credential: { apiKey: two.apiKey } }, { disabled: true });
    expect(applied.ok).toBe(true);
    if (applied.ok) expect(applied.pendingLeases).toBeUndefined();
    expect(await two.ledger.otherLeases(two.accountId, 'none')).toEqual([]);
    expect(holder.stats().leases).toBe(0);
    expect((await two.ledger.checkConservation()).breaches).toEqual([]);
  });

  it("the recall ends on the holder's signal, not on a poll of the store", async () => {
    const { conn, ledger, apiKey } = await setUp(3_000);
    // Two processes' signal watchers on the same store; each process signals what it did.
    const sigHolder = await StoreSignals.open(conn);
    const sigHere = await StoreSignals.open(conn);
    closers.push(
      () => sigHolder.close(),
      () => sigHere.close(),
    );
    const holder = leasing(ledger, {
      processId: processId(),
      idleMs: 60_000,
      answered: () => void sigHolder.bump('recall-answered'),
    });
    sigHolder.on('recall', () => holder.wake());
    for (const id of ['h-0', 'h-1']) {
      const a = await admit(holder, apiKey, id, 1000);
      expect(a.ok).toBe(true);
      if (a.ok) await settle(holder, a.accountId, a.requestId, 1000);
    }
    expect(holder.stats().leases).toBe(1);
    // This process reads the store for answers only every 60 s besides the signal, and waits up to 30 s.
    const here = leasing(ledger, {
      processId: processId(),
      recallWaitMs: 30_000,
      recallPollMs: 60_000,
      notify: () => void sigHere.bump('recall'),
      answered: () => void sigHere.bump('recall-answered'),
    });
    sigHere.on('recall-answered', () => here.recallAnswered());
    const t0 = Date.now();
    const a = await admit(here, apiKey, 'last', 1000);
    const waited = Date.now() - t0;
    // Served from the slice the holder gave back; long before the wait or the poll would have ended it.
    expect(a).toMatchObject({ ok: true, reservedMsat: 1000 });
    expect(waited).toBeLessThan(25_000);
    expect(holder.stats().leases).toBe(0);
  }, 60_000);
});
