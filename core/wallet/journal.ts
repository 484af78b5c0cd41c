import { CheckStateEnum, type Proof, type Wallet } from '@cashu/cashu-ts';
import { newEntry, proofY, toStored, type WalletContext } from './context.js';
import { mayBeInFlight } from './mint-errors.js';
import type { JournalEntry, StoredProof } from './store/proof-store.js';
import { toMsat } from './token-codec.js';
import type { LightningPayoutRecord, ReceiveReceipt } from './types.js';

/**
 * The wallet journal's steps, each written once: deciding an entry against its mint (`resolveOp`), the receipt
 * a completed receive or mint stores (`receiptFor`), when a claim counts as left by a dead process (`isStale`),
 * and what follows an ambiguous mint failure (`afterAmbiguousFailure`). An entry says which inputs went to the
 * mint and which deterministic counters our outputs used; the mint tells us (NUT-07) whether the inputs were
 * consumed, and (NUT-09) gives back the signatures on our outputs, which the seed turns into proofs again.
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

/** The receipt of a receive or mint entry whose proofs `add` were stored: face value, amount kept and the fee. */
export function receiptFor(entry: JournalEntry, add: readonly StoredProof[]): ReceiveReceipt {
  const amountMsat = toMsat(
    add.reduce((s, p) => s + p.amount, 0),
    entry.unit,
  );
  const faceMsat = entry.faceMsat ?? toMsat(entry.inputTotal, entry.unit);
  return {
    tokenHash: entry.tokenHash ?? entry.id.slice(5),
    mint: entry.mint,
    unit: entry.unit,
    faceMsat,
    amountMsat,
    feeMsat: faceMsat - amountMsat,
    receivedAt: Date.now(),
  };
}

/** Journal id of a hold's payout record (a withdrawal token, or a decided Lightning payout). */
export const payoutId = (holdId: string): string => `payout:${holdId}`;
/**
 * A token payout record claimed to take its token back (`WalletService.claimPayout`): moved here from
 * `payout:<holdId>`, so the payout's owner can no longer finish it and hand the token out.
 */
export const payoutClaimId = (holdId: string): string => `payout-reclaim:${holdId}`;
/** The start entry of a Lightning payout (JournalEntry.payoutStart). */
export const payoutStartId = (holdId: string): string => `lnstart:${holdId}`;
/**
 * A payout start a recovery pass took over to abort its hold (moved here from `lnstart:<holdId>`, atomically
 * against the owner's own removal of it when its melt is journalled: of the two, exactly one finds it).
 */
export const payoutStartClaimId = (holdId: string): string => `lnstart-claimed:${holdId}`;

/**
 * The entry that replaces a hold's melt entry (`lightning` set) in the step that settles it: the Lightning payout
 * record with the mint's decision and, when paid, what the proofs lost beyond the amount (Lightning fee + input
 * fee). undefined for a melt that pays no hold.
 */
export function meltDecision(
  ctx: WalletContext,
  entry: JournalEntry,
  paid: boolean,
  changeTotal = 0,
  preimage?: string | null,
): JournalEntry | undefined {
  const l = entry.lightning;
  if (!l) return undefined;
  const decided: LightningPayoutRecord = paid
    ? {
        ...l,
        paid: true,
        feeMsat: toMsat(entry.inputTotal - changeTotal, entry.unit) - l.amountMsat,
        ...(preimage !== undefined ? { preimage } : {}),
      }
    : { ...l, paid: false };
  return {
    ...newEntry(ctx, payoutId(l.holdId), 'payout', entry.mint, entry.unit),
    submitted: true,
    lightning: decided,
  };
}

/** Rolls a journal entry back (nothing reached the mint, or the mint consumed nothing): a hold's melt is decided unpaid. */
export async function rollBack(ctx: WalletContext, entry: JournalEntry): Promise<void> {
  const next = entry.kind === 'melt' ? meltDecision(ctx, entry, false) : undefined;
  await ctx.store.settleOp(entry, { spentYs: [], add: [], ...(next ? { next } : {}) });
}

/**
 * A claim older than `staleAfterMs`, or given up by its owner, is treated as left by a dead process — unless a
 * call of this process is still at work on it (`WalletContext.running`): on a loaded machine a melt or swap can be
 * on its way to the mint past that age.
 */
export function isStale(ctx: WalletContext, entry: JournalEntry, now = Date.now()): boolean {
  if (ctx.running.has(entry.id)) return false;
  return entry.abandoned === true || now - entry.createdAt > ctx.staleAfterMs;
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
  await ctx.store.settleOp(entry, { spentYs: [], add, receipt: receiptFor(entry, add) });
  return 'completed';
}

/**
 * Whether "nothing happened at the mint" may still change: the request can be on its way there (queued in a
 * proxy, a slow mint, a dead owner's last request). A melt the mint never answered for is not given up while its
 * quote can still be paid (UNPAID before the quote's expiry); a swap's inputs count as in flight for
 * `staleAfterMs` (twice the mint timeout) after its answer was lost, or after it was written. Rolling back then
 * would release what the mint performs a moment later: a Lightning refund paid and not debited.
 */
