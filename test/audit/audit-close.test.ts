import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../core/audit/audit-log.js';
import type { AuditInput } from '../../core/audit/types.js';
import { createLogger } from '../../core/log.js';
import { openStore } from '../../core/store/connection.js';

const input = (n: number): AuditInput => ({
  atMs: Date.now(),
  requestId: `req-${n}`,
  subject: { admin: true },
  endpoint: '/admin/api/settings',
  method: 'PATCH',
  ip: '198.51.100.1',
  userAgent: undefined,
  costMsat: 0,
  status: 200,
});

describe('closing the audit log', () => {
  it('writes what is buffered and resolves when the store took it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-close-'));
    const conn = openStore({ dataDir: dir });
    try {
      const audit = new AuditLog(conn, { retentionDays: 30, log: createLogger('silent') });
      audit.record(input(1));
      await audit.close();
      const again = new AuditLog(conn, { retentionDays: 30, log: createLogger('silent') });
      expect((await again.list({ limit: 10 })).data.map((r) => r.request_id)).toEqual(['req-1']);
    } finally {
      await conn.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects, naming the count, when records could not be written: the shutdown counts them as left behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-close-'));
    const conn = openStore({ dataDir: dir });
    const audit = new AuditLog(conn, { retentionDays: 30, log: createLogger('silent') });
    audit.record(input(1));
    audit.record(input(2));
    await conn.close(); // the store is gone before the last flush
    try {
      await expect(audit.close()).rejects.toThrow(/2 audit records could not be written/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
