import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import type { BatchJob } from '../../core/batches/types.js';
import { loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/log.js';
import { createPricing } from '../../core/pricing/pricing.js';
import { UpstreamClient } from '../../core/upstream/upstream-client.js';
import { batchBackend, watcherOn } from './support/backend.js';

/**
 * A background response's job survives the process that held it (issue 34, item 5): a watcher that claimed the job
 * and died (its claim never finished) leaves it to another process, which claims it once the claim ran out,
 * and settles it once from the provider's usage. Fixed pricing: 2 sats a call + 1 sat per 1k prompt tokens + 1 per
 * 1k completion tokens; the mock's response: 1 prompt token ("hi!" is 3 characters: ceil(3 / 4)), 1,000 completion tokens.
 */
const pricing = createPricing({
  config: loadConfig({
    FIXED_PRICING: 'false',
    FIXED_COST_PER_REQUEST: '2',
    FIXED_PER_1K_INPUT_TOKENS: '1',
    FIXED_PER_1K_OUTPUT_TOKENS: '1',
  }).pricing,
});
const log = createLogger('silent');

const backend = batchBackend;

describe.each(['sqlite', 'redis'] as const)('background response watch on %s', (kind) => {
  let b: Awaited<ReturnType<typeof backend>>;
  let mock: MockUpstream;
  let upstream: UpstreamClient;
  beforeAll(async () => {
    b = await backend(kind);
    mock = await startMockUpstream({ chunks: 1_000, backgroundPolls: 2 });
    upstream = new UpstreamClient({ baseUrl: mock.url, connections: 4, timeoutMs: 5_000 });
  });
  afterAll(async () => {
    await upstream?.close();
    await mock?.close();
    await b?.close();
  });

  it('a job claimed by a process that died is claimed again after its claim ran out and settled once', async () => {
    const deposit = await b.ledger.createKeyFromDeposit({
      tokenHash: randomUUID().replace(/-/g, ''),
      amountMsat: 100_000,
    });
    if (!deposit.ok) throw new Error(deposit.code);
    const credential = { apiKey: deposit.apiKey };
    const id = `g_${randomUUID()}`;
    const admitted = await b.ledger.admit({
      credential,
      requestId: id,
      model: 'mock-gpt',
      maxMsat: 10_000,
      minMsat: 10_000,
      expiresInMs: 3_600_000,
      limits: { requestsPerMinute: 100, tokensPerHour: 1_000_000, concurrent: 10 },
      exactPath: true,
    });
    expect(admitted.ok).toBe(true);
    // The provider runs it in the background.
    const created = (await (
      await fetch(`${mock.url}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-gpt', input: 'hi!', background: true }),
      })
    ).json()) as { id: string; status: string };
    expect(created.status).toBe('queued');
    const job: BatchJob = {
      id,
      kind: 'response',
      state: 'open',
      accountId: deposit.key.accountId,
      keyId: deposit.key.keyId,
      parentKeyId: null,
      batchId: created.id,
      model: 'mock-gpt',
      endpoint: 'responses',
      factor: '1',
      btcUsd: undefined,
      reservedMsat: 10_000,
      lines: 1,
      createdAtMs: 0,
    };
    let now = 1_000_000;
    await b.jobs.put(job, now);
    const watcher = (clock: () => number) =>
      watcherOn(b, { pricing, upstream, log, pollMs: 100, now: clock });
    // A process claims the job and dies before it did anything (its claim: max(2 s, 5 polls) = 2 s).
    expect(await b.jobs.claim(now, 2_000, 10)).toHaveLength(1);
    const survivor = watcher(() => now);
    expect(await survivor.tick()).toBe(0); // still claimed by the dead one
    now += 2_001;
    // Claimed again; polled until the provider ends it (the first poll finds it queued, the second completed).
    for (let i = 0; i < 10 && (await b.ledger.getKeyInfo(credential))!.usage.reservedMsat > 0; i++) {
      await survivor.tick();
      now += 100;
    }
    // 2 sats + 1 prompt token × 1 msat + 1,000 completion tokens × 1 msat = 2,000 + 1 + 1,000 = 3,001 msat.
    expect((await b.ledger.getKeyInfo(credential))!.usage.reservedMsat).toBe(0);
    const txs = (await b.ledger.listTransactions(credential))!.transactions.filter((t) => t.type === 'usage');
    expect(txs.map((t) => t.amountMsat)).toEqual([-3_001]);
    expect(await b.jobs.get(id)).toBeNull();
    // A late pass (the dead process's claim replayed) charges nothing more.
    await b.jobs.put(job, now);
    await survivor.tick();
    const again = (await b.ledger.listTransactions(credential))!.transactions.filter(
      (t) => t.type === 'usage',
    );
    expect(again).toHaveLength(1);
  });
});
