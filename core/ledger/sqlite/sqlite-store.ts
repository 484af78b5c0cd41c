import { randomBytes } from 'node:crypto';
import type Database from 'libsql';
import { isGatewayError } from '../../errors.js';
import { type CommitGate, commitGateOf } from '../../store/sqlite-checkpoint.js';
import { migrate } from '../../store/sqlite-migrations.js';
import { statementCache } from '../../store/statement-cache.js';
import { storeUnavailable } from '../errors.js';
import { keyIdOf } from '../keys.js';
import type { KeyState } from '../rules.js';
import { auditJsonWithCost } from '../rules.js';
import type { BalanceLimitReset, CallAuditRecord, OpenPayout, TransactionType } from '../types.js';

/**
 * Row access for the SQLite ledger: typed reads and writes of accounts, keys, reservations, transactions
 * and audit records, and the one transaction helper every state change goes through (`BEGIN IMMEDIATE`, so
 * two processes sharing the file serialise on the write lock instead of failing on upgrade).
 */

/** The expiry of a payout hold: never reached by `expires_at <= now` (same value as the Redis scripts' NEVER). */
export const NEVER = Number.MAX_SAFE_INTEGER;

export interface AccountRow {
  id: string;
  balance: number;
  reserved: number;
  deposited: number;
  spent: number;
  withdrawn: number;
  fees: number;
  requests: number;
  created_at: number;
  origin: string | null;
  deleted: number;
  tx_seq: number;
  /** 1 when the account's parent key is disabled: every key of the account is refused (key_disabled). */
  disabled: number;
}

export interface ResRow {
  account_id: string;
  request_id: string;
  key_hash: string;
  kind: 'call' | 'hold';
  amount: number;
  status: 'open' | 'settled' | 'released' | 'expired' | 'committed' | 'aborted';
  expires_at: number;
  client_ip: string | null;
  /** Holds: the withdrawal kind ('withdrawal' | 'refund'). */
  note: string | null;
  result: string | null;
  finished_at: number | null;
}

interface KeyRow {
  hash: string;
  account_id: string;
  is_child: number;
  parent_hash: string | null;
  display: string;
  name: string | null;
  allowed_ips: string | null;
  allowed_models: string | null;
  refund_address: string | null;
  expires_at: number | null;
  balance_limit: number | null;
  balance_limit_reset: string | null;
  validity_date: number | null;
  created_at: number;
  deleted: number;
  reserved: number;
  open: number;
  period_id: number;
  period_spent: number;
  total_spent: number;
  total_requests: number;
  last_used: number | null;
  rpm_window: number;
  rpm_count: number;
  tph_window: number;
  tph_count: number;
  disabled: number;
}

const KEY_COLS =
  'hash, account_id, key_id, is_child, parent_hash, display, name, allowed_ips, allowed_models, refund_address, expires_at, balance_limit, balance_limit_reset, validity_date, created_at, deleted, reserved, open, period_id, period_spent, total_spent, total_requests, last_used, rpm_window, rpm_count, tph_window, tph_count, disabled';

/** A `KEY_COLS` row read in raw mode (an array in column order: no per-row key names to build). */
function rawToKey(r: unknown[]): KeyState {
  return {
    hash: r[0] as string,
    accountId: r[1] as string,
    // r[2] is key_id (derived from the hash)
    isChild: r[3] === 1,
    parentHash: r[4] as string | null,
    display: r[5] as string,
    name: r[6] as string | null,
    allowedIps: r[7] === null ? null : (JSON.parse(r[7] as string) as string[]),
    allowedModels: r[8] === null ? null : (JSON.parse(r[8] as string) as string[]),
    refundAddress: r[9] as string | null,
    expiresAt: r[10] as number | null,
    balanceLimit: r[11] as number | null,
    balanceLimitReset: r[12] as BalanceLimitReset | null,
    validityDate: r[13] as number | null,
    createdAt: r[14] as number,
    deleted: r[15] === 1,
    reserved: r[16] as number,
    open: r[17] as number,
    periodId: r[18] as number,
    periodSpent: r[19] as number,
    totalSpent: r[20] as number,
    totalRequests: r[21] as number,
    lastUsed: r[22] as number | null,
    rpmWindow: r[23] as number,
    rpmCount: r[24] as number,
    tphWindow: r[25] as number,
    tphCount: r[26] as number,
    disabled: r[27] === 1,
  };
}

