import type { CommitResult } from '../ledger/types.js';
import { log } from '../log.js';
import type { LightningPayoutRecord } from '../wallet/types.js';
import type { Money } from './credit-token.js';

/**
 * Settles the hold of a Lightning payout once the mint decided its melt (core/account/lightning-refund.ts): paid →
 * the hold is committed for the amount plus the fee the mint charged (the unused fee reserve is released in the
 * same ledger step); not paid → the hold is aborted. Then the record is deleted. Each step is idempotent, so the
 * paying process and a recovery pass (CreateWalletOptions.payouts) may both run it.
 *
 * The hold of a Lightning refund is a payout hold (HoldInput `expiresInMs: null`): it names no process (orphan
 * release never frees it) and never expires, so the balance stays held however long the mint takes, and the
 * account can start no other payout meanwhile (payout-guard.ts). Only this step ends it. A refused commit would
 * mean the hold was ended by something else (an operator's tool): logged as an error, visible to solvency.
 *
 * Returns the commit (paid), null (not paid: aborted), or undefined (the melt is not decided yet: nothing done).
 */
export async function settleLightningPayout(
  money: Money,
  record: LightningPayoutRecord,
): Promise<CommitResult | null | undefined> {
  if (record.paid === undefined) return undefined;
  const ref = { accountId: record.accountId, holdId: record.holdId };
  if (!record.paid) {
    await money.ledger.abortWithdrawal(ref);
    await money.wallet.finishPayout(record.holdId);
    return null;
  }
  const debitMsat = record.amountMsat + (record.feeMsat ?? 0);
  const commit = await money.ledger.commitWithdrawal({ ...ref, debitMsat });
  if (!commit.ok) {
    log.error(
      { holdId: record.holdId, accountId: record.accountId, debitMsat, code: commit.code },
      'Lightning refund paid but its hold could not be debited: the operator bears the amount',
    );
  }
  await money.wallet.finishPayout(record.holdId);
  return commit;
}
