import { randomUUID } from 'node:crypto';
import { getEncodedToken, type MeltQuoteBolt11Response, type Proof, type Wallet } from '@cashu/cashu-ts';
import { GatewayError } from '../errors.js';
import { bolt11AmountMsat } from './bolt11.js';
import {
  counterCollector,
  crashPoint,
  DETERMINISTIC,
  newEntry,
  toProofLike,
  toStored,
  type WalletContext,
  whileRunning,
} from './context.js';
import {
  afterAmbiguousFailure,
  isStale,
  meltDecision,
  payoutId,
  payoutStartId,
  rollBack,
} from './journal.js';
import { classifyMintFailure, mapMintError } from './mint-errors.js';
import { mayDecide, ownerBeats } from './owners.js';
import { resolveEntry } from './recovery.js';
import type { JournalEntry, StoredProof } from './store/proof-store.js';
import { encodeTokenV3, toMsat, UNIT_MSAT } from './token-codec.js';
import type {
  CashuUnit,
  InvoicePayment,
  MeltQuoteInfo,
  PayoutHold,
  PayoutRecord,
  SendResult,
} from './types.js';

/**
 * Spending the operator's proofs: tokens for change and withdrawals (NUT-03 swap to the exact amount) and
 * Lightning payouts (NUT-05 melt with NUT-08 change). Both reserve proofs atomically with their journal entry,
 * so a crash leaves them reserved-and-journalled until recovery settles or releases them.
 */

function maxFeePpk(client: Wallet): number {
  return client.keyChain.getKeysets().reduce((m, k) => Math.max(m, k.fee), 0);
}

/**
 * Settles this pool's entries a live process gave up on (ambiguous mint answer) or a dead one left behind,
 * so their reserved proofs are usable again without waiting for the next `recover()`. Best effort.
 */
async function settleLeftovers(ctx: WalletContext, mint: string, unit: CashuUnit): Promise<void> {
  const now = Date.now();
  const candidates = (await ctx.store.listOps()).filter(
    (e) =>
      e.mint === mint &&
      e.unit === unit &&
      e.kind !== 'receive' &&
      e.kind !== 'payout' &&
      isStale(ctx, e, now),
  );
  if (candidates.length === 0) return;
  // Stale by age is not enough: a live neighbour's entry is its own (owners.ts).
  const beats = await ownerBeats(ctx);
  for (const e of candidates) {
    if (!mayDecide(ctx, e, beats, now)) continue;
    await resolveEntry(ctx, e).catch(() => undefined);
  }
}

async function reserve(
  ctx: WalletContext,
  entry: JournalEntry,
  target: number,
  ppk: number,
): Promise<StoredProof[]> {
  await settleLeftovers(ctx, entry.mint, entry.unit);
  const proofs = await ctx.store.reserveProofs(entry, target, ppk);
  if (!proofs) {
    throw new GatewayError('service_unavailable', {
      message: "The operator's eCash at this mint does not cover the amount",
      details: { mint: entry.mint, unit: entry.unit },
    });
  }
  return proofs;
}

/**
 * The operation's own entry was decided by another process (a recovery pass that judged this process gone, its
 * heartbeat late on a loaded machine) before this call could settle it. Nothing is handed out: what the mint did
 * was settled into the pool (`SettleInput.applyIfGone`), and the caller's hold is settled from the journal.
 */
export function decidedElsewhere(id: string): GatewayError {
  return new GatewayError('service_unavailable', {
    message: 'Another gateway process settled this operation first; nothing was paid out, try again',
    details: { op: id.slice(0, id.indexOf(':')) },
  });
}

/** After a failed mint call: undo if the mint surely did nothing, else settle now or leave for recovery. */
async function onMintFailure(ctx: WalletContext, entry: JournalEntry, err: unknown): Promise<never> {
  if (classifyMintFailure(err) !== 'ambiguous') {
    await rollBack(ctx, entry);
  } else {
    await afterAmbiguousFailure(ctx, entry, err);
  }
  throw mapMintError(err);
}