const ACCOUNT_COLS =
  'id, balance, reserved, deposited, spent, withdrawn, fees, requests, created_at, origin, deleted, tx_seq, disabled';

function rawToAccount(r: unknown[]): AccountRow {
  return {
    id: r[0] as string,
    balance: r[1] as number,
    reserved: r[2] as number,
    deposited: r[3] as number,
    spent: r[4] as number,
    withdrawn: r[5] as number,
    fees: r[6] as number,
    requests: r[7] as number,
    created_at: r[8] as number,
    origin: r[9] as string | null,
    deleted: r[10] as number,
    tx_seq: r[11] as number,
    disabled: r[12] as number,
  };
}

const RES_COLS =
  'account_id, request_id, key_hash, kind, amount, status, expires_at, client_ip, note, result, finished_at';

function rawToRes(r: unknown[]): ResRow {
  return {
    account_id: r[0] as string,
    request_id: r[1] as string,
    key_hash: r[2] as string,
    kind: r[3] as ResRow['kind'],
    amount: r[4] as number,
    status: r[5] as ResRow['status'],
    expires_at: r[6] as number,
    client_ip: r[7] as string | null,
    note: r[8] as string | null,
    result: r[9] as string | null,
    finished_at: r[10] as number | null,
  };
}

const SAVE_KEY_SQL = `UPDATE ledger_keys SET ${KEY_COLS.split(',')
  .slice(1)
  .map((c) => `${c.trim()}=?`)
  .join(', ')} WHERE hash=?`;

function rowToKey(r: KeyRow): KeyState {
  return {
    hash: r.hash,
    accountId: r.account_id,
    isChild: r.is_child === 1,
    parentHash: r.parent_hash,
    display: r.display,
    name: r.name,
    allowedIps: r.allowed_ips === null ? null : (JSON.parse(r.allowed_ips) as string[]),
    allowedModels: r.allowed_models === null ? null : (JSON.parse(r.allowed_models) as string[]),
    refundAddress: r.refund_address,
    expiresAt: r.expires_at,
    balanceLimit: r.balance_limit,
    balanceLimitReset: r.balance_limit_reset as BalanceLimitReset | null,
    validityDate: r.validity_date,
    createdAt: r.created_at,
    deleted: r.deleted === 1,
    reserved: r.reserved,
    open: r.open,
    periodId: r.period_id,
    periodSpent: r.period_spent,
    totalSpent: r.total_spent,
    totalRequests: r.total_requests,
    lastUsed: r.last_used,
    rpmWindow: r.rpm_window,
    rpmCount: r.rpm_count,
    tphWindow: r.tph_window,
    tphCount: r.tph_count,
    disabled: r.disabled === 1,
  };
}

function keyParams(k: KeyState): unknown[] {
  return [
    k.hash,
    k.accountId,
    keyIdOf(k.hash),
    k.isChild ? 1 : 0,
    k.parentHash,
    k.display,
    k.name,
    k.allowedIps === null ? null : JSON.stringify(k.allowedIps),
    k.allowedModels === null ? null : JSON.stringify(k.allowedModels),
    k.refundAddress,
    k.expiresAt,
    k.balanceLimit,
    k.balanceLimitReset,
    k.validityDate,
    k.createdAt,
    k.deleted ? 1 : 0,
    k.reserved,
    k.open,
    k.periodId,
    k.periodSpent,
    k.totalSpent,
    k.totalRequests,
    k.lastUsed,
    k.rpmWindow,
    k.rpmCount,
    k.tphWindow,
    k.tphCount,
    k.disabled ? 1 : 0,
  ];
}

