import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import { resolveCredential } from '../ledger/keys.js';
import type { HoldRef, KeyLookup } from '../ledger/types.js';
import { log } from '../log.js';
import { inSpan, type OpSpan, spanStep, startOpSpan } from '../trace-context.js';
import { crashPoint } from '../wallet/context.js';
import type { MeltQuoteInfo } from '../wallet/types.js';
import type { Money } from './credit-token.js';
import type { LightningAddresses, LnurlPay } from './lightning-address.js';
import { settleLightningPayout } from './lightning-payout.js';
import { keyIdOfCredential } from './pay-out.js';
import { holdRefusalToError } from './payout-guard.js';

/**
 * A key's balance paid to its Lightning address (POST /v1/wallet/refund `{"to": "refund_address"}` and the
 * expired-key sweep). No HTTP here. The one money path of every payout (pay-out.ts), with a melt instead of a
 * token:
 *
 * 1. resolve the address's LNURL-pay parameters (nothing held yet: a bad address changes nothing);
 * 2. hold everything available (kind `refund`) as a PAYOUT HOLD: no expiry, an id that names no process (so
 *    orphan release never frees it), and while it is open the account's other holds — refunds, withdrawals,
 *    key closes, the sweep — are refused `payout_in_progress` (payout-guard.ts). Only the melt's decision
 *    ends it, however long the mint takes;
 * 3. find the amount: whole sats such that amount + the mint's fee reserve fits the hold — an invoice from the
 *    address's callback and a melt quote for it, at most three rounds (a smaller amount never has a larger
 *    reserve); nothing fits → the hold is aborted, 402 `refund_below_fee_reserve`;
 * 4. melt through the operator's wallet with the hold named: the melt's journal entry carries it, and the
 *    step that settles the melt writes the decision (paid, fee) as a payout record in the same atomic step;
 * 5. settle the hold from that record: commit amount + the fee the mint charged (the unused reserve is
 *    released in the same ledger step), or abort if not paid; delete the record.
 *
 * A crash or an ambiguous mint answer anywhere after step 4 starts leaves the journal entry: the recovery pass
 * decides it against the mint (NUT-07 states, the quote's state) and settles the hold the same way, so the
 * invoice is never paid twice (the hold keeps the balance until then) and never paid without a debit. A
 * payment still pending at the mint answers 503 and stays held until a pass sees it decided.
 */

export interface LightningRefundRequest {
  credential: KeyLookup;
  /** The key's refund address (`name@host`). */
  address: string;
}

export interface LightningRefundResult {
  address: string;
  /** What the invoice paid to the address, msats. */
  amountMsat: number;
  /** The fee the mint charged (Lightning routing + its input fee), msats; debited with the amount. */
  feeMsat: number;
  /** The Lightning fee reserve the mint held for the payment, msats (what it did not use stays on the key). */
  feeReserveMsat: number;
  /** Balance left on the key, msats. */
  balanceMsat: number;
  preimage: string | null;
  mint: string;
}

/** Rounds of "invoice, melt quote" before the amount fits the hold with its fee reserve. */
const FIT_ROUNDS = 3;

/**
 * Traced (README, "Tracing") as a `payout` span (method `lightning`) with the steps `hold`, `quote` (the invoice
 * and melt quote that fit), `melt` and `settle`: money attributes in msats, never the invoice or the preimage.
 */
export async function refundToLightning(
  money: Money,
  addresses: LightningAddresses,
  req: LightningRefundRequest,
): Promise<LightningRefundResult> {
  const span = startOpSpan('payout', () => ({
    'gateway.payout.kind': 'refund',
    'gateway.payout.method': 'lightning',
    'gateway.key_id': keyIdOfCredential(req.credential),
  }));
  return inSpan(span, async (s) => {
    const pay = await addresses.resolve(req.address);
    const paid = await payoutSteps(
      money,
      req.credential,
      (held) => fitInvoice(money, addresses, pay, held),
      'refund paid to a Lightning address',
      s,
    );
    return { address: pay.address, ...paid };
  });
}

/**
 * A key's balance paid to an invoice that names no amount (the MPP session's return invoice, at its close): the
 * same steps as `refundToLightning`, the amount chosen here (NUT-05 `amountless` melt quotes) so that amount plus
 * the mint's fee reserve fits the hold. @throws GatewayError `refund_below_fee_reserve` (nothing fits; nothing
 * moved), `payout_in_progress`, `service_unavailable` (pending at the mint: it stays held until decided).
 */
