import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchWatcher } from '../../core/batches/batch-watcher.js';
import type { BatchJob, BatchJobs } from '../../core/batches/types.js';
import { loadConfig } from '../../core/config.js';
import type { WebhookStore } from '../../core/events/types.js';
import type { Ledger } from '../../core/ledger/types.js';
import { createLogger } from '../../core/log.js';
import { type ObjectOwners, ownedBy, storedTokens } from '../../core/objects/types.js';
import { createPricing } from '../../core/pricing/pricing.js';
import { UpstreamClient } from '../../core/upstream/upstream-client.js';
import { type BatchBackend, batchBackend } from './support/backend.js';

/**
 * The stores behind batches and provider objects, the same assertions on SQLite and Redis: ownership records
 * (first owner wins, per-key lists, forget), batch job claims as leases (disjoint under concurrent claims,
 * claimed again after the lease), the ledger's `batch` settlement (one transaction, idempotent, untouched by
 * the orphan release) and the batch.completed event (one delivery per event id).
 */

function job(id: string, over: Partial<BatchJob> = {}): BatchJob {
  return {
    id,
    state: 'open',
    accountId: 'acct',
    keyId: 'k1',
    parentKeyId: null,
    batchId: `batch_${id}`,
    model: 'mock-gpt',
    endpoint: 'chat',
    factor: '0.5',
    btcUsd: undefined,
    reservedMsat: 1000,
    lines: 2,
    createdAtMs: 1,
    ...over,
  };
}

const backends = (['sqlite', 'redis', 'redis-cluster'] as const).map(
  (k) => [k, () => batchBackend(k)] as const,
);

