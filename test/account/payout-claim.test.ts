import { describe, expect, it } from 'vitest';
import { creditToken, type Money } from '../../core/account/credit-token.js';
import { newPayoutHoldId } from '../../core/account/lightning-refund.js';
import { settlePayout, settlePayoutRecord } from '../../core/account/pay-out.js';
import { ownedId } from '../../core/ledger/owner.js';
import type { WalletService } from '../../core/wallet/types.js';
import { openProofStore } from '../../core/wallet/wallet.js';
import type { StoreKind } from '../support/dev-mint.js';
import { redeemElsewhere } from '../support/dev-mint.js';
import { until } from '../support/until.js';
import { balancedAfterEach, moneyRigPerSuite, settlingWallet } from './support/money-rig.js';

/**
 * A token payout (a withdrawal, a refund, a key close) and the recovery pass that takes an unfinished one back
 * race for the payout's record: the owner hands the token out only if its `finishPayout` deleted the record, and
 * a pass takes the token back (and credits the hold back) only if it claimed the record first (moved it to
 * `payout-reclaim:<holdId>`, atomically against that delete). Whichever comes second does nothing: a token
 * handed out always redeems, a token taken back is never handed out, and the account is debited once or not at
 * all. (Found by the payout chaos slice on Redis: "a token handed out does not redeem: proofs already spent",
 * where a pass acted on a record it had listed just before the owner finished it.)
 *
 * The steps are those of `payOut` (core/account/pay-out.ts), run here one by one so each order is exact. Real
 * ledger, wallet and dev mint, both stores.
 */
describe.each<StoreKind>(['sqlite', 'redis'])(
  'a payout record is finished or taken back, never both (%s)',
  (kind) => {
    const rig = moneyRigPerSuite(kind);
    const money = (): Money => ({ ledger: rig.ledger, wallet: rig.wallet });
    balancedAfterEach(money);

    /** The payout record of a hold as the journal holds it (what a recovery pass lists), or null. */
    const recordOf = async (holdId: string) =>
      (await openProofStore(rig.conn).getOp(`payout:${holdId}`))?.payout ?? null;

    /** A funded key (1,000 sats) and a payout of 400 sats made and committed, its record still there. */
    async function committedPayout() {
      const made = await creditToken(money(), await rig.mint.mintTokens(1000), { kind: 'new-key' });
      const credential = { apiKey: made.apiKey! };
      const holdId = ownedId('withdraw');
      const hold = await rig.ledger.holdWithdrawal({
        credential,
        amountMsat: 400_000,
        holdId,
        kind: 'withdrawal',
        expiresInMs: 300_000,
      });
      if (!hold.ok) throw new Error(hold.code);
      const payout = { holdId, accountId: hold.accountId, heldMsat: hold.heldMsat, credential };
      const sent = await rig.wallet.send(hold.heldMsat, { payout });
      const commit = await rig.ledger.commitWithdrawal({ accountId: hold.accountId, holdId });
      expect(commit.ok).toBe(true);
      const balance = async () => (await rig.ledger.getKeyInfo(credential))!.account;
      return { credential, holdId, accountId: hold.accountId, token: sent.token, balance };
    }

    it('the owner finished first: a pass acting on the record it listed before does nothing; the token redeems', async () => {
      const p = await committedPayout();
      const listed = await recordOf(p.holdId);
      expect(listed).not.toBeNull();
      // The owner's last step: the record deleted, the token handed out.
      expect(await rig.wallet.finishPayout(p.holdId)).toBe(true);
      // The pass, on its listing.
      await settlePayoutRecord(money(), listed!);
      expect(await redeemElsewhere(rig.mint.url, p.token)).toBe(400);
      expect(await p.balance()).toMatchObject({
        balanceMsat: 600_000,
        reservedMsat: 0,
        withdrawnMsat: 400_000,
      });
      expect(await recordOf(p.holdId)).toBeNull();
    });

    it('the pass claimed first: the owner is told not to hand the token out; the hold is credited back once', async () => {
      const p = await committedPayout();
      const listed = await recordOf(p.holdId);
      await settlePayoutRecord(money(), listed!);
      expect(await rig.wallet.finishPayout(p.holdId)).toBe(false);
      // Taken back by the operator's wallet: nobody else can redeem it; the account has its 1,000 sats again.
      await expect(redeemElsewhere(rig.mint.url, p.token)).rejects.toThrow();
      expect(await p.balance()).toMatchObject({ balanceMsat: 1_000_000, reservedMsat: 0 });
      // A second pass on the same listing (or the owner's own undo): nothing more.
      await settlePayoutRecord(money(), listed!);
      await settlePayout(money(), { accountId: p.accountId, holdId: p.holdId });
      expect(await p.balance()).toMatchObject({ balanceMsat: 1_000_000, reservedMsat: 0 });
    });

    it('a pass that died after its claim left the record claimed: the next one finishes the take-back, once', async () => {
      const p = await committedPayout();
      const listed = await recordOf(p.holdId);
      // The claim alone (what a pass leaves when it dies right after it): the owner may no longer hand out.
      expect(await rig.wallet.claimPayout(p.holdId)).toEqual(listed);
      expect(await rig.wallet.finishPayout(p.holdId)).toBe(false);
      expect(await recordOf(p.holdId)).toBeNull();
      // The next pass lists the claimed record (under its new id, with the same content) and settles it.
      const journal = await openProofStore(rig.conn).listOps();
      const claimed = journal.find((e) => e.id === `payout-reclaim:${p.holdId}`);
      expect(claimed?.payout).toEqual(listed);
      expect(journal.some((e) => e.id === `payout:${p.holdId}`)).toBe(false);
      await settlePayoutRecord(money(), claimed!.payout!);
      await expect(redeemElsewhere(rig.mint.url, p.token)).rejects.toThrow();
      expect(await p.balance()).toMatchObject({ balanceMsat: 1_000_000, reservedMsat: 0 });
      expect(await rig.wallet.claimPayout(p.holdId)).toBeNull();
    });
  },
);

