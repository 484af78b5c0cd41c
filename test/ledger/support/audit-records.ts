import { callAuditRecord } from '../../../core/audit/audit-log.js';
import type { CallAuditRecord } from '../../../core/ledger/types.js';

/** A paid call's audit record as the settle stage hands it to the ledger (plugins/settle.ts). */
export function callRecord(
  apiKey: string,
  requestId: string,
  atMs: number,
  over: { ip?: string; userAgent?: string; status?: number } = {},
): CallAuditRecord {
  const r = callAuditRecord({
    atMs,
    requestId,
    subject: { credential: { apiKey } },
    endpoint: '/v1/chat/completions',
    method: 'POST',
    ip: over.ip ?? '10.0.0.1',
    userAgent: over.userAgent ?? 'ua',
    costMsat: 0,
    status: over.status ?? 200,
  });
  if (r === undefined) throw new Error('no account for the key');
  return r;
}
