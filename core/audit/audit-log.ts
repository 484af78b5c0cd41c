import type Database from 'libsql';
import { CHARGE, createLocalKey, type RequestContext, UPSTREAM_COST } from '../context.js';
import { keyIdOf, resolveCredential } from '../ledger/keys.js';
import type { CallAuditRecord, KeyLookup } from '../ledger/types.js';
import type { Logger } from '../log.js';
import { auditDroppedTotal, auditWriteFailuresTotal } from '../metrics.js';
import type { StoreConnection } from '../store/connection.js';
import { migrate } from '../store/sqlite-migrations.js';
import { CALL_TRACE } from '../trace-context.js';
import {
  AUDIT_ORDER_WINDOW_MS,
  AUDIT_SCAN_BUDGET,
  type AuditBackend,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  matches,
  pageOf,
  publicRecord,
  type StoredAudit,
} from './records.js';
import { RedisAudit } from './redis-audit.js';

import type { AuditInput, AuditSubject, AuditTrail } from './types.js';

export type { AuditPage, AuditQuery, AuditRecord } from './records.js';
export type { AuditInput, AuditSubject } from './types.js';

/**
 * The audit log (docs/endpoints.md, "Audit log"): one record per request that named a key (paid
 * calls admitted or refused, wallet and balance operations, child keys, sub-keys, updates, webhooks, alerts)
 * and per admin change or failed admin login, written by the transport's end hook (core/server.ts) — never by
 * the routes themselves.
 *
 * Two writers, one log:
 * - A settled paid call's record is written by the ledger step that charges it (the settle script or
 *   transaction, or the credit-lease report that carries the call): `callAuditRecord` builds it, the settle
 *   stage hands it to `ledger.settle` and marks the request (`AuditSubject.byLedger`) so the end hook does
 *   not write it again. A charged call therefore always has its record, even after kill -9.
 * - Every other record (refusals, released calls, wallet and admin requests) is buffered by `record` and
 *   written off the request path: a timer writes batches (every 250 ms or 500 records); a failing store keeps
 *   the batch and retries it (gateway_audit_write_failures_total); beyond 50,000 buffered records new ones are
 *   dropped (gateway_audit_dropped_total). A process killed with -9 loses at most the buffer (≤ 250 ms of
 *   these records; none of them moved money). A full or failing audit store never fails or slows a call.
 * Retention is by age (AUDIT_RETENTION_DAYS), pruned hourly. Reads first have the ledger write what it still
 * holds in memory (`beforeRead`: credit leases report their queued calls), so a reader sees every call
 * answered so far.
 *
 * Stores: Redis, one stream per account in the account's slot, a node stream and an index of accounts
 * (core/audit/redis-audit.ts: cluster-safe); SQLite table `audit_records` (indexes on (account, ts), (ts)
 * and (key_id, ts)); memory when the node has no store.
 */

/** The request's audit subject; a request without one is not recorded. */
export const AUDIT_SUBJECT = createLocalKey<AuditSubject>('audit-subject');

/** Records that the request named this credential (every request that names a key is audited). */
export function auditKey(ctx: RequestContext, credential: KeyLookup): void {
  ctx.setLocal(AUDIT_SUBJECT, { credential });
}

/** The named key turned out unknown: its record goes to the node-wide log only. */
export function auditUnknownKey(ctx: RequestContext): void {
  const s = ctx.local(AUDIT_SUBJECT);
  if (s !== undefined) s.unknown = true;
}

/** An admin change or a failed admin login. */
export function auditAdmin(ctx: RequestContext): void {
  ctx.setLocal(AUDIT_SUBJECT, { admin: true });
}

