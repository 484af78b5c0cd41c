import { CheckStateEnum, type Proof, type Wallet } from '@cashu/cashu-ts';
import { isGatewayError } from '../errors.js';
import { proofY, toStored, type WalletContext } from './context.js';
import { resolveSwap } from './foreign-swap.js';
import type { JournalEntry } from './store/proof-store.js';
import { toMsat } from './token-codec.js';
import type { PayoutSettler, ReceiveReceipt, RecoveryReport, WalletService } from './types.js';

/**
 * Finishing or undoing journalled operations. An entry says which inputs went to the mint and which
 * deterministic counters our outputs used; the mint tells us (NUT-07) whether the inputs were consumed, and
 * (NUT-09) gives back the signatures on our outputs, which the seed turns into proofs again.
 */

export type Outcome = 'completed' | 'rolled-back' | 'deferred';

const BATCH = 500;

async function states(client: Wallet, ys: string[]): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < ys.length; i += BATCH) {
    const res = await client.mint.check({ Ys: ys.slice(i, i + BATCH) });
    const byY = new Map(res.states.map((s) => [s.Y, s.state]));
    for (const y of ys.slice(i, i + BATCH)) out.push(byY.get(y) ?? CheckStateEnum.UNSPENT);
  }
  return out;
}

async function restoreRanges(entry: JournalEntry, client: Wallet): Promise<Proof[]> {
  const proofs: Proof[] = [];
  for (const r of entry.counters) {
    const res = await client.restore(r.start, r.count, { keysetId: r.keysetId });
    proofs.push(...res.proofs);
  }
  if (proofs.length === 0) return proofs;
  // Only proofs the mint still reports unspent are money (a restored output could, in theory, be spent).
  const st = await states(
    client,
    proofs.map((p) => proofY(p.secret)),
  );
  return proofs.filter((_, i) => st[i] === CheckStateEnum.UNSPENT);
}

/**
 * Resolves one entry against its mint. Throws (GatewayError mint_unavailable) when the mint cannot be asked.
 */
export async function resolveEntry(ctx: WalletContext, entry: JournalEntry): Promise<Outcome> {
  if (entry.seedId !== ctx.seedId) {
    ctx.log.error({ op: entry.id }, 'wallet journal entry belongs to another seed; left for the operator');
    return 'deferred';
  }
  // A payout record is no mint operation (its send is settled): only the ledger can decide it (recoverAll).
  if (entry.kind === 'payout') return 'deferred';
  // A swap's outputs are minted by its own `mint:` step, so it has no counters: it decides for itself.
  if (entry.kind === 'swap') return resolveSwap(ctx, entry);
  if (!entry.submitted || entry.counters.length === 0) {
    await ctx.store.settleOp(entry, { spentYs: [], add: [] });
    return 'rolled-back';
  }
  const client = await ctx.clients.get(entry.mint, entry.unit);
  if (entry.kind === 'mint' && entry.quote) return resolveMint(ctx, entry, client, entry.quote);
  const st = await states(client, entry.inputYs);
  if (st.includes(CheckStateEnum.PENDING)) return 'deferred';
  const spentYs = entry.inputYs.filter((_, i) => st[i] === CheckStateEnum.SPENT);
  if (entry.kind === 'melt' && entry.quote) {
    const q = await client.checkMeltQuoteBolt11(entry.quote);
    if (q.state === 'PENDING') return 'deferred';
  }
  if (spentYs.length === 0) {
    await ctx.store.settleOp(entry, { spentYs: [], add: [] });
    return 'rolled-back';
  }
  const restored = await restoreRanges(entry, client);
  const add = restored.map(toStored);
  if (entry.kind === 'receive') {
    if (add.length === 0) {
      // Inputs spent but none of our outputs signed: someone else redeemed the token first.
      await ctx.store.settleOp(entry, { spentYs: [], add: [] });
      return 'rolled-back';
    }
    const amount = add.reduce((s, p) => s + p.amount, 0);
    const amountMsat = toMsat(amount, entry.unit);
    const faceMsat = entry.faceMsat ?? toMsat(entry.inputTotal, entry.unit);
    const receipt: ReceiveReceipt = {
      tokenHash: entry.tokenHash ?? entry.id.slice(5),
      mint: entry.mint,
      unit: entry.unit,
      faceMsat,
      amountMsat,
      feeMsat: faceMsat - amountMsat,
      receivedAt: Date.now(),
    };
    await ctx.store.settleOp(entry, { spentYs: [], add, receipt });
    return 'completed';
  }
  await ctx.store.settleOp(entry, { spentYs, add });
  return 'completed';
}

