/**
 * The money contract. Every state change that moves money or guards it goes through `Ledger`; two stores
 * implement it (Redis Lua scripts, embedded SQLite) and one conformance suite keeps them equal.
 *
 * Units: every amount is an integer number of millisatoshis (`…Msat`); every instant is a Unix time in
 * milliseconds (`…Ms`) unless the name says `…Unix` (seconds, as HTTP headers want them).
 *
 * Stability: this file is the contract other parts code against. Changes are additive only (new optional
 * fields, new methods, new union members documented as such).
 *
 * Invariants every implementation MUST keep, under concurrency, across processes and across crashes:
 * - per account `0 ≤ reservedMsat ≤ balanceMsat` (no overspend; available = balance − reserved);
 * - a token hash is credited at most once (to one account, once);
 * - a reservation is settled or released exactly once; a lease that ran out is released;
 * - per account `depositedMsat = balanceMsat + spentMsat + withdrawnMsat + feesMsat` (conservation);
 * - every state change is one atomic step (one Lua script or one `BEGIN IMMEDIATE` transaction): nothing is
 *   ever half-applied. A store that cannot be reached makes the method reject with
 *   `GatewayError('store_unavailable')` (HTTP 503) — never a free call, never a partial change.
 *
 * Business refusals (unknown key, no money, rate limit…) are NOT thrown: they come back as `{ ok: false,
 * code, … }` results so the hot path does not pay for exceptions. `ledgerRefusalToError()` in
 * `core/ledger/errors.ts` maps any refusal to the catalogue's `GatewayError` in one place.
 */

/**
 * Who is calling. Exactly one of:
 * - `apiKey`: an `sk-` key (32 chars: `sk-` + 10-char account id + 19-char secret, base62, CSPRNG or
 *   HMAC-derived). The account id inside the key gives the store shard (`{a:<accountId>}`) without a lookup,
 *   so admission is ONE round trip. Child keys carry their parent's account id, hence the parent's shard.
 *   Keys are stored only as SHA-256 hashes.
 * - `tokenHash`: the opaque hex hash of a Cashu token used as bearer credential (or per-call X-Cashu). Its
 *   account is created by the first credit; the account id is derived from the hash.
 */
export type Credential = { apiKey: string } | { tokenHash: string };

/**
 * A key named by its store identity (account id + SHA-256 of the key), as `findKeyById` answers it. Only the
 * read methods accept it: it is how the operator's console reads a key it knows by id, never a credential a
 * client can present.
 */
export interface KeyRef {
  keyRef: { accountId: string; keyHash: string };
}
/** What the read methods accept: a client's credential or a `KeyRef`. */
export type KeyLookup = Credential | KeyRef;

/** Per-key limits (docs/endpoints.md). Callers pass the configured values (`Config.limits`). */
export interface RateLimits {
  requestsPerMinute: number;
  tokensPerHour: number;
  concurrent: number;
}

export type RateLimitType =
  | 'requests_per_minute'
  | 'tokens_per_hour'
  | 'concurrent_requests'
  /** Per-IP limits of callers with no usable credential (core/limits/request-limits.ts). */
  | 'requests_per_hour'
  | 'requests_per_day';

/** What the X-RateLimit-* headers need. */
export interface RateLimitInfo {
  type: RateLimitType;
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets (for `concurrent_requests`: now, it frees as calls end). */
  resetUnix: number;
}

export type BalanceLimitReset = 'daily' | 'weekly' | 'monthly';

