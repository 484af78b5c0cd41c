import { GatewayError } from '../errors.js';
import { displayKey, keyIdOf, periodIds, sha256Hex } from './keys.js';
import type {
  AdmitInput,
  BalanceLimitReset,
  CallAuditRecord,
  ChildKeysInput,
  CommitRef,
  HoldInput,
  HoldRef,
  KeyMeta,
  KeyUsage,
  RateLimitInfo,
  RateLimits,
  ReleaseInput,
  SettleInput,
} from './types.js';

/**
 * The admission and charging rules as pure functions over a key's stored state. SQLite runs them inside
 * its transaction; the Lua scripts mirror them line for line (`redis/includes/*.lua`) and the conformance
 * suite keeps the two equal.
 */

/** A key's static metadata plus its mutable usage counters, as both stores keep them. */
export interface KeyState {
  hash: string;
  accountId: string;
  isChild: boolean;
  parentHash: string | null;
  display: string;
  name: string | null;
  allowedIps: string[] | null;
  allowedModels: string[] | null;
  refundAddress: string | null;
  expiresAt: number | null;
  balanceLimit: number | null;
  balanceLimitReset: BalanceLimitReset | null;
  validityDate: number | null;
  createdAt: number;
  deleted: boolean;
  /** Disabled by the operator: refused with key_disabled (a disabled parent refuses its children too). */
  disabled: boolean;
  // usage
  reserved: number;
  open: number;
  periodId: number;
  periodSpent: number;
  totalSpent: number;
  totalRequests: number;
  lastUsed: number | null;
  rpmWindow: number;
  rpmCount: number;
  tphWindow: number;
  tphCount: number;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
/** Expired reservations released per admit (bounded work on the hot path; the sweep does the rest). */
export const SWEEP_PER_ADMIT = 20;
export const MAX_KEYS_PER_ACCOUNT = 1000;
/** Audit records are kept this long unless LedgerOptions.auditRetentionMs says otherwise (AUDIT_RETENTION_DAYS). */
export const DEFAULT_AUDIT_RETENTION_MS = 30 * 86_400_000;

export function expiredAt(k: Pick<KeyState, 'expiresAt' | 'validityDate'>, now: number): number | null {
  let at: number | null = null;
  if (k.expiresAt !== null && k.expiresAt <= now) at = k.expiresAt;
  if (k.validityDate !== null && k.validityDate <= now)
    at = at === null ? k.validityDate : Math.min(at, k.validityDate);
  return at;
}

export function modelAllowed(k: Pick<KeyState, 'allowedModels'>, model: string): boolean {
  return k.allowedModels === null || k.allowedModels.length === 0 || k.allowedModels.includes(model);
}

/** The refused limit, or null. Checks requests/min, tokens/hour, then concurrency. */
export function rateRefusal(k: KeyState, limits: RateLimits, now: number): RateLimitInfo | null {
  const rw = Math.floor(now / MINUTE_MS);
  const rc = k.rpmWindow === rw ? k.rpmCount : 0;
  if (rc >= limits.requestsPerMinute) {
    return {
      type: 'requests_per_minute',
      limit: limits.requestsPerMinute,
      remaining: 0,
      resetUnix: (rw + 1) * 60,
    };
  }
  const tw = Math.floor(now / HOUR_MS);
  const tc = k.tphWindow === tw ? k.tphCount : 0;
  if (tc >= limits.tokensPerHour) {
    return { type: 'tokens_per_hour', limit: limits.tokensPerHour, remaining: 0, resetUnix: (tw + 1) * 3600 };
  }
  if (k.open >= limits.concurrent) {
    return {
      type: 'concurrent_requests',
      limit: limits.concurrent,
      remaining: 0,
      resetUnix: Math.ceil(now / 1000),
    };
  }
  return null;
}

/** Counts one admitted request in the requests/min window; returns the header values. */
export function countRequest(k: KeyState, limits: RateLimits, now: number): RateLimitInfo {
  const rw = Math.floor(now / MINUTE_MS);
  if (k.rpmWindow !== rw) {
    k.rpmWindow = rw;
    k.rpmCount = 0;
  }
  k.rpmCount += 1;
  return {
    type: 'requests_per_minute',
    limit: limits.requestsPerMinute,
    remaining: Math.max(0, limits.requestsPerMinute - k.rpmCount),
    resetUnix: (rw + 1) * 60,
  };
}

export function countTokens(k: KeyState, tokens: number, now: number): void {
  const tw = Math.floor(now / HOUR_MS);
  if (k.tphWindow !== tw) {
    k.tphWindow = tw;
    k.tphCount = 0;
  }
  k.tphCount += tokens;
}

/** Resets a child's period spend when its balance_limit_reset period rolled over. */
export function rollPeriod(k: KeyState, now: number): void {
  if (k.balanceLimitReset === null) return;
  const id = periodIds(now)[k.balanceLimitReset];
  if (k.periodId !== id) {
    k.periodId = id;
    k.periodSpent = 0;
  }
}

/** What a key may still take beyond its own open reservations (children: limit − spent − reserved). */
export function keyFree(k: KeyState, now: number): number {
  if (!k.isChild || k.balanceLimit === null) return Number.MAX_SAFE_INTEGER;
  rollPeriod(k, now);
  return Math.max(0, k.balanceLimit - k.periodSpent - k.reserved);
}

export function toMeta(k: KeyState, parentHash: string | null = k.parentHash): KeyMeta {
  return {
    keyId: keyIdOf(k.hash),
    accountId: k.accountId,
    isChild: k.isChild,
    parentKeyId: parentHash === null ? null : keyIdOf(parentHash),
    displayKey: k.display,
    name: k.name,
    allowedIps: k.allowedIps,
    allowedModels: k.allowedModels,
    refundAddress: k.refundAddress,
    expiresAtMs: k.expiresAt,
    balanceLimitMsat: k.balanceLimit,
    balanceLimitReset: k.balanceLimitReset,
    validityDateMs: k.validityDate,
    createdAtMs: k.createdAt,
    disabled: k.disabled,
  };
}

export function toUsage(k: KeyState, now: number): KeyUsage {
  rollPeriod(k, now);
  return {
    totalRequests: k.totalRequests,
    totalSpentMsat: k.totalSpent,
    periodSpentMsat: k.periodSpent,
    reservedMsat: k.reserved,
    lastUsedMs: k.lastUsed,
  };
}

export function newKeyState(
  init: Partial<KeyState> & Pick<KeyState, 'hash' | 'accountId' | 'display' | 'createdAt'>,
): KeyState {
  return {
    isChild: false,
    parentHash: null,
    name: null,
    allowedIps: null,
    allowedModels: null,
    refundAddress: null,
    expiresAt: null,
    balanceLimit: null,
    balanceLimitReset: null,
    validityDate: null,
    deleted: false,
    disabled: false,
    reserved: 0,
    open: 0,
    periodId: 0,
    periodSpent: 0,
    totalSpent: 0,
    totalRequests: 0,
    lastUsed: null,
    rpmWindow: 0,
    rpmCount: 0,
    tphWindow: 0,
    tphCount: 0,
    ...init,
  };
}

// ------------------------------------------------------------------------------------------ validation

function bad(message: string): GatewayError {
  return new GatewayError('invalid_request', { message });
}

/** Amounts are safe non-negative integers; anything else is a caller bug, refused before the store. */
export function checkMsat(name: string, v: unknown, min = 0): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
    throw bad(`${name} must be an integer ≥ ${min}`);
  return v;
}

