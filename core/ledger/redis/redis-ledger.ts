import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { BackgroundRetry } from '../../background-retry.js';
import { GatewayError } from '../../errors.js';
import { waitForRedis } from '../../store/connection.js';
import { LedgerCode } from '../errors.js';
import {
  depositAccountCandidates,
  depositApiKey,
  displayKey,
  displayToken,
  keyIdOf,
  newKeyForAccount,
  periodIds,
  resolveCredential,
  sha256Hex,
} from '../keys.js';
import { checkLease, decodeLeaseAnswer } from '../lease-rules.js';
import {
  checkAdmitInput,
  checkAuditRecord,
  checkChildKeysInput,
  checkCommitRef,
  checkCountRequestInput,
  checkCreditInput,
  checkHoldInput,
  checkHoldRef,
  checkOptional,
  checkReleaseInput,
  checkSettleInput,
  childKeyState,
  DEFAULT_AUDIT_RETENTION_MS,
  MAX_KEYS_PER_ACCOUNT,
  newKeyState,
  normList,
  SWEEP_PER_ADMIT,
  toMeta,
} from '../rules.js';
import type {
  AbortResult,
  AdmitInput,
  AdmitResult,
  ChildKeysInput,
  ChildKeysResult,
  CommitRef,
  CommitResult,
  CountRequestInput,
  CountRequestResult,
  CreditInput,
  CreditResult,
  DepositKeyInput,
  DepositKeyResult,
  HoldInput,
  HoldRef,
  HoldResult,
  KeyChangeResult,
  KeyTarget,
  KeyUpdate,
  LeaseInput,
  LeaseResult,
  LedgerOptions,
  RateLimitType,
  ReleaseInput,
  ReleaseResult,
  SettleInput,
  SettleResult,
} from '../types.js';
import { AuditIndex } from './audit-index.js';
import {
  accountIndexCompleteKey,
  accountIndexKey,
  accountKeys,
  claimKey,
  decodeKey,
  encodeMeta,
  keyIdIndexKey,
  secretKey,
} from './redis-keys.js';
import { RedisReads } from './redis-reads.js';
import { defineScripts } from './redis-scripts.js';

const INVALID = { ok: false, code: 'invalid_api_key' } as const;
const DISABLED = { ok: false, code: 'key_disabled' } as const;

/** A reply code the caller does not expect from that script: a bug between script and decoder, never a refusal. */
function unexpected(script: string, r: Reply): GatewayError {
  return new GatewayError('internal_error', {
    message: `${script} answered an unexpected code ${String(r[0])}`,
  });
}
const LIMIT_TYPES: Record<number, RateLimitType> = {
  1: 'requests_per_minute',
  2: 'tokens_per_hour',
  3: 'concurrent_requests',
};
type Reply = Array<number | string>;

/** `RateLimited` replies (admit, count-request, lease): which window is full, its limit, remaining, reset. */
function rateLimited(r: Reply) {
  return {
    ok: false,
    code: 'rate_limit_exceeded',
    rateLimit: {
      type: LIMIT_TYPES[Number(r[1])]!,
      limit: Number(r[2]),
      remaining: Number(r[3]),
      resetUnix: Number(r[4]),
    },
  } as const;
}

/** `PaymentRequired` replies: the spendable balance, what the call needs and the difference. */
function paymentRequired(r: Reply) {
  return {
    ok: false,
    code: 'payment_required',
    balance: Number(r[1]),
    required: Number(r[2]),
    shortfall: Number(r[3]),
  } as const;
}

/**
 * The Redis `Ledger`: each state change is one Lua script over one account's slot (see redis-keys.ts for
 * the layout and the .lua headers for KEYS/ARGV/returns). Works on a single Redis and on Redis Cluster.
 * Use `createRedisLedger()` (it loads the server secret and checks persistence before first use).
 */