/** Key metadata the HTTP layer checks itself (IP allow-list) or shows. */
export interface KeyMeta {
  /** Public, non-secret key id (first 16 hex chars of the key hash). Safe to log and return. */
  keyId: string;
  accountId: string;
  isChild: boolean;
  /** Key id of the parent key for a child key, else null. */
  parentKeyId: string | null;
  /** Shortened display form (`sk-abc…wxyz`); never the whole key. */
  displayKey: string;
  name: string | null;
  /** IP addresses or CIDR ranges; null = any. The HTTP layer enforces it (`ip_not_allowed`). */
  allowedIps: string[] | null;
  /** Model ids; null = any. Enforced inside `admit`. */
  allowedModels: string[] | null;
  refundAddress: string | null;
  /** Expiry of the key (sub-keys: expires_in_hours), ms; null = never. */
  expiresAtMs: number | null;
  /** Child keys: spend limit per period (msat); null = bounded only by the parent's balance. */
  balanceLimitMsat: number | null;
  balanceLimitReset: BalanceLimitReset | null;
  /** Child keys: validity end, ms; null = none. Passing it makes the key `key_expired`. */
  validityDateMs: number | null;
  createdAtMs: number;
  /**
   * Disabled by the operator (`updateKey` with `disabled`): admit, countRequest and lease refuse it with
   * `key_disabled`; a disabled parent key refuses every child of its account the same way. Its balance stays.
   */
  disabled: boolean;
}

// ---------------------------------------------------------------------------------------------- credit

export type CreditKind = 'deposit' | 'topup';

export interface CreditInput {
  /** The account to credit: an existing key, or a token-hash identity (created when missing). */
  credential: KeyLookup;
  /** Hash of the redeemed token; the idempotency key. Opaque hex from the wallet. */
  tokenHash: string;
  /** What the mint swap actually yielded (after input fees), msat, > 0. */
  amountMsat: number;
  kind: CreditKind;
  now?: number;
}

export type CreditResult =
  | {
      ok: true;
      accountId: string;
      /** Balance after the credit. */
      balanceMsat: number;
      transactionId: string;
      /** true when this token hash had already been credited to this account: nothing changed now. */
      replay: boolean;
    }
  /** `invalid_api_key`: the apiKey credential is unknown or deleted (tokenHash identities are created). */
  | { ok: false; code: 'invalid_api_key' }
  /** `child_key_forbidden`: child keys cannot be topped up (they draw on the parent). */
  | { ok: false; code: 'child_key_forbidden' }
  /** The token hash was already credited to a different account: refused, nothing changed. */
  | { ok: false; code: 'token_credited_elsewhere' };

export interface DepositKeyInput {
  tokenHash: string;
  amountMsat: number;
  name?: string | null;
  refundAddress?: string | null;
  expiresAtMs?: number | null;
  now?: number;
}

export type DepositKeyResult =
  | {
      ok: true;
      /** The plaintext `sk-` key. Return it to the client; MUST NOT be logged. */
      apiKey: string;
      key: KeyMeta;
      balanceMsat: number;
      transactionId: string;
      /**
       * true when this token had already created this key (a retry after a crash): the same key is
       * returned, no second credit. The key is derived as HMAC(server secret in the store, tokenHash), so
       * the deposit token remains a recovery credential for its key.
       */
      replay: boolean;
    }
  | { ok: false; code: 'token_credited_elsewhere' };

// ----------------------------------------------------------------------------------------------- admit

export interface AdmitInput {
  credential: Credential;
  /** Unique per call, generated by the gateway (MUST NOT be client-chosen): the reservation id. */
  requestId: string;
  model: string;
  clientIp?: string | null;
  /** Upper bound of the call's cost. Reservation = min(maxMsat, what can still be afforded). */
  maxMsat: number;
  /** Below this the call is refused with `payment_required` (usually the cost of the prompt). */
  minMsat: number;
  /** The reservation expiry: after `now + expiresInMs` it is released by the next admit or sweep. */
  expiresInMs: number;
  limits: RateLimits;
  /**
   * Admit on the exact per-call path, never from a credit lease (core/ledger/leasing.ts): for pay-per-call
   * identities (X-Cashu), spent once, whose change is paid out while the call runs and must see exactly this
   * call's reservation. The stores ignore it.
   */
  exactPath?: boolean;
  now?: number;
}

