import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import type { BatchJob } from '../../core/batches/types.js';
import { loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/log.js';
import { createPricing } from '../../core/pricing/pricing.js';
import { UpstreamClient } from '../../core/upstream/upstream-client.js';
import type { UpstreamResponse } from '../../core/upstream/upstream-response.js';
import { type BatchBackend, batchBackend, watcherOn } from './support/backend.js';

/**
 * The settlement watcher on SQLite and Redis:
 * - cadence: with an injected clock, passes every BATCH_POLL_MS and a provider that takes 30 % of a poll to
 *   answer, each open batch is asked about once per pass, and settled in the first pass after the provider reports
 *   it ended (one poll, not two);
 * - reconciliation: a `pending` job whose process died after the provider made its batch is found in the
 *   provider's paged list (its batch behind 120 newer ones), recorded as the key's and settled once; a second
 *   job for the same input file never takes that batch, and is released after BATCH_RECONCILE_POLLS searches.
 * Prices: FIXED_PRICING with FIXED_COST_PER_REQUEST=1 sat, factor 0.5: 500 msat per answered line.
 */

const pricing = createPricing({
  config: loadConfig({ FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '1' }).pricing,
});
const log = createLogger('silent');

const backend = batchBackend;

const LINE = (i: number) =>
  JSON.stringify({
    custom_id: `r${i}`,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'mock-gpt', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] },
  });

