import { BackgroundRetry } from '../background-retry.js';
import { GatewayError } from '../errors.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import { resolveCredential } from '../ledger/keys.js';
import { ownedId } from '../ledger/owner.js';
import type { Credential, HoldRef, WithdrawalKind } from '../ledger/types.js';
import { log } from '../log.js';
import { recordStoreError } from '../metrics.js';
import type { CashuUnit } from '../wallet/types.js';
import type { MoneySteps } from './credit-token.js';

/**
 * The ONE implementation of "balance becomes an eCash token": hold the amount in the ledger → mint the token
 * from the operator's proofs (`wallet.send`) → commit the hold. Used by withdraw, both refunds and the
 * change-token stage. No HTTP here.
 *
 * Whatever fails, the token is either handed out AND debited, or taken back AND not debited:
 * - hold refused → nothing moved (the refusal is thrown);
 * - send fails → the hold is aborted;
 * - the token is worth another amount than held → taken back (received into the operator's proofs), hold
 *   aborted;
 * - commit refused (the hold expired meanwhile) → token taken back;
 * - commit throws (store unreachable: it may or may not have applied) → token taken back, then the hold is
 *   aborted; if the store says it was in fact committed, the taken-back value is credited to the account again
 *   (idempotent by the token's hash), so the user is never debited for a token they did not get.
 * A process killed between send and commit leaves a hold that expires (the account keeps its money) and a
 * journalled send the wallet's recovery pass returns to the operator's proofs.
 */

export interface PayOutRequest {
  credential: Credential;
  amountMsat: number;
  kind: WithdrawalKind;
  /** Unit of the token to make (default: the wallet's choice for the mint). */
  unit?: CashuUnit;
  /** Mint to pay from (default the primary). */
  mint?: string;
  /** How long the hold may stay open before the ledger gives it up. */
  leaseMs: number;
}

export interface PayOutResult {
  token: string;
  amountMsat: number;
  mint: string;
  unit: CashuUnit;
  /** Balance left on the account (msats). */
  balanceMsat: number;
}

export async function payOut(money: MoneySteps, req: PayOutRequest): Promise<PayOutResult> {
  const { ledger, wallet } = money;
  // Owned by this process (core/ledger/owner.ts): released by any live process if this one dies mid-payout.
  const holdId = ownedId(req.kind);
  let hold: Awaited<ReturnType<typeof ledger.holdWithdrawal>>;
  try {
    hold = await ledger.holdWithdrawal({
      credential: req.credential,
      amountMsat: req.amountMsat,
      holdId,
      kind: req.kind,
      leaseMs: req.leaseMs,
    });
  } catch (err) {
    // The store may have applied the hold and lost only its answer: release it as soon as the store answers.
    const accountId = resolveCredential(req.credential)?.accountId;
    if (accountId !== undefined) await abortSoon(money, { accountId, holdId });
    throw err;
  }
  if (!hold.ok) throw ledgerRefusalToError(hold);
  const ref: HoldRef = { accountId: hold.accountId, holdId };

  let sent: Awaited<ReturnType<typeof wallet.send>>;
  try {
    sent = await wallet.send(hold.heldMsat, {
      ...(req.unit ? { unit: req.unit } : {}),
      ...(req.mint ? { mint: req.mint } : {}),
    });
  } catch (err) {
    await abortSoon(money, ref);
    throw err;
  }
  if (sent.amountMsat !== hold.heldMsat) {
    // Whole units were asked for, so this cannot happen with sat or msat keysets; never debit another amount.
    await takeBack(money, sent.token);
    await abortSoon(money, ref);
    throw new GatewayError('internal_error', { message: 'The payout token has an unexpected value' });
  }

  let commit: Awaited<ReturnType<typeof ledger.commitWithdrawal>>;
  try {
    commit = await ledger.commitWithdrawal(ref);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'store_unavailable') recordStoreError('withdraw_commit');
    await settleAmbiguousCommit(money, req.credential, ref, sent.token);
    throw err;
  }
  if (!commit.ok) {
    await takeBack(money, sent.token);
    throw ledgerRefusalToError(commit);
  }
  return {
    token: sent.token,
    amountMsat: sent.amountMsat,
    mint: sent.mint,
    unit: sent.unit,
    balanceMsat: commit.balanceMsat,
  };
}

/**
 * The commit's outcome is unknown: take the token back, then make the ledger say which way it went. Aborted
 * (or never committed) → nothing debited, done. Committed → the account was debited for a token it will not
 * get: credit the taken-back value back to it, idempotent by the token's hash. The store or the mint may still
 * be away (that is why the commit failed): then the whole step is retried in the background until both answer
 * (every part is idempotent), so the hold does not stay locked until its lease and the token's value is not
 * stranded outside the operator's proofs.
 */
async function settleAmbiguousCommit(
  money: MoneySteps,
  credential: Credential,
  ref: HoldRef,
  token: string,
): Promise<void> {
  let receipt: Awaited<ReturnType<MoneySteps['wallet']['receive']>> | undefined;
  const step = async () => {
    receipt ??= await money.wallet.receive(token);
    const abort = await money.ledger.abortWithdrawal(ref);
    if (!abort.ok && abort.code === 'already_committed') {
      const c = await money.ledger.credit({
        credential,
        tokenHash: receipt.tokenHash,
        amountMsat: receipt.amountMsat,
        kind: 'topup',
      });
      if (!c.ok && c.code !== 'token_credited_elsewhere') throw ledgerRefusalToError(c);
    }
  };
  await step().catch(() => retries().schedule(`payout ${ref.holdId}`, step));
}

/** Aborts a hold now, or in the background when the store is away (idempotent; a hold never made is a no-op). */
async function abortSoon(money: MoneySteps, ref: HoldRef): Promise<void> {
  const abort = () => money.ledger.abortWithdrawal(ref);
  await abort().catch(() => retries().schedule(`abort ${ref.holdId}`, abort));
}

let retryQueue: BackgroundRetry | undefined;
function retries(): BackgroundRetry {
  retryQueue ??= new BackgroundRetry(log, 'payout take-back');
  return retryQueue;
}

/** Receives a token we made but must not hand out back into the operator's proofs (retried if the mint is away). */
async function takeBack(money: MoneySteps, token: string) {
  try {
    return await money.wallet.receive(token);
  } catch {
    retries().schedule('payout take-back', () => money.wallet.receive(token));
    return undefined;
  }
}