export interface Admission {
  ok: true;
  accountId: string;
  requestId: string;
  reservedMsat: number;
  /** Available balance after this reservation (for a child: also bounded by its limit). */
  availableMsat: number;
  key: KeyMeta;
  /** The requests-per-minute window after counting this request (for X-RateLimit-* headers). */
  rateLimit: RateLimitInfo;
}

export type AdmitRefusal =
  | { ok: false; code: 'invalid_api_key' }
  /** The operator disabled the key or its account's parent key. */
  | { ok: false; code: 'key_disabled' }
  | { ok: false; code: 'key_expired'; expiredAtMs: number }
  | { ok: false; code: 'model_not_allowed'; model: string }
  | { ok: false; code: 'rate_limit_exceeded'; rateLimit: RateLimitInfo }
  | {
      ok: false;
      code: 'payment_required';
      /** What the key can still afford (msat). */
      balance: number;
      required: number;
      shortfall: number;
    }
  /** The requestId is already used on this account (open or finished). */
  | { ok: false; code: 'duplicate_request' }
  /**
   * Credit leases only (core/ledger/leasing.ts): the store refused for money while leases of other processes
   * that may hold it did not answer the recall within its wait. Not a refusal for money: retry after
   * `retryAfterMs`; `heldUntilMs` is when the last of those leases expires unless its holder steps it.
   */
  | {
      ok: false;
      code: 'balance_in_transit';
      retryAfterMs: number;
      heldUntilMs: number;
      balance: number;
      required: number;
      shortfall: number;
    };

export type AdmitResult = Admission | AdmitRefusal;

// ----------------------------------------------------------------------------------------- countRequest

/**
 * Counts one request that moves no money (wallet, balance, estimate, webhook endpoints) against the key's
 * requests-per-minute window — the same counter `admit` uses — without reserving anything.
 */
export interface CountRequestInput {
  credential: KeyLookup;
  /** The key's requests-per-minute limit (`Config.limits.requestsPerMinute`). */
  requestsPerMinute: number;
  now?: number;
}

export type CountRequestResult =
  | { ok: true; rateLimit: RateLimitInfo }
  | { ok: false; code: 'invalid_api_key' }
  | { ok: false; code: 'key_disabled' }
  | { ok: false; code: 'rate_limit_exceeded'; rateLimit: RateLimitInfo };

// ------------------------------------------------------------------------------------ settle / release

/**
 * A settled call's audit record (the audit log, core/audit/audit-log.ts), written by the store step that charges
 * the call — the same Lua script or SQLite transaction — so a charged call never lacks its record, whatever
 * process dies when (docs/ledger.md, "Audit records").
 */
export interface CallAuditRecord {
  /** The record as JSON text, every field but its cost: the step appends `cost_msats` and `cost_sats` (what it charged). */
  json: string;
  /** The record's time (ms): when the call ended. */
  atMs: number;
  /** The HTTP status answered (SQLite keeps it as a column the readers filter on). */
  status: number;
}

export interface SettleInput {
  accountId: string;
  requestId: string;
  /** Metered cost, msat, ≥ 0. */
  costMsat: number;
  promptTokens: number;
  completionTokens: number;
  model: string;
  /** Usage transaction description (model and token counts). */
  description: string;
  /** true when the cost is an estimate (upstream sent no usage). Recorded on the transaction. */
  estimated: boolean;
  /**
   * The transaction's type: `usage` (default) for a call, `batch` for the settlement of a Batch API job
   * (core/batches/settle-batch.ts). Additive: it changes only the recorded type.
   */
  transactionType?: 'usage' | 'batch';
  /** The call's audit record, written with the charge (absent: none is written; a replay writes none). */
  auditRecord?: CallAuditRecord;
  now?: number;
}

