import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { RecentDelivery, WebhookStore } from '../events/types.js';

/**
 * GET /admin/api/webhooks/deliveries (the console's Webhooks view): the node's latest delivery attempts,
 * newest first, filtered by key id and "failed only", paged with `before` (the last row's `id`) and
 * `has_more`, like the audit log.
 *
 * The store's reader lists the node's newest attempts (failed only, when asked); the key filter and the cursor
 * are applied here over at most SCAN_LIMIT of them. Redis keeps the node's last 1,000 attempts anyway; on
 * SQLite, attempts older than the newest SCAN_LIMIT are out of the view's reach (the per-key list under
 * /v1/webhooks/{id}/deliveries still has them).
 */

const SCAN_LIMIT = 5_000;
const KEY_ID = /^[0-9a-f]{16}$/;
/** `<at ms>.<attempt>.<webhook id>`: what identifies an attempt in the newest-first list. */
const CURSOR = /^(\d{1,15})\.(\d{1,6})\.([A-Za-z0-9_:-]{1,128})$/;

function cursorOf(r: RecentDelivery): string {
  return `${r.atMs}.${r.attempt}.${r.webhookId}`;
}

export interface DeliveriesQuery {
  limit: number;
  failedOnly: boolean;
  keyId: string | undefined;
  before: string | undefined;
}

/** The query's `key_id`, `failed` and `before`, checked (400 on anything else); `limit` is the caller's. */
export function deliveriesQuery(ctx: RequestContext, limit: number): DeliveriesQuery {
  const q = ctx.query;
  const failed = q.get('failed');
  if (failed !== null && failed !== 'true' && failed !== 'false') {
    throw new GatewayError('invalid_request', {
      message: 'failed must be true or false',
      details: { parameter: 'failed' },
    });
  }
  const keyId = q.get('key_id');
  if (keyId !== null && !KEY_ID.test(keyId)) {
    throw new GatewayError('validation_failed', { message: 'key_id: must be a 16-character key id' });
  }
  const before = q.get('before');
  if (before !== null && !CURSOR.test(before)) {
    throw new GatewayError('validation_failed', {
      message: 'before: must be the id of a delivery this endpoint listed',
    });
  }
  return {
    limit,
    failedOnly: failed === 'true',
    keyId: keyId ?? undefined,
    before: before ?? undefined,
  };
}

/** One page of attempts, newest first (schema AdminDeliveryList). */
export async function deliveriesPage(store: WebhookStore, q: DeliveriesQuery) {
  let rows = await store.listRecentDeliveries(SCAN_LIMIT, q.failedOnly);
  if (q.keyId !== undefined) rows = rows.filter((r) => r.keyId === q.keyId);
  if (q.before !== undefined) {
    const at = rows.findIndex((r) => cursorOf(r) === q.before);
    // The row itself may have left the kept window since: continue with the older attempts.
    const beforeMs = Number(CURSOR.exec(q.before)?.[1]);
    rows = at >= 0 ? rows.slice(at + 1) : rows.filter((r) => r.atMs < beforeMs);
  }
  return {
    data: rows.slice(0, q.limit).map((r) => ({
      id: cursorOf(r),
      at: r.atMs,
      key_id: r.keyId,
      webhook_id: r.webhookId,
      kind: r.kind,
      origin: r.origin,
      attempt: r.attempt,
      status: r.status,
      error: r.error,
    })),
    has_more: rows.length > q.limit,
  };
}
