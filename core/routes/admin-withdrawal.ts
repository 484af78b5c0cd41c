import type { SurplusCheck } from '../account/operator-withdrawal.js';

/** The JSON answer of the operator withdrawal's preview (schema AdminPayoutPreview; core/account/operator-withdrawal.ts). */
export function withdrawalPreview(c: SurplusCheck) {
  return {
    amount_msat: c.amountMsat,
    proofs_msat: c.proofsMsat,
    user_balances_msat: c.userBalancesMsat,
    surplus_msat: c.surplusMsat,
    allowed: c.allowed,
  };
}
