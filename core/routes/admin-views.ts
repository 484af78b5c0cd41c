import type { PayOutResult } from '../account/pay-out.js';
import type { KeyMeta, KeyUsage } from '../ledger/types.js';

/** The admin API's view of a key (schema AdminKeyMeta): amounts in msats, instants in ms. */
export function keyView(k: KeyMeta, u: KeyUsage) {
  return {
    key_id: k.keyId,
    display_key: k.displayKey,
    name: k.name,
    is_child: k.isChild,
    parent_key_id: k.parentKeyId,
    created_at: k.createdAtMs,
    expires_at: k.expiresAtMs,
    allowed_models: k.allowedModels,
    allowed_ips: k.allowedIps,
    balance_limit: k.balanceLimitMsat,
    balance_limit_reset: k.balanceLimitReset,
    validity_date: k.validityDateMs,
    total_requests: u.totalRequests,
    total_spent: u.totalSpentMsat,
    period_spent: u.periodSpentMsat,
    reserved: u.reservedMsat,
    last_used: u.lastUsedMs,
    disabled: k.disabled,
  };
}

/** A pay-out as the wallet's withdraw answers it (schema WithdrawResult): the token, whole sats, msats left. */
export function payoutView(r: PayOutResult) {
  return {
    cashu_token: r.token,
    amount: Math.floor(r.amountMsat / 1000),
    mint: r.mint,
    unit: r.unit,
    balance: r.balanceMsat,
  };
}