export async function sendToken(
  ctx: WalletContext,
  amountMsat: number,
  mint: string,
  unit: CashuUnit,
  version: 3 | 4,
  payout?: Omit<PayoutRecord, 'token'>,
): Promise<SendResult> {
  const amount = Math.floor(amountMsat / UNIT_MSAT[unit]);
  if (!Number.isSafeInteger(amount) || amount < 1) {
    throw new GatewayError('invalid_request', { message: `Amount is below one ${unit}` });
  }
  const client = await ctx.clients.get(mint, unit);
  const entry = newEntry(ctx, `send:${randomUUID()}`, 'send', mint, unit);
  // The entry is in the store from its reservation on: this process's recovery pass leaves it to this call.
  return whileRunning(ctx, entry.id, async () => {
    const proofs = await reserve(ctx, entry, amount, maxFeePpk(client));
    const held = (await ctx.store.getOp(entry.id)) ?? entry;
    const counters = counterCollector();
    let preview: Awaited<ReturnType<Wallet['prepareSwapToSend']>>;
    try {
      preview = await client.prepareSwapToSend(
        amount,
        proofs.map(toProofLike),
        { includeFees: false, onCountersReserved: counters.on },
        { send: DETERMINISTIC, keep: DETERMINISTIC },
      );
    } catch (err) {
      await rollBack(ctx, held);
      throw err instanceof GatewayError ? err : new GatewayError('internal_error', { cause: err });
    }
    const submitted: JournalEntry = { ...held, counters: counters.ranges, submitted: true };
    // Only while the entry is still there: another process that rolled it back released its inputs.
    if (!(await ctx.store.updateOp(submitted))) throw decidedElsewhere(entry.id);
    let send: Proof[];
    let keep: Proof[];
    try {
      ({ send, keep } = await client.completeSwap(preview));
    } catch (err) {
      return await onMintFailure(ctx, submitted, err);
    }
    crashPoint('after-send-swap');
    const spentYs = preview.inputs.map((p) => toStored(p).y);
    const token =
      version === 3
        ? encodeTokenV3({ mint, unit, proofs: send })
        : getEncodedToken({ mint, unit, proofs: send });
    // A payout's token replaces the send's entry in one atomic step: from the swap on, it is never in memory only.
    const next: JournalEntry | undefined = payout && {
      ...newEntry(ctx, payoutId(payout.holdId), 'payout', mint, unit),
      submitted: true,
      payout: { ...payout, token },
    };
    const settled = await ctx.store.settleOp(submitted, {
      spentYs,
      add: keep.map(toStored),
      ...(next ? { next } : {}),
    });
    if (!settled) {
      // Decided elsewhere while the swap was on its way: its inputs may be back in the pool (spent now) and the
      // token's proofs nowhere. The token's proofs join the pool with the change; the token is not handed out.
      await ctx.store.settleOp(submitted, {
        spentYs,
        add: [...keep, ...send].map(toStored),
        applyIfGone: true,
      });
      ctx.log.warn({ op: entry.id, mint, unit }, 'wallet send decided by another process; its token kept');
      throw decidedElsewhere(entry.id);
    }
    const inputTotal = preview.inputs.reduce((s, p) => s + p.amount.toNumber(), 0);
    const keptTotal = keep.reduce((s, p) => s + p.amount.toNumber(), 0);
    const feeMsat = toMsat(inputTotal - keptTotal - amount, unit);
    ctx.log.info({ mint, unit, amountMsat: toMsat(amount, unit), feeMsat }, 'wallet sent token');
    return { token, amountMsat: toMsat(amount, unit), feeMsat, mint, unit };
  });
}

/**
 * A NUT-05 melt quote for `invoice` at `mint` (no money moves); a refused invoice is 400 `invalid_request`.
 * `amountMsat`: the amount to pay an invoice that names none (NUT-05 `amountless`), and only then.
 */
export async function quoteInvoice(
  ctx: WalletContext,
  invoice: string,
  mint: string,
  unit: CashuUnit,
  amountMsat?: number,
): Promise<MeltQuoteInfo> {
  const named = bolt11AmountMsat(invoice);
  if ((named === null) !== (amountMsat !== undefined)) {
    throw new GatewayError('invalid_request', {
      message:
        named === null
          ? 'The invoice names no amount: say what to pay it'
          : 'The invoice names its amount: no other amount may be paid to it',
    });
  }
  if (
    amountMsat !== undefined &&
    (!Number.isSafeInteger(amountMsat) || amountMsat <= 0 || (unit === 'sat' && amountMsat % 1000 !== 0))
  ) {
    throw new GatewayError('invalid_request', { message: `Cannot pay ${amountMsat} msat in ${unit}` });
  }
  const client = await ctx.clients.get(mint, unit);
  let quote: MeltQuoteBolt11Response;
  try {
    quote = await client.createMeltQuoteBolt11(invoice, amountMsat);
  } catch (err) {
    const mapped = mapMintError(err);
    if (mapped.code === 'mint_unavailable' && classifyMintFailure(err) === 'rejected') {
      throw new GatewayError('invalid_request', {
        message: 'The mint refused the invoice',
        details: mapped.details,
      });
    }
    throw mapped.code === 'internal_error'
      ? new GatewayError('invalid_request', { message: 'Invalid invoice' })
      : mapped;
  }
  return {
    quote: quote.quote,
    mint,
    unit,
    amountMsat: toMsat(quote.amount.toNumber(), unit),
    feeReserveMsat: toMsat(quote.fee_reserve.toNumber(), unit),
  };
}