export type SettleResult =
  | {
      ok: true;
      /** 'settled' now; or replay of an earlier settle (same numbers, nothing changed). */
      status: 'settled';
      replay: boolean;
      chargedMsat: number;
      /** Part of the reservation returned to the balance. */
      releasedMsat: number;
      /** costMsat − chargedMsat: what could not be charged (the account ran dry). */
      overrunMsat: number;
      /** Account balance after the charge. */
      balanceMsat: number;
      transactionId: string;
    }
  /** Released before (explicitly): settle is a no-op. (An expired reservation IS still settled, from
   * what is available, so a slow call is charged.) */
  | { ok: false; code: 'already_released' }
  | { ok: false; code: 'unknown_reservation' };

export interface ReleaseInput {
  accountId: string;
  requestId: string;
  now?: number;
}

export type ReleaseResult =
  | { ok: true; status: 'released'; replay: boolean; releasedMsat: number }
  | { ok: false; code: 'already_settled' }
  | { ok: false; code: 'unknown_reservation' };

// ------------------------------------------------------------------------------------------- leases

/**
 * A call admitted and settled in memory against a credit lease, reported in the next lease step. Charged
 * exactly like `settle` (min(cost, lease + what is still free)), with its own usage transaction and its audit
 * record (written by the step that charges it).
 */
export interface LeaseCall {
  /** The call's id (gateway-generated, unique). */
  requestId: string;
  costMsat: number;
  promptTokens: number;
  completionTokens: number;
  model: string;
  description: string;
  estimated: boolean;
  auditRecord?: CallAuditRecord;
  /** When the call was settled in memory (its transaction's timestamp). */
  atMs: number;
}

/**
 * One atomic lease step (docs/ledger.md, "Credit leases"): opens, renews, resizes or returns a key's credit
 * lease and records the calls spent from it since the previous step. A lease IS a reservation of kind call
 * in the store (id from `ownedId('l')`): it counts in `reserved`, so Σ leases + reservations ≤ balance; it
 * holds one concurrency slot; it expires after `ttlMs` without a step and is then released by the sweep or,
 * when its process stopped beating, by `releaseOrphans` — like any reservation.
 */
export interface LeaseInput {
  credential: Credential;
  /** `ownedId('l')`; the same id for every step of one lease. */
  leaseId: string;
  /** 1, 2, 3… per lease, one step at a time. A step whose seq is ≤ the last applied one replays its answer. */
  seq: number;
  /** Slice wanted after this step (msat). The store grants min(want, lease after the calls + free). */
  wantMsat: number;
  /** Opening only: below this the lease is not opened (`payment_required`). */
  minMsat: number;
  /** Requests-per-minute slots wanted for the current minute (granted from what the key has left). */
  wantRequests: number;
  /** Slots of the previous grant used since the previous step (the rest goes back if the minute is the same). */
  usedRequests: number;
  ttlMs: number;
  limits: RateLimits;
  /** Calls settled in memory since the previous step, in order. */
  calls: LeaseCall[];
  /** Return the lease (after recording the calls): the step leaves nothing reserved. */
  close: boolean;
  /**
   * Concurrency slots of the key the lease should hold after this step: the calls its holder may have open
   * at once. The store grants min(want, limit − the key's other open calls), never below `openCalls`, and
   * counts the grant in the key's open calls (so Σ over leases + reservations ≤ the limit). Default 1.
   */
  wantConcurrent?: number;
  /** Calls open in memory under this lease now (they keep their slots). Default: 1 when `wantConcurrent` is absent, else 0. */
  openCalls?: number;
  now?: number;
}

