import { GatewayError } from '../errors.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import type { KeyLookup, KeyMeta, KeyTarget, Ledger } from '../ledger/types.js';
import type { WalletService } from '../wallet/types.js';
import { type PayOutResult, payOut } from './pay-out.js';
import { payoutInProgressError } from './payout-guard.js';

/**
 * Deleting a key, with its balance paid out first when asked (the owner's DELETE /v1/wallet/, the operator's
 * DELETE /admin/api/keys/{key_id}?refund=true). No HTTP here. The steps:
 *
 * 1. disable the key (unless it is already): the store refuses it at once, and every process's credit leases
 *    of the account are closed before this step answers (core/ledger/leasing.ts), so nothing spends the
 *    balance while it is paid out;
 * 2. refund: whole sats of what is available, through the one pay-out step (core/account/pay-out.ts). A
 *    reservation still open (a call or a withdrawal in flight) answers 409 `conflict` and changes nothing:
 *    what it would give back later would stay on a deleted account;
 * 3. delete the key (a parent takes its account, so every child, with it).
 *
 * An undecided payout of the account (a Lightning refund or sweep whose melt the mint has not decided) answers
 * 409 `payout_in_progress` before anything changes (payout-guard.ts).
 *
 * A failure before the pay-out enables the key again (if it was enabled) and changes nothing else. Once a
 * token is made it is always handed back: a delete failing after it answers `deleted: false` with the token
 * (the key is left disabled for the operator, enabled again for its owner, who may retry).
 */

export interface CloseKeyRequest {
  /** How the delete and disable address the key (the caller's own, or a parent's child by key id). */
  target: KeyTarget;
  /** The key itself (for its balance and the pay-out hold). */
  self: KeyLookup;
  refund: boolean;
  /** Whether a failed delete after a pay-out leaves the key disabled (operator) or enables it again (owner). */
  keepDisabled: boolean;
  /** Hold expiry of the pay-out. */
  expiresInMs: number;
}

export interface CloseKeyResult {
  key: KeyMeta;
  deleted: boolean;
  refund: PayOutResult | null;
  /** What stays on the (deleted) account: the sub-sat remainder, or everything without a refund. */
  leftMsat: number;
}

export async function closeKey(
  money: { ledger: Ledger; wallet: WalletService | undefined },
  req: CloseKeyRequest,
): Promise<CloseKeyResult> {
  const { ledger } = money;
  const before = await ledger.getKeyInfo(req.self);
  if (before === null) throw new GatewayError('not_found', { message: 'No such key (or it was deleted)' });
  if (req.refund && before.key.isChild) {
    throw new GatewayError('child_key_forbidden', {
      message: "A child key draws on its parent's balance: refund the parent key",
    });
  }
  if (before.account.payout) throw await payoutInProgressError(money.wallet, before.account.payout);
  if (req.refund && money.wallet === undefined) {
    throw new GatewayError('service_unavailable', { message: 'No eCash wallet configured (CASHU_MINTS)' });
  }
  const wasDisabled = before.key.disabled;
  const setDisabled = async (disabled: boolean) => {
    const r = await ledger.updateKey(req.target, { disabled });
    if (!r.ok) throw ledgerRefusalToError(r);
  };
  if (!wasDisabled) await setDisabled(true);

  let refund: PayOutResult | null = null;
  let leftMsat = 0;
  try {
    const info = await ledger.getKeyInfo(req.self);
    if (info === null) throw new GatewayError('not_found', { message: 'No such key (or it was deleted)' });
    leftMsat = info.key.isChild ? 0 : info.account.balanceMsat;
    if (info.account.payout) throw await payoutInProgressError(money.wallet, info.account.payout);
    if (req.refund) {
      if (info.account.reservedMsat > 0) {
        throw new GatewayError('conflict', {
          message: 'Calls or withdrawals of this key are in flight; try again when they have finished',
          details: { reserved: info.account.reservedMsat },
        });
      }
      const amountMsat = Math.floor(info.availableMsat / 1000) * 1000;
      if (amountMsat > 0) {
        refund = await payOut(
          { ledger, wallet: money.wallet! },
          { credential: req.self, amountMsat, kind: 'refund', expiresInMs: req.expiresInMs },
        );
        leftMsat = refund.balanceMsat;
      }
    }
  } catch (err) {
    if (!wasDisabled) await setDisabled(false).catch(() => undefined);
    throw err;
  }

  try {
    const d = await ledger.deleteKey(req.target);
    if (!d.ok) throw ledgerRefusalToError(d);
    return { key: d.key, deleted: true, refund, leftMsat };
  } catch (err) {
    // Nothing was paid out: nothing to hand back, the usual error answer.
    if (refund === null) {
      if (!wasDisabled) await setDisabled(false).catch(() => undefined);
      throw err;
    }
    // The token exists and the balance is debited: it must reach the caller whatever the delete did.
    if (!req.keepDisabled && !wasDisabled) await setDisabled(false).catch(() => undefined);
    return { key: before.key, deleted: false, refund, leftMsat };
  }
}
