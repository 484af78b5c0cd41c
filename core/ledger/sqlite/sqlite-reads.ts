import { resolveCredential } from '../keys.js';
import { ownerOf } from '../owner.js';
import { conservationReport, pageOf } from '../report.js';
import { keyFree, toMeta, toUsage } from '../rules.js';
import type {
  ConservationReport,
  KeyInfo,
  KeyLookup,
  KeyRef,
  LeaseRecall,
  OpenPayout,
  OtherLease,
  Page,
  RecallKind,
  Transaction,
  TransactionPage,
  TransactionType,
} from '../types.js';
import { RECALL_KEEP_MS } from '../types.js';
import { leaseSlots } from './sqlite-lease.js';
import type { AccountRow, ResRow, SqliteStore } from './sqlite-store.js';

interface TxRow {
  id: string;
  type: string;
  amount: number;
  balance_after: number;
  description: string;
  ts: number;
  key_id: string | null;
  model: string | null;
  estimated: number;
}

/**
 * Reads, the expiry sweep and the conservation check of the SQLite ledger (the state changes live in
 * sqlite-ledger.ts). Reads run in a transaction too, so every answer is one consistent snapshot.
 */
export class SqliteReads {
  constructor(protected readonly s: SqliteStore) {}

  /** Releases up to `limit` expired reservations of one account (calls → 'expired', holds → 'expired'). */
  protected sweepAccount(a: AccountRow, now: number, limit: number): number {
    const s = this.s;
    const rows = s.expiredOpen(a.id, now, limit);
    for (const r of rows) this.expire(a, r, now);
    if (rows.length > 0) s.saveAccount(a);
    return rows.length;
  }

  private expire(a: AccountRow, r: ResRow, now: number): void {
    const s = this.s;
    a.reserved -= r.amount;
    if (r.kind === 'call') {
      const k = s.key(r.key_hash, a.id);
      if (k) {
        k.reserved -= r.amount;
        k.open -= leaseSlots(r.note); // a plain call holds 1, a credit lease its slots
        s.saveKeyCounters(k);
      }
    }
    s.finishReservation(r, 'expired', null, now);
  }

  async sweepExpired(now = Date.now(), max = 1000): Promise<number> {
    const s = this.s;
    return s.tx(() => {
      const ids = s
        .q(
          "SELECT DISTINCT account_id FROM ledger_reservations WHERE status = 'open' AND expires_at <= ? ORDER BY account_id LIMIT ?",
        )
        .all(now, max) as Array<{ account_id: string }>;
      let n = 0;
      for (const { account_id } of ids) {
        if (n >= max) break;
        const a = s.account(account_id);
        if (a) n += this.sweepAccount(a, now, max - n);
      }
      return n;
    }, 'hot');
  }

  async heartbeat(processId: string, now = Date.now()): Promise<void> {
    this.s.tx(() => {
      this.s
        .q(
          'INSERT INTO ledger_processes (id, seen_at) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET seen_at = excluded.seen_at',
        )
        .run(processId, now);
    }, 'hot');
  }

  async releaseOrphans(
    deadAfterMs: number,
    now = Date.now(),
  ): Promise<{ processes: number; released: number }> {
    const s = this.s;
    return s.tx(() => {
      const dead = (
        s.q('SELECT id FROM ledger_processes WHERE seen_at < ?').all(now - deadAfterMs) as Array<{
          id: string;
        }>
      ).map((r) => r.id);
      let released = 0;
      for (const pid of dead) {
        const pattern = `%~${pid}~%`;
        const accounts = s
          .q(
            "SELECT DISTINCT account_id FROM ledger_reservations WHERE status = 'open' AND request_id LIKE ?",
          )
          .all(pattern) as Array<{ account_id: string }>;
        s.q("UPDATE ledger_reservations SET expires_at = 0 WHERE status = 'open' AND request_id LIKE ?").run(
          pattern,
        );
        for (const { account_id } of accounts) {
          const a = s.account(account_id);
          if (a) released += this.sweepAccount(a, now, 1_000_000);
        }
        s.q('DELETE FROM ledger_processes WHERE id = ?').run(pid);
      }
      return { processes: dead.length, released };
    }, 'hot');
  }

  async otherLeases(accountId: string, processId: string, now = Date.now()): Promise<OtherLease[]> {
    const rows = this.s
      .q(
        "SELECT request_id, expires_at FROM ledger_reservations WHERE account_id = ? AND status = 'open' AND expires_at > ? AND request_id LIKE 'l~%'",
      )
      .all(accountId, now) as Array<{ request_id: string; expires_at: number }>;
    return rows
      .filter((r) => ownerOf(r.request_id) !== processId)
      .map((r) => ({ id: r.request_id, expiresAtMs: r.expires_at }));
  }

  async recallLeases(accountId: string, kind: RecallKind, now = Date.now()): Promise<void> {
    this.s.tx(() => {
      this.s
        .q(
          'INSERT INTO ledger_recalls (account_id, kind, at_ms) VALUES (?, ?, ?) ON CONFLICT(account_id, kind) DO UPDATE SET at_ms = max(at_ms, excluded.at_ms)',
        )
        .run(accountId, kind, now);
      this.s.q('DELETE FROM ledger_recalls WHERE at_ms < ?').run(now - RECALL_KEEP_MS);
    }, 'hot');
  }

