import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../core/audit/audit-log.js';
import { paidProcessesPerTest } from '../support/paid-process.js';
import { until } from '../support/until.js';

/**
 * A charged call always has its audit record (docs/ledger.md, "Audit records"): the record is written by the
 * store step that charges the call — the settle script or transaction, or the credit-lease report that
 * carries it — so a gateway killed with -9 in the middle of paid traffic leaves no charge without a record.
 * (Before, records waited up to 250 ms in memory and the last ones were lost with the process.) Run with
 * credit leases on (the default: records ride the lease report) and off (the per-call settle), on both stores.
 */
const LANES = 8;

describe.each([
  ['sqlite', 'on'],
  ['sqlite', 'off'],
  ['redis', 'on'],
  ['redis', 'off'],
] as const)('kill -9 with paid calls in flight (%s, leases %s)', (store, leases) => {
  const paidProcesses = paidProcessesPerTest();

  it('every charged call has its audit record, with the charged amount', async () => {
    const procs = await paidProcesses(store, { latencyMs: 5, chunks: 4 });
    const gw = await procs.spawn({
      LEDGER_LEASES: leases,
      RATE_LIMIT_CONCURRENT: '100',
      RATE_LIMIT_REQUESTS_PER_MINUTE: '100000',
    });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await procs.createKey(base, 1000);
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0, timeout: 10_000 });
    let answered = 0;
    let killed = false;
    const lane = async () => {
      while (!killed) {
        try {
          await client.chat.completions.create({
            model: 'mock-gpt',
            messages: [{ role: 'user', content: 'hi' }],
          });
          answered++;
        } catch {
          if (!killed) throw new Error('a call failed before the kill');
        }
      }
    };
    const lanes = Array.from({ length: LANES }, lane);
    // Kill while every lane has a call open, once enough were answered for the check to mean something.
    await until('60 calls answered', () => answered >= 60, 30_000, 5);
    expect(answered).toBeGreaterThanOrEqual(60);
    killed = true;
    await gw.kill('SIGKILL');
    await Promise.all(lanes);

    const { accountId, spent, usage } = await procs.ps.withLedger(async (ledger) => {
      const info = (await ledger.getKeyInfo({ apiKey }))!;
      const txs = (await ledger.listTransactions({ apiKey }, { limit: 10_000 }))!;
      expect((await ledger.checkConservation()).breaches).toEqual([]);
      return {
        accountId: info.key.accountId,
        spent: info.account.spentMsat,
        usage: txs.transactions.filter((t) => t.type === 'usage').map((t) => -t.amountMsat),
      };
    });
    const paid = await procs.ps.withAuditLog(async (audit) => {
      const out: AuditRecord[] = [];
      let before: string | undefined;
      for (;;) {
        const page = await audit.list({ account: accountId, limit: 500, ...(before ? { before } : {}) });
        out.push(...page.data.filter((r) => r.endpoint === '/v1/chat/completions'));
        if (!page.has_more) return out;
        before = page.next_before!;
      }
    });
    // Calls charged before the kill: many (leases: those reported in a step), and never more than answered
    // plus the calls open at the kill.
    expect(usage.length).toBeGreaterThan(0);
    expect(usage.length).toBeLessThanOrEqual(answered + LANES);
    // One record per charge, with the same amounts, and together what the account spent.
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    expect(sorted(paid.map((r) => r.cost_msats))).toEqual(sorted(usage));
    expect(paid.reduce((a, r) => a + r.cost_msats, 0)).toBe(spent);
    expect(new Set(paid.map((r) => r.request_id)).size).toBe(paid.length);
    for (const r of paid) {
      expect(r).toMatchObject({ method: 'POST', response_status: 200, kind: 'key', ip_address: '127.0.0.1' });
      expect(r.cost_sats).toBe(Math.floor(r.cost_msats / 1000));
    }
  }, 120_000);
});