describe.each(backends)('batch stores on %s', (_name, make) => {
  let backend: BatchBackend;
  let ledger: Ledger;
  let owners: ObjectOwners;
  let jobs: BatchJobs;
  let hooks: WebhookStore;
  beforeAll(async () => {
    backend = await make();
    ({ ledger, owners, jobs, hooks } = backend);
  }, 60_000);
  afterAll(async () => backend?.close());

  it('records the first owner of an object id only, lists per key and kind, forgets', async () => {
    const base = { kind: 'file' as const, accountId: 'a1', meta: '{"lines":2}' };
    await owners.record({ ...base, id: 'file-1', keyId: 'kA', createdAtMs: 10 });
    await owners.record({ ...base, id: 'file-1', keyId: 'kB', createdAtMs: 11 });
    await owners.record({ ...base, id: 'file-2', keyId: 'kA', createdAtMs: 12 });
    await owners.record({ ...base, kind: 'batch', id: 'batch-1', keyId: 'kA', createdAtMs: 13, meta: null });
    expect(await owners.get('file-1')).toEqual({ ...base, id: 'file-1', keyId: 'kA', createdAtMs: 10 });
    expect(await ownedBy(owners, 'file-1', 'file', 'kB')).toBeNull();
    expect(await ownedBy(owners, 'file-1', 'batch', 'kA')).toBeNull();
    expect((await ownedBy(owners, 'file-1', 'file', 'kA'))?.id).toBe('file-1');
    expect(await owners.list('kA', 'file', 10)).toEqual(['file-2', 'file-1']);
    expect(await owners.list('kA', 'file', 1)).toEqual(['file-2']);
    expect(await owners.list('kB', 'file', 10)).toEqual([]);
    await owners.forget({ id: 'file-2', kind: 'file', keyId: 'kA' });
    expect(await owners.get('file-2')).toBeNull();
    expect(await owners.list('kA', 'file', 10)).toEqual(['file-1']);
  });

  it('annotates a stored response with its billed tokens; an unknown or forgotten id stays unknown', async () => {
    const o = {
      id: 'resp_t1',
      kind: 'response' as const,
      accountId: 'a1',
      keyId: 'kT',
      createdAtMs: 20,
      meta: null,
    };
    await owners.record(o);
    expect(storedTokens((await owners.get('resp_t1'))!)).toBeUndefined();
    await owners.annotate('resp_t1', JSON.stringify({ input_tokens: 1000, output_tokens: 8 }));
    const got = (await owners.get('resp_t1'))!;
    expect(got).toEqual({ ...o, meta: '{"input_tokens":1000,"output_tokens":8}' });
    expect(storedTokens(got)).toEqual({ input_tokens: 1000, output_tokens: 8 });
    await owners.annotate('resp_none', '{}');
    expect(await owners.get('resp_none')).toBeNull();
    await owners.forget(o);
    await owners.annotate('resp_t1', '{}');
    expect(await owners.get('resp_t1')).toBeNull();
  });

  it('pages a key’s objects newest first after a cursor, equal creation times ordered by id, across inserts', async () => {
    const base = { kind: 'batch' as const, accountId: 'a1', keyId: 'kP', meta: null };
    const at = { p1: 100, p2: 200, p3a: 200, p3b: 200, p4: 300 };
    for (const [id, createdAtMs] of Object.entries(at)) await owners.record({ ...base, id, createdAtMs });
    await owners.record({ ...base, keyId: 'kQ', id: 'q1', createdAtMs: 250 });
    // Newest first; 200 ties by id descending: p3b, p3a, p2.
    const all = ['p4', 'p3b', 'p3a', 'p2', 'p1'];
    expect(await owners.list('kP', 'batch', 10)).toEqual(all);
    expect(await owners.list('kP', 'batch', 2, 'p4')).toEqual(['p3b', 'p3a']);
    expect(await owners.list('kP', 'batch', 2, 'p3b')).toEqual(['p3a', 'p2']);
    expect(await owners.list('kP', 'batch', 1, 'p3a')).toEqual(['p2']);
    expect(await owners.list('kP', 'batch', 10, 'p2')).toEqual(['p1']);
    expect(await owners.list('kP', 'batch', 10, 'p1')).toEqual([]);
    // Another key's id, or an id of another kind, is no cursor here.
    expect(await owners.list('kP', 'batch', 10, 'q1')).toEqual([]);
    expect(await owners.list('kP', 'file', 10, 'p2')).toEqual([]);
    // A newer object recorded between two pages shifts nothing.
    await owners.record({ ...base, id: 'p5', createdAtMs: 400 });
    expect(await owners.list('kP', 'batch', 2, 'p3a')).toEqual(['p2', 'p1']);
    expect(await owners.list('kP', 'batch', 10)).toEqual(['p5', ...all]);
  });

  it('claims each due job once per lease, even under concurrent claims, and again after the lease', async () => {
    const now = 1_000_000;
    await jobs.put(job('j1'), now - 1);
    await jobs.put(job('j2'), now);
    await jobs.put(job('j3'), now + 5_000);
    const claims = await Promise.all(Array.from({ length: 6 }, () => jobs.claim(now, 1_000, 10)));
    const ids = claims.flat().map((j) => j.id);
    expect(ids.sort()).toEqual(['j1', 'j2']);
    expect(await jobs.claim(now + 999, 1_000, 10)).toEqual([]);
    expect((await jobs.claim(now + 1_000, 1_000, 10)).map((j) => j.id).sort()).toEqual(['j1', 'j2']);
    await jobs.remove('j1');
    expect(await jobs.get('j1')).toBeNull();
    expect((await jobs.get('j3'))?.batchId).toBe('batch_j3');
    expect((await jobs.claim(now + 10_000, 1_000, 10)).map((j) => j.id).sort()).toEqual(['j2', 'j3']);
    await jobs.remove('j2');
    await jobs.remove('j3');
  });

  it('settles a batch reservation as one batch transaction, once; the orphan release leaves it alone', async () => {
    const deposit = await ledger.createKeyFromDeposit({
      tokenHash: randomUUID().replace(/-/g, ''),
      amountMsat: 10_000,
    });
    if (!deposit.ok) throw new Error(deposit.code);
    const credential = { apiKey: deposit.apiKey };
    const requestId = `b_${randomUUID()}`;
    const limits = { requestsPerMinute: 100, tokensPerHour: 1_000_000, concurrent: 10 };
    const a = await ledger.admit({
      credential,
      requestId,
      model: 'mock-gpt',
      maxMsat: 4_000,
      minMsat: 4_000,
      expiresInMs: 48 * 3_600_000,
      limits,
      exactPath: true,
    });
    expect(a).toMatchObject({ ok: true, reservedMsat: 4_000 });
    // Another process died: what it owned is released, the batch (owned by no process) is not.
    await ledger.heartbeat('deadbeef0001', Date.now() - 60_000);
    await ledger.releaseOrphans(1_000);
    expect((await ledger.getKeyInfo(credential))!.account.reservedMsat).toBe(4_000);
    const settle = {
      accountId: deposit.key.accountId,
      requestId,
      costMsat: 39,
      promptTokens: 0,
      completionTokens: 0,
      model: 'mock-gpt',
      description: 'Batch batch_x completed: 3 of 3 lines answered, 0 failed',
      estimated: false,
      transactionType: 'batch' as const,
    };
    expect(await ledger.settle(settle)).toMatchObject({
      ok: true,
      replay: false,
      chargedMsat: 39,
      releasedMsat: 3_961,
    });
    expect(await ledger.settle({ ...settle, costMsat: 4_000 })).toMatchObject({
      ok: true,
      replay: true,
      chargedMsat: 39,
    });
    const txs = (await ledger.listTransactions(credential))!.transactions;
    expect(txs.filter((t) => t.type === 'batch').map((t) => [t.amountMsat, t.description])).toEqual([
      [-39, 'Batch batch_x completed: 3 of 3 lines answered, 0 failed'],
    ]);
    const info = (await ledger.getKeyInfo(credential))!;
    expect(info.account.reservedMsat).toBe(0);
    expect(info.account.balanceMsat).toBe(10_000 - 39);
    expect((await ledger.checkConservation()).breaches).toEqual([]);
  });

  it('the watcher gives back the reservation of a batch whose creation never completed (pending job)', async () => {
    const deposit = await ledger.createKeyFromDeposit({
      tokenHash: randomUUID().replace(/-/g, ''),
      amountMsat: 5_000,
    });
    if (!deposit.ok) throw new Error(deposit.code);
    const id = `b_${randomUUID()}`;
    const limits = { requestsPerMinute: 100, tokensPerHour: 1_000_000, concurrent: 10 };
    const credential = { apiKey: deposit.apiKey };
    await ledger.admit({
      credential,
      requestId: id,
      model: 'm',
      maxMsat: 3_000,
      minMsat: 3_000,
      expiresInMs: 3_600_000,
      limits,
      exactPath: true,
    });
    await jobs.put(
      job(id, { state: 'pending', batchId: null, accountId: deposit.key.accountId, reservedMsat: 3_000 }),
      0,
    );
    const upstream = new UpstreamClient({
      baseUrl: 'http://127.0.0.1:9/v1',
      connections: 1,
      timeoutMs: 1_000,
    });
    const watcher = new BatchWatcher({
      jobs,
      objects: owners,
      ledger,
      pricing: createPricing({ config: loadConfig({ FIXED_PRICING: 'true' }).pricing }),
      upstream,
      log: createLogger('silent'),
      pollMs: 50,
      reconcilePolls: 3,
    });
    expect(await watcher.tick()).toBe(1);
    await upstream.close();
    expect(await jobs.get(id)).toBeNull();
    const info = (await ledger.getKeyInfo(credential))!;
    expect(info.account.reservedMsat).toBe(0);
    expect(info.availableMsat).toBe(5_000);
  });

  it('enqueues batch.completed once per event id to the subscribed webhooks of the key and its parent', async () => {
    const key = {
      accountId: `acc${randomUUID().slice(0, 8)}`,
      keyId: 'kchild',
      parentKeyId: 'kparent',
      expiresAtMs: null,
    };
    await hooks.createWebhook(
      { ...key, keyId: 'kparent', parentKeyId: null },
      { url: 'https://example.com/hook', events: ['batch.completed'], secret: 's' },
    );
    await hooks.createWebhook(key, {
      url: 'https://example.com/other',
      events: ['balance.low'],
      secret: 's',
    });
    const data = { batch_id: 'batch_1', charged_msats: 39 };
    expect(await hooks.onEvent(key, 'batch.completed', 'evt_batch_b_1', data)).toBe(1);
    await hooks.onEvent(key, 'batch.completed', 'evt_batch_b_1', data);
    const due = await hooks.claimDue(Date.now() + 1_000, 60_000, 10);
    const mine = due.filter((d) => d.accountId === key.accountId);
    expect(mine).toHaveLength(1);
    expect(JSON.parse(mine[0]!.body)).toMatchObject({
      id: 'evt_batch_b_1',
      type: 'batch.completed',
      data: { key_id: 'kchild', batch_id: 'batch_1', charged_msats: 39 },
    });
  });
});