  async recalledSince(sinceMs: number): Promise<LeaseRecall[]> {
    const rows = this.s
      .q('SELECT account_id, kind, at_ms FROM ledger_recalls WHERE at_ms >= ?')
      .all(sinceMs) as Array<{ account_id: string; kind: RecallKind; at_ms: number }>;
    return rows.map((r) => ({ accountId: r.account_id, kind: r.kind, atMs: r.at_ms }));
  }

  async getKeyInfo(credential: KeyLookup, now = Date.now()): Promise<KeyInfo | null> {
    const payoutOf = (p: OpenPayout | undefined) => (p ? { payout: p } : {});
    const c = resolveCredential(credential);
    if (!c) return null;
    const s = this.s;
    return s.tx((): KeyInfo | null => {
      const a = s.account(c.accountId);
      if (!a || a.deleted) return null;
      const k = s.key(c.keyHash, a.id);
      if (!k || k.deleted) return null;
      const children = k.isChild
        ? []
        : s
            .keysOf(a.id)
            .filter((x) => x.parentHash === k.hash && !x.deleted)
            .map((x) => ({ key: toMeta(x), usage: toUsage(x, now) }));
      return {
        key: toMeta(k),
        usage: toUsage(k, now),
        account: {
          accountId: a.id,
          balanceMsat: a.balance,
          reservedMsat: a.reserved,
          depositedMsat: a.deposited,
          spentMsat: a.spent,
          withdrawnMsat: a.withdrawn,
          feesMsat: a.fees,
          requests: a.requests,
          createdAtMs: a.created_at,
          ...(a.reserved > 0 ? payoutOf(s.openPayout(a.id)) : {}),
        },
        availableMsat: Math.max(0, Math.min(a.balance - a.reserved, keyFree(k, now))),
        children,
      };
    }, 'read');
  }

  /** Resolves a credential to (account, key id filter for children) or null. */
  private scope(credential: KeyLookup): { accountId: string; keyId: string | null } | null {
    const c = resolveCredential(credential);
    if (!c) return null;
    const a = this.s.account(c.accountId);
    const k = a && !a.deleted ? this.s.key(c.keyHash, a.id) : undefined;
    if (!k || k.deleted) return null;
    return { accountId: c.accountId, keyId: k.isChild ? k.hash.slice(0, 16) : null };
  }

  async findKeyById(keyId: string): Promise<KeyRef | null> {
    if (typeof keyId !== 'string' || !/^[0-9a-f]{16}$/.test(keyId)) return null;
    const r = this.s.q('SELECT account_id, hash FROM ledger_keys WHERE key_id = ? LIMIT 1').get(keyId) as
      | { account_id: string; hash: string }
      | undefined;
    return r ? { keyRef: { accountId: r.account_id, keyHash: r.hash } } : null;
  }

  async listTransactions(credential: KeyLookup, page?: Page): Promise<TransactionPage | null> {
    const { limit, offset } = pageOf(page);
    const s = this.s;
    return s.tx((): TransactionPage | null => {
      const sc = this.scope(credential);
      if (!sc) return null;
      const where = sc.keyId === null ? 'account_id = ?' : 'account_id = ? AND key_id = ?';
      const args = sc.keyId === null ? [sc.accountId] : [sc.accountId, sc.keyId];
      const total = (
        s.q(`SELECT COUNT(*) AS n FROM ledger_transactions WHERE ${where}`).get(...args) as { n: number }
      ).n;
      const rows = s
        .q(`SELECT * FROM ledger_transactions WHERE ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`)
        .all(...args, limit, offset) as TxRow[];
      const transactions: Transaction[] = rows.map((r) => ({
        id: r.id,
        type: r.type as TransactionType,
        amountMsat: r.amount,
        balanceAfterMsat: r.balance_after,
        description: r.description,
        timestampMs: r.ts,
        keyId: r.key_id,
        model: r.model,
        estimated: r.estimated === 1,
      }));
      return { transactions, hasMore: offset + rows.length < total, total };
    }, 'read');
  }

  /** Nothing waits in memory here: every call's record is written by its own step. */
  async reportCalls(): Promise<void> {}

  async checkConservation(): Promise<ConservationReport> {
    const s = this.s;
    return s.tx((): ConservationReport => {
      const accounts = s.q('SELECT * FROM ledger_accounts ORDER BY id').all() as AccountRow[];
      const open = new Map<string, number>();
      for (const r of s
        .q(
          "SELECT account_id, SUM(amount) AS n FROM ledger_reservations WHERE status = 'open' GROUP BY account_id",
        )
        .all() as Array<{ account_id: string; n: number }>) {
        open.set(r.account_id, r.n);
      }
      return conservationReport(
        accounts.map((a) => ({
          accountId: a.id,
          balanceMsat: a.balance,
          reservedMsat: a.reserved,
          depositedMsat: a.deposited,
          spentMsat: a.spent,
          withdrawnMsat: a.withdrawn,
          feesMsat: a.fees,
          requests: a.requests,
          openReservedMsat: open.get(a.id) ?? 0,
        })),
      );
    }, 'read');
  }

  async totalUserBalancesMsat(): Promise<number> {
    return (this.s.q('SELECT COALESCE(SUM(balance), 0) AS n FROM ledger_accounts').get() as { n: number }).n;
  }

  async close(): Promise<void> {
    // The connection belongs to openStore(); its owner closes it. Changes still waiting for their group
    // commit are committed and answered first.
    this.s.flush();
  }
}