export async function refundToInvoice(
  money: Money,
  req: {
    credential: KeyLookup;
    invoice: string;
    /** The payout hold's id, made by the caller (`newPayoutHoldId`) to find the payout again after a crash. */
    holdId?: string;
    /** Told the amount the melt pays (msats), after the quote and before the melt. Its errors are its own. */
    beforeMelt?: (amountMsat: number) => Promise<void>;
  },
): Promise<Omit<LightningRefundResult, 'address'>> {
  const span = startOpSpan('payout', () => ({
    'gateway.payout.kind': 'refund',
    'gateway.payout.method': 'lightning',
    'gateway.key_id': keyIdOfCredential(req.credential),
  }));
  return inSpan(span, (s) =>
    payoutSteps(
      money,
      req.credential,
      (held) => fitAmountless(money, req.invoice, held),
      'refund paid to a return invoice',
      s,
      req.holdId,
      req.beforeMelt,
    ),
  );
}

/**
 * A fresh payout hold id. No process in the id (core/ledger/owner.ts) and no expiry: only the melt's decision
 * releases or commits the hold. A caller that must find the payout again after a crash (an MPP close) makes the id
 * first, records it, and passes it in.
 */
export function newPayoutHoldId(): string {
  return `lnrefund-${randomUUID()}`;
}

/** The hold, the fitting invoice and quote (`fitting`), the melt and the settle of one Lightning refund. */
async function payoutSteps(
  money: Money,
  credential: KeyLookup,
  fitting: (heldMsat: number) => Promise<{ invoice: string; quote: MeltQuoteInfo }>,
  logLine: string,
  span: OpSpan | undefined,
  holdId = newPayoutHoldId(),
  beforeMelt?: (amountMsat: number) => Promise<void>,
): Promise<Omit<LightningRefundResult, 'address'>> {
  const { ledger, wallet } = money;
  // Journalled before the hold: a process that dies before its melt is journalled leaves this entry, and a recovery
  // pass aborts the hold once the process is gone (a hold that never expires must never be left to nothing).
  const resolved = resolveCredential(credential);
  if (resolved === null) throw new GatewayError('invalid_api_key');
  await wallet.startPayout(holdId, resolved.accountId);
  const hold = await spanStep(span, 'hold', () =>
    ledger.holdWithdrawal({
      credential,
      amountMsat: 'all',
      holdId,
      kind: 'refund',
      expiresInMs: null,
    }),
  );
  if (!hold.ok) {
    await wallet.endPayoutStart(holdId).catch(() => undefined);
    throw await holdRefusalToError(wallet, hold);
  }
  span?.set({ 'gateway.msats.held': hold.heldMsat });
  crashPoint('lnrefund-after-hold');
  const ref: HoldRef = { accountId: hold.accountId, holdId };

  let fitted: { invoice: string; quote: MeltQuoteInfo };
  try {
    fitted = await spanStep(span, 'quote', () => fitting(hold.heldMsat));
  } catch (err) {
    // The start entry goes only once the hold is surely aborted (else a recovery pass aborts it).
    if (
      await ledger.abortWithdrawal(ref).then(
        () => true,
        () => false,
      )
    )
      await wallet.endPayoutStart(holdId).catch(() => undefined);
    throw err;
  }
  // Slow invoice servers: a recovery pass may have given the start up meanwhile (its hold aborted). Then no melt.
  if (!(await wallet.payoutStarted(holdId))) {
    throw new GatewayError('service_unavailable', {
      message: 'The refund took too long to start and was given up; the balance is unchanged, try again',
    });
  }
  span?.set({
    'gateway.msats.paid': fitted.quote.amountMsat,
    'gateway.msats.fee_reserve': fitted.quote.feeReserveMsat,
  });
  await beforeMelt?.(fitted.quote.amountMsat).catch(() => undefined);

  try {
    await spanStep(span, 'melt', () =>
      wallet.payInvoice(fitted.invoice, {
        quote: fitted.quote,
        hold: { holdId, accountId: ref.accountId, heldMsat: hold.heldMsat, credential },
      }),
    );
  } catch (err) {
    // The start entry stays: a recovery pass removes it (the melt's entry or record decides the hold) or aborts the
    // hold if the melt never reached the journal and this step could not.
    await afterFailedMelt(money, ref);
    throw err;
  }

  const record = await wallet.getLightningPayout(holdId);
  if (record?.paid !== true) {
    // A recovery pass settled it under us (it found the record first): the answer is still the payment made.
    throw new GatewayError('service_unavailable', {
      message: 'The refund was settled by the recovery pass; see GET /v1/wallet/transactions',
    });
  }
  const commit = await spanStep(span, 'settle', () => settleLightningPayout(money, record));
  if (commit?.ok) {
    span?.set({
      'gateway.msats.paid': record.amountMsat,
      'gateway.msats.fee': record.feeMsat ?? 0,
      'gateway.msats.balance_after': commit.balanceMsat,
    });
  }
  if (!commit?.ok) {
    throw new GatewayError('internal_error', {
      message: 'The invoice was paid but the balance could not be debited; the operator is told',
    });
  }
  log.info({ accountId: ref.accountId, amountMsat: record.amountMsat, feeMsat: record.feeMsat }, logLine);
  return {
    amountMsat: record.amountMsat,
    feeMsat: record.feeMsat ?? 0,
    feeReserveMsat: record.feeReserveMsat,
    balanceMsat: commit.balanceMsat,
    preimage: record.preimage ?? null,
    mint: record.mint,
  };
}