export interface LeaseGrant {
  ok: true;
  accountId: string;
  leaseId: string;
  replay: boolean;
  /** false: the lease is closed now (asked to, or it had expired, or the key became invalid or expired). */
  open: boolean;
  /** The lease's reservation after this step (0 when closed). */
  grantedMsat: number;
  /** The account's free balance after this step (for a child with a limit: also bounded by it). */
  availableMsat: number;
  balanceMsat: number;
  /** Requests-per-minute slots granted for `requestWindow` (minute number since the epoch). */
  requestSlots: number;
  requestWindow: number;
  /** The key's requests counted in that minute after this step, granted slots included. */
  requestsCounted: number;
  /** Tokens the key may still use this hour (tokens/hour limit − counted). */
  tokensLeft: number;
  /** Open calls of the key other than this lease's slots (concurrency used elsewhere). */
  otherOpen: number;
  /** Concurrency slots this lease holds after the step (0 when closed). */
  concurrentSlots: number;
  /** What each reported call was charged, in the order given. */
  chargedMsat: number[];
  /** null when the key is gone (deleted): the lease is closed then. */
  key: KeyMeta | null;
}

export type LeaseResult =
  | LeaseGrant
  /** Opening only (a step with calls always records them and answers ok, closing the lease if needed). */
  | { ok: false; code: 'invalid_api_key' }
  | { ok: false; code: 'key_disabled' }
  | { ok: false; code: 'key_expired'; expiredAtMs: number }
  /** Children with a balance limit are admitted per call (their limit is checked by the store). */
  | { ok: false; code: 'lease_unsupported' }
  | { ok: false; code: 'rate_limit_exceeded'; rateLimit: RateLimitInfo }
  | { ok: false; code: 'payment_required'; balance: number; required: number; shortfall: number };

// ------------------------------------------------------------------------------------------ withdrawal

export type WithdrawalKind = 'withdrawal' | 'refund';

export interface HoldInput {
  /** The caller's credential, or a `KeyRef` (the operator's refund of a key it knows by id). */
  credential: KeyLookup;
  /** Amount to hold, msat, > 0; or 'all' = everything available now (refund). */
  amountMsat: number | 'all';
  /** Idempotency key of the withdrawal (unique per account). */
  holdId: string;
  kind: WithdrawalKind;
  /**
   * Hold expiry; an expired hold is aborted by admit / sweep. `null`: a PAYOUT HOLD (a Lightning payout whose
   * melt decides it, core/account/lightning-refund.ts): it MUST never expire — no sweep, admit, next hold or
   * orphan release frees it; only `commitWithdrawal` / `abortWithdrawal` end it — and while it is open every
   * other hold of the account is refused `payout_in_progress` (one undecided payout per account at a time).
   */
  expiresInMs: number | null;
  now?: number;
}

/** The account's open payout hold (a hold made with `expiresInMs: null`), named by a refusal or key info. */
export interface OpenPayout {
  holdId: string;
  /** When the hold was made, ms. */
  sinceMs: number;
}

export type HoldResult =
  | {
      ok: true;
      accountId: string;
      holdId: string;
      heldMsat: number;
      /** Available after the hold. */
      availableMsat: number;
      /** true when this holdId already existed (open): nothing changed. */
      replay: boolean;
    }
  | { ok: false; code: 'invalid_api_key' }
  | { ok: false; code: 'child_key_forbidden' }
  | { ok: false; code: 'payment_required'; balance: number; required: number; shortfall: number }
  /** The holdId was already committed or aborted. */
  | { ok: false; code: 'duplicate_request' }
  /** A payout hold of the account is still open (undecided): nothing held. */
  | { ok: false; code: 'payout_in_progress'; payout: OpenPayout };

export interface HoldRef {
  accountId: string;
  holdId: string;
  now?: number;
}

/** `commitWithdrawal`'s reference: the hold, and optionally how much of it to debit. */
export interface CommitRef extends HoldRef {
  /**
   * Debit only this much of the hold (msat, 0 ≤ debit; capped at the held amount) and release the rest, in the
   * same step: a Lightning refund debits the amount paid plus the fee the mint actually charged, not the whole
   * fee reserve it held. Absent: the whole hold. A replay answers the first commit's result.
   */
  debitMsat?: number;
}