export interface Retention {
  tx: number;
  finishedMs: number;
}

/**
 * How a transaction must reach the disk. 'money' (credits, withdrawals, fees, key changes — the default):
 * committed with the connection's own `synchronous` level (FULL from openStore: the WAL is fsynced before
 * COMMIT returns). 'hot' (admit, settle, release, lease sweeps): may commit with `synchronous = NORMAL`
 * (WAL written, not fsynced) — see docs/ledger.md, "Durability". 'read': writes nothing, so it neither
 * relaxes nor counts as a synced commit.
 */
export type Durability = 'money' | 'hot' | 'read';

export interface DurabilityPolicy {
  /** 'normal' relaxes hot transactions as described above; 'full' syncs every commit. */
  hotSync: 'normal' | 'full';
  /** A hot commit still syncs when the last synced commit is older than this (bounds what a power loss takes). */
  maxUnsyncedMs: number;
  /** The wall clock those ages are read from (tests; default `Date.now`). */
  now?: () => number;
}

const SYNC_LEVELS = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

/**
 * The most hot changes one group commit takes (`SqliteStore.hotTx`); the rest wait for the next turn. At about
 * 30–60 µs of statements each, a full batch holds the event loop for 2–4 ms.
 */
export const GROUP_COMMIT_MAX = 64;

interface PendingChange {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class SqliteStore {
  readonly secret: string;
  /** Cached prepared statement. */
  readonly q: (sql: string) => Database.Statement;
  /**
   * Cached prepared statement in raw mode (rows as arrays in column order). The hot reads use it: libsql
   * builds an object per row with every column name (plus a metadata object), which cost more than the
   * query itself for the 27-column key row.
   */
  readonly qr: (sql: string) => Database.Statement;
  /** The connection's own synchronous level (restored after a relaxed commit). */
  private readonly baseSync: number;
  private lastSyncedAt = 0;
  /** Hot commits that ran with the connection's own sync level (tests, diagnostics). */
  syncedHotCommits = 0;
  /** Finished reservations since start (paces the forgetting of old ids). */
  private finishes = 0;
  private readonly restoreSync: string;
  private readonly now: () => number;

