import { BackgroundRetry } from '../background-retry.js';
import { GatewayError } from '../errors.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import { keyIdOf, resolveCredential } from '../ledger/keys.js';
import { ownedId } from '../ledger/owner.js';
import type { HoldRef, KeyLookup, WithdrawalKind } from '../ledger/types.js';
import { log } from '../log.js';
import { recordStoreError } from '../metrics.js';
import { inSpan, type OpSpan, spanStep, startOpSpan } from '../trace-context.js';
import { crashPoint } from '../wallet/context.js';
import type { CashuUnit, LightningPayoutRecord, PayoutRecord, PayoutStart } from '../wallet/types.js';
import { creditOrPark, type Money } from './credit-token.js';
import { settleLightningPayout } from './lightning-payout.js';
import { holdRefusalToError } from './payout-guard.js';

/**
 * The ONE implementation of "balance becomes an eCash token": hold the amount in the ledger → mint the token
 * from the operator's proofs (`wallet.send`) → commit the hold → hand the token out. Used by withdraw, both
 * refunds and the change-token stage. No HTTP here.
 *
 * Two phases, so that no step leaves the token in memory only: `wallet.send` writes a durable PAYOUT RECORD
 * (token, hold, credential; a journal entry in the proof store) in the same atomic step that settles its swap,
 * and the record is deleted (`finishPayout`) only after the commit succeeded, just before the token is handed
 * out. Whatever fails, the token is either handed out AND debited, or taken back AND not debited:
 * - hold refused → nothing moved (the refusal is thrown);
 * - send fails → the hold is aborted (and a record, if the swap got that far, resolved);
 * - the token is worth another amount than held, the commit is refused (the hold expired) or throws (store
 *   unreachable: it may or may not have applied) → the record is resolved by `settlePayout`: token received
 *   back into the operator's proofs, hold aborted, and if the ledger says the hold was in fact committed, the
 *   held amount credited back (idempotent by the token's hash);
 * - the process is killed anywhere after the swap → the record stays; the wallet's recovery pass (start-up
 *   and every minute, `CreateWalletOptions.payouts`) resolves it the same way once it is older than the
 *   wallet's claim lease. The hold itself is released by orphan release meanwhile (core/ledger/owner.ts).
 * - a recovery pass resolved the record under a live but slow payout → `finishPayout` answers false and the
 *   token is not handed out (the balance is back: the hold was aborted or credited back).
 */

export interface PayOutRequest {
  credential: KeyLookup;
  amountMsat: number;
  kind: WithdrawalKind;
  /** Unit of the token to make (default: the wallet's choice for the mint). */
  unit?: CashuUnit;
  /** Mint to pay from (default the primary). */
  mint?: string;
  /** How long the hold may stay open before the ledger gives it up (default HOLD_EXPIRY_MS). */
  expiresInMs?: number;
  /** The `traceparent` of the call that pays out (its change); a handler route's is found by itself. */
  traceparent?: string;
}

/**
 * The expiry of every pay-out hold (withdrawals and change): longer than the wallet's mint timeouts, so a hold
 * never expires while its token is being made. A hold of a process that died is released sooner by orphan
 * release (core/ledger/owner.ts); the lease is the last resort.
 */
export const HOLD_EXPIRY_MS = 5 * 60_000;

export interface PayOutResult {
  token: string;
  amountMsat: number;
  mint: string;
  unit: CashuUnit;
  /** Balance left on the account (msats). */
  balanceMsat: number;
}

/**
 * Traced (README, "Tracing") as a `payout` span with the steps `hold`, `send` and `settle` (commit, record
 * deleted; or, on a failure after the hold, the hold undone): money attributes in msats, never the token.
 */
export async function payOut(money: Money, req: PayOutRequest): Promise<PayOutResult> {
  const span = startOpSpan(
    'payout',
    () => ({
      'gateway.payout.kind': req.kind,
      'gateway.payout.method': 'token',
      'gateway.key_id': keyIdOfCredential(req.credential),
      'gateway.msats.requested': req.amountMsat,
    }),
    { parent: req.traceparent },
  );
  return inSpan(span, (s) => payOutSteps(money, req, s));
}

/** The public id of a credential's key (never the credential), for spans. */
export function keyIdOfCredential(c: KeyLookup): string | undefined {
  const r = resolveCredential(c);
  return r === null ? undefined : keyIdOf(r.keyHash);
}

