import { GatewayError } from '../errors.js';
import type { OpenPayout, RateLimitInfo } from './types.js';

/**
 * The one place where ledger outcomes become catalogue errors. Lua scripts return negative codes mirrored
 * by `LedgerCode`, one meaning per number across every script (test/ledger/lua-codes.test.ts scans the
 * scripts and checks each returned code is a member the Redis ledger decodes by name); both stores produce the same `{ ok: false, code }` refusals; `ledgerRefusalToError`
 * maps any refusal to a `GatewayError`, and `storeUnavailable` wraps transport failures (→ 503).
 */
export enum LedgerCode {
  InvalidApiKey = -1,
  KeyExpired = -2,
  ModelNotAllowed = -3,
  RateLimited = -4,
  PaymentRequired = -5,
  /** The id (requestId, holdId, leaseId) is already in use by another or a finished record: nothing changed. */
  DuplicateRequest = -6,
  UnknownReservation = -7,
  AlreadyReleased = -8,
  AlreadySettled = -9,
  ChildKeyForbidden = -10,
  TokenCreditedElsewhere = -11,
  HoldExpired = -12,
  NotFound = -13,
  AccountCollision = -14,
  TooManyKeys = -15,
  AlreadyAborted = -16,
  AlreadyCommitted = -17,
  LeaseUnsupported = -18,
  /** The key, or the parent key of its account, is disabled by the operator. */
  KeyDisabled = -19,
  /** A payout hold of the account is open (its melt undecided): no other hold now. */
  PayoutInProgress = -20,
}

/** Refusal codes as they appear in results (snake_case), keyed by the Lua code. */
export const LEDGER_CODE_NAMES: Record<LedgerCode, string> = {
  [LedgerCode.InvalidApiKey]: 'invalid_api_key',
  [LedgerCode.KeyExpired]: 'key_expired',
  [LedgerCode.ModelNotAllowed]: 'model_not_allowed',
  [LedgerCode.RateLimited]: 'rate_limit_exceeded',
  [LedgerCode.PaymentRequired]: 'payment_required',
  [LedgerCode.DuplicateRequest]: 'duplicate_request',
  [LedgerCode.UnknownReservation]: 'unknown_reservation',
  [LedgerCode.AlreadyReleased]: 'already_released',
  [LedgerCode.AlreadySettled]: 'already_settled',
  [LedgerCode.ChildKeyForbidden]: 'child_key_forbidden',
  [LedgerCode.TokenCreditedElsewhere]: 'token_credited_elsewhere',
  [LedgerCode.HoldExpired]: 'hold_expired',
  [LedgerCode.NotFound]: 'not_found',
  [LedgerCode.AccountCollision]: 'account_collision',
  [LedgerCode.TooManyKeys]: 'too_many_keys',
  [LedgerCode.AlreadyAborted]: 'already_aborted',
  [LedgerCode.AlreadyCommitted]: 'already_committed',
  [LedgerCode.LeaseUnsupported]: 'lease_unsupported',
  [LedgerCode.KeyDisabled]: 'key_disabled',
  [LedgerCode.PayoutInProgress]: 'payout_in_progress',
};

/** Any `{ ok: false }` result of the ledger. */
export interface LedgerRefusal {
  ok: false;
  code: string;
  expiredAtMs?: number;
  model?: string;
  rateLimit?: RateLimitInfo;
  balance?: number;
  required?: number;
  shortfall?: number;
  availableMsat?: number;
  retryAfterMs?: number;
  heldUntilMs?: number;
  message?: string;
  payout?: OpenPayout;
}

/** The X-RateLimit-* header values for a rate-limit window. */
export function rateLimitHeaders(rl: RateLimitInfo): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(rl.limit),
    'X-RateLimit-Remaining': String(rl.remaining),
    'X-RateLimit-Reset': String(rl.resetUnix),
    'X-RateLimit-Type': rl.type,
  };
}