/** An invoice of whole sats whose amount plus the mint's fee reserve fits `heldMsat`, and its melt quote. */
async function fitInvoice(
  money: Money,
  addresses: LightningAddresses,
  pay: LnurlPay,
  heldMsat: number,
): Promise<{ invoice: string; quote: MeltQuoteInfo }> {
  let sats = Math.floor(Math.min(heldMsat, pay.maxSendableMsat) / 1000);
  let reserveMsat = 0;
  for (let round = 0; round < FIT_ROUNDS; round++) {
    if (sats < 1 || sats * 1000 < pay.minSendableMsat) break;
    const invoice = await addresses.invoice(pay, sats * 1000);
    const quote = await money.wallet.quoteInvoice(invoice);
    reserveMsat = quote.feeReserveMsat;
    if (quote.amountMsat + quote.feeReserveMsat <= heldMsat) return { invoice, quote };
    sats = Math.min(sats - 1, Math.floor((heldMsat - quote.feeReserveMsat) / 1000));
  }
  throw new GatewayError('refund_below_fee_reserve', {
    details: {
      available: heldMsat,
      fee_reserve: reserveMsat,
      min_sendable: pay.minSendableMsat,
    },
  });
}

/** An amount of whole sats for an invoice that names none, whose melt quote's amount plus reserve fits `heldMsat`. */
async function fitAmountless(
  money: Money,
  invoice: string,
  heldMsat: number,
): Promise<{ invoice: string; quote: MeltQuoteInfo }> {
  let sats = Math.floor(heldMsat / 1000);
  let reserveMsat = 0;
  for (let round = 0; round < FIT_ROUNDS && sats >= 1; round++) {
    const quote = await money.wallet.quoteInvoice(invoice, { amountMsat: sats * 1000 });
    reserveMsat = quote.feeReserveMsat;
    if (quote.amountMsat + quote.feeReserveMsat <= heldMsat) return { invoice, quote };
    sats = Math.min(sats - 1, Math.floor((heldMsat - quote.feeReserveMsat) / 1000));
  }
  throw new GatewayError('refund_below_fee_reserve', {
    details: { available: heldMsat, fee_reserve: reserveMsat, min_sendable: 1000 },
  });
}

/**
 * The melt threw. Its record says what the journal knows: none → the mint never got it, the hold is aborted;
 * decided → settled now; undecided (an ambiguous answer, or pending at the mint) → the hold stays for the
 * recovery pass, which decides the melt against the mint.
 */
async function afterFailedMelt(money: Money, ref: HoldRef): Promise<void> {
  try {
    const record = await money.wallet.getLightningPayout(ref.holdId);
    if (record === null) await money.ledger.abortWithdrawal(ref);
    else await settleLightningPayout(money, record);
  } catch (err) {
    // The store is away: the record (if any) is settled by the recovery pass. A bare hold (no record: the melt
    // never reached the journal) stays until an operator aborts it; it is counted as an open payout.
    log.warn({ err, holdId: ref.holdId }, 'refund hold left to recovery after a failed melt');
  }
}
