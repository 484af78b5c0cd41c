/**
 * The audit record's shapes and the filter and paging rules every audit backend shares
 * (core/audit/audit-log.ts; the Redis backend is core/audit/redis-audit.ts).
 */

/** One audit record as the readers answer it (openapi/openapi.yaml's names, plus the request id). */
export interface AuditRecord {
  /** Cursor of this record (pass as `before` for the next page). */
  id: string;
  timestamp: string;
  request_id: string;
  /** The key's public key id; null for admin records. */
  api_key_id: string | null;
  endpoint: string;
  method: string;
  ip_address: string;
  user_agent: string | null;
  cost_sats: number;
  cost_msats: number;
  response_status: number;
  /** `key` (a request that named a key) or `admin` (an admin change or failed login). */
  kind: 'key' | 'admin';
  /**
   * A call served by another node paid from the operator's wallet (`"payment": "cashu"` or `"cashu-balance"`,
   * docs/providers.md): what it cost the operator there, msats. Admin readers only: the key's own reader
   * (`GET /v1/wallet/audit`) leaves it out (what the operator pays a supplier is not the buyer's business).
   */
  upstream_msats?: number;
  /** The request's OpenTelemetry trace id when tracing is on (README, "Tracing"). */
  trace_id?: string;
}

/** A record as the key's own reader shows it: without the operator's cost (`upstream_msats`). */
export function ownerRecord(r: AuditRecord): AuditRecord {
  if (r.upstream_msats === undefined) return r;
  const { upstream_msats: _operatorCost, ...rest } = r;
  return rest;
}

/** What is stored (the reader adds the cursor id). */
export type StoredAudit = Omit<AuditRecord, 'id'> & {
  /** The account whose reader sees it; absent for admin records and unknown keys. */
  account?: string;
};

export interface AuditQuery {
  /** Only this account's records (the wallet reader). */
  account?: string;
  keyId?: string;
  status?: number;
  sinceMs?: number;
  untilMs?: number;
  /** Cursor: records strictly after this record id in the readers' order (older, or as old and written before). */
  before?: string;
  limit: number;
}

export interface AuditPage {
  data: AuditRecord[];
  has_more: boolean;
  /**
   * The cursor of the next page (pass as `before`); null when `has_more` is false. Usually the last record's
   * id; when a filtered Redis scan stopped at its budget, the last entry scanned (the page may then hold
   * fewer than `limit` records, even none).
   */
  next_before: string | null;
}

export interface AuditBackend {
  write(batch: readonly StoredAudit[], retentionMs: number, nowMs: number): Promise<void>;
  list(q: AuditQuery): Promise<AuditPage>;
  prune(cutoffMs: number): Promise<void>;
}

/**
 * Both readers answer in the records' time order (newest first), whatever order they were written in: a
 * charged call's record is written by the ledger in the step that charges it, the others by the batch writer
 * up to 250 ms later (longer while the store fails), so write order is not time order. SQLite and memory sort
 * by the record's time. A Redis stream is in write order (stream ids are write times, at or after the
 * record's time): its reader looks ahead and reorders, treating a record written more than this long after its
 * time (a store that failed for longer) as if it were this old when written — its place is then its write
 * time less this window. A page after a cursor rescans this window above it (the cost of a page, beside the
 * page itself: the records written in this many ms).
 */
export const AUDIT_ORDER_WINDOW_MS = 10_000;

/** Stream entries one Redis reader call scans at most (a filtered page stops there, with a cursor). */
export const AUDIT_SCAN_BUDGET = 20_000;

export function matches(r: StoredAudit, q: AuditQuery): boolean {
  if (q.keyId !== undefined && r.api_key_id !== q.keyId) return false;
  if (q.status !== undefined && r.response_status !== q.status) return false;
  const ts = Date.parse(r.timestamp);
  if (q.sinceMs !== undefined && ts < q.sinceMs) return false;
  if (q.untilMs !== undefined && ts > q.untilMs) return false;
  return true;
}

export function publicRecord(id: string, r: StoredAudit): AuditRecord {
  const { account: _account, ...rest } = r;
  return { id, ...rest };
}

/** A page cut from `limit + 1` matches: the extra one only says that more exist. */
export function pageOf(matched: AuditRecord[], limit: number): AuditPage {
  const data = matched.slice(0, limit);
  const more = matched.length > limit;
  return { data, has_more: more, next_before: more ? data[data.length - 1]!.id : null };
}