/**
 * The one 429 of every limit (a key's, per client IP, admin logins): `rate_limit_exceeded` with the
 * X-RateLimit-* headers and `Retry-After` (whole seconds until the window resets, at least 1).
 */
export function limitError(
  rl: RateLimitInfo,
  message = `Rate limit exceeded: ${rl.type}`,
  now = Date.now(),
): GatewayError {
  const retryAfter = Math.max(1, Math.ceil(rl.resetUnix - now / 1000));
  return new GatewayError('rate_limit_exceeded', {
    message,
    details: { limit_type: rl.type, limit: rl.limit, remaining: rl.remaining, reset: rl.resetUnix },
    headers: { ...rateLimitHeaders(rl), 'Retry-After': String(retryAfter) },
  });
}

export function ledgerRefusalToError(r: LedgerRefusal): GatewayError {
  switch (r.code) {
    case 'invalid_api_key':
      return new GatewayError('invalid_api_key');
    case 'key_disabled':
      return new GatewayError('key_disabled');
    case 'key_expired':
      return new GatewayError('key_expired', {
        details: { expired_at: new Date(r.expiredAtMs ?? 0).toISOString() },
      });
    case 'model_not_allowed':
      return new GatewayError('model_not_allowed', { details: { model: r.model } });
    case 'rate_limit_exceeded':
      return r.rateLimit ? limitError(r.rateLimit) : new GatewayError('rate_limit_exceeded');
    case 'payment_required':
      return new GatewayError('payment_required', {
        details: { balance: r.balance ?? 0, required: r.required ?? 0, shortfall: r.shortfall ?? 0 },
      });
    case 'balance_in_transit':
      // Other processes' credit leases may hold the money and did not give it back in time: never a 402.
      return new GatewayError('balance_in_transit', {
        details: {
          balance: r.balance ?? 0,
          required: r.required ?? 0,
          shortfall: r.shortfall ?? 0,
          held_until: r.heldUntilMs ?? 0,
        },
        headers: { 'Retry-After': String(Math.max(1, Math.ceil((r.retryAfterMs ?? 1000) / 1000))) },
      });
    case 'child_key_forbidden':
      return new GatewayError('child_key_forbidden');
    case 'not_found':
      return new GatewayError('not_found');
    case 'invalid_request':
      return new GatewayError('invalid_request', r.message ? { message: r.message } : {});
    case 'token_credited_elsewhere':
      return new GatewayError('conflict', {
        message: 'This eCash token was already credited to another key',
      });
    case 'duplicate_request':
      return new GatewayError('conflict', { message: 'This request id is already in use' });
    case 'hold_expired':
      return new GatewayError('conflict', { message: 'The withdrawal hold expired; try again' });
    case 'payout_in_progress':
      return payoutInProgress(r.payout);
    default:
      return new GatewayError('conflict', { message: `Ledger refused: ${r.code}` });
  }
}

/**
 * 409 `payout_in_progress`: a payout of the account is undecided (its hold open until the mint decides the melt).
 * `state` says what is known of it: `open` from the ledger alone; the payout steps name the melt's state
 * (core/account/payout-guard.ts); `closing` an MPP session close at work before its payout (core/doors/, with
 * `sinceMs` its claim's time and its own message).
 */
export function payoutInProgress(
  payout: OpenPayout | undefined,
  state = 'open',
  o: { sinceMs?: number | null; message?: string } = {},
): GatewayError {
  const sinceMs = payout?.sinceMs ?? o.sinceMs ?? null;
  return new GatewayError('payout_in_progress', {
    ...(o.message !== undefined ? { message: o.message } : {}),
    details: {
      payout_id: payout?.holdId ?? null,
      state,
      since: sinceMs === null ? null : new Date(sinceMs).toISOString(),
    },
  });
}

/** Transport failure (store down, timeout, connection closed): 503, the call is never made unpaid. */
export function storeUnavailable(cause: unknown): GatewayError {
  return new GatewayError('store_unavailable', { cause });
}
