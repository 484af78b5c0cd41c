import type { Redis } from 'ioredis';
import type Database from 'libsql';
import { createLocalKey, type RequestContext } from '../context.js';
import { keyIdOf, resolveCredential } from '../ledger/keys.js';
import { migrate } from '../ledger/sqlite/migrations.js';
import type { KeyLookup } from '../ledger/types.js';
import type { Logger } from '../log.js';
import { auditDroppedTotal, auditWriteFailuresTotal } from '../metrics.js';
import type { StoreConnection } from '../store/connection.js';
import type {
  AuditInput,
  AuditPage,
  AuditQuery,
  AuditRecord,
  AuditSubject,
  AuditTrail,
  StoredAudit,
} from './types.js';

/**
 * The audit log (spec §2.7; docs/endpoints.md, "Audit log"): one record per request that named a key (paid
 * calls admitted or refused, wallet and balance operations, child keys, sub-keys, updates, webhooks, alerts)
 * and per admin change or failed admin login, written by the transport's end hook (core/server.ts) — never by
 * the routes themselves.
 *
 * Off the hot path: `record` only appends to a buffer; a timer writes batches (every 250 ms or 500 records).
 * A failing store keeps the batch and retries it (counted in gateway_audit_write_failures_total); beyond
 * 50,000 buffered records new ones are dropped (gateway_audit_dropped_total). A full or failing audit store
 * never fails or slows a call. Retention is by age (AUDIT_RETENTION_DAYS), pruned hourly.
 *
 * Stores: Redis streams `<prefix>:audit:a:<account>` (one per account, expiring with the retention) and
 * `<prefix>:audit:all`, trimmed by age (stream ids are write times) with an exact MINID on every write and
 * at the hourly prune; SQLite table `audit_records` (indexes on (account,
 * ts) and (ts)); memory when the node has no store.
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

export interface AuditBackend {
  write(batch: readonly StoredAudit[], retentionMs: number, nowMs: number): Promise<void>;
  list(q: AuditQuery): Promise<AuditPage>;
  prune(cutoffMs: number): Promise<void>;
}

/** Stream entries one Redis reader call scans at most (a filtered page stops there, with a cursor). */
export const AUDIT_SCAN_BUDGET = 20_000;

function matches(r: StoredAudit, q: AuditQuery): boolean {
  if (q.keyId !== undefined && r.api_key_id !== q.keyId) return false;
  if (q.status !== undefined && r.response_status !== q.status) return false;
  const ts = Date.parse(r.timestamp);
  if (q.sinceMs !== undefined && ts < q.sinceMs) return false;
  if (q.untilMs !== undefined && ts > q.untilMs) return false;
  return true;
}

function publicRecord(id: string, r: StoredAudit): AuditRecord {
  const { account: _account, ...rest } = r;
  return { id, ...rest };
}

/** A page cut from `limit + 1` matches: the extra one only says that more exist. */
function pageOf(matched: AuditRecord[], limit: number): AuditPage {
  const data = matched.slice(0, limit);
  const more = matched.length > limit;
  return { data, has_more: more, next_before: more ? data[data.length - 1]!.id : null };
}