export class RedisLedger extends RedisReads {
  readonly kind: 'redis' | 'redis-cluster';
  /** Accounts with audit records (node-wide audit reads): confirmed before a step writes a record. */
  private readonly auditIndex: AuditIndex;
  /** Releases of admissions whose write was not acknowledged by a replica (see admit). */
  private readonly releases: BackgroundRetry;

  constructor(
    client: Redis | Cluster,
    prefix: string,
    private readonly secret: string,
    opts: LedgerOptions = {},
    /** The replica-acknowledgement rule (core/store/replica-acks.ts), awaited after every money write. */
    private readonly replicated: (key: string) => Promise<void> = async () => {},
  ) {
    super(client, prefix, defineScripts(client), {
      tx: opts.txRetention ?? 10_000,
      auditMs: opts.auditRetentionMs ?? DEFAULT_AUDIT_RETENTION_MS,
      finishedMs: opts.finishedRetentionMs ?? 3_600_000,
    });
    this.auditIndex = new AuditIndex(client, prefix);
    this.kind = 'nodes' in client && typeof client.nodes === 'function' ? 'redis-cluster' : 'redis';
    const warn = opts.warn ?? ((m: string) => console.warn(m));
    this.releases = new BackgroundRetry(
      { info: () => {}, error: (_o: unknown, m?: string) => warn(m ?? 'release retry failed') },
      'release of an unacknowledged admission',
    );
  }

  /**
   * A money write counts as done only once a replica holds it (REDIS_MIN_REPLICA_ACKS); otherwise it is a
   * store failure (503 store_unavailable) and the caller retries or refuses, never assumes it done.
   */
  private async acked(accountKey: string): Promise<void> {
    await this.call(() => this.replicated(accountKey));
  }

  async createKeyFromDeposit(input: DepositKeyInput): Promise<DepositKeyResult> {
    const { tokenHash, amount } = checkCreditInput(input);
    const now = input.now ?? Date.now();
    const candidates = depositAccountCandidates(this.secret, tokenHash);
    const claim = claimKey(this.prefix, tokenHash);
    let owner = String(await this.run('claim-token', [claim], [candidates[0]!, 'claim', '']));
    for (let attempt = 0; attempt < candidates.length * 2; attempt++) {
      const idx = candidates.indexOf(owner);
      if (idx < 0) return { ok: false, code: 'token_credited_elsewhere' };
      const accountId = candidates[idx]!;
      const apiKey = depositApiKey(this.secret, accountId, tokenHash);
      const k = newKeyState({
        hash: sha256Hex(apiKey),
        accountId,
        display: displayKey(apiKey),
        createdAt: now,
        name: input.name ?? null,
        refundAddress: input.refundAddress ?? null,
        expiresAt: checkOptional('expiresAtMs', input.expiresAtMs),
      });
      const ak = accountKeys(this.prefix, accountId);
      await this.indexAccount(accountId);
      const r = (await this.run(
        'credit',
        [ak.acct, ak.keys, ak.cred, ak.tx],
        ['deposit', k.hash, tokenHash, amount, 'Deposit', now, accountId, this.retention.tx, encodeMeta(k)],
      )) as Reply;
      if (r[0] === 1) {
        await this.acked(ak.acct);
        await this.indexKeys(accountId, [k.hash]);
        const key = toMeta(decodeKey(k.hash, accountId, String(r[4])));
        return {
          ok: true,
          apiKey,
          key,
          balanceMsat: Number(r[2]),
          transactionId: String(r[3]),
          replay: r[1] === 1,
        };
      }
      if (r[0] !== LedgerCode.AccountCollision) {
        throw new GatewayError('internal_error', { message: `credit (deposit) answered ${String(r[0])}` });
      }
      // Another deposit owns this account id; move our claim to the next candidate and retry.
      const next = candidates[idx + 1];
      if (next === undefined) break;
      owner = String(await this.run('claim-token', [claim], [next, 'move', accountId]));
    }
    throw new GatewayError('internal_error', { message: 'No free account id for this deposit' });
  }

