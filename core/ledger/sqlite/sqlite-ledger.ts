import type Database from 'libsql';
import { GatewayError } from '../../errors.js';
import {
  depositAccountCandidates,
  depositApiKey,
  displayKey,
  displayToken,
  keyIdOf,
  newKeyForAccount,
  resolveCredential,
  sha256Hex,
} from '../keys.js';
import { checkLease } from '../lease-rules.js';
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
  countRequest,
  countTokens,
  expiredAt,
  type KeyState,
  keyFree,
  MAX_KEYS_PER_ACCOUNT,
  modelAllowed,
  newKeyState,
  normList,
  rateRefusal,
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
  ReleaseInput,
  ReleaseResult,
  SettleInput,
  SettleResult,
} from '../types.js';
import { sqliteLeaseStep } from './sqlite-lease.js';
import { SqliteReads } from './sqlite-reads.js';
import type { AccountRow } from './sqlite-store.js';
import { NEVER, SqliteStore } from './sqlite-store.js';

const INVALID = { ok: false, code: 'invalid_api_key' } as const;
const DISABLED = { ok: false, code: 'key_disabled' } as const;

/**
 * The embedded `Ledger`: every state change is atomic in a `BEGIN IMMEDIATE` transaction over integer columns
 * (the hot ones, admit to lease step, share one per event-loop turn: `SqliteStore.hotTx`).
 * Same rules as the Redis scripts (core/ledger/rules.ts); the conformance suite proves it.
 */
export class SqliteLedger extends SqliteReads {
  readonly kind = 'sqlite' as const;

  constructor(db: Database.Database, opts: LedgerOptions = {}) {
    super(
      new SqliteStore(
        db,
        {
          tx: opts.txRetention ?? 10_000,
          finishedMs: opts.finishedRetentionMs ?? 3_600_000,
        },
        {
          hotSync: opts.sqliteHotSync ?? 'normal',
          maxUnsyncedMs: opts.sqliteMaxUnsyncedMs ?? 1000,
        },
      ),
    );
  }

  async createKeyFromDeposit(input: DepositKeyInput): Promise<DepositKeyResult> {
    const { tokenHash, amount } = checkCreditInput(input);
    const now = input.now ?? Date.now();
    const s = this.s;
    const candidates = depositAccountCandidates(s.secret, tokenHash);
    return s.tx((): DepositKeyResult => {
      const prior = this.tokenCredit(tokenHash);
      if (prior) {
        if (!candidates.includes(prior.account_id)) return { ok: false, code: 'token_credited_elsewhere' };
        const a = s.account(prior.account_id)!;
        const apiKey = depositApiKey(s.secret, a.id, tokenHash);
        const k = s.key(sha256Hex(apiKey), a.id)!;
        return {
          ok: true,
          apiKey,
          key: toMeta(k),
          balanceMsat: a.balance,
          transactionId: prior.tx_id,
          replay: true,
        };
      }
      for (const id of candidates) {
        if (s.account(id)) continue; // another deposit's account: take the next candidate
        const a = s.insertAccount(id, now, tokenHash);
        const apiKey = depositApiKey(s.secret, id, tokenHash);
        const k = newKeyState({
          hash: sha256Hex(apiKey),
          accountId: id,
          display: displayKey(apiKey),
          createdAt: now,
          name: input.name ?? null,
          refundAddress: input.refundAddress ?? null,
          expiresAt: checkOptional('expiresAtMs', input.expiresAtMs),
        });
        s.insertKey(k);
        const txId = this.applyCredit(a, tokenHash, amount, 'Deposit', now, k.hash);
        return {
          ok: true,
          apiKey,
          key: toMeta(k),
          balanceMsat: a.balance,
          transactionId: txId,
          replay: false,
        };
      }
      throw new GatewayError('internal_error', { message: 'No free account id for this deposit' });
    });
  }