async function payOutSteps(money: Money, req: PayOutRequest, span?: OpSpan): Promise<PayOutResult> {
  const { ledger, wallet } = money;
  // Owned by this process (core/ledger/owner.ts): released by any live process if this one dies mid-payout.
  const holdId = ownedId(req.kind);
  let hold: Awaited<ReturnType<typeof ledger.holdWithdrawal>>;
  try {
    hold = await spanStep(span, 'hold', () =>
      ledger.holdWithdrawal({
        credential: req.credential,
        amountMsat: req.amountMsat,
        holdId,
        kind: req.kind,
        expiresInMs: req.expiresInMs ?? HOLD_EXPIRY_MS,
      }),
    );
  } catch (err) {
    // The store may have applied the hold and lost only its answer: release it as soon as the store answers.
    const accountId = resolveCredential(req.credential)?.accountId;
    if (accountId !== undefined) await settleSoon(money, { accountId, holdId }, undefined, span);
    throw err;
  }
  if (!hold.ok) throw await holdRefusalToError(wallet, hold);
  span?.set({ 'gateway.msats.held': hold.heldMsat });
  const ref: HoldRef = { accountId: hold.accountId, holdId };
  const payout = { holdId, accountId: ref.accountId, heldMsat: hold.heldMsat, credential: req.credential };

  let sent: Awaited<ReturnType<typeof wallet.send>>;
  try {
    sent = await spanStep(span, 'send', () =>
      wallet.send(hold.heldMsat, {
        ...(req.unit ? { unit: req.unit } : {}),
        ...(req.mint ? { mint: req.mint } : {}),
        payout,
      }),
    );
  } catch (err) {
    // The swap may have happened (and the record been written) before the failure: settle whatever is there.
    await settleSoon(money, ref, undefined, span);
    throw err;
  }
  span?.set({
    'gateway.msats.paid': sent.amountMsat,
    'gateway.cashu.unit': sent.unit,
    'gateway.cashu.mint': sent.mint,
  });
  crashPoint('payout-after-send');
  // The durable record holds the same; this copy also covers a record whose deletion applied but answered an error.
  const made: PayoutRecord = { ...payout, token: sent.token };
  if (sent.amountMsat !== hold.heldMsat) {
    // Whole units were asked for, so this cannot happen with sat or msat keysets; never debit another amount.
    await settleSoon(money, ref, made, span);
    throw new GatewayError('internal_error', { message: 'The payout token has an unexpected value' });
  }

  // The settle step: the hold committed and the record deleted (the token may then leave).
  const settle = span?.child('settle');
  let commit: Awaited<ReturnType<typeof ledger.commitWithdrawal>>;
  try {
    commit = await ledger.commitWithdrawal(ref);
  } catch (err) {
    settle?.end(err);
    if ((err as { code?: unknown }).code === 'store_unavailable') recordStoreError('withdraw_commit');
    await settleSoon(money, ref, made, span);
    throw err;
  }
  if (!commit.ok) {
    settle?.end({ code: commit.code });
    await settleSoon(money, ref, made, span);
    throw ledgerRefusalToError(commit);
  }
  crashPoint('payout-after-commit');
  let finished: boolean;
  try {
    finished = await wallet.finishPayout(holdId);
  } catch (err) {
    settle?.end(err);
    // The record may stay, so the token must not leave: it is taken back and the committed hold credited back.
    await settleSoon(money, ref, made, span);
    throw err;
  }
  if (!finished) {
    settle?.end({ code: 'service_unavailable' });
    throw new GatewayError('service_unavailable', {
      message: 'The payout was cancelled by recovery; the balance is unchanged, try again',
    });
  }
  settle?.end();
  span?.set({ 'gateway.msats.balance_after': commit.balanceMsat });
  return {
    token: sent.token,
    amountMsat: sent.amountMsat,
    mint: sent.mint,
    unit: sent.unit,
    balanceMsat: commit.balanceMsat,
  };
}

