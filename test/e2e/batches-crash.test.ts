import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createBatch, uploadBatchInput } from '../support/batches.js';
import { paidProcessesPerTest } from '../support/paid-process.js';
import { BOOK_PRICES } from '../support/prices.js';
import { until } from '../support/until.js';

/**
 * A batch survives its process (the money rules): kill -9 while the batch runs (a restarted process's
 * orphan release must NOT release the batch's reservation: no process owns it), then a process killed by the
 * crash hook right after the settlement (before the job is removed), then a third process resumes: the batch is
 * charged exactly once, at the batch rate. Prices as in batches.test.ts: 3 lines × 13 msat = 39 msat.
 */
const ENV = {
  ...BOOK_PRICES,
  BATCH_POLL_MS: '50',
  ORPHAN_RELEASE_MS: '1500',
};

const LINES = Array.from({ length: 3 }, (_, i) =>
  JSON.stringify({
    custom_id: `req-${i}`,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'mock-gpt', max_tokens: 20, messages: [{ role: 'user', content: 'x'.repeat(40) }] },
  }),
).join('\n');

describe.each(['sqlite', 'redis'] as const)('batch settlement across kill -9 (%s)', (store) => {
  const paidProcesses = paidProcessesPerTest();

  it('keeps the reservation through a dead process and charges exactly once after a crash mid-settlement', async () => {
    const procs = await paidProcesses(store, {
      batch: { delayMs: 600_000, outcome: 'completed', answered: 0, usage: undefined },
    });
    const a = await procs.spawn(ENV);
    const base = `http://127.0.0.1:${a.port}`;
    const apiKey = await procs.createKey(base, 100);
    const client = new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0 });
    const file = await uploadBatchInput(client, LINES, 'in.jsonl');
    await createBatch(client, file.id);
    const info = () => procs.ps.withLedger(async (l) => (await l.getKeyInfo({ apiKey }))!);
    const start = await info();
    const reserved = start.account.reservedMsat;
    expect(reserved).toBeGreaterThan(39);

    await a.kill('SIGKILL');
    const b = await procs.spawn({ ...ENV, WALLET_TEST_CRASH_AT: 'batch-settled' });
    // The orphan pass has run over the dead process (it held nothing of its own: the batch's reservation is
    // owned by no process, so the pass logs the info line, not the warning).
    await until('the dead process is released as an orphan', () =>
      /released what stopped processes held|forgot stopped processes/.test(b.logs()),
    );
    // The batch is still open at the provider: its reservation is kept.
    expect((await info()).account.reservedMsat).toBe(reserved);

    procs.up.setBehaviour({ batch: { delayMs: 0, outcome: 'completed', answered: 0, usage: undefined } });
    // The crash hook kills the process right after the ledger settled, before the job was removed.
    await Promise.race([
      b.exited,
      new Promise((_, reject) => setTimeout(() => reject(new Error('no crash after settlement')), 20_000)),
    ]);
    const batchTxs = () =>
      procs.ps.withLedger(async (l) =>
        (await l.listTransactions({ apiKey }))!.transactions.filter((t) => t.type === 'batch'),
      );
    expect((await batchTxs()).map((t) => t.amountMsat)).toEqual([-39]);

    const c = await procs.spawn(ENV);
    await until(
      'the restarted process resumes the settlement',
      () => c.logs().includes('batch settled'),
      20_000,
    );
    expect(c.logs()).toContain('"replay":true');
    expect((await batchTxs()).map((t) => t.amountMsat)).toEqual([-39]);
    const end = await info();
    expect(end.account.reservedMsat).toBe(0);
    expect(end.availableMsat).toBe(start.availableMsat + reserved - 39);
    const audit = await procs.ps.withLedger((l) => l.checkConservation());
    expect(audit.breaches).toEqual([]);
  }, 240_000);
});