  async credit(input: CreditInput): Promise<CreditResult> {
    const { tokenHash, amount } = checkCreditInput(input);
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const s = this.s;
    return s.tx((): CreditResult => {
      const prior = this.tokenCredit(tokenHash);
      if (prior) {
        if (prior.account_id !== c.accountId) return { ok: false, code: 'token_credited_elsewhere' };
        const a = s.account(c.accountId)!;
        return {
          ok: true,
          accountId: a.id,
          balanceMsat: a.balance,
          transactionId: prior.tx_id,
          replay: true,
        };
      }
      let a = s.account(c.accountId);
      if (!a && c.kind === 'tokenHash') {
        a = s.insertAccount(c.accountId, now, null);
        s.insertKey(
          newKeyState({ hash: c.keyHash, accountId: a.id, display: displayToken(c.keyHash), createdAt: now }),
        );
      }
      if (!a || a.deleted) return INVALID;
      const k = s.key(c.keyHash, a.id);
      if (!k || k.deleted) return INVALID;
      if (k.isChild) return { ok: false, code: 'child_key_forbidden' };
      const desc = input.kind === 'topup' ? 'Top-up' : 'Deposit';
      const txId = this.applyCredit(a, tokenHash, amount, desc, now, k.hash);
      return { ok: true, accountId: a.id, balanceMsat: a.balance, transactionId: txId, replay: false };
    });
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const { requestId, max, min, expiresInMs, limits } = checkAdmitInput(input);
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const s = this.s;
    return s.hotTx((): AdmitResult => {
      const a = s.account(c.accountId);
      if (!a || a.deleted) return INVALID;
      this.sweepAccount(a, now, SWEEP_PER_ADMIT);
      const k = s.key(c.keyHash, a.id);
      if (!k || k.deleted) return INVALID;
      if (k.disabled || a.disabled) return DISABLED;
      const exp = expiredAt(k, now);
      if (exp !== null) return { ok: false, code: 'key_expired', expiredAtMs: exp };
      if (!modelAllowed(k, input.model)) return { ok: false, code: 'model_not_allowed', model: input.model };
      const rl = rateRefusal(k, limits, now);
      if (rl) return { ok: false, code: 'rate_limit_exceeded', rateLimit: rl };
      if (s.reservation(a.id, requestId)) return { ok: false, code: 'duplicate_request' };
      const free = Math.max(0, Math.min(a.balance - a.reserved, keyFree(k, now)));
      const amount = Math.min(max, free);
      if (amount < min)
        return { ok: false, code: 'payment_required', balance: free, required: min, shortfall: min - free };
      a.reserved += amount;
      k.reserved += amount;
      k.open += 1;
      k.lastUsed = now;
      const rateLimit = countRequest(k, limits, now);
      s.insertReservation({
        account_id: a.id,
        request_id: requestId,
        key_hash: k.hash,
        kind: 'call',
        amount,
        status: 'open',
        expires_at: now + expiresInMs,
        client_ip: input.clientIp ?? null,
        note: null,
        result: null,
        finished_at: null,
      });
      s.saveAccount(a);
      s.saveKeyCounters(k);
      return {
        ok: true,
        accountId: a.id,
        requestId,
        reservedMsat: amount,
        availableMsat: free - amount,
        key: toMeta(k),
        rateLimit,
      };
    });
  }

  async countRequest(input: CountRequestInput): Promise<CountRequestResult> {
    const rpm = checkCountRequestInput(input);
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const s = this.s;
    return s.hotTx((): CountRequestResult => {
      const a = s.account(c.accountId);
      if (!a || a.deleted) return INVALID;
      const k = s.key(c.keyHash, a.id);
      if (!k || k.deleted) return INVALID;
      if (k.disabled || a.disabled) return DISABLED;
      const limits = {
        requestsPerMinute: rpm,
        tokensPerHour: Number.MAX_SAFE_INTEGER,
        concurrent: Number.MAX_SAFE_INTEGER,
      };
      const rl = rateRefusal(k, limits, now);
      if (rl) return { ok: false, code: 'rate_limit_exceeded', rateLimit: rl };
      const rateLimit = countRequest(k, limits, now);
      s.saveKeyCounters(k);
      return { ok: true, rateLimit };
    });
  }