class SqliteAudit implements AuditBackend {
  private readonly insert: Database.Statement;
  constructor(private readonly db: Database.Database) {
    migrate(db);
    this.insert = db.prepare(
      'INSERT INTO audit_records (ts, account, key_id, status, record) VALUES (?, ?, ?, ?, ?)',
    );
  }
  async write(batch: readonly StoredAudit[]): Promise<void> {
    const tx = this.db.transaction(() => {
      for (const r of batch) {
        this.insert.run(
          Date.parse(r.timestamp),
          r.account ?? null,
          r.api_key_id,
          r.response_status,
          JSON.stringify(r),
        );
      }
    });
    tx.immediate();
  }
  async list(q: AuditQuery): Promise<AuditPage> {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (q.account !== undefined) {
      where.push('account = ?');
      args.push(q.account);
    }
    if (q.keyId !== undefined) {
      where.push('key_id = ?');
      args.push(q.keyId);
    }
    if (q.status !== undefined) {
      where.push('status = ?');
      args.push(q.status);
    }
    if (q.sinceMs !== undefined) {
      where.push('ts >= ?');
      args.push(q.sinceMs);
    }
    if (q.untilMs !== undefined) {
      where.push('ts <= ?');
      args.push(q.untilMs);
    }
    if (q.before !== undefined) {
      // `<ts>-<rowid>`; a bare number is an id of the write-ordered reader of before (its record's time looked up).
      const [a, b] = q.before.split('-');
      if (b !== undefined) args.push(Number(a) || 0, Number(a) || 0, Number(b) || 0);
      else {
        const row = this.db.prepare('SELECT ts FROM audit_records WHERE id = ?').get(Number(a) || 0) as
          | { ts: number }
          | undefined;
        args.push(row?.ts ?? 0, row?.ts ?? 0, Number(a) || 0);
      }
      where.push('(ts < ? OR (ts = ? AND id < ?))');
    }
    // The records' time order (a record written off the request path lands after later ones), stable within a
    // millisecond by write order; the indexes on (account, ts), (key_id, ts) and (ts) carry the rowid.
    const rows = this.db
      .prepare(
        `SELECT id, ts, record FROM audit_records ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ts DESC, id DESC LIMIT ?`,
      )
      .all(...args, q.limit + 1) as { id: number; ts: number; record: string }[];
    const matched = rows.map((row) =>
      publicRecord(`${row.ts}-${row.id}`, JSON.parse(row.record) as StoredAudit),
    );
    return pageOf(matched, q.limit);
  }
  async prune(cutoffMs: number): Promise<void> {
    this.db.prepare('DELETE FROM audit_records WHERE ts < ?').run(cutoffMs);
  }
}

class MemoryAudit implements AuditBackend {
  /** In the readers' order reversed: oldest first by (record time, write order). */
  private readonly rows: { id: number; ts: number; r: StoredAudit }[] = [];
  private seq = 0;
  async write(batch: readonly StoredAudit[]): Promise<void> {
    for (const r of batch) {
      const row = { id: ++this.seq, ts: Date.parse(r.timestamp), r };
      // Mostly appended: a record written late moves back past the few newer ones.
      let i = this.rows.length;
      while (i > 0 && this.rows[i - 1]!.ts > row.ts) i--;
      this.rows.splice(i, 0, row);
    }
    if (this.rows.length > 100_000) this.rows.splice(0, this.rows.length - 100_000);
  }
  async list(q: AuditQuery): Promise<AuditPage> {
    const out: AuditRecord[] = [];
    const [a, b] = q.before !== undefined ? q.before.split('-') : [];
    const beforeTs = a !== undefined ? Number(a) : Number.POSITIVE_INFINITY;
    const beforeId = b !== undefined ? Number(b) : 0;
    for (let i = this.rows.length - 1; i >= 0; i--) {
      const { id, ts, r } = this.rows[i]!;
      if (ts > beforeTs || (ts === beforeTs && id >= beforeId)) continue;
      if (q.account !== undefined && r.account !== q.account) continue;
      if (!matches(r, q)) continue;
      out.push(publicRecord(`${ts}-${id}`, r));
      if (out.length > q.limit) break;
    }
    return pageOf(out, q.limit);
  }
  async prune(cutoffMs: number): Promise<void> {
    const keep = this.rows.filter((x) => x.ts >= cutoffMs);
    this.rows.splice(0, this.rows.length, ...keep);
  }
}

export interface AuditLogOptions {
  retentionDays: number;
  log: Logger;
  flushMs?: number;
  batchSize?: number;
  maxBuffered?: number;
  /** Redis: stream entries one read scans at most (default AUDIT_SCAN_BUDGET). */
  scanBudget?: number;
  /** Redis: how long after its time a record may be written and still be placed at its time (tests). */
  orderWindowMs?: number;
  /**
   * Before a read: has the ledger write the calls it settled and still holds in memory (credit leases), for
   * the account read or, without one, for this process (`Ledger.reportCalls`).
   */
  beforeRead?: (account: string | undefined) => Promise<void>;
  /** Where records are kept; default the store's (`openAuditBackend`). Tests pass one that can fail. */
  backend?: AuditBackend;
}