/**
 * Undoes a payout that will not be handed out, from its durable record: take the token back, then make the
 * ledger say which way the hold went. Aborted (or never committed) → nothing debited, done. Committed → the
 * account was debited for a token it will not get: the HELD amount (what the commit debited, not what the
 * take-back yielded after the mint's input fee, which the operator bears) is credited back, idempotent by the
 * token's hash. A token the mint reports spent was redeemed by whoever holds it: the hold is left as it is.
 * The record is deleted last, so a crash anywhere in between leaves it for the next pass (every step is
 * idempotent). Used by `payOut` on every failure after the hold and by the wallet's recovery pass
 * (`CreateWalletOptions.payouts`) for records a dead process left.
 */
export async function settlePayout(money: Money, ref: HoldRef, made?: PayoutRecord): Promise<void> {
  // The stored record, claimed (so it can no longer be finished), else the caller's copy: the caller did not hand
  // the token out (every step is idempotent, so settling a settled one is a replay).
  const record = (await money.wallet.claimPayout(ref.holdId)) ?? made;
  if (record) {
    await settleTokenPayout(money, record);
    return;
  }
  // No token was made: only the hold is left to release (idempotent; a hold never made is a no-op).
  await money.ledger.abortWithdrawal(ref);
}

/**
 * {@link settlePayout} for one record (the wallet's recovery pass hands records over one by one); a Lightning
 * payout record goes to its own step (lightning-payout.ts).
 */
export async function settlePayoutRecord(
  money: Money,
  record: PayoutRecord | LightningPayoutRecord | PayoutStart,
): Promise<void> {
  if ('started' in record) {
    // A Lightning payout whose process died before its melt was journalled: nothing reached the mint.
    const r = await money.ledger.abortWithdrawal({ accountId: record.accountId, holdId: record.holdId });
    if (r.ok && !r.replay)
      log.warn({ holdId: record.holdId }, 'payout start left by a gone process: hold aborted');
    return;
  }
  if (!('token' in record)) {
    await settleLightningPayout(money, record);
    return;
  }
  // The record as the pass listed it may have been finished since (its token handed out): only a claim decides.
  const claimed = await money.wallet.claimPayout(record.holdId);
  if (claimed === null) {
    log.info({ holdId: record.holdId }, 'payout finished by its owner before the recovery pass claimed it');
    return;
  }
  await settleTokenPayout(money, claimed);
}

async function settleTokenPayout(money: Money, record: PayoutRecord): Promise<void> {
  const ref: HoldRef = { accountId: record.accountId, holdId: record.holdId };
  // The token's identity once it is back in the operator's hands (or worth nothing more to anyone).
  let reclaimed: string | undefined;
  try {
    reclaimed = (await money.wallet.receive(record.token)).tokenHash;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // Worth no more than the mint's input fee: nobody can redeem it, so it is as good as taken back.
    if (code === 'token_amount_too_small') reclaimed = money.wallet.tokenHash(record.token);
    else if (code !== 'token_already_spent') throw err;
  }
  if (reclaimed !== undefined) {
    const abort = await money.ledger.abortWithdrawal(ref);
    if (!abort.ok && abort.code === 'already_committed') {
      await creditOrPark(money.ledger, record.credential, reclaimed, record.heldMsat, 'topup');
    }
  } else {
    log.warn({ holdId: record.holdId }, 'payout token was already redeemed elsewhere; hold left as it is');
  }
  await money.wallet.endPayoutClaim(record.holdId);
}

/** Settles a payout now, or in the background while the mint or the store is away (every step is idempotent). */
async function settleSoon(money: Money, ref: HoldRef, made?: PayoutRecord, span?: OpSpan): Promise<void> {
  const step = () => settlePayout(money, ref, made);
  // Traced as the payout's `undo` step (the retries in the background are not).
  await spanStep(span, 'undo', step).catch(() => retries().schedule(`payout ${ref.holdId}`, step));
}

let retryQueue: BackgroundRetry | undefined;
function retries(): BackgroundRetry {
  retryQueue ??= new BackgroundRetry(log, 'payout settlement');
  return retryQueue;
}

/**
 * Shutdown: tries the payout settlements still waiting (mint or store was away) within `graceMs`. Whatever is
 * left is not lost: its payout record stays in the journal for the next process's recovery pass, and its hold
 * is released by orphan release. Resolves with how many were left.
 */
export async function drainPayoutRetries(graceMs: number): Promise<number> {
  if (!retryQueue || retryQueue.pending === 0) return 0;
  const left = await retryQueue.drain(graceMs);
  if (left > 0) log.error({ left }, 'payout settlements left to the recovery pass at shutdown');
  return left;
}