export type CommitResult =
  | {
      ok: true;
      status: 'committed';
      replay: boolean;
      withdrawnMsat: number;
      balanceMsat: number;
      transactionId: string;
    }
  | { ok: false; code: 'already_aborted' }
  /** The hold expired and was aborted, and what is available now does not cover it: nothing debited. */
  | { ok: false; code: 'hold_expired'; availableMsat: number }
  | { ok: false; code: 'unknown_reservation' };

export type AbortResult =
  | { ok: true; status: 'aborted'; replay: boolean; releasedMsat: number }
  | { ok: false; code: 'already_committed' }
  | { ok: false; code: 'unknown_reservation' };

// ---------------------------------------------------------------------------------------------- keys

export interface ChildKeysInput {
  /** The parent's credential; MUST be a non-child key. */
  parent: Credential;
  /** 1–50 (openapi/openapi.yaml); outside → `invalid_request`. */
  count: number;
  /** Fee per key (config childKeyCostMsats), debited from the parent atomically, all or nothing. */
  feePerKeyMsat: number;
  name?: string | null;
  balanceLimitMsat?: number | null;
  balanceLimitReset?: BalanceLimitReset | null;
  validityDateMs?: number | null;
  expiresAtMs?: number | null;
  allowedModels?: string[] | null;
  now?: number;
}

export type ChildKeysResult =
  | {
      ok: true;
      /** Plaintext keys, returned once; MUST NOT be logged. */
      apiKeys: string[];
      keys: KeyMeta[];
      feeMsat: number;
      /** Parent balance after the fee. */
      parentBalanceMsat: number;
      transactionId: string | null;
    }
  | { ok: false; code: 'invalid_api_key' }
  | { ok: false; code: 'key_expired'; expiredAtMs: number }
  | { ok: false; code: 'child_key_forbidden' }
  | { ok: false; code: 'invalid_request'; message: string }
  | { ok: false; code: 'payment_required'; balance: number; required: number; shortfall: number };

export interface KeyUpdate {
  allowedIps?: string[] | null;
  refundAddress?: string | null;
  name?: string | null;
  /** Operator only (PATCH /admin/api/keys/{key_id}): disabling a parent key refuses its children too. */
  disabled?: boolean;
}

export interface KeyTarget {
  /** The caller's credential, or a `KeyRef` (the operator's console acts on keys it knows by id). */
  credential: KeyLookup;
  /** Act on this child (by key id) of the credential's key instead of the key itself. */
  childKeyId?: string;
  now?: number;
}

export type KeyChangeResult =
  | {
      ok: true;
      key: KeyMeta;
      /**
       * Credit leases only (core/ledger/leasing.ts, a key disabled): leases of the account in other processes
       * that did not answer the recall within its wait. Each applies the change at its holder's next step, at
       * the latest when it expires (`appliedByMs`); absent when every process applied it before the answer.
       */
      pendingLeases?: { count: number; appliedByMs: number };
    }
  | { ok: false; code: 'invalid_api_key' }
  | { ok: false; code: 'not_found' }
  | { ok: false; code: 'child_key_forbidden' };

// --------------------------------------------------------------------------------------------- reads

export interface KeyUsage {
  totalRequests: number;
  totalSpentMsat: number;
  /** Child keys: spent in the current limit period. */
  periodSpentMsat: number;
  reservedMsat: number;
  lastUsedMs: number | null;
}

export interface AccountTotals {
  accountId: string;
  balanceMsat: number;
  reservedMsat: number;
  depositedMsat: number;
  spentMsat: number;
  withdrawnMsat: number;
  feesMsat: number;
  requests: number;
  createdAtMs: number;
  /** The account's open payout hold (HoldInput `expiresInMs: null`), if any. */
  payout?: OpenPayout;
}

export interface KeyInfo {
  key: KeyMeta;
  usage: KeyUsage;
  account: AccountTotals;
  /** What this key can spend now (balance − reserved, and for a child its remaining limit). */
  availableMsat: number;
  /** For a parent key: its children (not deleted). Empty for child keys. */
  children: Array<{ key: KeyMeta; usage: KeyUsage }>;
}

