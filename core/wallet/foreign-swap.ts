import { CheckStateEnum, type Proof, type Wallet } from '@cashu/cashu-ts';
import { GatewayError, isGatewayError } from '../errors.js';
import {
  counterCollector,
  crashPoint,
  DETERMINISTIC,
  newEntry,
  proofY,
  type WalletContext,
  whileRunning,
} from './context.js';
import { isStale } from './journal.js';
import { classifyMintFailure, mapMintError } from './mint-errors.js';
import { createMintQuote, mintPaidQuote, QuoteNotPaidError } from './mint-quote.js';
import type { JournalEntry } from './store/proof-store.js';
import { cleanToken, encodeTokenV3, hashSecrets } from './token-codec.js';
import type { DecodedToken, ForeignMintPolicy, ReceiveReceipt } from './types.js';

/**
 * eCash from a mint this node does not trust (FOREIGN_MINTS=swap): the token's value is moved to the primary
 * mint over Lightning — a mint quote at the primary for A sats, a melt quote at the foreign mint for that
 * invoice, the token's proofs melted there, A sats minted at the primary — and the receipt says what arrived.
 *
 *   A = the largest amount with  A + fee_reserve(A) + input_fee ≤ face   (found by re-quoting, ≤ 4 rounds)
 *   credited = A + C' sats; fee = face − credited
 *
 * Fee change: the melt asks for NUT-08 change on deterministic (NUT-13) outputs of our seed at the foreign
 * mint, so the part of the reserve the payment did not use (and any slack the quote rounds left) comes back.
 * That change is eCash of the untrusted mint, which this wallet does not hold: it is swapped to the primary the
 * same way, as its own token (`swap:<hash of the change's secrets>`, with no fee bound — without the swap it is
 * lost anyway — and asking for no change of its own), and C' is what that second swap minted (0 when the change
 * cannot pay for its own swap). So the client gets face − input fee − the actual Lightning fee − what bringing
 * the change over costs (the foreign mint's input fee on the change proofs and the second payment's fee
 * reserve); an exact face − input fee − actual fee is impossible without holding untrusted eCash, since value
 * only reaches the primary mint by a Lightning payment, and every payment reserves a fee. The bound check
 * (FOREIGN_MINT_MAX_FEE_PERCENT) still counts the whole reserve as the cost, before anything is spent.
 *
 * Journal: `swap:<tokenHash>` (the cross-process claim on the token, like `recv:`) is written with the
 * foreign melt quote, the primary's mint quote, A and the change outputs' counters before the melt is sent.
 * The melt's answer carries the change signatures (NUT-08): the unblinded change is journalled at once
 * (`meltChange`) and swapped from there. Recovery (and a later call with the same token) finishes it: melt
 * PAID → mint the primary's quote (itself journalled and idempotent), the change from the journal — or, when
 * the answer was never seen (a crash, an ambiguous answer), restored from the counters, ONLY at a mint that
 * offers NUT-09 (the same proofs, so the same change swap, which is idempotent by its hash) — swapped, then
 * the receipt stored under the token hash; melt unpaid with the inputs unspent → dropped (the token is still
 * the client's); melt pending or a mint unreachable → left for the next pass. Change that cannot be had (no
 * NUT-09 to restore it, or too small to swap) never holds the credit back: what reached the primary is
 * credited and the change is part of the fee, as for change too small to swap.
 */

const MAX_QUOTE_ROUNDS = 4;
/** After a paid melt, how long the primary's quote may take to show PAID before the call answers 409. */
const MINT_WAIT_MS = 5_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The change swap: no fee bound (the change is lost otherwise), and no change of its own (one hop only). */
const CHANGE_POLICY: ForeignMintPolicy = {
  mode: 'swap',
  maxFeePercent: 100,
  maxSats: Number.MAX_SAFE_INTEGER,
};

export interface SwapQuote {
  /** Sats minted at the primary (credited). */
  amountSats: number;
  feeSats: number;
  inputFeeSats: number;
  feeReserveSats: number;
  meltQuote: string;
  mintQuote: string;
}

function tokenProofs(token: string, client: Wallet): Proof[] {
  return client.decodeToken(cleanToken(token)).proofs;
}

