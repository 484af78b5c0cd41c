import type { CommitResult } from '../ledger/types.js';
import { log } from '../log.js';
import type { LightningPayoutRecord } from '../wallet/types.js';
import type { MoneySteps } from './credit-token.js';

/**
 * Settles the hold of a Lightning payout once the mint decided its melt (core/account/lightning-refund.ts): paid →
 * the hold is committed for the amount plus the fee the mint charged (the unused fee reserve is released in the
 * same ledger step); not paid → the hold is aborted. Then the record is deleted. Each step is idempotent, so the
 * paying process and a recovery pass (CreateWalletOptions.payouts) may both run it.
 *
 * The hold of a Lightning refund names no process (its id has no owner, core/ledger/owner.ts), so orphan
 * release never frees it under a melt that may have paid: only this step, or its lease (HOLD_EXPIRY_MS), does.
 * A commit after the lease still debits when the balance covers it; when it does not (the mint was away longer
 * than the lease, the process died, and the key spent the money meanwhile) the invoice stays paid and the
 * shortfall is the operator's: logged as an error, and visible to the solvency check.
 *
 * Returns the commit (paid), null (not paid: aborted), or undefined (the melt is not decided yet: nothing done).
 */
export async function settleLightningPayout(
  money: MoneySteps,
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