export async function payInvoice(
  ctx: WalletContext,
  invoice: string,
  mint: string,
  unit: CashuUnit,
  opts: { quote?: MeltQuoteInfo; hold?: PayoutHold } = {},
): Promise<InvoicePayment> {
  const client = await ctx.clients.get(mint, unit);
  const q = opts.quote ?? (await quoteInvoice(ctx, invoice, mint, unit));
  if (q.mint !== mint || q.unit !== unit) {
    throw new GatewayError('internal_error', { message: 'The melt quote is of another mint or unit' });
  }
  const quote = await client.checkMeltQuoteBolt11(q.quote).catch((err: unknown) => {
    throw mapMintError(err);
  });
  const need = quote.amount.toNumber() + quote.fee_reserve.toNumber();
  // A hold's melt is journalled under the hold's id, so its payout is found (getLightningPayout) by the hold.
  const entry = newEntry(
    ctx,
    opts.hold ? `melt:${opts.hold.holdId}` : `melt:${randomUUID()}`,
    'melt',
    mint,
    unit,
  );
  entry.quote = q.quote;
  if (opts.hold) {
    entry.lightning = {
      ...opts.hold,
      quote: q.quote,
      mint,
      amountMsat: toMsat(quote.amount.toNumber(), unit),
      feeReserveMsat: toMsat(quote.fee_reserve.toNumber(), unit),
    };
  }
  // The entry is in the store from its reservation on: this process's recovery pass leaves it to this call.
  return whileRunning(ctx, entry.id, async () => {
    const proofs = await reserve(ctx, entry, need, maxFeePpk(client));
    const held = (await ctx.store.getOp(entry.id)) ?? entry;
    // The melt is journalled under the hold: the payout's start entry (lightning-refund.ts) is done with. Its removal
    // is the claim on the hold: a recovery pass that judged this process gone may have taken the start over
    // (recovery.ts resolvePayoutStart) to abort the hold, and then this melt must not be sent. Rolled back unsent,
    // its record "not paid" (the hold is aborted either way; a store error counts as taken over).
    if (opts.hold && !(await ctx.store.deleteOp(payoutStartId(opts.hold.holdId)).catch(() => false))) {
      await rollBack(ctx, held);
      throw decidedElsewhere(entry.id);
    }
    const counters = counterCollector();
    const preview = await client
      .prepareMelt(
        'bolt11',
        quote,
        proofs.map(toProofLike),
        { onCountersReserved: counters.on },
        DETERMINISTIC,
      )
      .catch(async (err: unknown) => {
        await rollBack(ctx, held);
        throw new GatewayError('internal_error', { cause: err });
      });
    const submitted: JournalEntry = { ...held, counters: counters.ranges, submitted: true };
    // Only while the entry is still there: another process that rolled it back released its inputs.
    if (!(await ctx.store.updateOp(submitted))) throw decidedElsewhere(entry.id);
    crashPoint('before-melt');
    let res: Awaited<ReturnType<Wallet['completeMelt']>>;
    try {
      res = await client.completeMelt(preview);
    } catch (err) {
      return await onMintFailure(ctx, submitted, err);
    }
    crashPoint('after-melt');
    const paid = res.quote as unknown as MeltQuoteBolt11Response;
    if (paid.state !== 'PAID') {
      // Still in flight at the mint: the journal keeps the proofs reserved until recovery sees the outcome (PAID, or
      // UNPAID again: failed — the mint has seen this melt, so that answer is final). This process is done with it
      // (abandoned): its own next pass asks the mint, however long the payment takes.
      await ctx.store.updateOp({ ...submitted, seenAtMint: true, abandoned: true }).catch(() => false);
      throw new GatewayError('service_unavailable', {
        message: 'The Lightning payment is pending at the mint; recovery will settle it',
        details: { quote: q.quote },
      });
    }
    const change = res.change.map(toStored);
    const inputTotal = proofs.reduce((s, p) => s + p.amount, 0);
    const changeTotal = change.reduce((s, p) => s + p.amount, 0);
    const preimage = paid.payment_preimage ?? null;
    const next = meltDecision(ctx, submitted, true, changeTotal, preimage);
    // What the mint did is settled even if another process decided the entry first (from the mint's states: paid,
    // its record written by that process): the change is kept, and the caller reads the record that process wrote.
    const settled = await ctx.store.settleOp(submitted, {
      spentYs: submitted.inputYs,
      add: change,
      ...(next ? { next } : {}),
      applyIfGone: true,
    });
    if (!settled) {
      ctx.log.warn({ op: entry.id, mint, unit }, 'wallet melt decided by another process; its change kept');
    }
    const amountMsat = toMsat(quote.amount.toNumber(), unit);
    const feeMsat = toMsat(inputTotal - changeTotal, unit) - amountMsat;
    ctx.log.info({ mint, unit, amountMsat, feeMsat }, 'wallet paid invoice');
    return { amountMsat, feeMsat, preimage, mint, unit, quote: q.quote };
  });
}