/**
 * A Lightning mint quote: ISSUED means the mint signed our journalled outputs (restore them and store the
 * receipt); anything else means it did not, and the entry is dropped (the quote can be minted again).
 */
async function resolveMint(
  ctx: WalletContext,
  entry: JournalEntry,
  client: Wallet,
  quote: string,
): Promise<Outcome> {
  const q = await client.checkMintQuoteBolt11(quote);
  if (q.state !== 'ISSUED') {
    await ctx.store.settleOp(entry, { spentYs: [], add: [] });
    return 'rolled-back';
  }
  const add = (await restoreRanges(entry, client)).map(toStored);
  const amountMsat = toMsat(
    add.reduce((s, p) => s + p.amount, 0),
    entry.unit,
  );
  const faceMsat = entry.faceMsat ?? toMsat(entry.inputTotal, entry.unit);
  const receipt: ReceiveReceipt = {
    tokenHash: entry.tokenHash ?? entry.id.slice(5),
    mint: entry.mint,
    unit: entry.unit,
    faceMsat,
    amountMsat,
    feeMsat: faceMsat - amountMsat,
    receivedAt: Date.now(),
  };
  await ctx.store.settleOp(entry, { spentYs: [], add, receipt });
  return 'completed';
}

/**
 * Hands one payout record to the settler once it is `staleAfterMs` old — the age after which the
 * journal treats any entry as left by a dead process. The age, not the owner in the hold id, decides: the
 * owner may be another live process of the cluster, and a live owner finishes (or settles) its payout within
 * a few store round trips. A record resolved under a slow live owner is still safe: its `finishPayout` then
 * answers false and the token is not handed out.
 */
async function resolvePayout(
  ctx: WalletContext,
  entry: JournalEntry,
  payouts: { settle: PayoutSettler; wallet: WalletService } | undefined,
): Promise<Outcome> {
  if (!entry.payout || !payouts) {
    ctx.log.warn({ op: entry.id }, 'wallet payout record left: no ledger to resolve it here');
    return 'deferred';
  }
  await payouts.settle(entry.payout, payouts.wallet);
  return 'completed';
}

/** Payout records a live payout may still finish are not due yet (not examined by this pass). */
function payoutDue(ctx: WalletContext, entry: JournalEntry, now: number): boolean {
  return now - entry.createdAt >= ctx.staleAfterMs;
}

/** One pass over the whole journal (start-up, or on demand). */
export async function recoverAll(
  ctx: WalletContext,
  payouts?: { settle: PayoutSettler; wallet: WalletService },
): Promise<RecoveryReport> {
  const report: RecoveryReport = {
    examined: 0,
    receivesCompleted: 0,
    rolledBack: 0,
    outputsRestored: 0,
    deferred: 0,
    payoutsResolved: 0,
  };
  const now = Date.now();
  for (const entry of await ctx.store.listOps()) {
    if (entry.kind === 'payout' && !payoutDue(ctx, entry, now)) continue;
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
    if (outcome !== 'deferred')
      ctx.log.info({ op: entry.id, kind: entry.kind, outcome }, 'wallet journal entry resolved');
  }
  return report;
}