  /**
   * Adds an account id to the account index before the credit that may create the account, and fails the
   * credit when it cannot: sums and audits walk the index, so it may hold an id too many, never one too few.
   */
  private async indexAccount(accountId: string): Promise<void> {
    await this.call(() => this.client.sadd(accountIndexKey(this.prefix), accountId));
  }

  /**
   * Records key id → key in the console's index (see findKeyById). Best effort: the key already exists, and
   * a lookup that misses the index scans for it, so a failure here is not the caller's.
   */
  private async indexKeys(accountId: string, keyHashes: string[]): Promise<void> {
    const fields = keyHashes.flatMap((h) => [keyIdOf(h), `${accountId} ${h}`]);
    await this.client.hset(keyIdIndexKey(this.prefix), ...fields).catch(() => undefined);
  }

  async credit(input: CreditInput): Promise<CreditResult> {
    const { tokenHash, amount } = checkCreditInput(input);
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const claim = claimKey(this.prefix, tokenHash);
    const owner = String(await this.run('claim-token', [claim], [c.accountId, 'claim', '']));
    if (owner !== c.accountId) return { ok: false, code: 'token_credited_elsewhere' };
    const ak = accountKeys(this.prefix, c.accountId);
    const mode = c.kind === 'tokenHash' ? 'token' : 'key';
    const meta =
      mode === 'token'
        ? encodeMeta(
            newKeyState({
              hash: c.keyHash,
              accountId: c.accountId,
              display: displayToken(c.keyHash),
              createdAt: now,
            }),
          )
        : '';
    const desc = input.kind === 'topup' ? 'Top-up' : 'Deposit';
    // A token's first credit creates its account (a key's account exists already).
    if (mode === 'token') await this.indexAccount(c.accountId);
    const r = (await this.run(
      'credit',
      [ak.acct, ak.keys, ak.cred, ak.tx],
      [mode, c.keyHash, tokenHash, amount, desc, now, c.accountId, this.retention.tx, meta],
    )) as Reply;
    if (r[0] === 1) {
      await this.acked(ak.acct);
      if (mode === 'token') await this.indexKeys(c.accountId, [c.keyHash]);
      return {
        ok: true,
        accountId: c.accountId,
        balanceMsat: Number(r[2]),
        transactionId: String(r[3]),
        replay: r[1] === 1,
      };
    }
    // Refused: give the claim back so the token can still be credited to a valid key.
    await this.run('claim-token', [claim], [c.accountId, 'drop', '0']);
    if (r[0] === LedgerCode.ChildKeyForbidden) return { ok: false, code: 'child_key_forbidden' };
    if (r[0] === LedgerCode.InvalidApiKey) return INVALID;
    throw unexpected('credit', r);
  }

