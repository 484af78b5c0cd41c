import type { Cluster, Redis } from 'ioredis';
import { auditIndexKey } from './redis-keys.js';

/**
 * Which accounts have audit records, for the audit log's node-wide reads (core/audit/audit-log.ts). Each
 * account's records live in its own slot (`<p>:{a:<id>}:audit-log`, written inside its settle and lease
 * scripts), so no single stream can hold them all on a Redis Cluster; the reader merges the account streams
 * listed here instead. The index is a zset in its own slot: member = account id, score = when a writer last
 * confirmed the account (its clock, ms).
 *
 * Rule: a writer confirms the account BEFORE writing a record to its stream, and again once its own last
 * confirmation is AUDIT_INDEX_REFRESH_MS old. So every account with records is listed, and no record's
 * stream id (its write time) lies later than the account's score + AUDIT_INDEX_REFRESH_MS (+ clock skew):
 * the reader opens an account's stream only when that bound reaches the page (AUDIT_INDEX_SLACK_MS covers
 * the refresh and a skew of as much again), and the hourly prune drops accounts whose score is older than
 * the retention plus that slack, with their streams.
 */
export const AUDIT_INDEX_REFRESH_MS = 10 * 60_000;
export const AUDIT_INDEX_SLACK_MS = 2 * AUDIT_INDEX_REFRESH_MS;

/** Accounts confirmed by this process are remembered up to this many (then forgotten and confirmed again). */
const MAX_REMEMBERED = 100_000;

export class AuditIndex {
  private readonly confirmed = new Map<string, number>();
  /** Confirmations under way: concurrent first writes of one account share one ZADD. */
  private readonly pending = new Map<string, Promise<void>>();
  readonly key: string;

  constructor(
    private readonly client: Redis | Cluster,
    prefix: string,
  ) {
    this.key = auditIndexKey(prefix);
  }

  /**
   * Lists the account before a record is written to its stream: undefined when this process confirmed it
   * within AUDIT_INDEX_REFRESH_MS (no round trip, no promise), else the pending ZADD to await first.
   */
  confirm(accountId: string): Promise<void> | undefined {
    const now = Date.now();
    const at = this.confirmed.get(accountId);
    if (at !== undefined && now - at < AUDIT_INDEX_REFRESH_MS) return undefined;
    let p = this.pending.get(accountId);
    if (p === undefined) {
      p = this.client.zadd(this.key, 'GT', now, accountId).then(
        () => {
          this.pending.delete(accountId);
          if (this.confirmed.size >= MAX_REMEMBERED) this.confirmed.clear();
          this.confirmed.set(accountId, now);
        },
        (err: unknown) => {
          this.pending.delete(accountId);
          throw err;
        },
      );
      this.pending.set(accountId, p);
    }
    return p;
  }
}