/** An optional amount or timestamp (ms): absent/null, or a safe non-negative integer (else 400, never 503). */
export function checkOptional(name: string, v: number | null | undefined): number | null {
  return v === undefined || v === null ? null : checkMsat(name, v);
}

export function checkId(name: string, v: unknown): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 200 || /[{}\s]/.test(v)) {
    throw bad(`${name} must be a non-empty string of at most 200 chars without braces or spaces`);
  }
  return v;
}

export function checkLimits(l: RateLimits): RateLimits {
  checkMsat('limits.requestsPerMinute', l.requestsPerMinute, 1);
  checkMsat('limits.tokensPerHour', l.tokensPerHour, 1);
  checkMsat('limits.concurrent', l.concurrent, 1);
  return l;
}

export function checkTokenHash(v: unknown): string {
  if (typeof v !== 'string' || !/^[0-9a-fA-F]{16,128}$/.test(v))
    throw bad('tokenHash must be 16–128 hex chars');
  return v;
}

/** Empty lists mean "no restriction": stored as null in both stores. */
export function normList(v: string[] | null): string[] | null {
  return v === null || v.length === 0 ? null : v;
}

// ------------------------------------------------------------------- per-method input checks (both stores)

/** credit and createKeyFromDeposit: the token's identity and the credited amount (> 0). */
export function checkCreditInput(input: { tokenHash: string; amountMsat: number }): {
  tokenHash: string;
  amount: number;
} {
  return { tokenHash: checkTokenHash(input.tokenHash), amount: checkMsat('amountMsat', input.amountMsat, 1) };
}

export function checkAdmitInput(input: AdmitInput): {
  requestId: string;
  max: number;
  min: number;
  expiresInMs: number;
  limits: RateLimits;
} {
  const requestId = checkId('requestId', input.requestId);
  const max = checkMsat('maxMsat', input.maxMsat);
  const min = checkMsat('minMsat', input.minMsat);
  if (min > max) throw bad('minMsat must be ≤ maxMsat');
  const expiresInMs = checkMsat('expiresInMs', input.expiresInMs, 1);
  return { requestId, max, min, expiresInMs, limits: checkLimits(input.limits) };
}