  async countRequest(input: CountRequestInput): Promise<CountRequestResult> {
    const rpm = checkCountRequestInput(input);
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const ak = accountKeys(this.prefix, c.accountId);
    const r = (await this.run('count-request', [ak.acct, ak.keys], [c.keyHash, rpm, now])) as Reply;
    switch (r[0]) {
      case 1:
        return {
          ok: true,
          rateLimit: {
            type: 'requests_per_minute',
            limit: rpm,
            remaining: Number(r[1]),
            resetUnix: Number(r[2]),
          },
        };
      case LedgerCode.RateLimited:
        return rateLimited(r);
      case LedgerCode.InvalidApiKey:
        return INVALID;
      case LedgerCode.KeyDisabled:
        return DISABLED;
      default:
        throw unexpected('ledger script', r);
    }
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const { requestId, max, min, expiresInMs, limits: l } = checkAdmitInput(input);
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const ak = accountKeys(this.prefix, c.accountId);
    const p = periodIds(now);
    const r = (await this.run(
      'admit',
      [ak.acct, ak.keys, ak.res, ak.expiry, ak.fin],
      [
        c.keyHash,
        requestId,
        input.model,
        input.clientIp ?? '',
        max,
        min,
        expiresInMs,
        l.requestsPerMinute,
        l.tokensPerHour,
        l.concurrent,
        now,
        p.daily,
        p.weekly,
        p.monthly,
        SWEEP_PER_ADMIT,
      ],
    )) as Reply;
    switch (r[0]) {
      case 1:
        try {
          await this.acked(ak.acct);
        } catch (err) {
          // Refused before the upstream: give the reservation back (retried in the background while the store
          // is away; the reservation expiry is the backstop), so nothing stays reserved for a call never made.
          const undo = () => this.release({ accountId: c.accountId, requestId });
          undo().catch(() => this.releases.schedule(requestId, undo));
          throw err;
        }
        return {
          ok: true,
          accountId: c.accountId,
          requestId,
          reservedMsat: Number(r[1]),
          availableMsat: Number(r[2]),
          key: toMeta(decodeKey(c.keyHash, c.accountId, String(r[3]))),
          rateLimit: {
            type: 'requests_per_minute',
            limit: l.requestsPerMinute,
            remaining: Number(r[4]),
            resetUnix: Number(r[5]),
          },
        };
      case LedgerCode.KeyExpired:
        return { ok: false, code: 'key_expired', expiredAtMs: Number(r[1]) };
      case LedgerCode.ModelNotAllowed:
        return { ok: false, code: 'model_not_allowed', model: input.model };
      case LedgerCode.RateLimited:
        return rateLimited(r);
      case LedgerCode.PaymentRequired:
        return paymentRequired(r);
      case LedgerCode.DuplicateRequest:
        return { ok: false, code: 'duplicate_request' };
      case LedgerCode.InvalidApiKey:
        return INVALID;
      case LedgerCode.KeyDisabled:
        return DISABLED;
      default:
        throw unexpected('ledger script', r);
    }
  }

  async settle(input: SettleInput): Promise<SettleResult> {
    const { accountId, requestId, cost, tokens } = checkSettleInput(input);
    const record = checkAuditRecord(input.auditRecord);
    const now = input.now ?? Date.now();
    const ak = accountKeys(this.prefix, accountId);
    const p = periodIds(now);
    // The account is listed in the audit index before its record is written (a cached confirmation: no await).
    const listing = record !== '' ? this.auditIndex.confirm(accountId) : undefined;
    if (listing !== undefined) await this.call(() => listing);
    const r = (await this.run(
      'settle',
      [ak.acct, ak.keys, ak.res, ak.expiry, ak.fin, ak.tx, ak.auditLog],
      [
        requestId,
        cost,
        tokens,
        input.model,
        input.description,
        input.estimated ? '1' : '0',
        now,
        p.daily,
        p.weekly,
        p.monthly,
        input.accountId,
        this.retention.tx,
        Math.max(0, Date.now() - this.retention.auditMs),
        now - this.retention.finishedMs,
        record,
        input.transactionType ?? 'usage',
      ],
    )) as Reply;
    if (r[0] === LedgerCode.UnknownReservation) return { ok: false, code: 'unknown_reservation' };
    if (r[0] === LedgerCode.AlreadyReleased) return { ok: false, code: 'already_released' };
    if (r[0] !== 1) throw unexpected('settle', r);
    await this.acked(ak.acct);
    const [charged, released, overrun, balance, txId] = String(r[2]).split(',');
    return {
      ok: true,
      status: 'settled',
      replay: r[1] === 1,
      chargedMsat: Number(charged),
      releasedMsat: Number(released),
      overrunMsat: Number(overrun),
      balanceMsat: Number(balance),
      transactionId: txId!,
    };
  }

  async release(input: ReleaseInput): Promise<ReleaseResult> {
    const { accountId, requestId } = checkReleaseInput(input);
    const now = input.now ?? Date.now();
    const ak = accountKeys(this.prefix, accountId);
    const r = (await this.run(
      'release',
      [ak.acct, ak.res, ak.expiry, ak.fin],
      [requestId, now, now - this.retention.finishedMs],
    )) as Reply;
    if (r[0] === LedgerCode.UnknownReservation) return { ok: false, code: 'unknown_reservation' };
    if (r[0] === LedgerCode.AlreadySettled) return { ok: false, code: 'already_settled' };
    if (r[0] !== 1) throw unexpected('release', r);
    return { ok: true, status: 'released', replay: r[1] === 1, releasedMsat: Number(r[2]) };
  }