/** Quotes A (see above) and checks the fee bound. Spends nothing. */
async function quoteSwap(
  ctx: WalletContext,
  foreign: Wallet,
  proofs: Proof[],
  face: number,
  policy: ForeignMintPolicy,
): Promise<SwapQuote> {
  const primary = ctx.mints[0] as string;
  const inputFee = foreign.getFeesForProofs(proofs).toNumber();
  let amount = face - inputFee - Math.max(1, Math.ceil(face / 100));
  let best: SwapQuote | null = null;
  const tried = new Set<number>();
  for (let round = 0; round < MAX_QUOTE_ROUNDS && amount >= 1 && !tried.has(amount); round++) {
    tried.add(amount);
    const mq = await createMintQuote(ctx, primary, amount);
    let melt: Awaited<ReturnType<Wallet['createMeltQuoteBolt11']>>;
    try {
      melt = await foreign.createMeltQuoteBolt11(mq.request);
    } catch (err) {
      throw mapMintError(err);
    }
    if (melt.amount.toNumber() !== amount) {
      throw new GatewayError('mint_unavailable', { message: 'The foreign mint quoted another amount' });
    }
    const reserve = melt.fee_reserve.toNumber();
    const need = amount + reserve + inputFee;
    if (need <= face && (best === null || amount > best.amountSats)) {
      best = {
        amountSats: amount,
        feeSats: face - amount,
        inputFeeSats: inputFee,
        feeReserveSats: reserve,
        meltQuote: melt.quote,
        mintQuote: mq.quote,
      };
    }
    if (need === face) break;
    // Asked too much (or left some over): move A by the difference and quote again.
    amount += face - need;
  }
  if (!best) {
    throw new GatewayError('token_amount_too_small', {
      message: 'The token is worth nothing after the foreign mint fees',
    });
  }
  return checkBound(best, face, policy);
}

function checkBound(q: SwapQuote, face: number, policy: ForeignMintPolicy): SwapQuote {
  if (q.feeSats * 100 > policy.maxFeePercent * face) {
    throw new GatewayError('swap_fee_too_high', {
      details: {
        face_sats: face,
        fee_sats: q.feeSats,
        input_fee_sats: q.inputFeeSats,
        fee_reserve_sats: q.feeReserveSats,
        max_fee_percent: policy.maxFeePercent,
      },
    });
  }
  return q;
}

export async function swapForeignToken(
  ctx: WalletContext,
  token: string,
  d: DecodedToken,
  policy: ForeignMintPolicy,
  opts: { change?: boolean } = {},
): Promise<ReceiveReceipt> {
  const done = await ctx.store.getReceipt(d.tokenHash);
  if (done) return done;
  if (d.unit !== 'sat') {
    throw new GatewayError('unsupported_unit', {
      message: 'eCash from another mint is accepted in sat only',
    });
  }
  if (d.amount > policy.maxSats) {
    throw new GatewayError('invalid_request', {
      message: `eCash from another mint is accepted up to ${policy.maxSats} sat per token`,
      details: { max_sats: policy.maxSats },
    });
  }
  const entry = newEntry(ctx, `swap:${d.tokenHash}`, 'swap', d.mint, 'sat');
  entry.tokenHash = d.tokenHash;
  entry.faceMsat = d.amountMsat;
  entry.inputTotal = d.amount;
  const existing = await ctx.store.claimOp(entry);
  if (existing) {
    if (isStale(ctx, existing)) {
      await resolveSwap(ctx, existing).catch((err: unknown) => {
        throw mapMintError(err);
      });
      const receipt = await ctx.store.getReceipt(d.tokenHash);
      if (receipt) return receipt;
    }
    throw new GatewayError('token_pending', {
      message: 'The eCash token is being swapped; try again shortly',
    });
  }
  // The claimed entry is this call's until it settles it: this process's recovery pass leaves it alone.
  return whileRunning(ctx, entry.id, () => swapClaimed(ctx, token, d, policy, opts, entry));
}