describe.each(['sqlite', 'redis'] as const)('batch watcher on %s', (kind) => {
  let b: BatchBackend;
  let mock: MockUpstream;
  let upstream: UpstreamClient;
  beforeAll(async () => {
    b = await backend(kind);
    mock = await startMockUpstream();
    upstream = new UpstreamClient({ baseUrl: mock.url, connections: 4, timeoutMs: 5_000 });
  });
  afterAll(async () => {
    await upstream?.close();
    await mock?.close();
    await b?.close();
  });

  /** A funded key with `reservedMsat` reserved under a new batch job id. */
  async function reserved(reservedMsat: number) {
    const deposit = await b.ledger.createKeyFromDeposit({
      tokenHash: randomUUID().replace(/-/g, ''),
      amountMsat: 10_000,
    });
    if (!deposit.ok) throw new Error(deposit.code);
    const id = `b_${randomUUID()}`;
    const credential = { apiKey: deposit.apiKey };
    const admitted = await b.ledger.admit({
      credential,
      requestId: id,
      model: 'mock-gpt',
      maxMsat: reservedMsat,
      minMsat: reservedMsat,
      expiresInMs: 3_600_000,
      limits: { requestsPerMinute: 100, tokensPerHour: 1_000_000, concurrent: 10 },
      exactPath: true,
    });
    expect(admitted.ok).toBe(true);
    const job: BatchJob = {
      id,
      state: 'open',
      accountId: deposit.key.accountId,
      keyId: deposit.key.keyId,
      parentKeyId: null,
      batchId: null,
      model: 'mock-gpt',
      endpoint: 'chat',
      factor: '0.5',
      btcUsd: undefined,
      reservedMsat,
      lines: 2,
      createdAtMs: Date.now(),
    };
    return { job, credential };
  }

  async function batchTxs(credential: { apiKey: string }) {
    const txs = (await b.ledger.listTransactions(credential))!.transactions;
    return txs.filter((t) => t.type === 'batch').map((t) => t.amountMsat);
  }

  it('polls an open batch once per BATCH_POLL_MS and settles it in the first pass after it ended', async () => {
    const P = 1_000;
    let clock = 1_000_000;
    const endsAt = clock + 3.5 * P;
    const asked: number[] = [];
    const output = Buffer.from(
      [0, 1]
        .map((i) =>
          JSON.stringify({
            custom_id: `r${i}`,
            response: { status_code: 200, body: { usage: { prompt_tokens: 3, completion_tokens: 4 } } },
          }),
        )
        .join('\n'),
    );
    // The provider, answering on the injected clock after 30 % of a poll.
    const provider = {
      timeoutMs: 5_000,
      async send(req: { method: string; path: string }): Promise<UpstreamResponse> {
        let body: Buffer;
        if (req.path.endsWith('/content')) body = output;
        else {
          asked.push(clock);
          const ended = clock >= endsAt;
          body = Buffer.from(
            JSON.stringify({
              id: 'batch_cadence',
              status: ended ? 'completed' : 'in_progress',
              output_file_id: ended ? 'file-out' : null,
              error_file_id: null,
              request_counts: { total: 2, completed: ended ? 2 : 0, failed: 0 },
            }),
          );
        }
        clock += 0.3 * P;
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          finished: true,
          pipe: (s) => {
            s.onData(body);
            s.onEnd();
          },
          pause: () => {},
          resume: () => {},
          abort: () => {},
        };
      },
    } as unknown as UpstreamClient;
    const { job, credential } = await reserved(3_000);
    const start = clock;
    // As the create route leaves it: open, due one poll later.
    await b.jobs.put({ ...job, batchId: 'batch_cadence', createdAtMs: start }, start + P);
    const watcher = watcherOn(b, { pricing, upstream: provider, log, pollMs: P, now: () => clock });
    let settledAt: number | undefined;
    for (let k = 1; k <= 6 && settledAt === undefined; k++) {
      // The interval's pass k, a little late as timers are.
      clock = start + k * P + 7;
      await watcher.tick();
      if ((await batchTxs(credential)).length > 0) settledAt = start + k * P;
    }
    // Asked at every pass (1 … 4), settled at pass 4: the first after the provider reported the end at 3.5 polls.
    expect(asked.map((t) => Math.round((t - start) / P))).toEqual([1, 2, 3, 4]);
    expect(settledAt).toBe(start + 4 * P);
    expect(settledAt! - endsAt).toBeLessThanOrEqual(P);
    // 2 answered lines × 1 sat × 0.5.
    expect(await batchTxs(credential)).toEqual([-1_000]);
    expect(await b.jobs.get(job.id)).toBeNull();
  });

  it('a pending job whose provider made the batch is found in the paged list and settled once; a second job for the same file never takes it and is released', async () => {
    mock.setBehaviour({ batch: { delayMs: 0, outcome: 'completed', answered: 0, usage: undefined } });
    const upload = async (text: string) => {
      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('file', new Blob([text]), 'in.jsonl');
      const r = await fetch(`${mock.url}/files`, { method: 'POST', body: form });
      return ((await r.json()) as { id: string }).id;
    };
    const create = async (input_file_id: string) => {
      const r = await fetch(`${mock.url}/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      });
      return ((await r.json()) as { id: string }).id;
    };
    const fileId = await upload(`${LINE(0)}\n${LINE(1)}\n`);
    const first = await reserved(3_000);
    const second = await reserved(3_000);
    const attemptAtMs = Date.now();
    // The process that sent the create call died before recording the answer: the provider made the batch.
    const batchId = await create(fileId);
    // 120 newer batches of another file: the one sought is on the list's second page.
    const otherFile = await upload(`${LINE(0)}\n`);
    for (let i = 0; i < 120; i++) await create(otherFile);
    const pendingJob = (j: BatchJob): BatchJob => ({
      ...j,
      state: 'pending',
      inputFileId: fileId,
      attemptAtMs,
    });
    await b.jobs.put(pendingJob(first.job), 0);
    const watcher = watcherOn(b, { pricing, upstream, log, pollMs: 50 });
    expect(await watcher.tick()).toBe(1);
    expect(await b.owners.get(batchId)).toMatchObject({
      kind: 'batch',
      keyId: first.job.keyId,
      meta: JSON.stringify({ job: first.job.id }),
    });
    expect(await batchTxs(first.credential)).toEqual([-1_000]);
    expect((await b.ledger.getKeyInfo(first.credential))!.account.reservedMsat).toBe(0);
    expect(await b.jobs.get(first.job.id)).toBeNull();

    // Another job for the same file: the batch is taken, so it finds nothing, thrice, and is released.
    await b.jobs.put(pendingJob(second.job), 0);
    for (let pass = 1; pass <= 3; pass++) {
      const now = Date.now() + pass * 1_000;
      const w = watcherOn(b, { pricing, upstream, log, pollMs: 50, now: () => now });
      expect(await w.tick()).toBe(1);
      const left = await b.jobs.get(second.job.id);
      if (pass < 3) {
        expect(left).toMatchObject({ state: 'reconcile', reconcilePolls: pass });
        expect((await b.ledger.getKeyInfo(second.credential))!.account.reservedMsat).toBe(3_000);
      } else expect(left).toBeNull();
    }
    expect((await b.ledger.getKeyInfo(second.credential))!.account.reservedMsat).toBe(0);
    expect((await b.ledger.getKeyInfo(second.credential))!.availableMsat).toBe(10_000);
    expect(await batchTxs(second.credential)).toEqual([]);
    expect((await b.owners.get(batchId))!.keyId).toBe(first.job.keyId);
    // The first key's batch was charged once, whatever the second job did.
    expect(await batchTxs(first.credential)).toEqual([-1_000]);
  });
});
