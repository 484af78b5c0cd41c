import { Wallet } from '@cashu/cashu-ts';
import { describe, expect, it } from 'vitest';
import { LightningAddresses } from '../../core/account/lightning-address.js';
import { RefundSweep, SWEEP_CLAIM_MS, type SweepJob, sweepJobId } from '../../core/account/refund-sweep.js';
import type { Ledger } from '../../core/ledger/types.js';
import { createLogger } from '../../core/log.js';
import type { StoreConnection } from '../../core/store/connection.js';
import { RedisJobQueue, SqliteJobQueue } from '../../core/store/job-queue.js';
import type { WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import type { GatewayProcess } from '../../scripts/lib/gateway-process.js';
import { lnurlRecipientPerSuite } from '../support/lnurl-recipient.js';
import { type PaidProcesses, paidProcessesPerTest } from '../support/paid-process.js';
import { until } from '../support/until.js';

/**
 * The gateways' OWN expired-key sweep (EXPIRED_KEY_SWEEP on, EXPIRED_KEY_SWEEP_MS short), two gateway processes
 * on one store, SQLite and Redis: a key that expires with 300 sats and a refund address is paid to that
 * Lightning address (a loopback LNURL server whose invoices are a second dev mint's, paid only by a melt) by
 * exactly one of the two — one invoice paid, one SWEEP audit record, one "swept" log line, balance 0 — and
 * when the gateway that claimed the key is killed with kill -9 while its melt is in flight at the mint, the
 * other one finishes that melt (its wallet recovery pass) exactly once: the same invoice paid, no second one,
 * the hold committed and nothing left to sweep when the dead claim runs out.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const SWEEP_ENV = {
  LIGHTNING_ADDRESS_ALLOW_PRIVATE: 'true',
  EXPIRED_KEY_SWEEP: 'true',
  EXPIRED_KEY_SWEEP_MS: '100',
  // The survivor's recovery pass finishes a dead process's melt: every second here instead of every minute.
  WALLET_RECOVERY_MS: '1000',
  // ...once the dead process counts as gone: its heartbeat 5 s old here instead of 30 s (the default), which
  // a live gateway's heartbeat (every third of that) never reaches.
  ORPHAN_RELEASE_MS: '5000',
};
/** The routing fee equals the 1 % reserve: 300 sats pay 297 + 3 and leave 0. */
const MINT = { feeReservePpk: 10_000, lightningFeePpk: 10_000 };

const sweepJobs = (conn: StoreConnection) =>
  conn.kind === 'redis'
    ? new RedisJobQueue<SweepJob>(conn.redis, conn.prefix, 'refund-sweep')
    : new SqliteJobQueue<SweepJob>(conn.db, 'refund_sweep_jobs');

/** The ledger and an operator wallet on the rig's store, as a gateway builds them (closed afterwards). */
function withMoney<T>(
  rig: PaidProcesses,
  fn: (m: { ledger: Ledger; wallet: WalletService; conn: StoreConnection }) => Promise<T>,
): Promise<T> {
  return rig.ps.withLedger(async (ledger, conn) => {
    const wallet = await createWallet({ conn, mints: [rig.mint.url], log: createLogger('silent') });
    try {
      return await fn({ ledger, wallet, conn });
    } finally {
      await wallet.close();
    }
  });
}

/** A key funded with `sats` from the mint that expires at `expiresAtMs` (POST /v1/wallet/create sets none). */
async function expiringKey(
  rig: PaidProcesses,
  sats: number,
  expiresAtMs: number,
): Promise<{ apiKey: string; keyId: string }> {
  const token = await rig.mint.mintTokens(sats);
  return withMoney(rig, async ({ ledger, wallet }) => {
    const receipt = await wallet.receive(token);
    const r = await ledger.createKeyFromDeposit({
      tokenHash: receipt.tokenHash,
      amountMsat: receipt.amountMsat,
      expiresAtMs,
    });
    if (!r.ok) throw new Error(`createKeyFromDeposit refused: ${r.code}`);
    return { apiKey: r.apiKey, keyId: r.key.keyId };
  });
}

async function walletBalance(base: string, key: string): Promise<Json> {
  const r = await fetch(`${base}/v1/wallet/balance`, { headers: { authorization: `Bearer ${key}` } });
  expect(r.status).toBe(200);
  return (await r.json()) as Json;
}

/** A check for `until`: the key at `base` holds nothing, available or reserved. */
const emptied = (base: string, key: string) => async () => {
  const w = await walletBalance(base, key);
  return w.balance === 0 && w.reserved === 0;
};

const sweptLines = (gw: GatewayProcess) =>
  gw
    .logs()
    .split('\n')
    .filter((l) => l.includes('expired key swept to its refund address')).length;

describe.each(['sqlite', 'redis'] as const)("the gateways' own expired-key sweep on %s", (store) => {
  const rcpt = lnurlRecipientPerSuite();
  const paidProcesses = paidProcessesPerTest();

  /** Of the invoices handed out from index `from` on, those the recipient's mint saw paid. */
  const paidSince = async (from: number) => {
    const paid: string[] = [];
    const recipient = new Wallet(rcpt.mint.url, { unit: 'sat' });
    await recipient.loadMint();
    for (const inv of rcpt.lnurl.invoices.slice(from)) {
      const id = rcpt.mint.quoteForInvoice(inv);
      if (id && (await recipient.checkMintQuoteBolt11(id)).state === 'PAID') paid.push(inv);
    }
    return paid;
  };

  /** Two sweeping gateways, a key expiring in 12 s with a refund address set through the first one. */
  async function setUp() {
    const rig = await paidProcesses(store, {}, MINT);
    const a = await rig.spawn(SWEEP_ENV);
    const b = await rig.spawn(SWEEP_ENV);
    const base = (gw: GatewayProcess) => `http://127.0.0.1:${gw.port}`;
    // Far enough ahead for funding (the mint's round trips) and setting the address before it expires, also on a
    // loaded machine (5 s expired first there: 401 key_expired on the update).
    const t0 = Date.now();
    const expiresAtMs = t0 + 12_000;
    const { apiKey, keyId } = await expiringKey(rig, 300, expiresAtMs);
    const set = await fetch(`${base(a)}/v1/wallet/update`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ refund_address: rcpt.lnurl.address('alice') }),
    });
    expect(set.status, await set.text()).toBe(200);
    return { rig, a, b, base, apiKey, keyId, expiresAtMs };
  }

  /** After the sweep: balance 0, nothing held, 300 sats withdrawn in one refund, the ledger's conservation check clean. */
  async function expectSweptOnce(rig: PaidProcesses, apiKey: string) {
    await withMoney(rig, async ({ ledger }) => {
      const info = await ledger.getKeyInfo({ apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 0, reservedMsat: 0, withdrawnMsat: 300_000 });
      const tx = await ledger.listTransactions({ apiKey });
      expect(tx!.transactions.filter((t) => t.type === 'refund').map((t) => t.amountMsat)).toEqual([
        -300_000,
      ]);
      expect((await ledger.checkConservation()).breaches).toEqual([]);
    });
  }

  it('two gateways sweeping one store: the expired key is paid to its address once, balance 0', async () => {
    const { rig, a, b, base, apiKey, keyId, expiresAtMs } = await setUp();
    const from = rcpt.lnurl.invoices.length;
    await until('the key swept', emptied(base(b), apiKey), 40_000).catch((err: Error) => {
      throw new Error(
        `${err.message}\n--- a ---\n${a.logs().slice(-4000)}\n--- b ---\n${b.logs().slice(-4000)}`,
      );
    });
    // One invoice paid (two asked: 300 sats do not cover 300 + a 3-sat reserve; 297 sats were sent).
    expect((await paidSince(from)).length).toBe(1);
    expect(rcpt.lnurl.invoices.length - from).toBe(2);
    await expectSweptOnce(rig, apiKey);
    // One of the two did it, and said so.
    await until('the sweep logged', () => sweptLines(a) + sweptLines(b) === 1);
    await until('the job removed', () =>
      withMoney(rig, async ({ conn }) => (await sweepJobs(conn).get(sweepJobId(keyId))) === null),
    );
    await until('the sweep is in the audit trail', () =>
      rig.ps.withAuditLog(async (audit) => {
        const page = await audit.list({ keyId, limit: 20 });
        return page.data.filter((r) => r.method === 'SWEEP').length === 1;
      }),
    );
    await rig.ps.withAuditLog(async (audit) => {
      const sweeps = (await audit.list({ keyId, limit: 20 })).data.filter((r) => r.method === 'SWEEP');
      expect(sweeps).toMatchObject([{ response_status: 200, cost_msats: 300_000 }]);
      // Not before the key expired.
      expect(Date.parse(sweeps[0]!.timestamp)).toBeGreaterThanOrEqual(expiresAtMs);
    });
  }, 90_000);

  it('the claiming gateway is killed (kill -9) with its melt in flight: the other finishes it, one payment', async () => {
    const { rig, a, b, base, apiKey, keyId } = await setUp();
    rcpt.lnurl.callers = [a.pid!, b.pid!];
    const from = rcpt.lnurl.invoices.length;
    const pidsFrom = rcpt.lnurl.callbackPids.length;
    // The mint accepts the melt and holds it, its Lightning payment in flight, without answering.
    rig.mint.setLightningMode('pending');
    rig.mint.setStall(/^\/v1\/melt\/bolt11$/);
    let inFlight: string | undefined;
    await until(
      'a melt of the sweep in flight at the mint',
      () => {
        inFlight = rcpt.lnurl.invoices.slice(from).find((inv) => rig.mint.meltQuoteState(inv) === 'PENDING');
        return inFlight !== undefined;
      },
      20_000,
    );
    const askers = new Set(rcpt.lnurl.callbackPids.slice(pidsFrom));
    expect(askers.size).toBe(1);
    const claimer = [a, b].find((gw) => askers.has(gw.pid));
    if (claimer === undefined) throw new Error('the invoice was asked for by neither gateway');
    const other = claimer === a ? b : a;
    await claimer.kill('SIGKILL');
    // The payment completes on the Lightning network after the gateway died.
    rig.mint.setStall(null);
    rig.mint.setLightningMode('pay');
    // The survivor's wallet recovery pass (WALLET_RECOVERY_MS, on journal entries older than their claim) decides the
    // melt against the mint and commits the hold.
    await until('the melt settled by the other gateway', emptied(base(other), apiKey), 150_000, 500);
    expect(other.alive()).toBe(true);
    expect(other.logs()).toContain('wallet journal entry resolved');
    expect(await paidSince(from)).toEqual([inFlight]);
    await expectSweptOnce(rig, apiKey);
    // The dead gateway's claim on the job outlives it (SWEEP_CLAIM_MS); when its claim has run out a sweep
    // claims the job again, finds nothing to pay and removes it: the survivor's own sweep if the minute passed
    // while the melt was decided, else one here whose clock is past the claim.
    await withMoney(rig, async ({ ledger, wallet, conn }) => {
      const jobs = sweepJobs(conn);
      if ((await jobs.get(sweepJobId(keyId))) === null) return;
      const paid: string[] = [];
      const sweep = new RefundSweep({
        jobs,
        money: { ledger, wallet },
        addresses: new LightningAddresses({ allowPrivate: true, timeoutMs: 2000 }),
        log: createLogger('silent'),
        everyMs: 100,
        onPaid: (id) => paid.push(id),
        now: () => Date.now() + SWEEP_CLAIM_MS + 1000,
      });
      expect(await sweep.tick()).toBe(1);
      expect(paid).toEqual([]);
      expect(await jobs.get(sweepJobId(keyId))).toBeNull();
    });
    expect(await paidSince(from)).toEqual([inFlight]);
    rcpt.lnurl.callers = [];
  }, 200_000);
});
