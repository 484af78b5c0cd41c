import { creditToken } from '../account/credit-token.js';
import { payOut } from '../account/pay-out.js';
import { parseCredential } from '../auth/credentials.js';
import { allowListPermits } from '../auth/ip-match.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { keyExpiryMs } from '../events/types.js';
import type { Credential, KeyInfo, Ledger, WithdrawalKind } from '../ledger/types.js';
import { countKeyRequest, limitAnonymous, requestClientAddress } from '../limits/request-limits.js';
import type { Services } from '../plugin.js';
import type { WalletService } from '../wallet/types.js';

/**
 * What the wallet and balance routes share: who is calling (the credential → a ledger `Credential`), the
 * key checks they apply themselves (expiry, IP allow-list), and the withdrawal protocol
 * (hold → mint a token → commit, abort on failure).
 *
 * Limits: `callerOf` counts every request that names a key against that key's requests/min window (and sets
 * X-RateLimit-*), and limits callers with no usable credential per client IP (core/limits/request-limits.ts).
 *
 * Expired keys: they may still READ (balance, info, transactions) and take their money OUT (withdraw,
 * refund) — an expiry must never lock funds. Everything else (top-up, child keys, sub-keys, update)
 * answers 401 `key_expired`.
 */

export interface MoneyServices {
  ledger: Ledger;
  wallet: WalletService;
  /** All services (limits, config); set by `moneyServices`. */
  services?: Services;
}

/** The ledger and the wallet, or 503 when this node runs without them (relay-only set-up). */
export function moneyServices(services: Services): MoneyServices {
  const { ledger, wallet } = services;
  if (ledger === undefined || wallet === undefined) {
    throw new GatewayError('service_unavailable', {
      message: 'This node has no balance store or eCash wallet configured',
    });
  }
  return { ledger, wallet, services };
}

export interface Caller {
  credential: Credential;
  method: 'api_key' | 'bearer_token';
}

/**
 * The caller's credential (spec §5). `X-Cashu` pays for one model call and names no account, so wallet
 * endpoints refuse it. A token used as bearer is redeemed and credited on its first use here as in the
 * paid pipeline (both idempotent by token hash), so its balance can be read or refunded at once.
 */
export async function callerOf(ctx: RequestContext, money: MoneyServices): Promise<Caller> {
  const parsed = parseCredential({
    method: ctx.method,
    headers: ctx.headers,
    queryApiKey: ctx.method === 'GET' ? ctx.query.get('api_key') : undefined,
  });
  const services = money.services;
  if (parsed === undefined) {
    if (services) await limitAnonymous(ctx, services);
    throw new GatewayError('missing_credentials');
  }
  if (parsed.kind === 'api_key') {
    const credential = { apiKey: parsed.apiKey };
    if (services) await countKeyRequest(ctx, services, credential);
    return { credential, method: 'api_key' };
  }
  if (parsed.kind === 'x_cashu') {
    throw new GatewayError('invalid_request', {
      message: 'X-Cashu pays for a single model call; wallet endpoints take Authorization: Bearer',
    });
  }
  const credential = { tokenHash: money.wallet.tokenHash(parsed.token) };
  if ((await money.ledger.getKeyInfo(credential)) === null) {
    await creditToken(money, parsed.token, { kind: 'token' });
  }
  if (services) await countKeyRequest(ctx, services, credential);
  return { credential, method: 'bearer_token' };
}

export interface KeyCheck {
  /** Let an expired key through (reads and withdrawals). */
  allowExpired?: boolean;
  now?: number;
}

/** When the key stops working (expiry or a child's validity date), ms; null = never. */
export function expiryOf(info: KeyInfo): number | null {
  return keyExpiryMs(info.key);
}

/** The caller's key info after the checks every wallet route applies (unknown, expired, IP). */
export async function loadKey(
  ctx: RequestContext,
  services: Services,
  money: MoneyServices,
  credential: Credential,
  check: KeyCheck = {},
): Promise<KeyInfo> {
  const now = check.now ?? Date.now();
  const info = await money.ledger.getKeyInfo(credential, now);
  if (info === null) throw new GatewayError('invalid_api_key');
  const expiry = expiryOf(info);
  if (!check.allowExpired && expiry !== null && expiry <= now) {
    throw new GatewayError('key_expired', { details: { expired_at: new Date(expiry).toISOString() } });
  }
  if (!allowListPermits(info.key.allowedIps, requestClientAddress(ctx, services.config.trustedProxies))) {
    throw new GatewayError('ip_not_allowed');
  }
  return info;
}

export { requestClientAddress };

export interface PayoutResult {
  cashu_token: string;
  /** The token's value, in sats. */
  amount: number;
  mint: string;
  unit: 'sat' | 'msat';
  /** msats left on the key. */
  balance: number;
}

/** Longer than the wallet's mint timeouts, so a hold never expires while its token is being made. */
export const HOLD_LEASE_MS = 5 * 60_000;

/**
 * Withdraws `amountSat` whole sats (or, with 'all', every whole sat available now) as an eCash token through
 * the one pay-out step (core/account/pay-out.ts). Sub-sat remainders stay on the key.
 */
export async function withdraw(
  money: MoneyServices,
  credential: Credential,
  amountSat: number | 'all',
  kind: WithdrawalKind,
  /** The caller's key, as `loadKey` returned it (for 'all': what is available now). */
  info: KeyInfo,
  mint?: string,
): Promise<PayoutResult> {
  if (mint !== undefined && !money.wallet.mints.includes(mint.replace(/\/+$/, ''))) {
    throw new GatewayError('mint_not_trusted', { message: 'This node does not use that mint' });
  }
  let amountMsat: number;
  if (amountSat === 'all') {
    if (info.key.isChild) throw new GatewayError('child_key_forbidden');
    amountMsat = Math.floor(info.availableMsat / 1000) * 1000;
    if (amountMsat <= 0) {
      throw new GatewayError('payment_required', {
        message: 'Less than 1 sat is available to withdraw',
        details: { balance: info.availableMsat, required: 1000, shortfall: 1000 - info.availableMsat },
      });
    }
  } else {
    amountMsat = amountSat * 1000;
    if (!Number.isSafeInteger(amountMsat) || amountMsat <= 0) {
      throw new GatewayError('invalid_request', { message: 'amount must be a positive number of sats' });
    }
  }
  const r = await payOut(money, {
    credential,
    amountMsat,
    kind,
    leaseMs: HOLD_LEASE_MS,
    ...(mint !== undefined ? { mint: mint.replace(/\/+$/, '') } : {}),
  });
  return {
    cashu_token: r.token,
    amount: Math.floor(r.amountMsat / 1000),
    mint: r.mint,
    unit: r.unit,
    balance: r.balanceMsat,
  };
}