async function swapClaimed(
  ctx: WalletContext,
  token: string,
  d: DecodedToken,
  policy: ForeignMintPolicy,
  opts: { change?: boolean },
  entry: JournalEntry,
): Promise<ReceiveReceipt> {
  let foreign: Wallet;
  let proofs: Proof[];
  let q: SwapQuote;
  try {
    foreign = await ctx.clients.get(d.mint, 'sat');
    proofs = tokenProofs(token, foreign);
    const states = await foreign.checkProofsStates(proofs);
    if (states.some((s) => s.state === CheckStateEnum.SPENT)) throw new GatewayError('token_already_spent');
    if (states.some((s) => s.state === CheckStateEnum.PENDING)) throw new GatewayError('token_pending');
    q = await quoteSwap(ctx, foreign, proofs, d.amount, policy);
  } catch (err) {
    await ctx.store.deleteOp(entry.id);
    throw isGatewayError(err) ? err : mapMintError(err);
  }
  entry.inputYs = proofs.map((p) => proofY(p.secret));
  entry.quote = q.meltQuote;
  entry.mintQuote = q.mintQuote;
  entry.mintAmount = q.amountSats;
  // NUT-08 change onto deterministic outputs (counters journalled below, before the melt is sent), so a
  // crash after the melt still finds the change by NUT-09 restore. A change swap asks for none.
  const counters = counterCollector();
  let preview: Awaited<ReturnType<Wallet['prepareMelt']>> | null = null;
  let meltQuote: Awaited<ReturnType<Wallet['checkMeltQuoteBolt11']>>;
  try {
    meltQuote = await foreign.checkMeltQuoteBolt11(q.meltQuote);
    if (!opts.change) {
      preview = await foreign.prepareMelt(
        'bolt11',
        meltQuote,
        proofs,
        { onCountersReserved: counters.on },
        DETERMINISTIC,
      );
    }
  } catch (err) {
    await ctx.store.deleteOp(entry.id);
    throw mapMintError(err);
  }
  entry.counters = counters.ranges;
  entry.submitted = true;
  if (!(await ctx.store.updateOp(entry))) {
    // Rolled back by another process meanwhile (it judged this one gone): nothing was sent to the mint.
    throw new GatewayError('token_pending', {
      message: 'The eCash token is being swapped; try again shortly',
    });
  }

  try {
    const res = preview
      ? await foreign.completeMelt(preview)
      : await foreign.meltProofsBolt11(meltQuote, proofs, { nut08Change: false });
    if ((res.quote as { state?: string }).state !== 'PAID') {
      // Pending at the foreign mint: recovery finishes it once the payment settles.
      await ctx.store.updateOp({ ...entry, abandoned: true });
      throw new GatewayError('token_pending', { message: 'The swap payment is pending; try again shortly' });
    }
    if (!opts.change) crashPoint('foreign-melt-answered');
    // The change the answer signed (NUT-08), journalled before it is swapped: no restore needed.
    entry.meltChange =
      res.change.length === 0 ? null : encodeTokenV3({ mint: d.mint, unit: 'sat', proofs: res.change });
    await ctx.store.updateOp(entry);
  } catch (err) {
    if (isGatewayError(err)) throw err;
    if (classifyMintFailure(err) !== 'ambiguous') {
      await ctx.store.deleteOp(entry.id);
      throw mapMintError(err);
    }
    await ctx.store.updateOp({ ...entry, abandoned: true });
    throw mapMintError(err);
  }
  crashPoint(opts.change ? 'after-change-melt' : 'after-foreign-melt');
  const deadline = Date.now() + MINT_WAIT_MS;
  for (;;) {
    const outcome = await resolveSwap(ctx, entry);
    if (outcome === 'completed') break;
    if (Date.now() > deadline) {
      await ctx.store.updateOp({ ...entry, abandoned: true });
      throw new GatewayError('token_pending', { message: 'The swap is being minted; try again shortly' });
    }
    await sleep(250);
  }
  const receipt = await ctx.store.getReceipt(d.tokenHash);
  if (!receipt) throw new GatewayError('internal_error', { message: 'The swap finished without a receipt' });
  ctx.log.info(
    { from: d.mint, amountMsat: receipt.amountMsat, feeMsat: receipt.feeMsat },
    'wallet swapped a foreign-mint token to the primary mint',
  );
  return receipt;
}

/**
 * Finishes or undoes a `swap:` entry (see the module comment). Throws when a mint cannot be asked.
 * 'deferred' = nothing decided yet (melt pending, or paid and the primary's quote not paid yet).
 */