export function checkCountRequestInput(input: { requestsPerMinute: number }): number {
  return checkMsat('requestsPerMinute', input.requestsPerMinute, 1);
}

/** settle: the reservation's ids, the cost and the tokens counted (prompt + completion). */
export function checkSettleInput(input: SettleInput): {
  accountId: string;
  requestId: string;
  cost: number;
  tokens: number;
} {
  const cost = checkMsat('costMsat', input.costMsat);
  const tokens =
    checkMsat('promptTokens', input.promptTokens) + checkMsat('completionTokens', input.completionTokens);
  if (
    input.transactionType !== undefined &&
    input.transactionType !== 'usage' &&
    input.transactionType !== 'batch'
  ) {
    throw new GatewayError('internal_error', { message: 'transactionType must be usage or batch' });
  }
  return { ...checkReleaseInput(input), cost, tokens };
}

/**
 * A call's audit record as a step writes it: '' for none; else its JSON text, an object the step closes with
 * the cost it charged (so it must be `{…}` with at least one field).
 */
export function checkAuditRecord(r: CallAuditRecord | undefined): string {
  if (r === undefined) return '';
  const j = r.json;
  if (typeof j !== 'string' || j.length < 3 || j[0] !== '{' || j[j.length - 1] !== '}') {
    throw new GatewayError('invalid_request', {
      message: 'auditRecord.json must be a JSON object with fields',
    });
  }
  checkMsat('auditRecord.atMs', r.atMs);
  checkMsat('auditRecord.status', r.status);
  return j;
}

/** A checked record's JSON closed with what was charged (the stores' one format, core/audit/audit-log.ts). */
export function auditJsonWithCost(json: string, chargedMsat: number): string {
  return `${json.slice(0, -1)},"cost_msats":${chargedMsat},"cost_sats":${Math.floor(chargedMsat / 1000)}}`;
}

export function checkReleaseInput(input: Pick<ReleaseInput, 'accountId' | 'requestId'>): {
  accountId: string;
  requestId: string;
} {
  return {
    accountId: checkId('accountId', input.accountId),
    requestId: checkId('requestId', input.requestId),
  };
}

export function checkHoldInput(input: HoldInput): {
  holdId: string;
  want: number | 'all';
  /** null: a payout hold, which never expires (HoldInput). */
  expiresInMs: number | null;
} {
  return {
    holdId: checkId('holdId', input.holdId),
    want: input.amountMsat === 'all' ? 'all' : checkMsat('amountMsat', input.amountMsat, 1),
    expiresInMs: input.expiresInMs === null ? null : checkMsat('expiresInMs', input.expiresInMs, 1),
  };
}

/** commitWithdrawal and abortWithdrawal. */
export function checkHoldRef(ref: HoldRef): { accountId: string; holdId: string } {
  return { accountId: checkId('accountId', ref.accountId), holdId: checkId('holdId', ref.holdId) };
}

/** commitWithdrawal: the hold, and the debit asked for (undefined: the whole hold). */
export function checkCommitRef(ref: CommitRef): {
  accountId: string;
  holdId: string;
  debit: number | undefined;
} {
  const debit = ref.debitMsat === undefined ? undefined : checkMsat('debitMsat', ref.debitMsat);
  return { ...checkHoldRef(ref), debit };
}

/** createChildKeys: a bad count is a refusal (400 with this message), a bad fee a caller bug. */
export function checkChildKeysInput(
  input: ChildKeysInput,
): { ok: true; count: number; fee: number } | { ok: false; code: 'invalid_request'; message: string } {
  const count = input.count;
  if (!Number.isInteger(count) || count < 1 || count > 50) {
    return { ok: false, code: 'invalid_request', message: 'count must be an integer from 1 to 50' };
  }
  return { ok: true, count, fee: checkMsat('feePerKeyMsat', input.feePerKeyMsat) };
}

/** A new child key's state from the createChildKeys options (optional numbers checked here). */
export function childKeyState(
  input: ChildKeysInput,
  apiKey: string,
  accountId: string,
  parentHash: string,
  now: number,
): KeyState {
  return newKeyState({
    hash: sha256Hex(apiKey),
    accountId,
    display: displayKey(apiKey),
    createdAt: now,
    isChild: true,
    parentHash,
    name: input.name ?? null,
    allowedModels: normList(input.allowedModels ?? null),
    expiresAt: checkOptional('expiresAtMs', input.expiresAtMs),
    balanceLimit: checkOptional('balanceLimitMsat', input.balanceLimitMsat),
    balanceLimitReset: input.balanceLimitReset ?? null,
    validityDate: checkOptional('validityDateMs', input.validityDateMs),
  });
}