export type TransactionType = 'usage' | 'deposit' | 'withdrawal' | 'child_key_fee' | 'refund' | 'batch';

export interface Transaction {
  id: string;
  type: TransactionType;
  /** Signed: negative for usage, fee, withdrawal and refund. */
  amountMsat: number;
  balanceAfterMsat: number;
  description: string;
  timestampMs: number;
  keyId: string | null;
  model: string | null;
  estimated: boolean;
}

export interface Page {
  limit?: number;
  offset?: number;
}

export interface TransactionPage {
  transactions: Transaction[];
  hasMore: boolean;
  /** Number of retained records (history is bounded per account: `LedgerOptions.txRetention`). */
  total: number;
}

/** An audit record (docs/endpoints.md), one per key use (settle or release); bounded per account. */
export interface ConservationBreach {
  accountId: string | null;
  rule: 'conservation' | 'reserved_negative' | 'overspent' | 'reservations_mismatch' | 'negative_total';
  detail: string;
}

export interface ConservationReport {
  ok: boolean;
  accounts: number;
  totals: Omit<AccountTotals, 'accountId' | 'createdAtMs' | 'payout'>;
  breaches: ConservationBreach[];
}

// -------------------------------------------------------------------------------------------- ledger

export interface LedgerOptions {
  /** Key prefix (Redis) — ignored by SQLite. */
  prefix?: string;
  /** Usage/deposit transactions kept per account (newest). Default 10,000. */
  txRetention?: number;
  /** How long audit records are kept (ms; the audit log's AUDIT_RETENTION_DAYS): a step that writes one trims
   *  the account's records older than this. Default 30 days. */
  auditRetentionMs?: number;
  /** How long finished reservation ids are remembered for idempotent settle/release. Default 1 h (bounds memory on busy keys). */
  finishedRetentionMs?: number;
  /**
   * SQLite: durability of admit/settle/release. 'normal' (default): they may commit without an fsync
   * (WAL, `synchronous = NORMAL`) while the last synced commit is younger than `sqliteMaxUnsyncedMs`; a
   * power loss then rolls the file back to a consistent earlier state, losing at most that window of
   * charges. Credits, withdrawals, fees and key changes always commit with the connection's level (FULL).
   * 'full': every commit is synced. See docs/ledger.md, "Durability".
   */
  sqliteHotSync?: 'normal' | 'full';
  /** SQLite: longest time hot commits may stay unsynced (default 1000 ms). */
  sqliteMaxUnsyncedMs?: number;
  /** Redis: how long start-up waits for the connection to become ready. Default 10 s. */
  connectTimeoutMs?: number;
  /** Logger for the start-up durability warning (Redis without persistence). */
  warn?: (msg: string) => void;
}

/** An open credit lease of another process (`Ledger.otherLeases`). */
export interface OtherLease {
  id: string;
  /** When it expires unless its holder steps it again (`now + ttlMs` of its last step). */
  expiresAtMs: number;
}

/** A recall of an account's leases (`Ledger.recalledSince`). */
export interface LeaseRecall {
  accountId: string;
  kind: RecallKind;
  atMs: number;
}

export type RecallKind = 'report' | 'money';

/** Recalls older than this are forgotten (holders poll every LEASE_FLUSH_MS). */
export const RECALL_KEEP_MS = 60_000;

export interface Ledger {
  readonly kind: 'redis' | 'redis-cluster' | 'sqlite';

  /** Create a key funded by a redeemed deposit token; idempotent by tokenHash (same key on retry). */
  createKeyFromDeposit(input: DepositKeyInput): Promise<DepositKeyResult>;
  /** Credit a redeemed token to an account; idempotent by tokenHash; at most once across all accounts. */
  credit(input: CreditInput): Promise<CreditResult>;