export async function resolveSwap(
  ctx: WalletContext,
  entry: JournalEntry,
): Promise<'completed' | 'rolled-back' | 'deferred'> {
  const primary = ctx.mints[0] as string;
  if (!entry.submitted || !entry.quote || !entry.mintQuote || !entry.mintAmount || !entry.tokenHash) {
    await ctx.store.settleOp(entry, { spentYs: [], add: [] });
    return 'rolled-back';
  }
  const foreign = await ctx.clients.get(entry.mint, 'sat');
  const melt = await foreign.checkMeltQuoteBolt11(entry.quote);
  if (melt.state === 'PENDING') return 'deferred';
  if (melt.state !== 'PAID') {
    const st = await foreign.mint.check({ Ys: entry.inputYs });
    if (st.states.some((x) => x.state !== CheckStateEnum.UNSPENT)) return 'deferred';
    // Never paid and the proofs are untouched: the token is still the client's.
    await ctx.store.settleOp(entry, { spentYs: [], add: [] });
    return 'rolled-back';
  }
  let minted: ReceiveReceipt;
  try {
    minted = await mintPaidQuote(ctx, primary, entry.mintQuote, entry.mintAmount);
  } catch (err) {
    if (err instanceof QuoteNotPaidError) return 'deferred';
    throw err;
  }
  const changeMsat = await swapChange(ctx, entry);
  if (changeMsat === 'deferred') return 'deferred';
  const faceMsat = entry.faceMsat ?? entry.inputTotal * 1000;
  const amountMsat = minted.amountMsat + changeMsat;
  const receipt: ReceiveReceipt = {
    tokenHash: entry.tokenHash,
    mint: primary,
    unit: 'sat',
    faceMsat,
    amountMsat,
    feeMsat: faceMsat - amountMsat,
    receivedAt: Date.now(),
    swappedFrom: entry.mint,
  };
  // The primary mint issued it: the receipt stands even when another pass settled the entry first.
  await ctx.store.settleOp(entry, { spentYs: [], add: [], receipt, applyIfGone: true });
  return 'completed';
}

/**
 * The NUT-08 change of a paid swap melt, brought to the primary mint: the change the melt answered with
 * (journalled), or restored from the counters (recovery, see restoreChange), swapped as a token of its own —
 * the same proofs every time, so a repeat after a crash finds that swap's journal entry or receipt. Returns
 * the msats it minted; 0 when there is no change, it cannot be restored, or it cannot pay for its own swap
 * (the change is then part of the fee); 'deferred' while that swap is pending. Throws when a mint cannot be
 * asked.
 */
async function swapChange(ctx: WalletContext, entry: JournalEntry): Promise<number | 'deferred'> {
  if (entry.counters.length === 0 || entry.meltChange === null) return 0;
  const foreign = await ctx.clients.get(entry.mint, 'sat');
  let proofs: Proof[];
  if (entry.meltChange !== undefined) proofs = tokenProofs(entry.meltChange, foreign);
  else {
    const restored = await restoreChange(ctx, foreign, entry);
    if (restored === undefined) return 0;
    proofs = restored;
  }
  if (proofs.length === 0) return 0;
  const amount = proofs.reduce((s, p) => s + p.amount.toNumber(), 0);
  const d: DecodedToken = {
    mint: entry.mint,
    unit: 'sat',
    amount,
    amountMsat: amount * 1000,
    proofs: proofs.length,
    version: 3,
    tokenHash: hashSecrets(proofs.map((p) => p.secret)),
    foreign: true,
  };
  const token = encodeTokenV3({ mint: entry.mint, unit: 'sat', proofs });
  try {
    return (await swapForeignToken(ctx, token, d, CHANGE_POLICY, { change: true })).amountMsat;
  } catch (err) {
    if (isGatewayError(err) && err.code === 'token_pending') return 'deferred';
    if (isGatewayError(err) && err.code === 'token_amount_too_small') {
      ctx.log.info({ from: entry.mint, changeSats: amount }, 'swap change too small to swap; kept as fee');
      return 0;
    }
    if (isGatewayError(err) && err.code === 'token_already_spent') {
      // Spent with no receipt of ours (its own swap stores one before anything else could spend it): should
      // not happen. The token's main amount is still credited rather than left journalled for ever.
      ctx.log.error(
        { from: entry.mint, changeSats: amount },
        'swap change already spent elsewhere; not credited',
      );
      return 0;
    }
    throw err;
  }
}

/**
 * Recovery only (the melt's answer was never seen): the change restored from the journalled counters by NUT-09
 * (the outputs the mint did not sign are not returned). Undefined when the mint does not offer NUT-09 — it is
 * optional — so the change cannot be had: logged, and the caller credits without it.
 */
async function restoreChange(
  ctx: WalletContext,
  foreign: Wallet,
  entry: JournalEntry,
): Promise<Proof[] | undefined> {
  if (!foreign.getMintInfo().isSupported(9).supported) {
    ctx.log.warn(
      { from: entry.mint, quote: entry.quote },
      'swap change cannot be restored (the mint offers no NUT-09); credited without it, the change is fee',
    );
    return undefined;
  }
  const proofs: Proof[] = [];
  try {
    for (const r of entry.counters) {
      proofs.push(...(await foreign.restore(r.start, r.count, { keysetId: r.keysetId })).proofs);
    }
  } catch (err) {
    throw mapMintError(err);
  }
  return proofs;
}
