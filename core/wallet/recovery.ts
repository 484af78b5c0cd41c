import { isGatewayError } from '../errors.js';
import type { WalletContext } from './context.js';
import { resolveSwap } from './foreign-swap.js';
import { type Outcome, payoutId, payoutStartClaimId, resolveOp } from './journal.js';
import { mayDecide, ownerBeats, whoseEntry } from './owners.js';
import type { JournalEntry } from './store/proof-store.js';
import type {
  PayoutSettler,
  ReceiptSettler,
  RecoverOptions,
  RecoveryReport,
  WalletService,
} from './types.js';

/**
 * The recovery pass: finishing or undoing every journalled operation a crash or an unreachable mint left
 * (journal.ts decides each one against its mint; a swap decides for itself, a payout record through the ledger).
 */

/** Resolves one journal entry of any kind but a payout record. */
export async function resolveEntry(ctx: WalletContext, entry: JournalEntry): Promise<Outcome> {
  if (entry.kind === 'swap' && entry.seedId === ctx.seedId) return resolveSwap(ctx, entry);
  return resolveOp(ctx, entry);
}

/**
 * Hands one payout record to the settler once it is `staleAfterMs` old — the age after which the
 * journal treats any entry as left by a dead process. The age, not the owner in the hold id, decides: the
 * owner may be another live process of the cluster, and a live owner finishes (or settles) its payout within
 * a few store round trips. A record resolved under a slow live owner is still safe: the settler claims it first
 * (`claimPayout`, atomic against the owner's `finishPayout`), so either the owner's `finishPayout` then answers
 * false and the token is not handed out, or the owner finished first and the settler does nothing.
 */
async function resolvePayout(
  ctx: WalletContext,
  entry: JournalEntry,
  payouts: { settle: PayoutSettler; wallet: WalletService } | undefined,
): Promise<Outcome> {
  if (entry.payoutStart) return resolvePayoutStart(ctx, entry, payouts);
  const record = entry.payout ?? entry.lightning;
  if (!record || !payouts) {
    ctx.log.warn({ op: entry.id }, 'wallet payout record left: no ledger to resolve it here');
    return 'deferred';
  }
  await payouts.settle(record, payouts.wallet);
  return 'completed';
}

/**
 * A payout start whose owner is gone (or, without the owner check, old enough): when its melt was journalled, the
 * melt's entry (or its decided record) settles the hold and the start entry is only removed; otherwise the process
 * died while making the hold or fetching the invoice — nothing reached the mint — so the hold is aborted (the balance
 * back on the key), then the entry removed.
 *
 * "Gone" can be wrong (a heartbeat late on a loaded machine): the owner may be about to journal its melt. So the
 * pass first takes the start over (`moveOp` to `lnstart-claimed:<holdId>`, naming this process), atomically against
 * the owner's removal of it (`payInvoice` removes it once its melt entry is written, and rolls the melt back unsent
 * when it is no longer there): exactly one of them goes on. A pass that dies after the move leaves the claimed
 * entry, which the next pass settles the same way (the abort is idempotent).
 */
async function resolvePayoutStart(
  ctx: WalletContext,
  entry: JournalEntry,
  payouts: { settle: PayoutSettler; wallet: WalletService } | undefined,
): Promise<Outcome> {
  const start = entry.payoutStart!;
  const claimed = entry.id === payoutStartClaimId(start.holdId);
  const melt = claimed
    ? null
    : ((await ctx.store.getOp(`melt:${start.holdId}`)) ?? (await ctx.store.getOp(payoutId(start.holdId))));
  if (melt !== null) {
    await ctx.store.deleteOp(entry.id);
    return 'completed';
  }
  if (!payouts) {
    ctx.log.warn({ op: entry.id }, 'wallet payout start left: no ledger to abort its hold here');
    return 'deferred';
  }
  let held = entry;
  if (!claimed) {
    held = {
      ...entry,
      id: payoutStartClaimId(start.holdId),
      createdAt: Date.now(),
      ...(ctx.owner ? { owner: ctx.owner } : {}),
    };
    // Its owner removed it meanwhile (its melt is journalled: that entry decides the hold) or another pass took it.
    if (!(await ctx.store.moveOp(entry.id, held))) return 'deferred';
  }
  await payouts.settle({ holdId: start.holdId, accountId: start.accountId, started: true }, payouts.wallet);
  await ctx.store.deleteOp(held.id);
  return 'rolled-back';
}

/**
 * A hold's melt just decided by this pass: its Lightning payout record is settled at once (the hold committed or
 * aborted) rather than one pass later. Left for the next pass when the ledger is away.
 */
async function settleDecidedMelt(
  ctx: WalletContext,
  entry: JournalEntry,
  payouts: { settle: PayoutSettler; wallet: WalletService } | undefined,
): Promise<boolean> {
  if (entry.kind !== 'melt' || !entry.lightning || !payouts) return false;
  const decided = await ctx.store.getOp(payoutId(entry.lightning.holdId));
  if (!decided?.lightning) return false;
  try {
    await payouts.settle(decided.lightning, payouts.wallet);
    return true;
  } catch (err) {
    ctx.log.warn(
      { op: decided.id, code: isGatewayError(err) ? err.code : 'error' },
      'wallet recovery deferred: Lightning payout record not resolved (store away)',
    );
    return false;
  }
}

