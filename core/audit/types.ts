import type { KeyLookup } from '../ledger/types.js';

/**
 * The audit log's types (audit-log.ts is the implementation): what the plugin contract (core/plugin.ts) and the
 * readers see without importing the implementation.
 */

/** One audit record as the readers answer it (spec §2.7 names, plus the request id). */
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
}

/** What is stored (the reader adds the cursor id). */
export type StoredAudit = Omit<AuditRecord, 'id'> & {
  /** The account whose reader sees it; absent for admin records and unknown keys. */
  account?: string;
};

/** Who a request's record belongs to: set by callerOf, the paid auth/reserve stages and the admin routes. */
export interface AuditSubject {
  /** The credential the request named (resolved to account and key id when the record is written). */
  credential?: KeyLookup;
  /** The ledger said no such key: recorded in the node-wide log only. */
  unknown?: boolean;
  /** An admin change or failed admin login. */
  admin?: boolean;
}

export interface AuditQuery {
  /** Only this account's records (the wallet reader). */
  account?: string;
  keyId?: string;
  status?: number;
  sinceMs?: number;
  untilMs?: number;
  /** Cursor: records strictly older than this record id. */
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

/** The input of `record`: the subject is resolved at write time, off the request path. */
export interface AuditInput {
  atMs: number;
  requestId: string;
  subject: AuditSubject;
  endpoint: string;
  method: string;
  ip: string;
  userAgent: string | undefined;
  costMsat: number;
  status: number;
}

/** The audit log as services expose it (core/plugin.ts `Services.audit`). */
export interface AuditTrail {
  /** Starts the batch writer and the hourly prune. */
  start(): void;
  /** Queues one record (never blocks or fails the call). */
  record(input: AuditInput): void;
  /** Writes what is queued. */
  flush(): Promise<void>;
  list(q: AuditQuery): Promise<AuditPage>;
  close(): Promise<void>;
}