  async lease(input: LeaseInput): Promise<LeaseResult> {
    const l = checkLease(input);
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const ak = accountKeys(this.prefix, c.accountId);
    const args: Array<string | number> = [
      c.keyHash,
      l.leaseId,
      l.seq,
      l.want,
      l.min,
      l.wantRequests,
      l.usedRequests,
      l.ttlMs,
      l.limits.requestsPerMinute,
      l.limits.tokensPerHour,
      l.limits.concurrent,
      l.now,
      c.accountId,
      this.retention.tx,
      Math.max(0, Date.now() - this.retention.auditMs),
      l.now - this.retention.finishedMs,
      SWEEP_PER_ADMIT,
      input.close ? '1' : '0',
      l.wantConcurrent,
      l.openCalls,
      l.calls.length,
    ];
    let records = false;
    for (const x of l.calls) {
      if (x.auditJson !== '') records = true;
      args.push(x.costMsat, x.tokens, x.model, x.description, x.estimated ? '1' : '0', x.auditJson, x.atMs);
    }
    const listing = records ? this.auditIndex.confirm(c.accountId) : undefined;
    if (listing !== undefined) await this.call(() => listing);
    const r = (await this.run(
      'lease',
      [ak.acct, ak.keys, ak.res, ak.expiry, ak.fin, ak.tx, ak.auditLog],
      args,
    )) as Reply;
    switch (r[0]) {
      case 1: {
        // A step not acknowledged is resent unchanged (same seq) by the lease manager: replayed, not re-applied.
        await this.acked(ak.acct);
        const meta = String(r[3]);
        const key = meta === '' ? null : toMeta(decodeKey(c.keyHash, c.accountId, meta));
        return decodeLeaseAnswer(String(r[2]), c.accountId, l.leaseId, r[1] === 1, key);
      }
      case LedgerCode.InvalidApiKey:
        return INVALID;
      case LedgerCode.KeyDisabled:
        return DISABLED;
      case LedgerCode.KeyExpired:
        return { ok: false, code: 'key_expired', expiredAtMs: Number(r[1]) };
      case LedgerCode.LeaseUnsupported:
        return { ok: false, code: 'lease_unsupported' };
      case LedgerCode.RateLimited:
        return rateLimited(r);
      case LedgerCode.PaymentRequired:
        return paymentRequired(r);
      case LedgerCode.DuplicateRequest:
        throw new GatewayError('internal_error', { message: 'lease id already names another record' });
      default:
        throw unexpected('lease', r);
    }
  }

  async holdWithdrawal(input: HoldInput): Promise<HoldResult> {
    const { holdId, want, expiresInMs } = checkHoldInput(input);
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const ak = accountKeys(this.prefix, c.accountId);
    const r = (await this.run(
      'hold-withdrawal',
      [ak.acct, ak.keys, ak.res, ak.expiry, ak.fin],
      [c.keyHash, holdId, want, expiresInMs ?? 'never', now, input.kind, SWEEP_PER_ADMIT],
    )) as Reply;
    switch (r[0]) {
      case 1:
        await this.acked(ak.acct);
        return {
          ok: true,
          accountId: c.accountId,
          holdId,
          heldMsat: Number(r[2]),
          availableMsat: Number(r[3]),
          replay: r[1] === 1,
        };
      case LedgerCode.ChildKeyForbidden:
        return { ok: false, code: 'child_key_forbidden' };
      case LedgerCode.DuplicateRequest:
        return { ok: false, code: 'duplicate_request' };
      case LedgerCode.PayoutInProgress:
        return {
          ok: false,
          code: 'payout_in_progress',
          payout: { holdId: String(r[1]), sinceMs: Number(r[2]) },
        };
      case LedgerCode.PaymentRequired:
        return paymentRequired(r);
      case LedgerCode.InvalidApiKey:
        return INVALID;
      default:
        throw unexpected('ledger script', r);
    }
  }