/**
 * A receive this pass completed: its caller never saw the outcome (its process died, or the mint's answer was
 * lost), so the value is credited where the caller meant to (its journalled intent) instead of waiting for the
 * client to present the token again. Idempotent by token hash: a client retry that raced the pass is a replay.
 */
async function creditCompletedReceive(
  ctx: WalletContext,
  entry: JournalEntry,
  receipts: ReceiptSettler | undefined,
): Promise<boolean> {
  if (entry.kind !== 'receive' || entry.creditIntent === undefined || entry.tokenHash === undefined)
    return false;
  if (!receipts) return false;
  try {
    const receipt = await ctx.store.getReceipt(entry.tokenHash);
    if (!receipt) return false;
    await receipts(receipt, entry.creditIntent);
    ctx.log.info(
      { op: entry.id, amountMsat: receipt.amountMsat },
      'wallet recovery credited a completed receive',
    );
    return true;
  } catch (err) {
    ctx.log.warn(
      { op: entry.id, code: isGatewayError(err) ? err.code : 'error' },
      'wallet recovery completed a receive but could not credit it (the same token presented again credits it)',
    );
    return false;
  }
}

/** Payout records a live payout may still finish are not due yet (not examined by this pass). */
function payoutDue(ctx: WalletContext, entry: JournalEntry, now: number): boolean {
  return now - entry.createdAt >= ctx.staleAfterMs;
}

/** One pass over the whole journal (start-up, periodically, or on demand); `ownerCheck`: see RecoverOptions. */
export async function recoverAll(
  ctx: WalletContext,
  payouts?: { settle: PayoutSettler; wallet: WalletService },
  opts: RecoverOptions = {},
  receipts?: ReceiptSettler,
): Promise<RecoveryReport> {
  const report: RecoveryReport = {
    examined: 0,
    receivesCompleted: 0,
    receiptsCredited: 0,
    rolledBack: 0,
    outputsRestored: 0,
    deferred: 0,
    payoutsResolved: 0,
    fresh: 0,
    liveOwners: 0,
  };
  const now = Date.now();
  const entries = await ctx.store.listOps();
  const beats = opts.ownerCheck && entries.length > 0 ? await ownerBeats(ctx) : new Map();
  for (const entry of entries) {
    // An operation of this process still at work on its entry settles it itself, whatever the entry's age.
    if (ctx.running.has(entry.id)) {
      report.fresh++;
      continue;
    }
    // A payout start is decided by its owner being gone, as a mint operation is (its owner may still be fetching
    // the invoice, however long that takes): with the owner check, at once when the owner is known gone or is this
    // instance's predecessor (a restarted gateway aborts the dead one's hold without waiting out its age), by its
    // age when it is this process's own or has no owner. Payout records, and starts without the check, by age.
    const owned = entry.kind !== 'payout' || entry.payoutStart !== undefined;
    const byOwner = opts.ownerCheck === true && entry.payoutStart !== undefined;
    if (entry.kind === 'payout' && !byOwner && !payoutDue(ctx, entry, now)) continue;
    if (opts.ownerCheck && owned && !mayDecide(ctx, entry, beats, now)) {
      report.fresh++;
      if (whoseEntry(ctx, entry, beats, now) === 'live') {
        report.liveOwners++;
        ctx.log.info(
          { op: entry.id, kind: entry.kind, owner: entry.owner?.name },
          'wallet recovery left an entry to its live owner',
        );
        continue;
      }
      const staleIn = entry.createdAt + ctx.staleAfterMs + 1 - now;
      report.nextStaleInMs = Math.min(report.nextStaleInMs ?? staleIn, staleIn);
      continue;
    }
    report.examined++;
    let outcome: Outcome;
    try {
      outcome =
        entry.kind === 'payout' ? await resolvePayout(ctx, entry, payouts) : await resolveEntry(ctx, entry);
    } catch (err) {
      ctx.log.warn(
        { op: entry.id, mint: entry.mint, code: isGatewayError(err) ? err.code : 'error' },
        entry.kind === 'payout'
          ? 'wallet recovery deferred: payout record not resolved (mint or store away)'
          : 'wallet recovery deferred: mint not reachable',
      );
      outcome = 'deferred';
    }
    if (outcome === 'deferred') report.deferred++;
    else if (outcome === 'rolled-back') report.rolledBack++;
    else if (entry.kind === 'payout') report.payoutsResolved++;
    else if (entry.kind === 'receive' || entry.kind === 'mint' || entry.kind === 'swap')
      report.receivesCompleted++;
    else report.outputsRestored++;
    if (outcome !== 'deferred') {
      ctx.log.info({ op: entry.id, kind: entry.kind, outcome }, 'wallet journal entry resolved');
      if (await settleDecidedMelt(ctx, entry, payouts)) report.payoutsResolved++;
      if (outcome === 'completed' && (await creditCompletedReceive(ctx, entry, receipts)))
        report.receiptsCredited++;
    }
  }
  return report;
}