  /** Auth + model + rate limits + reservation, one atomic step, one round trip. Sweeps expired reservations. */
  admit(input: AdmitInput): Promise<AdmitResult>;
  /** Counts a request without money against the key's requests/min window (see CountRequestInput). */
  countRequest(input: CountRequestInput): Promise<CountRequestResult>;
  /** Charge min(cost, reserved + available), release the rest, count, write tx + audit record. Idempotent. */
  settle(input: SettleInput): Promise<SettleResult>;
  /** Return the whole reservation. Idempotent; no-op after settle. */
  release(input: ReleaseInput): Promise<ReleaseResult>;
  /** One credit-lease step (open / report calls / renew / resize / close), atomic, one round trip. */
  lease(input: LeaseInput): Promise<LeaseResult>;

  holdWithdrawal(input: HoldInput): Promise<HoldResult>;
  commitWithdrawal(ref: CommitRef): Promise<CommitResult>;
  abortWithdrawal(ref: HoldRef): Promise<AbortResult>;

  createChildKeys(input: ChildKeysInput): Promise<ChildKeysResult>;
  updateKey(target: KeyTarget, update: KeyUpdate): Promise<KeyChangeResult>;
  /** Delete the key (or a child). Deleting a parent key makes the whole account's keys invalid. */
  deleteKey(target: KeyTarget): Promise<KeyChangeResult>;

  /** Key, usage, account totals and children; null when the key is unknown or deleted. Works on expired keys. */
  getKeyInfo(credential: KeyLookup, now?: number): Promise<KeyInfo | null>;
  /** Newest first. null when the credential is unknown. */
  listTransactions(credential: KeyLookup, page?: Page): Promise<TransactionPage | null>;
  /**
   * The key whose public id (`key_id`, 16 hex characters) this is, deleted or not; null when none or the id is
   * malformed. For the operator's console: SQLite reads the keys table; Redis reads an index written when keys are
   * created and, on a miss, scans every account's keys once (O(accounts)) and indexes what it finds.
   */
  findKeyById(keyId: string): Promise<KeyRef | null>;

  /** Release every expired lease (calls and holds) in the store; returns how many. Bounded per call. */
  sweepExpired(now?: number, max?: number): Promise<number>;
  /** Records that process `processId` (core/ledger/owner.ts) is alive at `now`. */
  heartbeat(processId: string, now?: number): Promise<void>;
  /**
   * Releases every open reservation and hold owned (by its id, core/ledger/owner.ts) by a process whose last
   * heartbeat is older than `deadAfterMs`, then forgets those processes. Idempotent and safe from any number of
   * processes at once: each lease is released exactly once. Returns the processes found dead and the leases
   * released.
   */
  releaseOrphans(deadAfterMs: number, now?: number): Promise<{ processes: number; released: number }>;
  /**
   * Cross-process lease recall (docs/ledger.md, "Recall"): the open, unexpired credit leases of the account
   * held by processes other than `processId` (their id names the owner, core/ledger/owner.ts).
   */
  otherLeases(accountId: string, processId: string, now?: number): Promise<OtherLease[]>;
  /**
   * Asks every process holding a lease of the account to report its queued calls (`report`), or to report
   * them and give the slice back (`money`: a call is short of what the leases hold).
   */
  recallLeases(accountId: string, kind: RecallKind, now?: number): Promise<void>;
  /** The recalls made at or after `sinceMs` (the holders poll this). Recalls are forgotten after a minute. */
  recalledSince(sinceMs: number): Promise<LeaseRecall[]>;
  /**
   * Writes what this process settled and has not written yet (the credit leases' queued calls; with an account,
   * other processes holding its leases are asked to report too), so a reader of the store — the audit log —
   * sees every call answered so far. A no-op for the store ledgers.
   */
  reportCalls(accountId?: string): Promise<void>;
  /** Check the invariants over every account; never changes anything. */
  checkConservation(): Promise<ConservationReport>;
  /** Sum of all account balances (the wallet's solvency check compares its proofs to this). */
  totalUserBalancesMsat(): Promise<number>;

  close(): Promise<void>;
}
