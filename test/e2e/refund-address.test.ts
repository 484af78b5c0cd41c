import { describe, expect, it } from 'vitest';
import { LightningAddresses } from '../../core/account/lightning-address.js';
import {
  RefundSweep,
  SWEEP_CLAIM_MS,
  type SweepJob,
  sweepJobId,
  TRANSIENT_BACKOFF_PASSES,
} from '../../core/account/refund-sweep.js';
import { createLogger } from '../../core/log.js';
import { type JobQueue, RedisJobQueue, SqliteJobQueue } from '../../core/store/job-queue.js';
import { lnurlRecipientPerSuite } from '../support/lnurl-recipient.js';
import { paidGatewayPerSuite } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * Refund addresses, on SQLite and Redis: a key's refund address (a Lightning address) is checked by resolving
 * its LNURL-pay endpoint — a real LNURL server on loopback whose callback answers with an invoice of a second dev
 * mint (the recipient's wallet, its quotes paid only by a payment) — and the balance is paid there through the
 * gateway's mint: the recipient's quote turns PAID, the key is debited the amount plus the fee the mint charged,
 * and the answer shows the fee paid and the reserve. No address → 400; a failed payment releases the hold; an
 * expired key is swept there exactly once by two sweep runners on one store (and by the gateways' own sweep,
 * across processes: test/e2e/refund-sweep-processes.test.ts). Audit clean, wallet solvent.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

describe.each(['sqlite', 'redis'] as const)('refund to a Lightning address on %s', (store) => {
  // The recipient's mint: its quotes are paid only when a melt pays their invoice (the fake Lightning network).
  const rcpt = lnurlRecipientPerSuite();
  const h = paidGatewayPerSuite(
    {
      store,
      // The routing fee equals the 1 % reserve: the whole hold is used and the balance goes to 0.
      mint: { feeReservePpk: 10_000, lightningFeePpk: 10_000 },
      env: { LIGHTNING_ADDRESS_ALLOW_PRIVATE: 'true', EXPIRED_KEY_SWEEP: 'false' },
    },
    { auditEachTest: false },
  );

  async function post(key: string, path: string, body: unknown): Promise<{ status: number; json: Json }> {
    const r = await fetch(`${h.gateway.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: r.status, json: (await r.json()) as Json };
  }

  /** A key of `sats` that expires in 5 s with the address alice@ set, and the sweep's job queue on its store. */
  async function expiringKeyWithAddress(sats: number) {
    const expiresAtMs = Date.now() + 5000;
    const { apiKey, keyId } = await h.fundKey(sats, { expiresAtMs });
    expect(
      (await post(apiKey, '/v1/wallet/update', { refund_address: rcpt.lnurl.address('alice') })).status,
    ).toBe(200);
    const conn = h.gateway.services.store!;
    const jobs =
      conn.kind === 'redis'
        ? new RedisJobQueue<SweepJob>(conn.redis, conn.prefix, 'refund-sweep')
        : new SqliteJobQueue<SweepJob>(conn.db, 'refund_sweep_jobs');
    return { apiKey, keyId, expiresAtMs, jobs };
  }

  interface ClockedSweep {
    sweep: RefundSweep;
    setClock: (ms: number) => void;
    paid: string[];
    jobs: JobQueue<SweepJob>;
  }

  /** A sweep runner on the gateway's money whose clock the test sets (starting at `at`); `paid` lists its payments. */
  function clockedSweep(jobs: JobQueue<SweepJob>, everyMs: number, at: number): ClockedSweep {
    let clock = at;
    const paid: string[] = [];
    const sweep = new RefundSweep({
      jobs,
      money: { ledger: h.ledger, wallet: h.wallet },
      addresses: h.gateway.services.lightningAddresses!,
      log: createLogger('silent'),
      everyMs,
      onPaid: (id) => paid.push(id),
      now: () => clock,
    });
    return {
      sweep,
      paid,
      jobs,
      setClock: (ms) => {
        clock = ms;
      },
    };
  }

  /**
   * A sweep whose clock the test moves: the key's job is not claimed 1 ms before `at`, and at `at` it is claimed
   * and paid: the key emptied, the job gone, the audit exact.
   */
  async function claimedAndPaidAt(
    s: ClockedSweep,
    key: { apiKey: string; keyId: string },
    at: number,
  ): Promise<void> {
    s.setClock(at - 1);
    expect(await s.sweep.tick()).toBe(0);
    s.setClock(at);
    expect(await s.sweep.tick()).toBe(1);
    expect(s.paid).toEqual([key.keyId]);
    expect(await h.available(key.apiKey)).toBe(0);
    expect(await s.jobs.get(sweepJobId(key.keyId))).toBeNull();
    await h.auditOk();
  }

  /** The recipient mint's state of the quote behind an invoice the LNURL callback handed out. */
  async function quoteState(invoice: string): Promise<string> {
    const id = rcpt.mint.quoteForInvoice(invoice);
    if (!id) throw new Error('not an invoice of the recipient mint');
    return (await rcpt.wallet.checkMintQuoteBolt11(id)).state;
  }

  it('checks the address by resolving it: valid, not name@host, unresolvable, not LNURL-pay; null clears it', async () => {
    const { apiKey } = await h.fundKey(100);
    const ok = await post(apiKey, '/v1/wallet/update', { refund_address: rcpt.lnurl.address('ALICE') });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ refund_address: rcpt.lnurl.address('alice'), allowed_ips: [] });
    const bad = [
      ['not-an-address', 'refund_address_invalid'],
      ['a b@example.com', 'refund_address_invalid'],
      [rcpt.lnurl.address('nobody'), 'refund_address_unresolvable'],
      [rcpt.lnurl.address('withdraw'), 'refund_address_not_lnurl_pay'],
    ] as const;
    for (const [address, code] of bad) {
      const r = await post(apiKey, '/v1/wallet/update', { refund_address: address });
      expect(r.status, address).toBe(400);
      expect(r.json.error).toMatchObject({ code, type: 'invalid_request' });
    }
    // A refused address changes nothing; the allow-list is left as it was when only the address is given.
    const info = await h.ledger.getKeyInfo({ apiKey });
    expect(info?.key.refundAddress).toBe(rcpt.lnurl.address('alice'));
    const cleared = await post(apiKey, '/v1/wallet/update', { refund_address: null });
    expect(cleared).toMatchObject({ status: 200, json: { refund_address: null } });
    const none = await post(apiKey, '/v1/wallet/refund', { to: 'refund_address' });
    expect(none.status).toBe(400);
    expect(none.json.error.code).toBe('refund_address_missing');
    expect(await h.available(apiKey)).toBe(100_000);
    await h.auditOk();
  });

  it('pays the whole balance to the address through the mint: the invoice is paid, balance 0, fee and reserve shown', async () => {
    const { apiKey } = await h.fundKey(1000);
    expect(
      (await post(apiKey, '/v1/wallet/update', { refund_address: rcpt.lnurl.address('alice') })).status,
    ).toBe(200);
    const before = rcpt.lnurl.invoices.length;
    const r = await post(apiKey, '/v1/wallet/refund', { to: 'refund_address' });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    // 1000 sats do not cover 1000 + a 10-sat reserve: 990 sats are sent, the 10-sat reserve is the fee charged.
    expect(r.json).toMatchObject({
      refund_address: rcpt.lnurl.address('alice'),
      amount_msats: 990_000,
      fee_msats: 10_000,
      fee_reserve_msats: 10_000,
      balance: 0,
      mint: h.mint.url,
    });
    expect(typeof r.json.payment_preimage).toBe('string');
    // The recipient mint saw the invoice paid (two invoices asked: the first did not fit with its reserve).
    const paid = rcpt.lnurl.invoices.slice(before);
    expect(paid.length).toBe(2);
    expect(await quoteState(paid[1]!)).toBe('PAID');
    expect(await quoteState(paid[0]!)).toBe('UNPAID');
    expect(await h.available(apiKey)).toBe(0);
    const tx = await h.ledger.listTransactions({ apiKey });
    expect(tx?.transactions[0]).toMatchObject({ type: 'refund', amountMsat: -1_000_000 });
    // Nothing is left in the wallet journal (the melt and its payout record are settled).
    expect((await h.wallet.recover()).examined).toBe(0);
    await h.auditOk();
    // Nothing left to pay: 402 with the precise code, nothing held.
    const again = await post(apiKey, '/v1/wallet/refund', { to: 'refund_address' });
    expect(again.status).toBe(402);
  });

  it('a failing payment releases the hold: the balance is intact and nothing is journalled', async () => {
    const { apiKey } = await h.fundKey(500);
    expect(
      (await post(apiKey, '/v1/wallet/update', { refund_address: rcpt.lnurl.address('alice') })).status,
    ).toBe(200);
    h.mint.setLightningMode('fail');
    try {
      const r = await post(apiKey, '/v1/wallet/refund', { to: 'refund_address' });
      // The mint answers 20004 (payment failed): nothing was paid, the mint's error is the answer.
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe('mint_unavailable');
    } finally {
      h.mint.setLightningMode('pay');
    }
    const info = await h.ledger.getKeyInfo({ apiKey });
    expect(info?.account).toMatchObject({ balanceMsat: 500_000, reservedMsat: 0, withdrawnMsat: 0 });
    expect((await h.wallet.recover()).examined).toBe(0);
    await h.auditOk();
    // The same refund goes through once the mint pays again.
    const ok = await post(apiKey, '/v1/wallet/refund', { to: 'refund_address' });
    expect(ok.status).toBe(200);
    expect(ok.json.balance).toBe(0);
    await h.auditOk();
  });

  it('an expired key with a balance and an address is swept there once by two runners on one store, audited', async () => {
    // Far enough ahead for funding (a mint round trip) and setting the address before the key expires.
    const expiresAtMs = Date.now() + 5000;
    const { apiKey, keyId } = await h.fundKey(300, { expiresAtMs });
    const set = await post(apiKey, '/v1/wallet/update', { refund_address: rcpt.lnurl.address('alice') });
    expect(set.status, JSON.stringify(set.json)).toBe(200);
    const conn = h.gateway.services.store!;
    const queue = () =>
      conn.kind === 'redis'
        ? new RedisJobQueue<SweepJob>(conn.redis, conn.prefix, 'refund-sweep')
        : new SqliteJobQueue<SweepJob>(conn.db, 'refund_sweep_jobs');
    expect(await queue().get(sweepJobId(keyId))).toMatchObject({ keyId, attempts: 0 });
    const paid: string[] = [];
    const runner = () =>
      new RefundSweep({
        jobs: queue(),
        money: { ledger: h.ledger, wallet: h.wallet },
        addresses: h.gateway.services.lightningAddresses!,
        log: createLogger('silent'),
        everyMs: 1000,
        audit: h.gateway.services.audit,
        onPaid: (id) => paid.push(id),
      });
    const [a, b] = [runner(), runner()];
    // Not due before the expiry.
    expect(await a.tick()).toBe(0);
    await until('the key expired', () => Date.now() > expiresAtMs, 8000);
    const before = rcpt.lnurl.invoices.length;
    const claimed = await Promise.all([a.tick(), b.tick()]);
    expect(claimed[0] + claimed[1]).toBe(1);
    expect(paid).toEqual([keyId]);
    const invoices = rcpt.lnurl.invoices.slice(before);
    expect(await quoteState(invoices.at(-1)!)).toBe('PAID');
    expect(await h.available(apiKey)).toBe(0);
    expect(await queue().get(sweepJobId(keyId))).toBeNull();
    expect(await Promise.all([a.tick(), b.tick()])).toEqual([0, 0]);
    const audit = h.gateway.services.audit!;
    await until('the sweep is in the audit trail', async () => {
      await audit.flush();
      const page = await audit.list({ keyId, limit: 20 });
      return page.data.some(
        (r) => r.method === 'SWEEP' && r.response_status === 200 && r.cost_msats === 300_000,
      );
    });
    await h.auditOk();
  });

  it('a sweep that meets another payout of the account looks again at the next pass, without backoff, and then pays', async () => {
    const { apiKey, keyId, expiresAtMs, jobs } = await expiringKeyWithAddress(200);
    // The holder's own refund places its payout hold between the sweep's look at the account and the sweep's
    // hold: the ledger refuses the sweep's hold payout_in_progress (once, here).
    let refusals = 0;
    const ledger = new Proxy(h.ledger, {
      get(target, prop, receiver) {
        if (prop === 'holdWithdrawal' && refusals === 0) {
          return async () => {
            refusals++;
            return {
              ok: false,
              code: 'payout_in_progress',
              payout: { holdId: 'lnrefund-other', sinceMs: Date.now() },
            };
          };
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const paid: string[] = [];
    const sweep = new RefundSweep({
      jobs,
      money: { ledger, wallet: h.wallet },
      addresses: h.gateway.services.lightningAddresses!,
      log: createLogger('silent'),
      everyMs: 300,
      onPaid: (id) => paid.push(id),
    });
    await until('the key expired', () => Date.now() > expiresAtMs, 8000);
    expect(await sweep.tick()).toBe(1);
    expect(refusals).toBe(1);
    // Not a failure: the attempts are unchanged, so the next look is one pass away, not a growing backoff.
    expect(await jobs.get(sweepJobId(keyId))).toMatchObject({ attempts: 0 });
    expect(await h.ledger.getKeyInfo({ apiKey })).toMatchObject({ account: { balanceMsat: 200_000 } });
    await until('the next pass pays', async () => (await sweep.tick()) === 1 && paid.length === 1, 8000, 100);
    expect(paid).toEqual([keyId]);
    expect(await h.available(apiKey)).toBe(0);
    expect(await jobs.get(sweepJobId(keyId))).toBeNull();
    await h.auditOk();
  });

  it('a job whose sweeper died after claiming it is claimed again once its claim (a minute) runs out, and paid', async () => {
    const { apiKey, keyId, expiresAtMs, jobs } = await expiringKeyWithAddress(200);
    await until('the key expired', () => Date.now() > expiresAtMs, 8000);
    // A process claims the job and dies before doing anything with it.
    const claimedAt = Date.now();
    expect((await jobs.claim(claimedAt, SWEEP_CLAIM_MS, 5)).map((j) => j.keyId)).toEqual([keyId]);
    // Still claimed a millisecond before the minute is out; claimed and paid once it is.
    await claimedAndPaidAt(clockedSweep(jobs, 500, claimedAt), { apiKey, keyId }, claimedAt + SWEEP_CLAIM_MS);
  });

  it('a pass claims one job at a time: while one process is stuck on a key, another sweeps the next', async () => {
    const first = await expiringKeyWithAddress(200);
    const second = await expiringKeyWithAddress(200);
    await until('both keys expired', () => Date.now() > second.expiresAtMs, 8000);
    // Process A's hold hangs (its store call on the way) until released.
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let stuckOn: string | undefined;
    const stuckLedger = new Proxy(h.ledger, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop === 'holdWithdrawal' && stuckOn === undefined) {
          return async (...args: unknown[]) => {
            stuckOn = 'held';
            await released;
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const paid: string[] = [];
    const runner = (ledger: typeof h.ledger) =>
      new RefundSweep({
        jobs: first.jobs,
        money: { ledger, wallet: h.wallet },
        addresses: h.gateway.services.lightningAddresses!,
        log: createLogger('silent'),
        everyMs: 500,
        onPaid: (id) => paid.push(id),
      });
    const a = runner(stuckLedger);
    const b = runner(h.ledger);
    const aPass = a.tick();
    await until('A is stuck on a key', () => stuckOn !== undefined, 8000, 20);
    // A claimed only the key it works on: B takes the other one and pays it meanwhile.
    expect(await b.tick()).toBe(1);
    expect(paid).toHaveLength(1);
    release();
    expect(await aPass).toBe(1);
    expect(paid.sort()).toEqual([first.keyId, second.keyId].sort());
    expect(await h.available(first.apiKey)).toBe(0);
    expect(await h.available(second.apiKey)).toBe(0);
    expect(await first.jobs.get(sweepJobId(first.keyId))).toBeNull();
    expect(await first.jobs.get(sweepJobId(second.keyId))).toBeNull();
    await h.auditOk();
  });

  it('a sweep that cannot reach the mint retries within 16 passes however many attempts failed, then pays', async () => {
    const { apiKey, keyId, expiresAtMs, jobs } = await expiringKeyWithAddress(200);
    await until('the key expired', () => Date.now() > expiresAtMs, 8000);
    // Ten attempts failed already (a long mint outage): the address's backoff would be 2^10 passes.
    await jobs.put({ id: sweepJobId(keyId), keyId, attempts: 10 }, Date.now());
    const failedAt = Date.now();
    const everyMs = 1000;
    const s = clockedSweep(jobs, everyMs, failedAt);
    h.mint.setOutage(503);
    try {
      expect(await s.sweep.tick()).toBe(1);
    } finally {
      h.mint.setOutage(null);
    }
    expect(s.paid).toEqual([]);
    expect(await jobs.get(sweepJobId(keyId))).toMatchObject({ attempts: 11 });
    expect(await h.ledger.getKeyInfo({ apiKey })).toMatchObject({
      account: { balanceMsat: 200_000, reservedMsat: 0 },
    });
    // Not due a millisecond before the cap, due at it; the mint is back: paid.
    await claimedAndPaidAt(s, { apiKey, keyId }, failedAt + TRANSIENT_BACKOFF_PASSES * everyMs);
  });

  it('a sweep that cannot reach the address keeps the balance and retries with backoff', async () => {
    const { apiKey, keyId, expiresAtMs, jobs } = await expiringKeyWithAddress(200);
    // The address stops answering as LNURL-pay after it was set (its server now answers 404 for the callback).
    await h.ledger.updateKey({ credential: { apiKey } }, { refundAddress: rcpt.lnurl.address('gone') });
    const sweep = new RefundSweep({
      jobs,
      money: { ledger: h.ledger, wallet: h.wallet },
      addresses: new LightningAddresses({ allowPrivate: true, timeoutMs: 2000 }),
      log: createLogger('silent'),
      everyMs: 60_000,
    });
    await until('the key expired', () => Date.now() > expiresAtMs, 8000);
    expect(await sweep.tick()).toBe(1);
    expect(await jobs.get(sweepJobId(keyId))).toMatchObject({ attempts: 1 });
    // Due again only after the first backoff step (EXPIRED_KEY_SWEEP_MS): not claimed now.
    expect(await sweep.tick()).toBe(0);
    expect(await h.ledger.getKeyInfo({ apiKey })).toMatchObject({
      account: { balanceMsat: 200_000, reservedMsat: 0 },
    });
    await h.auditOk();
  });
});
