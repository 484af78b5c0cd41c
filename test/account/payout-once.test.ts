import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeKey } from '../../core/account/close-key.js';
import { creditToken, type Money } from '../../core/account/credit-token.js';
import { LightningAddresses } from '../../core/account/lightning-address.js';
import { refundToLightning } from '../../core/account/lightning-refund.js';
import { HOLD_EXPIRY_MS, payOut } from '../../core/account/pay-out.js';
import { createLedger } from '../../core/ledger/index.js';
import type { KeyLookup, Ledger } from '../../core/ledger/types.js';
import { metricsText, setOpenPayoutSource } from '../../core/metrics.js';
import type { StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import type { DevMint, StoreKind } from '../support/dev-mint.js';
import { dropStore, startTestMint, testStore } from '../support/dev-mint.js';
import { lnurlRecipientPerSuite } from '../support/lnurl-recipient.js';
import { type MintGate, mintGate, renamedToken } from '../support/mint-gate.js';
import { until } from '../support/until.js';
import { type SettlingWalletOptions, settlingWallet } from './support/money-rig.js';

/**
 * A Lightning refund is paid once, whatever the mint and the processes do (docs/wallet.md, "Refunds to a Lightning
 * address" and "Crash safety and recovery"), on SQLite and Redis, with the dev mint behind a proxy that can queue
 * its melt requests and a loopback Lightning address whose invoices a second dev mint issues:
 *
 * - a melt pending at the mint past the old 5-minute hold expiry: the hold is not swept, a withdrawal, a key close
 *   and a second refund (what the expired-key sweep runs) are refused 409 `payout_in_progress`, and when the
 *   payment succeeds the key is debited once (before: the expired hold gave the balance back, paid and kept);
 * - a second process starting while the first's melt waits in the queue: its pass leaves the live owner's entry
 *   alone, and the melt, once at the mint, is paid and debited once (before: the start pass rolled it back);
 * - the wallet's mint timeout while the melt still waits in the queue: the entry is not rolled back on the
 *   mint's "unpaid" (its quote has not expired), and a later pass settles the payment the mint then makes.
 *
 * Numbers: 1,000 sats on the key; the mint's fee reserve is 1 % and its routing fee 0.5 %, so 990 sats go to the
 * address with a 5-sat fee: 995,000 msats debited, 5,000 left.
 */

const MINT = { feeReservePpk: 10_000, lightningFeePpk: 5_000 };

describe.each<StoreKind>(['sqlite', 'redis'])('a payout happens once (%s store)', (kind) => {
  let mint: DevMint;
  let gate: MintGate;
  const rcpt = lnurlRecipientPerSuite();
  let addresses: LightningAddresses;
  let conn: StoreConnection;
  let ledger: Ledger;
  const wallets: WalletService[] = [];

  const openWallet = async (over: Partial<SettlingWalletOptions> = {}) => {
    const w = await settlingWallet(ledger, { conn, mints: [gate.url], mintTimeoutMs: 20_000, ...over });
    wallets.push(w);
    return w;
  };

  beforeAll(async () => {
    mint = await startTestMint(MINT);
    gate = await mintGate(mint.url, '/v1/melt/bolt11');
    addresses = new LightningAddresses({ allowPrivate: true, timeoutMs: 5_000 });
    conn = testStore(kind);
    ledger = await createLedger(conn, {});
  });
  afterEach(async () => {
    gate.hold(false);
    mint.setLightningMode('pay');
    for (const w of wallets.splice(0)) await w.close();
  });
  afterAll(async () => {
    await addresses?.close();
    await ledger?.close();
    if (conn) await dropStore(conn);
    await gate?.close();
    await mint?.close();
  });

  /** A key holding exactly 1,000,000 msats, funded through `wallet` (its proofs are the operator's). */
  async function fundedKey(wallet: WalletService): Promise<{ credential: KeyLookup; accountId: string }> {
    const token = await renamedToken(await mint.mintTokens(1000, 'sat'), mint.url, gate.url);
    const r = await creditToken({ ledger, wallet }, token, { kind: 'new-key' });
    const credential = { apiKey: r.apiKey! };
    const info = await ledger.getKeyInfo(credential);
    expect(info?.account.balanceMsat).toBe(1_000_000);
    return { credential, accountId: info!.key.accountId };
  }

  /** The invoices handed out from `from` on that the recipient's mint saw paid. */
  async function paidSince(from: number): Promise<string[]> {
    const paid: string[] = [];
    for (const inv of rcpt.lnurl.invoices.slice(from)) {
      const id = rcpt.mint.quoteForInvoice(inv);
      if (id && (await rcpt.wallet.checkMintQuoteBolt11(id)).state === 'PAID') paid.push(inv);
    }
    return paid;
  }

  async function paidOnceAndDebited(money: Money, credential: KeyLookup, from: number): Promise<void> {
    expect(await paidSince(from)).toHaveLength(1);
    expect((await ledger.getKeyInfo(credential))?.account).toMatchObject({
      balanceMsat: 5_000,
      reservedMsat: 0,
      withdrawnMsat: 995_000,
    });
    expect((await ledger.getKeyInfo(credential))?.account.payout).toBeUndefined();
    expect((await ledger.checkConservation()).breaches).toEqual([]);
    const solvency = await money.wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
    expect(solvency).toMatchObject({ solvent: true, spentMsat: 0 });
  }

  it('a melt pending past the old hold expiry: the balance stays held, every other payout is refused 409, the payment is debited once', async () => {
    const wallet = await openWallet();
    const money = { ledger, wallet };
    const { credential } = await fundedKey(wallet);
    const from = rcpt.lnurl.invoices.length;
    mint.setLightningMode('pending');
    await expect(
      refundToLightning(money, addresses, { credential, address: rcpt.lnurl.address('alice') }),
    ).rejects.toMatchObject({ code: 'service_unavailable' });
    const open = (await ledger.getKeyInfo(credential))?.account;
    expect(open).toMatchObject({ balanceMsat: 1_000_000, reservedMsat: 1_000_000 });
    const holdId = open?.payout?.holdId;
    expect(holdId).toMatch(/^lnrefund-/);

    // Five and a half minutes later (the ledger's clock): no sweep releases the hold.
    const later = Date.now() + HOLD_EXPIRY_MS + 30_000;
    expect(await ledger.sweepExpired(later)).toBe(0);
    expect((await ledger.getKeyInfo(credential, later))?.account.reservedMsat).toBe(1_000_000);
    // A withdrawal, a key close and a second refund (the expired-key sweep's step) are refused, naming the payout.
    const refused = { code: 'payout_in_progress', details: { payout_id: holdId, state: 'pending' } };
    await expect(payOut(money, { credential, amountMsat: 1_000, kind: 'withdrawal' })).rejects.toMatchObject(
      refused,
    );
    await expect(
      closeKey(money, {
        target: { credential },
        self: credential,
        refund: true,
        keepDisabled: false,
        expiresInMs: 1,
      }),
    ).rejects.toMatchObject(refused);
    expect((await ledger.getKeyInfo(credential))?.key.disabled).toBe(false);
    await expect(
      refundToLightning(money, addresses, { credential, address: rcpt.lnurl.address('alice') }),
    ).rejects.toMatchObject(refused);
    // Counted as an open payout (the metric reads the journal).
    setOpenPayoutSource(() => wallet.openPayouts());
    expect(await wallet.openPayouts()).toMatchObject([{ holdId, state: 'pending' }]);
    expect(await metricsText()).toMatch(/^gateway_open_payouts 1$/m);
    expect(await metricsText()).toMatch(/^gateway_open_payout_oldest_seconds \d/m);
    // The pass keeps asking while the mint says pending.
    expect((await wallet.recover({ ownerCheck: true })).deferred).toBe(1);
    expect((await ledger.getKeyInfo(credential))?.account.reservedMsat).toBe(1_000_000);

    // The payment succeeds: the next pass debits amount + fee, once.
    mint.setLightningMode('pay');
    expect((await wallet.recover({ ownerCheck: true })).payoutsResolved).toBe(1);
    await paidOnceAndDebited(money, credential, from);
    expect((await wallet.recover({ ownerCheck: true })).examined).toBe(0);
    expect(await metricsText()).toMatch(/^gateway_open_payouts 0$/m);
    setOpenPayoutSource(undefined);
    // The account is free again: the 5 sats left go out as a token.
    const rest = await payOut(money, { credential, amountMsat: 5_000, kind: 'withdrawal' });
    expect(rest.balanceMsat).toBe(0);
  }, 60_000);

  it("a process started while another's melt waits in front of the mint leaves that entry alone; paid once", async () => {
    const a = await openWallet({ instance: { id: 'proc-a', name: 'gw-a' } });
    const money = { ledger, wallet: a };
    const { credential } = await fundedKey(a);
    const from = rcpt.lnurl.invoices.length;
    gate.hold(true);
    const refunding = refundToLightning(money, addresses, {
      credential,
      address: rcpt.lnurl.address('alice'),
    });
    await until('the melt queued in front of the mint', () => gate.waiting() === 1);

    // A second gateway starts on the same store: its start pass (the same rule as every pass) decides nothing.
    const b = await openWallet({ instance: { id: 'proc-b', name: 'gw-b' } });
    const report = await b.recover({ ownerCheck: true });
    expect(report).toMatchObject({ examined: 0, rolledBack: 0, liveOwners: 1 });
    expect((await ledger.getKeyInfo(credential))?.account.reservedMsat).toBe(1_000_000);

    gate.hold(false);
    const r = await refunding;
    expect(r).toMatchObject({ amountMsat: 990_000, feeMsat: 5_000, balanceMsat: 5_000 });
    await paidOnceAndDebited(money, credential, from);
    expect((await b.recover({ ownerCheck: true })).examined).toBe(0);
  }, 60_000);

  it('a mint timeout while the melt still waits in the queue: not rolled back; a later pass settles the payment once', async () => {
    const wallet = await openWallet({ mintTimeoutMs: 1_500, instance: { id: 'proc-c', name: 'gw-c' } });
    const money = { ledger, wallet };
    const { credential } = await fundedKey(wallet);
    const from = rcpt.lnurl.invoices.length;
    gate.hold(true);
    await expect(
      refundToLightning(money, addresses, { credential, address: rcpt.lnurl.address('alice') }),
    ).rejects.toMatchObject({ code: 'mint_unavailable' });
    // The mint said "unpaid, inputs unspent", but the request is still queued: the hold and the entry stay.
    expect((await ledger.getKeyInfo(credential))?.account).toMatchObject({
      balanceMsat: 1_000_000,
      reservedMsat: 1_000_000,
    });
    expect((await wallet.recover({ ownerCheck: true })).rolledBack).toBe(0);
    expect(gate.waiting()).toBe(1);

    // The queue delivers it; the mint pays.
    gate.hold(false);
    await until('the queued melt answered by the mint', () => gate.forwarded() === 1);
    expect(await paidSince(from)).toHaveLength(1);
    const report = await wallet.recover({ ownerCheck: true });
    expect(report).toMatchObject({ rolledBack: 0, payoutsResolved: 1 });
    await paidOnceAndDebited(money, credential, from);
  }, 60_000);
});