  async settle(input: SettleInput): Promise<SettleResult> {
    const { accountId, requestId, cost, tokens } = checkSettleInput(input);
    const record = input.auditRecord;
    checkAuditRecord(record);
    const now = input.now ?? Date.now();
    const s = this.s;
    return s.hotTx((): SettleResult => {
      const r = s.reservation(accountId, requestId);
      if (r?.kind !== 'call') return { ok: false, code: 'unknown_reservation' };
      if (r.status === 'settled')
        return { ...(JSON.parse(r.result!) as SettleResult), replay: true } as SettleResult;
      if (r.status === 'released') return { ok: false, code: 'already_released' };
      const a = s.account(r.account_id)!;
      const k = s.key(r.key_hash, a.id)!;
      // An expired reservation was already returned by the sweep: charge what is available now.
      const held = r.status === 'open' ? r.amount : 0;
      const cap = held + Math.max(0, Math.min(a.balance - a.reserved, keyFree(k, now)));
      const charge = Math.min(cost, cap);
      a.balance -= charge;
      a.reserved -= held;
      a.spent += charge;
      a.requests += 1;
      k.reserved -= held;
      if (r.status === 'open') k.open -= 1;
      k.totalSpent += charge;
      k.totalRequests += 1;
      k.periodSpent += charge;
      k.lastUsed = now;
      countTokens(k, tokens, now);
      const txId = s.addTx(
        a,
        input.transactionType ?? 'usage',
        -charge,
        input.description,
        now,
        k.hash,
        input.model,
        input.estimated,
      );
      if (record !== undefined) s.addAudit(a.id, k.hash, record, charge);
      const result: SettleResult = {
        ok: true,
        status: 'settled',
        replay: false,
        chargedMsat: charge,
        releasedMsat: Math.max(0, held - charge),
        overrunMsat: cost - charge,
        balanceMsat: a.balance,
        transactionId: txId,
      };
      s.finishReservation(r, 'settled', result, now);
      s.saveAccount(a);
      s.saveKeyCounters(k);
      return result;
    });
  }

  async release(input: ReleaseInput): Promise<ReleaseResult> {
    const { accountId, requestId } = checkReleaseInput(input);
    const now = input.now ?? Date.now();
    const s = this.s;
    return s.hotTx((): ReleaseResult => {
      const r = s.reservation(accountId, requestId);
      if (r?.kind !== 'call') return { ok: false, code: 'unknown_reservation' };
      if (r.status === 'settled') return { ok: false, code: 'already_settled' };
      if (r.status === 'released')
        return { ok: true, status: 'released', replay: true, releasedMsat: r.amount };
      if (r.status === 'expired') {
        s.finishReservation(r, 'released', null, now);
        return { ok: true, status: 'released', replay: true, releasedMsat: r.amount };
      }
      const a = s.account(r.account_id)!;
      const k = s.key(r.key_hash, a.id)!;
      a.reserved -= r.amount;
      k.reserved -= r.amount;
      k.open -= 1;
      s.finishReservation(r, 'released', null, now);
      s.saveAccount(a);
      s.saveKeyCounters(k);
      return { ok: true, status: 'released', replay: false, releasedMsat: r.amount };
    });
  }

  async lease(input: LeaseInput): Promise<LeaseResult> {
    const l = checkLease(input);
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    return this.s.hotTx(
      (): LeaseResult =>
        sqliteLeaseStep(this.s, l, c.accountId, c.keyHash, input.close, (a) =>
          this.sweepAccount(a, l.now, SWEEP_PER_ADMIT),
        ),
    );
  }

