import { creditToken, type Money } from '../account/credit-token.js';
import { payOut } from '../account/pay-out.js';
import { payoutInProgressError } from '../account/payout-guard.js';
import { parseCredential } from '../auth/credentials.js';
import { allowListPermits } from '../auth/ip-match.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { keyExpiryMs } from '../events/types.js';
import type { Credential, KeyInfo, WithdrawalKind } from '../ledger/types.js';
import { countKeyRequest, limitAnonymous, requestClientAddress } from '../limits/request-limits.js';
import type { Services } from '../service-types.js';
import type { CashuUnit } from '../wallet/types.js';

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

/**
 * What the wallet and balance routes act with: the account steps' ledger and wallet (core/account), both
 * present, and every service (limits, config). The opened money services are `MoneyServices` of core/services.ts.
 */
export interface MoneyAndServices extends Money {
  services: Services;
}

/** The ledger and the wallet, or 503 when this node runs without them (relay-only set-up). */
export function requireMoney(services: Services): MoneyAndServices {
  const { ledger, wallet } = services;
  if (ledger === undefined || wallet === undefined) {
    // The gateway always opens its store; the wallet only when CASHU_MINTS names a mint (core/services.ts).
    throw new GatewayError('service_unavailable', {
      message:
        wallet === undefined
          ? 'This node has no eCash wallet: set CASHU_MINTS to the URLs of the mints it trusts (comma-separated) and restart it'
          : 'This node has no balance store configured',
    });
  }
  return { ledger, wallet, services };
}

export interface Caller {
  credential: Credential;
  method: 'api_key' | 'bearer_token';
  /**
   * When an eCash token names the account: its unit. A refund of it is paid in that unit, so an `msat` token's
   * identity (X-Cashu change that could not be made, core plugin change-token) is refunded to the msat.
   */
  unit?: CashuUnit;
}

/** The unit of an eCash token naming an account (undefined when it does not decode: refunded in sats). */
export function tokenUnit(money: MoneyAndServices, token: string): CashuUnit | undefined {
  try {
    return money.wallet.decodeToken(token.trim()).unit;
  } catch {
    return undefined;
  }
}

/**
 * The caller's credential (docs/endpoints.md). `X-Cashu` pays for one model call and names no account, so
 * wallet endpoints refuse it. A token used as bearer is redeemed and credited on its first use here as in the
 * paid pipeline (both idempotent by token hash), so its balance can be read or refunded at once.
 */
export async function callerOf(ctx: RequestContext, money: MoneyAndServices): Promise<Caller> {
  const parsed = parseCredential({
    method: ctx.method,
    headers: ctx.headers,
    queryApiKey: ctx.method === 'GET' ? ctx.query.get('api_key') : undefined,
  });
  const services = money.services;
  if (parsed === undefined) {
    await limitAnonymous(ctx, services);
    throw new GatewayError('missing_credentials');
  }
  if (parsed.kind === 'api_key') {
    const credential = { apiKey: parsed.apiKey };
    await countKeyRequest(ctx, services, credential);
    return { credential, method: 'api_key' };
  }
  if (parsed.kind === 'x_cashu') {
    throw new GatewayError('invalid_request', {
      message: 'X-Cashu pays for a single model call; wallet endpoints take Authorization: Bearer',
    });
  }
  if (parsed.kind === 'door') {
    // L402 / MPP: the invoice's balance, credited on its first use here as in the paid pipeline. An expired token
    // may still read and refund it (an expiry never locks money).
    const doors = services.doors;
    const caller = doors ? await doors.identify(parsed.authorization, { allowExpired: true }) : null;
    if (caller === null) {
      throw new GatewayError('invalid_payment_credential', {
        message: 'This node offers no such payment door',
      });
    }
    const credential = { tokenHash: caller.tokenHash };
    await countKeyRequest(ctx, services, credential);
    return { credential, method: 'bearer_token', unit: 'sat' };
  }
  const credential = { tokenHash: money.wallet.tokenHash(parsed.token) };
  if ((await money.ledger.getKeyInfo(credential)) === null) {
    await creditToken(money, parsed.token, { kind: 'token' });
  }
  await countKeyRequest(ctx, services, credential);
  const unit = tokenUnit(money, parsed.token);
  return { credential, method: 'bearer_token', ...(unit !== undefined ? { unit } : {}) };
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
  money: MoneyAndServices,
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

export interface TokenWithdrawal {
  cashu_token: string;
  /** The token's value, in sats. */
  amount: number;
  mint: string;
  unit: 'sat' | 'msat';
  /** msats left on the key. */
  balance: number;
}

/**
 * Withdraws `amountSat` whole sats (or, with 'all', every whole sat available now) as an eCash token through
 * the one pay-out step (core/account/pay-out.ts). Sub-sat remainders stay on the key, except for 'all' in
 * `unit` msat (an account named by an msat token): then every msat is paid out, in an msat token.
 */
export async function withdraw(
  money: MoneyAndServices,
  credential: Credential,
  amountSat: number | 'all',
  kind: WithdrawalKind,
  /** The caller's key, as `loadKey` returned it (for 'all': what is available now). */
  info: KeyInfo,
  mint?: string,
  unit?: CashuUnit,
): Promise<TokenWithdrawal> {
  if (mint !== undefined && !money.wallet.mints.includes(mint.replace(/\/+$/, ''))) {
    throw new GatewayError('mint_not_trusted', { message: 'This node does not use that mint' });
  }
  // One undecided payout per account (core/account/payout-guard.ts): 409 before a 402 for the held balance.
  if (info.account.payout) throw await payoutInProgressError(money.wallet, info.account.payout);
  let amountMsat: number;
  if (amountSat === 'all') {
    if (info.key.isChild) throw new GatewayError('child_key_forbidden');
    const step = unit === 'msat' ? 1 : 1000;
    amountMsat = Math.floor(info.availableMsat / step) * step;
    if (amountMsat <= 0) {
      throw new GatewayError('payment_required', {
        message: `Less than 1 ${unit === 'msat' ? 'msat' : 'sat'} is available to withdraw`,
        details: { balance: info.availableMsat, required: step, shortfall: step - info.availableMsat },
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
    ...(mint !== undefined ? { mint: mint.replace(/\/+$/, '') } : {}),
    ...(amountSat === 'all' && unit === 'msat' ? { unit } : {}),
  });
  return {
    cashu_token: r.token,
    amount: Math.floor(r.amountMsat / 1000),
    mint: r.mint,
    unit: r.unit,
    balance: r.balanceMsat,
  };
}
