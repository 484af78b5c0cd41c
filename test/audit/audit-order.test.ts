import { afterAll, describe, expect, it } from 'vitest';
import type { AuditLog, AuditRecord } from '../../core/audit/audit-log.js';
import type { AuditInput } from '../../core/audit/types.js';
import { callRecord } from '../ledger/support/audit-records.js';
import { admitOk, fund, settleInput } from '../ledger/support/conformance.js';
import { redisFactory, type StoreHarness, sqliteFactory } from '../ledger/support/harness.js';

/**
 * Both audit readers (the key's own, `GET /v1/wallet/audit`, and the operator's node-wide one) answer in the
 * records' time order, newest first, whatever order they were written in: a charged call's record is written
 * by the ledger in the step that charges it (on the hot path), the others by the batch writer later (off it).
 * Records of both kinds, interleaved in time and written out of order, page back in time order, each once.
 */

const offPath = (apiKey: string, requestId: string, atMs: number): AuditInput => ({
  atMs,
  requestId,
  subject: { credential: { apiKey } },
  endpoint: '/v1/wallet/update',
  method: 'POST',
  ip: '198.51.100.1',
  userAgent: undefined,
  costMsat: 0,
  status: 200,
});

async function pageAll(
  audit: AuditLog,
  q: { account?: string; limit: number },
): Promise<{ ids: string[]; records: AuditRecord[]; pages: number }> {
  const records: AuditRecord[] = [];
  let before: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await audit.list({ ...q, ...(before === undefined ? {} : { before }) });
    pages++;
    records.push(...page.data);
    if (!page.has_more) break;
    before = page.next_before ?? undefined;
    if (pages > 50) throw new Error('paging did not end');
  }
  return { ids: records.map((r) => r.id), records, pages };
}

for (const factory of [sqliteFactory(), redisFactory()]) {
  describe(`audit readers answer in time order (${factory.name})`, () => {
    const open: StoreHarness[] = [];
    afterAll(async () => {
      for (const h of open) await h.close();
      await factory.teardown();
    });

    it('records written off the hot path after later charged calls page back in time order, each once', async () => {
      const h = await factory.create();
      open.push(h);
      const { ledger } = h;
      const audit = h.auditLog();
      // Times in the recent past (a Redis stream id is the write time, at or after a record's time).
      const base = Date.now() - 2_000;
      const a = await fund(ledger, 1_000_000, base);
      const b = await fund(ledger, 1_000_000, base);
      const expected: { requestId: string; atMs: number }[] = [];
      // Six rounds: an off-path record of time t is buffered, then a charged call of time t + 5 is written
      // by the ledger at once, then the buffer is written (the earlier record lands after the later one).
      for (let round = 0; round < 6; round++) {
        const t = base + 100 + round * 20;
        const key = round % 2 === 0 ? a : b;
        const off = `off-${round}`;
        audit.record(offPath(key.apiKey, off, t));
        const call = await admitOk(ledger, key.apiKey, 1_000, 0, t);
        const hot = call.requestId;
        const settled = await ledger.settle(
          settleInput(call, { costMsat: 100, now: t + 5, auditRecord: callRecord(key.apiKey, hot, t + 5) }),
        );
        expect(settled.ok).toBe(true);
        await audit.flush();
        expected.push({ requestId: off, atMs: t }, { requestId: hot, atMs: t + 5 });
      }
      const newestFirst = [...expected].sort((x, y) => y.atMs - x.atMs);
      const mine = (account: string) =>
        newestFirst
          .filter((_, i) => {
            const round = Math.floor(expected.indexOf(newestFirst[i]!) / 2);
            return (round % 2 === 0 ? a : b).accountId === account;
          })
          .map((e) => e.requestId);

      // The operator's reader: every record, in time order, in pages of 1, 2 and 5.
      for (const limit of [1, 2, 5]) {
        const all = await pageAll(audit, { limit });
        expect(all.records.map((r) => r.request_id)).toEqual(newestFirst.map((e) => e.requestId));
        expect(new Set(all.ids).size).toBe(12);
        expect(all.pages).toBe(Math.ceil(12 / limit));
        const times = all.records.map((r) => Date.parse(r.timestamp));
        expect(times).toEqual([...times].sort((x, y) => y - x));
      }
      // The key's own reader: its account's records, in time order, paged.
      for (const account of [a.accountId, b.accountId]) {
        for (const limit of [1, 4]) {
          const own = await pageAll(audit, { account, limit });
          expect(own.records.map((r) => r.request_id)).toEqual(mine(account));
          expect(own.records).toHaveLength(6);
        }
      }
      // A page is stable: the same cursor answers the same records.
      const first = await audit.list({ limit: 3 });
      const again = await audit.list({ limit: 3, before: first.next_before! });
      const repeat = await audit.list({ limit: 3, before: first.next_before! });
      expect(repeat).toEqual(again);
      expect(again.data.map((r) => r.request_id)).toEqual(newestFirst.slice(3, 6).map((e) => e.requestId));
    });
  });
}