  async holdWithdrawal(input: HoldInput): Promise<HoldResult> {
    const { holdId, want, expiresInMs } = checkHoldInput(input);
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.credential);
    if (!c) return INVALID;
    const s = this.s;
    return s.tx((): HoldResult => {
      const a = s.account(c.accountId);
      if (!a || a.deleted) return INVALID;
      this.sweepAccount(a, now, SWEEP_PER_ADMIT);
      const k = s.key(c.keyHash, a.id);
      if (!k || k.deleted) return INVALID;
      if (k.isChild) return { ok: false, code: 'child_key_forbidden' };
      const prior = s.reservation(a.id, holdId);
      const free = a.balance - a.reserved;
      if (prior) {
        if (prior.kind !== 'hold' || prior.status !== 'open') return { ok: false, code: 'duplicate_request' };
        return {
          ok: true,
          accountId: a.id,
          holdId,
          heldMsat: prior.amount,
          availableMsat: free,
          replay: true,
        };
      }
      const payout = s.openPayout(a.id);
      if (payout) return { ok: false, code: 'payout_in_progress', payout };
      const amount = want === 'all' ? free : want;
      if (amount <= 0 || amount > free) {
        const required = Math.max(1, amount);
        return { ok: false, code: 'payment_required', balance: free, required, shortfall: required - free };
      }
      a.reserved += amount;
      s.insertReservation({
        account_id: a.id,
        request_id: holdId,
        key_hash: k.hash,
        kind: 'hold',
        amount,
        status: 'open',
        // A payout hold never expires (HoldInput); its start is kept where the commit's result goes later.
        expires_at: expiresInMs === null ? NEVER : now + expiresInMs,
        client_ip: null,
        note: input.kind,
        result: expiresInMs === null ? JSON.stringify({ since: now }) : null,
        finished_at: null,
      });
      s.saveAccount(a);
      return {
        ok: true,
        accountId: a.id,
        holdId,
        heldMsat: amount,
        availableMsat: free - amount,
        replay: false,
      };
    });
  }

  async commitWithdrawal(ref: CommitRef): Promise<CommitResult> {
    const { accountId, holdId, debit } = checkCommitRef(ref);
    const now = ref.now ?? Date.now();
    const s = this.s;
    return s.tx((): CommitResult => {
      const r = s.reservation(accountId, holdId);
      if (r?.kind !== 'hold') return { ok: false, code: 'unknown_reservation' };
      if (r.status === 'committed')
        return { ...(JSON.parse(r.result!) as CommitResult), replay: true } as CommitResult;
      if (r.status === 'aborted') return { ok: false, code: 'already_aborted' };
      const a = s.account(r.account_id)!;
      const held = r.status === 'open' ? r.amount : 0;
      const amount = debit === undefined ? r.amount : Math.min(debit, r.amount);
      if (held === 0 && a.balance - a.reserved < amount) {
        return { ok: false, code: 'hold_expired', availableMsat: Math.max(0, a.balance - a.reserved) };
      }
      a.reserved -= held;
      a.balance -= amount;
      a.withdrawn += amount;
      const type = r.note === 'refund' ? 'refund' : 'withdrawal';
      const txId = s.addTx(a, type, -amount, type === 'refund' ? 'Refund' : 'Withdrawal', now, r.key_hash);
      const result: CommitResult = {
        ok: true,
        status: 'committed',
        replay: false,
        withdrawnMsat: amount,
        balanceMsat: a.balance,
        transactionId: txId,
      };
      s.finishReservation(r, 'committed', result, now);
      s.saveAccount(a);
      return result;
    });
  }

  async abortWithdrawal(ref: HoldRef): Promise<AbortResult> {
    const { accountId, holdId } = checkHoldRef(ref);
    const now = ref.now ?? Date.now();
    const s = this.s;
    return s.tx((): AbortResult => {
      const r = s.reservation(accountId, holdId);
      if (r?.kind !== 'hold') return { ok: false, code: 'unknown_reservation' };
      if (r.status === 'committed') return { ok: false, code: 'already_committed' };
      if (r.status !== 'open') {
        if (r.status === 'expired') s.finishReservation(r, 'aborted', null, now);
        return { ok: true, status: 'aborted', replay: true, releasedMsat: r.amount };
      }
      const a = s.account(r.account_id)!;
      a.reserved -= r.amount;
      s.finishReservation(r, 'aborted', null, now);
      s.saveAccount(a);
      return { ok: true, status: 'aborted', replay: false, releasedMsat: r.amount };
    });
  }

  async createChildKeys(input: ChildKeysInput): Promise<ChildKeysResult> {
    const checked = checkChildKeysInput(input);
    if (!checked.ok) return checked;
    const { count, fee } = checked;
    const now = input.now ?? Date.now();
    const c = resolveCredential(input.parent);
    if (!c) return INVALID;
    const apiKeys = Array.from({ length: count }, () => newKeyForAccount(c.accountId));
    const s = this.s;
    return s.tx((): ChildKeysResult => {
      const a = s.account(c.accountId);
      if (!a || a.deleted) return INVALID;
      this.sweepAccount(a, now, SWEEP_PER_ADMIT);
      const parent = s.key(c.keyHash, a.id);
      if (!parent || parent.deleted) return INVALID;
      if (parent.isChild) return { ok: false, code: 'child_key_forbidden' };
      const exp = expiredAt(parent, now);
      if (exp !== null) return { ok: false, code: 'key_expired', expiredAtMs: exp };
      if (s.countKeys(a.id) + count > MAX_KEYS_PER_ACCOUNT) {
        return {
          ok: false,
          code: 'invalid_request',
          message: `at most ${MAX_KEYS_PER_ACCOUNT} keys per account`,
        };
      }
      const total = fee * count;
      const free = a.balance - a.reserved;
      if (total > free)
        return {
          ok: false,
          code: 'payment_required',
          balance: free,
          required: total,
          shortfall: total - free,
        };
      const keys = apiKeys.map((apiKey) => {
        const k = childKeyState(input, apiKey, a.id, parent.hash, now);
        s.insertKey(k);
        return toMeta(k);
      });
      a.balance -= total;
      a.fees += total;
      const txId =
        total > 0 ? s.addTx(a, 'child_key_fee', -total, `${count} child key(s)`, now, parent.hash) : null;
      s.saveAccount(a);
      return { ok: true, apiKeys, keys, feeMsat: total, parentBalanceMsat: a.balance, transactionId: txId };
    });
  }

  async updateKey(target: KeyTarget, update: KeyUpdate): Promise<KeyChangeResult> {
    return this.changeKey(target, (k, a) => {
      if (update.allowedIps !== undefined) k.allowedIps = normList(update.allowedIps);
      if (update.refundAddress !== undefined) k.refundAddress = update.refundAddress;
      if (update.name !== undefined) k.name = update.name;
      if (update.disabled !== undefined) {
        k.disabled = update.disabled;
        // A disabled parent refuses every child of its account (admit, countRequest and lease read it).
        if (!k.isChild) a.disabled = update.disabled ? 1 : 0;
      }
    });
  }

  async deleteKey(target: KeyTarget): Promise<KeyChangeResult> {
    return this.changeKey(target, (k, a) => {
      k.deleted = true;
      // A deleted parent takes the account (and so every child) with it.
      if (!k.isChild) a.deleted = 1;
    });
  }

  private changeKey(
    target: KeyTarget,
    apply: (k: KeyState, a: AccountRow) => void,
  ): Promise<KeyChangeResult> {
    const c = resolveCredential(target.credential);
    if (!c) return Promise.resolve(INVALID);
    const s = this.s;
    return Promise.resolve(
      s.tx((): KeyChangeResult => {
        const a = s.account(c.accountId);
        if (!a || a.deleted) return INVALID;
        const k = s.key(c.keyHash, a.id);
        if (!k || k.deleted) return INVALID;
        if (k.isChild) return { ok: false, code: 'child_key_forbidden' };
        let t = k;
        if (target.childKeyId !== undefined) {
          const child = s
            .keysOf(a.id)
            .find((x) => keyIdOf(x.hash) === target.childKeyId && x.parentHash === k.hash);
          if (!child || child.deleted) return { ok: false, code: 'not_found' };
          t = child;
        }
        apply(t, a);
        s.saveKey(t);
        s.saveAccount(a);
        return { ok: true, key: toMeta(t) };
      }),
    );
  }

  private tokenCredit(tokenHash: string): { account_id: string; tx_id: string } | undefined {
    return this.s
      .q('SELECT account_id, tx_id FROM ledger_token_credits WHERE token_hash = ?')
      .get(tokenHash) as { account_id: string; tx_id: string } | undefined;
  }

  private applyCredit(
    a: AccountRow,
    tokenHash: string,
    amount: number,
    desc: string,
    now: number,
    keyHash: string,
  ): string {
    const s = this.s;
    a.balance += amount;
    a.deposited += amount;
    const txId = s.addTx(a, 'deposit', amount, desc, now, keyHash);
    s.q(
      'INSERT INTO ledger_token_credits (token_hash, account_id, tx_id, amount, created_at) VALUES (?,?,?,?,?)',
    ).run(tokenHash, a.id, txId, amount, now);
    s.saveAccount(a);
    return txId;
  }
}