  async commitWithdrawal(ref: CommitRef): Promise<CommitResult> {
    const { accountId, holdId, debit } = checkCommitRef(ref);
    const now = ref.now ?? Date.now();
    const ak = accountKeys(this.prefix, accountId);
    const r = (await this.run(
      'commit-withdrawal',
      [ak.acct, ak.res, ak.expiry, ak.fin, ak.tx],
      [holdId, now, accountId, this.retention.tx, now - this.retention.finishedMs, debit ?? ''],
    )) as Reply;
    if (r[0] === LedgerCode.UnknownReservation) return { ok: false, code: 'unknown_reservation' };
    if (r[0] === LedgerCode.AlreadyAborted) return { ok: false, code: 'already_aborted' };
    if (r[0] === LedgerCode.HoldExpired)
      return { ok: false, code: 'hold_expired', availableMsat: Number(r[1]) };
    if (r[0] !== 1) throw unexpected('commit-withdrawal', r);
    await this.acked(ak.acct);
    const [withdrawn, balance, txId] = String(r[2]).split(',');
    return {
      ok: true,
      status: 'committed',
      replay: r[1] === 1,
      withdrawnMsat: Number(withdrawn),
      balanceMsat: Number(balance),
      transactionId: txId!,
    };
  }

  async abortWithdrawal(ref: HoldRef): Promise<AbortResult> {
    const { accountId, holdId } = checkHoldRef(ref);
    const now = ref.now ?? Date.now();
    const ak = accountKeys(this.prefix, accountId);
    const r = (await this.run(
      'abort-withdrawal',
      [ak.acct, ak.res, ak.expiry, ak.fin],
      [holdId, now, now - this.retention.finishedMs],
    )) as Reply;
    if (r[0] === LedgerCode.UnknownReservation) return { ok: false, code: 'unknown_reservation' };
    if (r[0] === LedgerCode.AlreadyCommitted) return { ok: false, code: 'already_committed' };
    if (r[0] !== 1) throw unexpected('abort-withdrawal', r);
    return { ok: true, status: 'aborted', replay: r[1] === 1, releasedMsat: Number(r[2]) };
  }