/**
 * A payout start (a Lightning payout's first journal entry, before its hold) left by a gateway that died is
 * decided by its owner: the restarted gateway (the same instance name, a later start) aborts its hold at its first
 * pass, however young the entry; a live neighbour's start is left to it. (Before, every `payout` entry waited
 * `claimStaleAfterMs` first: a restarted gateway kept the dead one's hold for 30 s.)
 */
describe.each<StoreKind>(['sqlite', 'redis'])('a payout start left by a dead instance (%s)', (kind) => {
  const rig = moneyRigPerSuite(kind);
  const money = (): Money => ({ ledger: rig.ledger, wallet: rig.wallet });
  balancedAfterEach(money);

  /** A Lightning refund as it begins: its start journalled by `wallet`, then all of the key's balance held. */
  async function startedRefund(wallet: WalletService, credential: { apiKey: string }) {
    const holdId = newPayoutHoldId();
    const accountId = (await rig.ledger.getKeyInfo(credential))!.account.accountId;
    await wallet.startPayout(holdId, accountId);
    const hold = await rig.ledger.holdWithdrawal({
      credential,
      amountMsat: 'all',
      holdId,
      kind: 'refund',
      expiresInMs: null,
    });
    return { holdId, accountId, hold };
  }

  it("the predecessor's start is aborted at once; a live neighbour's is left alone", async () => {
    const made = await creditToken(money(), await rig.mint.mintTokens(1000), { kind: 'new-key' });
    const credential = { apiKey: made.apiKey! };
    const opened: WalletService[] = [];
    const instance = (id: string, name: string) =>
      settlingWallet(rig.ledger, {
        conn: rig.conn,
        mints: [rig.mint.url],
        claimStaleAfterMs: 60_000,
        instance: { id, name, deadAfterMs: 60_000 },
      }).then((w) => {
        opened.push(w);
        return w;
      });
    try {
      // The dying instance: its start journalled, its hold made, then nothing (its process is gone).
      const dying = await instance('dying', 'gw-a');
      const { hold } = await startedRefund(dying, credential);
      expect(hold.ok).toBe(true);
      // A live neighbour (another name) leaves it: its owner's heartbeat is fresh.
      const neighbour = await instance('neighbour', 'gw-b');
      const left = await neighbour.recover({ ownerCheck: true });
      expect(left).toMatchObject({ rolledBack: 0, liveOwners: 1 });
      expect((await rig.ledger.getKeyInfo(credential))!.account.reservedMsat).toBe(1_000_000);
      // The restart of gw-a: its first pass aborts the hold, the entry seconds old.
      const restarted = await instance('restarted', 'gw-a');
      const pass = await restarted.recover({ ownerCheck: true });
      expect(pass.rolledBack).toBe(1);
      expect((await rig.ledger.getKeyInfo(credential))!.account).toMatchObject({
        balanceMsat: 1_000_000,
        reservedMsat: 0,
      });
      expect((await restarted.recover({ ownerCheck: true })).examined).toBe(0);
    } finally {
      for (const w of opened) await w.close();
    }
  });

  it("a pass that judged a live owner gone takes its start over: the owner's melt is never sent, the hold aborted once", async () => {
    const made = await creditToken(money(), await rig.mint.mintTokens(1000), { kind: 'new-key' });
    const credential = { apiKey: made.apiKey! };
    const opened: WalletService[] = [];
    const instance = (id: string, name: string, deadAfterMs: number) =>
      settlingWallet(rig.ledger, {
        conn: rig.conn,
        mints: [rig.mint.url],
        claimStaleAfterMs: 60_000,
        instance: { id, name, deadAfterMs },
      }).then((w) => {
        opened.push(w);
        return w;
      });
    try {
      // The owner is alive, fetching its invoice; the other process counts every heartbeat older than 1 ms as gone.
      const owner = await instance('slow-owner', 'gw-a', 60_000);
      const judge = await instance('judge', 'gw-b', 1);
      const { holdId, accountId, hold } = await startedRefund(owner, credential);
      if (!hold.ok) throw new Error(hold.code);
      // The owner's heartbeat (every 20 s) more than 1 ms old: gone, to the judge.
      const proofStore = openProofStore(rig.conn);
      const beatAge = async () =>
        Date.now() - ((await proofStore.owners()).find((b) => b.id === 'slow-owner')?.beatAt ?? Date.now());
      await until(
        "the owner's heartbeat older than the judge's 1 ms",
        async () => (await beatAge()) > 1,
        5_000,
        5,
      );
      expect(await judge.recover({ ownerCheck: true })).toMatchObject({ rolledBack: 1 });
      expect((await rig.ledger.getKeyInfo(credential))!.account).toMatchObject({
        balanceMsat: 1_000_000,
        reservedMsat: 0,
      });
      expect(await owner.payoutStarted(holdId)).toBe(false);
      // The owner goes on to pay (it checked before the pass): its melt is rolled back unsent.
      const invoice = rig.mint.invoice(900_000);
      const quote = await owner.quoteInvoice(invoice);
      const paying = owner.payInvoice(invoice, {
        quote,
        hold: { holdId, accountId, heldMsat: hold.heldMsat, credential },
      });
      await expect(paying).rejects.toMatchObject({ code: 'service_unavailable' });
      expect(rig.mint.meltQuoteState(invoice)).not.toBe('PAID');
      expect(await owner.getLightningPayout(holdId)).toMatchObject({ paid: false });
      // The record says "not paid": settling it, as the refund's caller does, changes nothing more (the hold is
      // aborted already, once) and removes it.
      await settlePayoutRecord(
        { ledger: rig.ledger, wallet: owner },
        (await owner.getLightningPayout(holdId))!,
      );
      expect((await rig.ledger.getKeyInfo(credential))!.account).toMatchObject({
        balanceMsat: 1_000_000,
        reservedMsat: 0,
      });
      expect((await openProofStore(rig.conn).listOps()).filter((e) => e.id.includes(holdId))).toEqual([]);
    } finally {
      for (const w of opened) await w.close();
    }
  });
});