  constructor(
    readonly db: Database.Database,
    readonly retention: Retention,
    private readonly durability: DurabilityPolicy = { hotSync: 'normal', maxUnsyncedMs: 1000 },
  ) {
    // (libsql's pragma({ simple: true }) returns an object, not the value: read the row instead.)
    this.baseSync = (db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous;
    this.restoreSync = `PRAGMA synchronous = ${SYNC_LEVELS[this.baseSync]}`;
    this.now = durability.now ?? Date.now;
    this.q = statementCache(db);
    this.qr = statementCache(db, true);
    this.gate = commitGateOf(db);
    migrate(db);
    this.secret = this.tx(() => {
      this.q('INSERT OR IGNORE INTO ledger_meta (k, v) VALUES (?, ?)').run(
        'server_secret',
        randomBytes(32).toString('hex'),
      );
      return (this.q('SELECT v FROM ledger_meta WHERE k = ?').get('server_secret') as { v: string }).v;
    });
  }

  /**
   * One atomic state change. Store failures become `store_unavailable`; nothing is half-applied.
   * `durability` 'hot' may commit without an fsync (see `Durability`); a synced commit also makes every
   * earlier unsynced one durable (the WAL is one sequential file), so money-moving commits never sit on
   * top of lost charges.
   */
  tx<T>(fn: () => T, durability: Durability = 'money'): T {
    const relax =
      durability === 'hot' &&
      this.durability.hotSync === 'normal' &&
      this.baseSync > 1 &&
      this.now() - this.syncedAt() < this.durability.maxUnsyncedMs;
    if (!relax) {
      const out = this.run(fn);
      if (durability !== 'read') {
        this.lastSyncedAt = this.now();
        if (durability === 'hot') this.syncedHotCommits++;
      }
      return out;
    }
    // Outside the transaction: SQLite refuses to change the safety level inside one.
    // exec, not a prepared run: no result object per call (the statement is trivial to parse).
    this.db.exec('PRAGMA synchronous = NORMAL');
    try {
      return this.run(fn);
    } finally {
      this.db.exec(this.restoreSync);
    }
  }

  /**
   * The last time every commit before it was on disk: this connection's last synced commit, or a background
   * checkpoint that copied the whole WAL (core/store/sqlite-checkpoint.ts; SQLite syncs the database after it).
   */
  private syncedAt(): number {
    return Math.max(this.lastSyncedAt, this.gate?.durableBefore ?? 0);
  }

  /**
   * A hot state change (admit, settle, release, a request count, a lease step), committed together with the
   * others asked for in the same turn of the event loop (group commit): one `BEGIN IMMEDIATE` … `COMMIT` for up
   * to `GROUP_COMMIT_MAX` of them, run on the next `setImmediate`, after the poll phase has read every request
   * and upstream answer that arrived. A commit's cost is mostly its WAL page writes, shared by the batch.
   *
   * Each change runs in the order asked and sees the ones before it; none is answered before the batch
   * committed. When any change throws, the batch is rolled back and each of its changes runs again in a
   * transaction of its own, so one change's failure never takes another's with it (a change is a function of
   * the rows it reads and its own input; its failure is answered as before: `store_unavailable` or its own
   * error). docs/ledger.md, "Group commit".
   */
  hotTx<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (this.pending.length === 1) setImmediate(this.flushPending);
    });
  }

  /** Runs the changes asked for so far now (shutdown: answered before the connection closes). */
  flush(): void {
    while (this.pending.length > 0) this.commitBatch();
  }

  private readonly pending: PendingChange[] = [];

  /** The connection's commit gate when its WAL checkpoints run in the background (core/store/sqlite-checkpoint.ts). */
  private readonly gate: CommitGate | undefined;
  private deferred = false;

  private readonly flushPending = (): void => {
    if (this.pending.length === 0) return;
    // The checkpoint's second pass is copying the WAL's last frames: commit after it (≈ 1–3 ms).
    if (this.gate?.held) {
      if (!this.deferred) {
        this.deferred = true;
        this.gate.whenOpen(this.resumeAfterGate);
      }
      return;
    }
    this.commitBatch();
    // More than one batch's worth: the rest on the next turn, after the I/O that arrived meanwhile.
    if (this.pending.length > 0) setImmediate(this.flushPending);
  };

  private readonly resumeAfterGate = (): void => {
    this.deferred = false;
    setImmediate(this.flushPending);
  };

  private commitBatch(): void {
    const ops = this.pending.splice(0, GROUP_COMMIT_MAX);
    if (ops.length > 1) {
      let out: unknown[] | undefined;
      try {
        out = this.tx(() => ops.map((op) => op.fn()), 'hot');
      } catch {
        /* rolled back whole: each change runs again by itself below */
      }
      if (out !== undefined) {
        for (let i = 0; i < ops.length; i++) ops[i]!.resolve(out[i]);
        return;
      }
    }
    for (const op of ops) {
      try {
        op.resolve(this.tx(op.fn, 'hot'));
      } catch (err) {
        op.reject(err);
      }
    }
  }

  private run<T>(fn: () => T): T {
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      throw storeUnavailable(err);
    }
    try {
      const out = fn();
      this.db.exec('COMMIT');
      return out;
    } catch (err) {
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      } catch {
        /* the original error matters more */
      }
      if (isGatewayError(err)) throw err;
      throw storeUnavailable(err);
    }
  }

  account(id: string): AccountRow | undefined {
    const r = this.qr(`SELECT ${ACCOUNT_COLS} FROM ledger_accounts WHERE id = ?`).get(id) as
      | unknown[]
      | undefined;
    return r === undefined ? undefined : rawToAccount(r);
  }

  insertAccount(id: string, now: number, origin: string | null): AccountRow {
    this.q('INSERT INTO ledger_accounts (id, created_at, origin) VALUES (?, ?, ?)').run(id, now, origin);
    return this.account(id)!;
  }

  saveAccount(a: AccountRow): void {
    this.q(
      'UPDATE ledger_accounts SET balance=?, reserved=?, deposited=?, spent=?, withdrawn=?, fees=?, requests=?, deleted=?, tx_seq=?, disabled=? WHERE id=?',
    ).run(
      a.balance,
      a.reserved,
      a.deposited,
      a.spent,
      a.withdrawn,
      a.fees,
      a.requests,
      a.deleted,
      a.tx_seq,
      a.disabled,
      a.id,
    );
  }

  key(hash: string, accountId: string): KeyState | undefined {
    const r = this.qr(`SELECT ${KEY_COLS} FROM ledger_keys WHERE hash = ?`).get(hash) as
      | unknown[]
      | undefined;
    if (!r || r[1] !== accountId) return undefined;
    return rawToKey(r);
  }

  keysOf(accountId: string): KeyState[] {
    return (
      this.q(`SELECT ${KEY_COLS} FROM ledger_keys WHERE account_id = ? ORDER BY created_at, hash`).all(
        accountId,
      ) as KeyRow[]
    ).map(rowToKey);
  }

  countKeys(accountId: string): number {
    return (
      this.q('SELECT COUNT(*) AS n FROM ledger_keys WHERE account_id = ?').get(accountId) as { n: number }
    ).n;
  }

  insertKey(k: KeyState): void {
    this.q(
      `INSERT INTO ledger_keys (${KEY_COLS}) VALUES (${KEY_COLS.split(',')
        .map(() => '?')
        .join(',')})`,
    ).run(...keyParams(k));
  }

  saveKey(k: KeyState): void {
    const p = keyParams(k);
    this.q(SAVE_KEY_SQL).run(...p.slice(1), p[0]);
  }

  /**
   * Writes only the counters a call changes (admit, settle, release, lease expiry: reservations, spend,
   * request/token windows, period, last use) — the fields core/ledger/rules.ts mutates on those paths.
   * Key settings (limits, lists, names, expiry) are changed through `saveKey`.
   */
  saveKeyCounters(k: KeyState): void {
    this.q(
      'UPDATE ledger_keys SET reserved=?, open=?, period_id=?, period_spent=?, total_spent=?, total_requests=?, last_used=?, rpm_window=?, rpm_count=?, tph_window=?, tph_count=? WHERE hash=?',
    ).run(
      k.reserved,
      k.open,
      k.periodId,
      k.periodSpent,
      k.totalSpent,
      k.totalRequests,
      k.lastUsed,
      k.rpmWindow,
      k.rpmCount,
      k.tphWindow,
      k.tphCount,
      k.hash,
    );
  }

  reservation(accountId: string, requestId: string): ResRow | undefined {
    const r = this.qr(
      `SELECT ${RES_COLS} FROM ledger_reservations WHERE account_id = ? AND request_id = ?`,
    ).get(accountId, requestId) as unknown[] | undefined;
    return r === undefined ? undefined : rawToRes(r);
  }

  insertReservation(r: ResRow): void {
    this.q(
      'INSERT INTO ledger_reservations (account_id, request_id, key_hash, kind, amount, status, expires_at, client_ip, note, result, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
    ).run(
      r.account_id,
      r.request_id,
      r.key_hash,
      r.kind,
      r.amount,
      r.status,
      r.expires_at,
      r.client_ip,
      r.note,
      r.result,
      r.finished_at,
    );
  }

  /** A lease step's write (sqlite-lease.ts): amount, status, expiry, lease note and the step's answer. */
  updateLease(
    accountId: string,
    leaseId: string,
    amount: number,
    status: ResRow['status'],
    expiresAt: number,
    note: string,
    result: string,
    finishedAt: number | null,
  ): void {
    this.q(
      'UPDATE ledger_reservations SET amount=?, status=?, expires_at=?, note=?, result=?, finished_at=? WHERE account_id=? AND request_id=?',
    ).run(amount, status, expiresAt, note, result, finishedAt, accountId, leaseId);
  }

  finishReservation(r: ResRow, status: ResRow['status'], result: unknown, now: number): void {
    this.q(
      'UPDATE ledger_reservations SET status=?, result=?, finished_at=? WHERE account_id=? AND request_id=?',
    ).run(status, result === null ? null : JSON.stringify(result), now, r.account_id, r.request_id);
    // Bounded forgetting of old finished ids (their settle/release replays are answered for finishedMs):
    // every 8th finish forgets up to 40 (the same rate as 5 per finish, one statement instead of eight).
    // Ids kept a little longer only keep answering replays; nothing about money depends on forgetting.
    if ((++this.finishes & 7) === 0) {
      this.q(
        "DELETE FROM ledger_reservations WHERE rowid IN (SELECT rowid FROM ledger_reservations WHERE status != 'open' AND finished_at < ? LIMIT 40)",
      ).run(now - this.retention.finishedMs);
    }
  }

  /**
   * The account's open payout hold (a hold whose expiry is NEVER: HoldInput `expiresInMs: null`); its `result`
   * holds `{"since": ms}` until the commit writes the commit's result there.
   */
  openPayout(accountId: string): OpenPayout | undefined {
    const r = this.q(
      "SELECT request_id, result FROM ledger_reservations WHERE account_id = ? AND status = 'open' AND expires_at = ? AND kind = 'hold' LIMIT 1",
    ).get(accountId, NEVER) as { request_id: string; result: string | null } | undefined;
    if (!r) return undefined;
    const since = r.result === null ? 0 : Number((JSON.parse(r.result) as { since?: number }).since ?? 0);
    return { holdId: r.request_id, sinceMs: since };
  }

  expiredOpen(accountId: string, now: number, limit: number): ResRow[] {
    return this.q(
      "SELECT * FROM ledger_reservations WHERE account_id = ? AND status = 'open' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
    ).all(accountId, now, limit) as ResRow[];
  }

  addTx(
    a: AccountRow,
    type: TransactionType,
    amount: number,
    description: string,
    now: number,
    keyHash: string | null,
    model: string | null = null,
    estimated = false,
  ): string {
    a.tx_seq += 1;
    const id = `${a.id}-${a.tx_seq}`;
    this.q(
      'INSERT INTO ledger_transactions (account_id, seq, id, type, amount, balance_after, description, ts, key_id, model, estimated) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
    ).run(
      a.id,
      a.tx_seq,
      id,
      type,
      amount,
      a.balance,
      description,
      now,
      keyHash === null ? null : keyIdOf(keyHash),
      model,
      estimated ? 1 : 0,
    );
    if (a.tx_seq > this.retention.tx) {
      this.q('DELETE FROM ledger_transactions WHERE account_id = ? AND seq <= ?').run(
        a.id,
        a.tx_seq - this.retention.tx,
      );
    }
    return id;
  }

  /**
   * A settled call's audit record (the audit log's table, core/audit/audit-log.ts), in the transaction that
   * charges it; the audit log prunes it by age.
   */
  addAudit(accountId: string, keyHash: string, record: CallAuditRecord, chargedMsat: number): void {
    this.q('INSERT INTO audit_records (ts, account, key_id, status, record) VALUES (?, ?, ?, ?, ?)').run(
      record.atMs,
      accountId,
      keyIdOf(keyHash),
      record.status,
      auditJsonWithCost(record.json, chargedMsat),
    );
  }
}