  async createChildKeys(input: ChildKeysInput): Promise<ChildKeysResult> {
    const checked = checkChildKeysInput(input);
    if (!checked.ok) return checked;
    const { count, fee } = checked;
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.parent);
    if (!c) return INVALID;
    const ak = accountKeys(this.prefix, c.accountId);
    const apiKeys = Array.from({ length: count }, () => newKeyForAccount(c.accountId));
    const states = apiKeys.map((apiKey) => childKeyState(input, apiKey, c.accountId, c.keyHash, now));
    const r = (await this.run(
      'create-child-keys',
      [ak.acct, ak.keys, ak.res, ak.expiry, ak.fin, ak.tx],
      [
        c.keyHash,
        count,
        fee,
        now,
        c.accountId,
        this.retention.tx,
        SWEEP_PER_ADMIT,
        MAX_KEYS_PER_ACCOUNT,
        ...states.flatMap((k) => [k.hash, encodeMeta(k)]),
      ],
    )) as Reply;
    switch (r[0]) {
      case 1:
        await this.acked(ak.acct);
        await this.indexKeys(
          c.accountId,
          states.map((k) => k.hash),
        );
        return {
          ok: true,
          apiKeys,
          keys: states.map((k) => toMeta(k)),
          feeMsat: fee * count,
          parentBalanceMsat: Number(r[1]),
          transactionId: r[2] === '' ? null : String(r[2]),
        };
      case LedgerCode.ChildKeyForbidden:
        return { ok: false, code: 'child_key_forbidden' };
      case LedgerCode.KeyExpired:
        return { ok: false, code: 'key_expired', expiredAtMs: Number(r[1]) };
      case LedgerCode.TooManyKeys:
        return {
          ok: false,
          code: 'invalid_request',
          message: `at most ${MAX_KEYS_PER_ACCOUNT} keys per account`,
        };
      case LedgerCode.PaymentRequired:
        return paymentRequired(r);
      case LedgerCode.InvalidApiKey:
        return INVALID;
      default:
        throw unexpected('ledger script', r);
    }
  }

  async updateKey(target: KeyTarget, update: KeyUpdate): Promise<KeyChangeResult> {
    const changes: Record<string, unknown> = {};
    if (update.allowedIps !== undefined) changes.ips = normList(update.allowedIps);
    if (update.refundAddress !== undefined) changes.ref = update.refundAddress;
    if (update.name !== undefined) changes.name = update.name;
    if (update.disabled !== undefined) changes.dis = update.disabled ? '1' : null;
    return this.changeKey('update-key', target, [JSON.stringify(changes)]);
  }

  async deleteKey(target: KeyTarget): Promise<KeyChangeResult> {
    return this.changeKey('delete-key', target, []);
  }

  private async changeKey(
    name: 'update-key' | 'delete-key',
    target: KeyTarget,
    extra: string[],
  ): Promise<KeyChangeResult> {
    const c = resolveCredential(target.credential);
    if (!c) return INVALID;
    const ak = accountKeys(this.prefix, c.accountId);
    const r = (await this.run(
      name,
      [ak.acct, ak.keys],
      [c.keyHash, target.childKeyId ?? '', ...extra],
    )) as Reply;
    if (r[0] === 1) return { ok: true, key: toMeta(decodeKey(String(r[1]), c.accountId, String(r[2]))) };
    if (r[0] === LedgerCode.ChildKeyForbidden) return { ok: false, code: 'child_key_forbidden' };
    if (r[0] === LedgerCode.NotFound) return { ok: false, code: 'not_found' };
    if (r[0] === LedgerCode.InvalidApiKey) return INVALID;
    throw unexpected(name, r);
  }
}

/** Loads (or creates, once) the server secret, warns when Redis keeps nothing on disk, returns the ledger. */
export async function createRedisLedger(
  client: Redis | Cluster,
  prefix: string,
  opts: LedgerOptions = {},
  replicated?: (key: string) => Promise<void>,
): Promise<RedisLedger> {
  await waitForRedis(client, opts.connectTimeoutMs ?? 10_000);
  const key = secretKey(prefix);
  let secret: string | null;
  try {
    const fresh = (await client.set(key, randomBytes(32).toString('hex'), 'NX')) === 'OK';
    // A new secret is a new store: no account exists, so the (empty) account index is complete.
    if (fresh) await client.set(accountIndexCompleteKey(prefix), String(Date.now()));
    secret = await client.get(key);
  } catch (err) {
    throw new GatewayError('store_unavailable', { cause: err });
  }
  if (!secret) throw new GatewayError('store_unavailable', { message: 'Ledger secret missing in Redis' });
  await warnIfNotPersistent(client, opts.warn ?? ((m) => console.warn(m)));
  return new RedisLedger(client, prefix, secret, opts, replicated);
}

async function warnIfNotPersistent(client: Redis | Cluster, warn: (msg: string) => void): Promise<void> {
  try {
    const node =
      'nodes' in client && typeof client.nodes === 'function' ? client.nodes('master')[0] : (client as Redis);
    if (!node) return;
    const save = (await node.config('GET', 'save')) as string[];
    const aof = (await node.config('GET', 'appendonly')) as string[];
    if ((save[1] ?? '') === '' && aof[1] === 'no') {
      warn('Redis keeps nothing on disk (save "" and appendonly no): balances are lost if Redis restarts');
    }
  } catch {
    /* CONFIG may be disabled on managed Redis; nothing to check then */
  }
}
