import type { GatewayError } from '../errors.js';
import { type LedgerRefusal, ledgerRefusalToError, payoutInProgress } from '../ledger/errors.js';
import type { OpenPayout } from '../ledger/types.js';
import type { WalletService } from '../wallet/types.js';

/**
 * One undecided payout per account (docs/wallet.md, "Refunds to a Lightning address"): a Lightning payout's hold
 * never expires (HoldInput `expiresInMs: null`) and, while it is open, the ledger refuses every other hold of the
 * account — a refund, a withdrawal, a key close, the expired-key sweep — with `payout_in_progress`. This module
 * turns that refusal into the 409 answer, naming the payout and what the wallet's journal knows of its melt.
 */

/** What the journal says of a payout hold's melt. */
export type PayoutState = 'starting' | 'pending' | 'paid' | 'failed' | 'open';

/**
 * `starting`: the hold is made, the melt not journalled yet (the invoice being fetched); `pending`: the melt went
 * to the mint and is not decided; `paid` / `failed`: decided, the hold being settled. `open` when the journal
 * cannot be read (or has nothing to say).
 */
export async function payoutState(wallet: WalletService | undefined, holdId: string): Promise<PayoutState> {
  if (wallet === undefined) return 'open';
  try {
    const record = await wallet.getLightningPayout(holdId);
    if (record === null) return 'starting';
    if (record.paid === undefined) return 'pending';
    return record.paid ? 'paid' : 'failed';
  } catch {
    return 'open';
  }
}

/** The 409 `payout_in_progress` for an account's open payout, with its state. */
export async function payoutInProgressError(
  wallet: WalletService | undefined,
  payout: OpenPayout,
): Promise<GatewayError> {
  return payoutInProgress(payout, await payoutState(wallet, payout.holdId));
}

/** A hold's refusal as an error; `payout_in_progress` names the payout's state. */
export async function holdRefusalToError(
  wallet: WalletService | undefined,
  refusal: LedgerRefusal,
): Promise<GatewayError> {
  if (refusal.code === 'payout_in_progress' && refusal.payout) {
    return payoutInProgressError(wallet, refusal.payout);
  }
  return ledgerRefusalToError(refusal);
}
