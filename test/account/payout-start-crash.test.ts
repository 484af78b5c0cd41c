import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditToken } from '../../core/account/credit-token.js';
import { LightningAddresses } from '../../core/account/lightning-address.js';
import { refundToLightning } from '../../core/account/lightning-refund.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import type { WalletService } from '../../core/wallet/types.js';
import { crashRigPerSuite } from '../support/crash-rig.js';
import type { StoreKind } from '../support/dev-mint.js';
import { lnurlRecipientPerSuite } from '../support/lnurl-recipient.js';
import { until } from '../support/until.js';
import { runChild } from '../wallet/crash-recovery-suite.js';
import { recoveringWallet, settlingWallet } from './support/money-rig.js';

/**
 * A Lightning refund's hold never expires (only its melt's decision ends it). A process killed after making the
 * hold and before its melt reached the journal (while it fetched the invoice) used to leave that hold with nothing
 * to decide it: the balance locked for good, every later refund, withdrawal or close refused 409
 * `payout_in_progress` (found by `npm run chaos -- --payouts`). Now the refund journals its start before the hold;
 * a recovery pass, once the process is gone, aborts the hold; the key then refunds, paid once. Real child process
 * killed at `lnrefund-after-hold`, real dev mints and LNURL server, both stores.
 */

for (const kind of ['sqlite', 'redis'] as StoreKind[]) {
  describe(`a refund killed between its hold and its melt, on ${kind}`, () => {
    const { mint, conn, childEnv } = crashRigPerSuite(kind, 'lnstart-crash-');
    const rcpt = lnurlRecipientPerSuite();
    let ledger: Ledger;
    let wallet: WalletService;

    beforeAll(async () => {
      ledger = await createLedger(conn);
      wallet = await settlingWallet(ledger, { conn, mints: [mint.url], mintTimeoutMs: 90_000 });
    });

    afterAll(async () => {
      await wallet.close();
    });

    it('the hold is aborted by the next pass; the key then refunds, paid once', async () => {
      const made = await creditToken({ ledger, wallet }, await mint.mintTokens(1000, 'sat'), {
        kind: 'new-key',
      });
      const credential = { apiKey: made.apiKey! };
      const child = await runChild(
        {
          ...childEnv,
          CRASH_OP: 'ln-refund',
          CRASH_ARG: rcpt.lnurl.address('alice'),
          WALLET_TEST_CRASH_AT: 'lnrefund-after-hold',
        },
        made.apiKey!,
      );
      expect(child.signal).toBe('SIGKILL');
      expect(child.out).not.toContain('survived');
      // The dead process's hold: everything held, an open payout, no melt journalled (no invoice asked for).
      const held = (await ledger.getKeyInfo(credential))!.account;
      expect(held).toMatchObject({ balanceMsat: 1_000_000, reservedMsat: 1_000_000 });
      expect(held.payout?.holdId).toMatch(/^lnrefund-/);
      expect(await wallet.getLightningPayout(held.payout!.holdId)).toBeNull();
      expect(rcpt.lnurl.invoices).toHaveLength(0);

      // The next pass aborts the hold (the child wrote no owner: decided by the age rule, here half a second).
      const pass = await recoveringWallet(conn, mint.url, ledger, 500);
      try {
        await until('a pass aborts the hold', async () => (await pass.recover()).rolledBack === 1);
      } finally {
        await pass.close();
      }
      const freed = (await ledger.getKeyInfo(credential))!.account;
      expect(freed).toMatchObject({ balanceMsat: 1_000_000, reservedMsat: 0 });
      expect(freed.payout).toBeUndefined();
      expect((await wallet.recover()).examined).toBe(0);

      // The key refunds now: paid once, debited once.
      const r = await refundToLightning(
        { ledger, wallet },
        new LightningAddresses({ allowPrivate: true, timeoutMs: 5_000 }),
        { credential, address: rcpt.lnurl.address('alice') },
      );
      expect(r.amountMsat).toBe(990_000);
      expect((await ledger.getKeyInfo(credential))!.account).toMatchObject({
        reservedMsat: 0,
        withdrawnMsat: r.amountMsat + r.feeMsat,
        balanceMsat: 1_000_000 - r.amountMsat - r.feeMsat,
      });
      expect((await wallet.recover()).examined).toBe(0);
      expect((await ledger.checkConservation()).breaches).toEqual([]);
      expect((await wallet.checkSolvency(() => ledger.totalUserBalancesMsat())).solvent).toBe(true);
    });
  });
}
