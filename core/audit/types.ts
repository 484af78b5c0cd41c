import type { KeyLookup } from '../ledger/types.js';
import type { AuditPage, AuditQuery } from './records.js';

/**
 * The audit log's types (audit-log.ts is the implementation): what the plugin contract (core/plugin.ts) and the
 * readers see without importing the implementation. The record shapes and paging rules are in records.ts.
 */
export type { AuditPage, AuditQuery, StoredAudit } from './records.js';

/** Who a request's record belongs to: set by callerOf, the paid auth/reserve stages and the admin routes. */
export interface AuditSubject {
  /** The credential the request named (resolved to account and key id when the record is written). */
  credential?: KeyLookup;
  /** The ledger said no such key: recorded in the node-wide log only. */
  unknown?: boolean;
  /** An admin change or failed admin login. */
  admin?: boolean;
  /** The record went with the call's settle step (the ledger writes it with the charge): the end hook skips it. */
  byLedger?: boolean;
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
  /** What the call cost the operator at the node that served it (a provider paid from the wallet), msats. */
  upstreamMsat?: number | undefined;
  /** The request's OpenTelemetry trace id, when tracing is on (core/trace-context.ts). */
  traceId?: string | undefined;
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
