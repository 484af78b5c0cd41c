import { Wallet } from '@cashu/cashu-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditToken } from '../../core/account/credit-token.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import type { StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import type { DevMint, StoreKind } from '../support/dev-mint.js';
import { dropStore, startTestMint, testStore } from '../support/dev-mint.js';
import { settlingWallet } from './support/money-rig.js';

/**
 * A Lightning refund whose process stops between the payment and the ledger step (what lightning-refund.ts
 * does after `wallet.payout`): the hold stays (its id names no process, so orphan release leaves it), the
 * journal holds the decision, and the recovery pass commits the hold for the amount plus the fee charged —
 * once, however often it runs. A melt left pending at the mint keeps the hold until the mint decides; the pass
 * that sees it decided settles the hold in the same pass. On SQLite and Redis.
 */
describe.each(['sqlite', 'redis'] as const)('Lightning payout recovery (%s)', (kind: StoreKind) => {
  let mint: DevMint;
  let recipientMint: DevMint;
  let recipient: Wallet;
  let conn: StoreConnection;
  let ledger: Ledger;
  let wallet: WalletService;

  beforeAll(async () => {
    mint = await startTestMint({ feeReservePpk: 10_000, lightningFeePpk: 5_000 });
    recipientMint = await startTestMint({ mintQuotePayment: 'manual' });
    recipient = new Wallet(recipientMint.url, { unit: 'sat' });
    await recipient.loadMint();
    conn = testStore(kind);
    ledger = await createLedger(conn, {});
    wallet = await settlingWallet(ledger, {
      conn,
      mints: [mint.url],
      mintTimeoutMs: 5000,
      // Every record is due at once (a live payout would have finished long before in real life).
      claimStaleAfterMs: 0,
    });
  });
  afterAll(async () => {
    await wallet?.close();
    await ledger?.close();
    await dropStore(conn);
    await mint?.close();
    await recipientMint?.close();
  });

  /** A key funded with `sats`, a hold of all of it, and an invoice + quote that fit the hold. */
  async function paidButNotSettled(sats: number, holdId: string) {
    const r = await creditToken({ ledger, wallet }, await mint.mintTokens(sats), { kind: 'new-key' });
    const credential = { apiKey: r.apiKey! };
    // Started before the hold, as every Lightning payout is (lightning-refund.ts): the melt claims this entry.
    await wallet.startPayout(holdId, (await ledger.getKeyInfo(credential))!.account.accountId);
    const hold = await ledger.holdWithdrawal({
      credential,
      amountMsat: 'all',
      holdId,
      kind: 'refund',
      expiresInMs: 300_000,
    });
    if (!hold.ok) throw new Error(hold.code);
    const invoice = (await recipient.createMintQuoteBolt11(sats - 10)).request;
    const quote = await wallet.quoteInvoice(invoice);
    return { credential, hold, invoice, quote };
  }

  it('paid, then the process stopped: the recovery pass commits amount + fee once', async () => {
    const { credential, hold, invoice, quote } = await paidButNotSettled(1000, 'lnrefund-crash-1');
    const paid = await wallet.payInvoice(invoice, {
      quote,
      hold: { holdId: 'lnrefund-crash-1', accountId: hold.accountId, heldMsat: hold.heldMsat, credential },
    });
    expect(paid).toMatchObject({ amountMsat: 990_000, feeMsat: 5_000 });
    // (the process stops here: no commit)
    expect((await ledger.getKeyInfo(credential))?.account).toMatchObject({ reservedMsat: 1_000_000 });
    expect(await wallet.getLightningPayout('lnrefund-crash-1')).toMatchObject({ paid: true, feeMsat: 5_000 });
    expect((await ledger.releaseOrphans(0)).released).toBe(0);
    const report = await wallet.recover();
    expect(report.payoutsResolved).toBe(1);
    expect((await ledger.getKeyInfo(credential))?.account).toMatchObject({
      balanceMsat: 5_000,
      reservedMsat: 0,
      withdrawnMsat: 995_000,
    });
    expect(await wallet.getLightningPayout('lnrefund-crash-1')).toBeNull();
    expect((await wallet.recover()).examined).toBe(0);
    expect((await ledger.getKeyInfo(credential))?.account.withdrawnMsat).toBe(995_000);
    expect((await ledger.checkConservation()).ok).toBe(true);
    expect((await wallet.checkSolvency(() => ledger.totalUserBalancesMsat())).solvent).toBe(true);
  });

  it('pending at the mint: the hold stays until the mint decides, then one pass settles it', async () => {
    const { credential, hold, invoice, quote } = await paidButNotSettled(500, 'lnrefund-pending-1');
    mint.setLightningMode('pending');
    try {
      await expect(
        wallet.payInvoice(invoice, {
          quote,
          hold: {
            holdId: 'lnrefund-pending-1',
            accountId: hold.accountId,
            heldMsat: hold.heldMsat,
            credential,
          },
        }),
      ).rejects.toMatchObject({ code: 'service_unavailable' });
      const undecided = await wallet.getLightningPayout('lnrefund-pending-1');
      expect(undecided).toMatchObject({ holdId: 'lnrefund-pending-1', amountMsat: 490_000 });
      expect(undecided?.paid).toBeUndefined();
      expect((await wallet.recover()).deferred).toBeGreaterThanOrEqual(1);
      expect((await ledger.getKeyInfo(credential))?.account.reservedMsat).toBe(500_000);
    } finally {
      mint.setLightningMode('pay');
    }
    const report = await wallet.recover();
    expect(report.payoutsResolved).toBe(1);
    const id = recipientMint.quoteForInvoice(invoice)!;
    expect((await recipient.checkMintQuoteBolt11(id)).state).toBe('PAID');
    expect((await ledger.getKeyInfo(credential))?.account).toMatchObject({
      reservedMsat: 0,
      withdrawnMsat: 493_000 /* 490 sats + the 3-sat fee (0.5 %, rounded up) */,
    });
    expect(await wallet.getLightningPayout('lnrefund-pending-1')).toBeNull();
    expect((await ledger.checkConservation()).ok).toBe(true);
  });
});