class RedisAudit implements AuditBackend {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly scanBudget: number,
  ) {}
  private accountKey(account: string): string {
    return `${this.prefix}:audit:a:${account}`;
  }
  private get allKey(): string {
    return `${this.prefix}:audit:all`;
  }
  async write(batch: readonly StoredAudit[], retentionMs: number, nowMs: number): Promise<void> {
    const minId = String(Math.max(0, nowMs - retentionMs));
    const p = this.redis.pipeline();
    const touched = new Set<string>();
    for (const r of batch) {
      const json = JSON.stringify(r);
      // Exact MINID (not `~`): retention is by age, and a small stream would never fill a node to trim.
      p.xadd(this.allKey, 'MINID', minId, '*', 'r', json);
      if (r.account !== undefined) {
        const k = this.accountKey(r.account);
        p.xadd(k, 'MINID', minId, '*', 'r', json);
        touched.add(k);
      }
    }
    const ttl = Math.ceil(retentionMs / 1000) + 3600;
    for (const k of touched) p.expire(k, ttl);
    const results = await p.exec();
    for (const [err] of results ?? []) if (err) throw err;
  }
  /**
   * Newest first, filters applied to each entry. Stream ids are write times, at or after the record's own
   * time: `since` bounds the range (nothing at or after it is skipped), `until` cannot (a record of 12:00:00
   * may be written at 12:00:01) and is only filtered. Complete by construction: when `scanBudget` entries
   * were scanned before the page filled, the answer says `has_more` with the last scanned id as the cursor,
   * never a silently short page.
   */
  async list(q: AuditQuery): Promise<AuditPage> {
    const key = q.account !== undefined ? this.accountKey(q.account) : this.allKey;
    const out: AuditRecord[] = [];
    let end = q.before !== undefined ? `(${q.before}` : '+';
    const start = q.sinceMs !== undefined ? String(q.sinceMs) : '-';
    let scanned = 0;
    let last: string | null = null;
    for (;;) {
      const count = Math.min(500, this.scanBudget - scanned);
      if (count <= 0) return { data: out, has_more: true, next_before: last };
      const rows = (await this.redis.xrevrange(key, end, start, 'COUNT', count)) as [string, string[]][];
      for (const [id, fields] of rows) {
        const r = JSON.parse(fields[1] ?? '{}') as StoredAudit;
        if (matches(r, q)) {
          if (out.length === q.limit) return { data: out, has_more: true, next_before: last };
          out.push(publicRecord(id, r));
        }
        scanned++;
        last = id;
      }
      if (rows.length < count) return { data: out, has_more: false, next_before: null };
      end = `(${last}`;
    }
  }
  async prune(cutoffMs: number): Promise<void> {
    // Account streams are trimmed on write and expire with the retention; the node-wide one here too.
    await this.redis.xtrim(this.allKey, 'MINID', String(cutoffMs));
  }
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
      where.push('id < ?');
      args.push(Number(q.before) || 0);
    }
    const rows = this.db
      .prepare(
        `SELECT id, record FROM audit_records ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
      )
      .all(...args, q.limit + 1) as { id: number; record: string }[];
    const matched = rows.map((row) => publicRecord(String(row.id), JSON.parse(row.record) as StoredAudit));
    return pageOf(matched, q.limit);
  }
  async prune(cutoffMs: number): Promise<void> {
    this.db.prepare('DELETE FROM audit_records WHERE ts < ?').run(cutoffMs);
  }
}

class MemoryAudit implements AuditBackend {
  private readonly rows: { id: number; r: StoredAudit }[] = [];
  private seq = 0;
  async write(batch: readonly StoredAudit[]): Promise<void> {
    for (const r of batch) this.rows.push({ id: ++this.seq, r });
    if (this.rows.length > 100_000) this.rows.splice(0, this.rows.length - 100_000);
  }
  async list(q: AuditQuery): Promise<AuditPage> {
    const out: AuditRecord[] = [];
    const before = q.before !== undefined ? Number(q.before) : Number.POSITIVE_INFINITY;
    for (let i = this.rows.length - 1; i >= 0; i--) {
      const { id, r } = this.rows[i]!;
      if (id >= before) continue;
      if (q.account !== undefined && r.account !== q.account) continue;
      if (!matches(r, q)) continue;
      out.push(publicRecord(String(id), r));
      if (out.length > q.limit) break;
    }
    return pageOf(out, q.limit);
  }
  async prune(cutoffMs: number): Promise<void> {
    const keep = this.rows.filter((x) => Date.parse(x.r.timestamp) >= cutoffMs);
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
}

export class AuditLog implements AuditTrail {
  backend: AuditBackend;
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

  constructor(store: StoreConnection | undefined, opts: AuditLogOptions) {
    if (store?.kind === 'redis') {
      this.backend = new RedisAudit(store.redis, store.prefix, opts.scanBudget ?? AUDIT_SCAN_BUDGET);
    } else if (store?.kind === 'sqlite') this.backend = new SqliteAudit(store.db);
    else this.backend = new MemoryAudit();
    this.flushMs = opts.flushMs ?? 250;
    this.batchSize = opts.batchSize ?? 500;
    this.maxBuffered = opts.maxBuffered ?? 50_000;
    this.retentionMs = opts.retentionDays * 86_400_000;
    this.log = opts.log;
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

  /** Newest first. Flushes this process's buffer first (read-your-writes). */
  async list(q: AuditQuery): Promise<AuditPage> {
    await this.flush();
    return this.backend.list(q);
  }

  /** Stops the timers and writes what is left (one attempt). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    await this.flush();
    this.closed = true;
  }
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
    ...(account !== undefined ? { account } : {}),
  };
}
