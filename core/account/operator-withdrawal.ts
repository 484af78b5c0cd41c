import { GatewayError } from '../errors.js';
import type { Ledger } from '../ledger/types.js';
import { bolt11AmountMsat } from '../wallet/bolt11.js';
import type { CashuUnit, InvoicePayment } from '../wallet/types.js';
import type { Money } from './credit-token.js';

/**
 * The operator withdrawal's guard: an operator may pay out only the surplus — the proofs the wallet holds
 * (store figures, all mints) minus what the ledger owes its users — so a withdrawal can never leave the node unable
 * to pay its users back. The invoice's amount is read from it (core/wallet/bolt11.ts: a valid, signed BOLT11
 * invoice) before anything is paid.
 *
 * Not covered: the mint's Lightning fee reserve is paid from the proofs on top of the amount (the withdrawal's
 * answer shows the fee actually paid), and two withdrawals started at the same moment are each checked against the
 * same surplus. Both are operator actions, one at a time, behind a confirmation.
 */

/** What the guard reads of the ledger (the proofs held are the wallet's): the user balances. */
type UserBalances = Pick<Ledger, 'totalUserBalancesMsat'>;

export interface SurplusCheck {
  amountMsat: number;
  proofsMsat: number;
  userBalancesMsat: number;
  surplusMsat: number;
  allowed: boolean;
}

/**
 * The invoice's amount against the operator surplus. @throws GatewayError `invalid_request` (not a BOLT11
 * invoice, or one without an amount), `service_unavailable` (no wallet or store), `store_unavailable`.
 */
export async function checkSurplus(
  money: Partial<Money<UserBalances>>,
  invoice: string,
): Promise<SurplusCheck> {
  const { wallet, ledger } = money;
  if (!wallet || !ledger) {
    throw new GatewayError('service_unavailable', { message: 'No eCash wallet or balance store configured' });
  }
  // Whitespace around a pasted invoice is dropped here and by `withdrawSurplus`, which pays the same string.
  const amount = bolt11AmountMsat(invoice.trim());
  if (amount === undefined) throw new GatewayError('invalid_request', { message: 'Not a Lightning invoice' });
  if (amount === null) {
    throw new GatewayError('invalid_request', {
      message: 'The invoice has no amount: ask for one with an amount',
    });
  }
  const { proofsMsat, userBalancesMsat, surplusMsat } = await operatorSurplus({ wallet, ledger });
  const amountMsat = Number(amount);
  return {
    amountMsat,
    proofsMsat,
    userBalancesMsat,
    surplusMsat,
    allowed: amount <= BigInt(Math.max(0, surplusMsat)),
  };
}

/**
 * The operator surplus: proofs held (store figures, all mints) minus what the ledger owes its users. The one
 * computation behind every payment the operator makes from the wallet (withdrawals, paying other nodes).
 * @throws GatewayError `store_unavailable`.
 */
export async function operatorSurplus(
  money: Money<UserBalances>,
): Promise<{ proofsMsat: number; userBalancesMsat: number; surplusMsat: number }> {
  const [lines, owed] = await Promise.all([
    money.wallet.balances(),
    money.ledger.totalUserBalancesMsat(),
  ]).catch((err: unknown) => {
    throw new GatewayError('store_unavailable', { cause: err });
  });
  const proofsMsat = lines.reduce((s, l) => s + l.amountMsat, 0);
  return { proofsMsat, userBalancesMsat: owed, surplusMsat: proofsMsat - owed };
}

/** Throws 400 `payout_exceeds_surplus` unless the check allows the withdrawal. */
function assertWithinSurplus(c: SurplusCheck): void {
  if (c.allowed) return;
  throw new GatewayError('payout_exceeds_surplus', {
    message: `The invoice asks for ${c.amountMsat} msats but the operator surplus (proofs held ${c.proofsMsat} − user balances ${c.userBalancesMsat}) is ${c.surplusMsat} msats`,
    details: {
      amount_msat: c.amountMsat,
      surplus_msat: c.surplusMsat,
      proofs_msat: c.proofsMsat,
      user_balances_msat: c.userBalancesMsat,
    },
  });
}

/**
 * The operator withdrawal: pays a Lightning invoice from the operator's proofs (the wallet's melt), only within
 * the surplus. Every caller goes through here (the console's action, `npm run wallet:payout`), so none can pay
 * out what the ledger owes its users. @throws GatewayError `payout_exceeds_surplus`, and those of `checkSurplus`
 * and of the melt.
 */
export async function withdrawSurplus(
  money: Money<UserBalances>,
  invoice: string,
  opts: { mint?: string; unit?: CashuUnit } = {},
): Promise<InvoicePayment> {
  assertWithinSurplus(await checkSurplus(money, invoice));
  return money.wallet.payInvoice(invoice.trim(), opts);
}