/** The audit backend of a store: Redis streams, the SQLite table, or (no store) this process's memory. */
export function openAuditBackend(
  store: StoreConnection | undefined,
  scanBudget = AUDIT_SCAN_BUDGET,
  orderWindowMs = AUDIT_ORDER_WINDOW_MS,
): AuditBackend {
  if (store?.kind === 'redis') return new RedisAudit(store.redis, store.prefix, scanBudget, orderWindowMs);
  if (store?.kind === 'sqlite') return new SqliteAudit(store.db);
  return new MemoryAudit();
}

export class AuditLog implements AuditTrail {
  readonly backend: AuditBackend;
  /** Records above this many waiting are dropped (counted). */
  maxBuffered: number;
  private buffer: AuditInput[] = [];
  private readonly flushMs: number;
  private readonly batchSize: number;
  private readonly retentionMs: number;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private closed = false;
  private readonly beforeRead: AuditLogOptions['beforeRead'];

  constructor(store: StoreConnection | undefined, opts: AuditLogOptions) {
    this.backend = opts.backend ?? openAuditBackend(store, opts.scanBudget, opts.orderWindowMs);
    this.flushMs = opts.flushMs ?? 250;
    this.batchSize = opts.batchSize ?? 500;
    this.maxBuffered = opts.maxBuffered ?? 50_000;
    this.retentionMs = opts.retentionDays * 86_400_000;
    this.log = opts.log;
    this.beforeRead = opts.beforeRead;
  }

  /** Starts the flush and hourly prune timers (unref'd). */
  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
    this.pruneTimer = setInterval(() => void this.prune(), 3_600_000);
    this.pruneTimer.unref();
  }

  /** Buffers one record; never throws, never waits. */
  record(input: AuditInput): void {
    if (this.closed) return;
    if (this.buffer.length >= this.maxBuffered) {
      auditDroppedTotal.inc();
      return;
    }
    this.buffer.push(input);
    if (this.buffer.length >= this.batchSize && this.flushing === undefined) void this.flush();
  }

  /** Writes what is buffered (one flush at a time); a failed batch stays buffered for the next one. */
  flush(): Promise<void> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.slice(0, this.batchSize);
      const now = Date.now();
      try {
        await this.backend.write(batch.map(stored), this.retentionMs, now);
      } catch (err) {
        auditWriteFailuresTotal.inc();
        this.log.warn({ err, buffered: this.buffer.length }, 'audit log write failed; the batch is kept');
        return;
      }
      this.buffer.splice(0, batch.length);
    }
  }

  async prune(now = Date.now()): Promise<void> {
    try {
      await this.backend.prune(now - this.retentionMs);
    } catch (err) {
      this.log.warn({ err }, 'audit log prune failed');
    }
  }

  /** Newest first. Writes this process's buffer and the ledger's unreported calls first (read-your-writes). */
  async list(q: AuditQuery): Promise<AuditPage> {
    await Promise.all([this.flush(), this.beforeRead?.(q.account)]);
    return this.backend.list(q);
  }

  /**
   * Stops the timers and writes what is left (one attempt). Rejects when records could not be written, so
   * that the shutdown counts them as work left behind (exit 1) instead of losing them silently.
   */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    await this.flush();
    this.closed = true;
    if (this.buffer.length > 0) {
      throw new Error(`${this.buffer.length} audit records could not be written before the shutdown`);
    }
  }
}

/**
 * What the request's audit record says (`status`: the answer's; `ip`: the client's address as the limits see
 * it), or undefined when the request is not audited (no subject) — the end hook and the settle stage both
 * build it here.
 */