function mayStillArrive(
  ctx: WalletContext,
  entry: JournalEntry,
  quoteExpiry: number | undefined,
  now: number,
): boolean {
  // Its writer saw the mint's answer (this process's own entry, no lost answer): nothing is on its way. An entry
  // with no owner (offline tools, older versions) keeps the rule it was written under.
  const lost =
    entry.ambiguousAt !== undefined || (entry.owner !== undefined && entry.owner.id !== ctx.owner?.id);
  if (!lost) return false;
  if (entry.kind === 'melt') {
    if (entry.seenAtMint) return false;
    return quoteExpiry === undefined || quoteExpiry * 1000 > now;
  }
  return now - (entry.ambiguousAt ?? entry.createdAt) <= ctx.staleAfterMs;
}

/**
 * Resolves one receive, mint, send or melt entry against its mint. Throws (GatewayError mint_unavailable) when
 * the mint cannot be asked. Payout records and swaps are not decided here: only the ledger can decide a payout
 * (recovery.ts), and a swap decides for itself through its own `mint:` step (foreign-swap.ts).
 */
export async function resolveOp(ctx: WalletContext, entry: JournalEntry): Promise<Outcome> {
  if (entry.seedId !== ctx.seedId) {
    ctx.log.error({ op: entry.id }, 'wallet journal entry belongs to another seed; left for the operator');
    return 'deferred';
  }
  if (entry.kind === 'payout' || entry.kind === 'swap') return 'deferred';
  // A hold's melt without change outputs may still have been paid: only the mint's states decide it.
  const undecidable = entry.counters.length === 0 && entry.lightning === undefined;
  if (!entry.submitted || undecidable) {
    await rollBack(ctx, entry);
    return 'rolled-back';
  }
  const client = await ctx.clients.get(entry.mint, entry.unit);
  if (entry.kind === 'mint' && entry.quote) return resolveMint(ctx, entry, client, entry.quote);
  // A melt's quote first: it is the payment's own state, and asking it is what settles it at some mints.
  let quoteExpiry: number | undefined;
  if (entry.kind === 'melt' && entry.quote) {
    const q = await client.checkMeltQuoteBolt11(entry.quote);
    if (q.state === 'PENDING') {
      // The mint has it: an UNPAID answer later means the payment failed (NUT-05), not "not arrived yet".
      if (!entry.seenAtMint) await ctx.store.updateOp({ ...entry, seenAtMint: true });
      return 'deferred';
    }
    quoteExpiry = typeof q.expiry === 'number' ? q.expiry : undefined;
  }
  const st = await states(client, entry.inputYs);
  if (st.includes(CheckStateEnum.PENDING)) return 'deferred';
  const spentYs = entry.inputYs.filter((_, i) => st[i] === CheckStateEnum.SPENT);
  if (spentYs.length === 0) {
    // Nothing happened at the mint — yet? Left open while the request may still get there; a later pass decides.
    if (mayStillArrive(ctx, entry, quoteExpiry, Date.now())) return 'deferred';
    await rollBack(ctx, entry);
    return 'rolled-back';
  }
  const add = (await restoreRanges(entry, client)).map(toStored);
  if (entry.kind === 'receive') {
    if (add.length === 0) {
      // Inputs spent but none of our outputs signed: someone else redeemed the token first.
      await ctx.store.settleOp(entry, { spentYs: [], add: [] });
      return 'rolled-back';
    }
    await ctx.store.settleOp(entry, { spentYs: [], add, receipt: receiptFor(entry, add) });
    return 'completed';
  }
  const next =
    entry.kind === 'melt'
      ? meltDecision(
          ctx,
          entry,
          true,
          add.reduce((sum, p) => sum + p.amount, 0),
        )
      : undefined;
  await ctx.store.settleOp(entry, { spentYs, add, ...(next ? { next } : {}) });
  return 'completed';
}

/**
 * After a mint call whose outcome is unknown (an answered 5xx; or a timeout or reset, marked `ambiguousAt`: the
 * request may still be on its way, mint-errors.ts `mayBeInFlight`): the entry is given up
 * (`abandoned`: the next claimant or this process's recovery pass decides it without waiting for it to go stale),
 * then decided now if the mint already shows the outcome — a completed swap or a paid melt; "nothing happened"
 * is not believed while the request may still be on its way (see `mayStillArrive`): the entry stays open for a
 * later pass. Returns the receipt it stored (receives and mints). The caller then throws the mint error.
 */
export async function afterAmbiguousFailure(
  ctx: WalletContext,
  entry: JournalEntry,
  err: unknown,
): Promise<ReceiveReceipt | undefined> {
  const marked: JournalEntry = {
    ...entry,
    abandoned: true,
    ...(mayBeInFlight(err) ? { ambiguousAt: Date.now() } : {}),
  };
  try {
    // Only while it is still there (never bring back an entry something settled meanwhile).
    await ctx.store.updateOp(marked);
  } catch {
    /* the store is away: the entry stays as written, decided by a later pass */
  }
  try {
    await resolveOp(ctx, marked);
    if (entry.tokenHash !== undefined) {
      const receipt = await ctx.store.getReceipt(entry.tokenHash);
      if (receipt) return receipt;
    }
  } catch {
    /* mint still unreachable: the recovery pass finishes it */
  }
  return undefined;
}
