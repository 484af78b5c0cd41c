import { CheckStateEnum, type Proof, type Wallet } from '@cashu/cashu-ts';
import { proofY, toStored, type WalletContext } from './context.js';
import type { JournalEntry, StoredProof } from './store/proof-store.js';
import { toMsat } from './token-codec.js';
import type { ReceiveReceipt } from './types.js';

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

/** A claim older than `staleAfterMs`, or given up by its owner, is treated as left by a dead process. */
export function isStale(ctx: WalletContext, entry: JournalEntry, now = Date.now()): boolean {
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
  await ctx.store.settleOp(entry, { spentYs, add });
  return 'completed';
}

/**
 * After a mint call whose outcome is unknown (timeout, reset): decide the entry now if the mint answers, and
 * return the receipt it stored (receives and mints); otherwise mark the entry abandoned so the next claimant or
 * the recovery pass decides it without waiting for it to go stale. The caller then throws the mint error.
 */
export async function afterAmbiguousFailure(
  ctx: WalletContext,
  entry: JournalEntry,
): Promise<ReceiveReceipt | undefined> {
  try {
    await resolveOp(ctx, entry);
    if (entry.tokenHash !== undefined) {
      const receipt = await ctx.store.getReceipt(entry.tokenHash);
      if (receipt) return receipt;
    }
  } catch {
    /* mint still unreachable: the recovery pass finishes it */
  }
  if (await ctx.store.getOp(entry.id)) await ctx.store.putOp({ ...entry, abandoned: true });
  return undefined;
}