export function auditInputOf(ctx: RequestContext, status: number, ip: string): AuditInput | undefined {
  const subject = ctx.local(AUDIT_SUBJECT);
  if (subject === undefined) return undefined;
  return {
    atMs: Date.now(),
    requestId: ctx.requestId,
    subject,
    endpoint: ctx.path,
    method: ctx.method,
    ip,
    userAgent: ctx.headers['user-agent'],
    costMsat: ctx.local(CHARGE)?.msats ?? 0,
    status,
    upstreamMsat: ctx.local(UPSTREAM_COST),
    traceId: ctx.local(CALL_TRACE)?.traceId,
  };
}

/**
 * A paid call's record for the ledger step that charges it (`SettleInput.auditRecord`): every field but the
 * cost, which the step adds (what it charged). Undefined when the request's key has no account to file it
 * under (the end hook then records it as usual).
 */
export function callAuditRecord(i: AuditInput): CallAuditRecord | undefined {
  // The stored record without the charge and the account (the settle step adds those), written as JSON text
  // directly: this runs on every paid call. The same text as JSON.stringify of the record, field for field
  // (test/audit/audit-record-json.test.ts).
  const c = i.subject.credential !== undefined ? resolveCredential(i.subject.credential) : null;
  if (c === null || i.subject.unknown) return undefined;
  const ua = i.userAgent === undefined ? 'null' : JSON.stringify(i.userAgent.slice(0, 256));
  const json =
    `{"timestamp":"${isoTime(i.atMs)}","request_id":${JSON.stringify(i.requestId)},` +
    `"api_key_id":"${keyIdOf(c.keyHash)}","endpoint":${JSON.stringify(i.endpoint)},` +
    `"method":${JSON.stringify(i.method)},"ip_address":${JSON.stringify(i.ip)},"user_agent":${ua},` +
    `"response_status":${i.status},"kind":"${i.subject.admin ? 'admin' : 'key'}"` +
    // A call served by a node paid from the wallet: what it cost the operator there (admin readers only).
    `${i.upstreamMsat !== undefined ? `,"upstream_msats":${i.upstreamMsat}` : ''}` +
    // With OpenTelemetry on: the trace the call's spans belong to (README, "Tracing").
    `${i.traceId !== undefined ? `,"trace_id":"${i.traceId}"` : ''}}`;
  return { json, atMs: i.atMs, status: i.status };
}

/** `new Date(ms).toISOString()`, remembered for the last millisecond asked (calls arrive many per ms). */
let isoMs = Number.NaN;
let isoText = '';
function isoTime(ms: number): string {
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
}

/**
 * The record of a charge made off any request — a Batch API job's settlement (core/batches/settle-batch.ts) —
 * for the settle step that makes it: no client address or user agent.
 */
export function settlementAuditRecord(r: {
  atMs: number;
  requestId: string;
  keyId: string;
  endpoint: string;
  method: string;
  status: number;
}): CallAuditRecord {
  const rec: Omit<StoredAudit, 'cost_msats' | 'cost_sats' | 'account'> = {
    timestamp: new Date(r.atMs).toISOString(),
    request_id: r.requestId,
    api_key_id: r.keyId,
    endpoint: r.endpoint,
    method: r.method,
    ip_address: '',
    user_agent: null,
    response_status: r.status,
    kind: 'key',
  };
  return { json: JSON.stringify(rec), atMs: r.atMs, status: r.status };
}

function stored(i: AuditInput): StoredAudit {
  let account: string | undefined;
  let keyId: string | null = null;
  const c = i.subject.credential !== undefined ? resolveCredential(i.subject.credential) : null;
  if (c !== null) {
    keyId = keyIdOf(c.keyHash);
    if (!i.subject.unknown) account = c.accountId;
  }
  return {
    timestamp: new Date(i.atMs).toISOString(),
    request_id: i.requestId,
    api_key_id: keyId,
    endpoint: i.endpoint,
    method: i.method,
    ip_address: i.ip,
    user_agent: i.userAgent === undefined ? null : i.userAgent.slice(0, 256),
    cost_sats: Math.floor(i.costMsat / 1000),
    cost_msats: i.costMsat,
    response_status: i.status,
    kind: i.subject.admin ? 'admin' : 'key',
    ...(i.upstreamMsat !== undefined ? { upstream_msats: i.upstreamMsat } : {}),
    ...(i.traceId !== undefined ? { trace_id: i.traceId } : {}),
    ...(account !== undefined ? { account } : {}),
  };
}
