import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { LeaseCall, LeaseInput } from '../../core/ledger/types.js';
import { until } from '../support/until.js';
import { callRecord } from './support/audit-records.js';
import { admitOk, BIG, fund, rid, settleInput } from './support/conformance.js';
import { redisFactory, type StoreHarness } from './support/harness.js';

/**
 * Redis keeps an account's audit records in a stream trimmed by age (AUDIT_RETENTION_DAYS, here
 * `auditRetentionMs`): the settle step trims as it adds each record, the lease step once after it added all of
 * its calls' records (core/ledger/redis/includes/history.lua `addAudits`). Either way, what is older than the
 * retention goes and what the step just wrote stays. The stream's ids are Redis's clock and the trim's bound is
 * the gateway's (`Date.now()` − retention), neither injectable: the test waits until both have passed the
 * records' write time by the retention.
 */

const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const factory = redisFactory(url);
const clock = new Redis(url, { maxRetriesPerRequest: 1 });
const RETENTION_MS = 1500;

afterAll(async () => {
  clock.disconnect();
  await factory.teardown();
});

/** Redis's clock, ms (the stream's entry ids). */
async function redisNowMs(): Promise<number> {
  const [s, us] = await clock.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Waits until records written by now are older than the retention on both clocks. */
async function pastRetention(): Promise<void> {
  const written = Math.max(Date.now(), await redisNowMs());
  await until(
    'the records written so far are past the audit retention',
    async () => Math.min(Date.now(), await redisNowMs()) > written + RETENTION_MS,
    RETENTION_MS + 10_000,
    50,
  );
}

function call(apiKey: string, costMsat: number): LeaseCall {
  const requestId = rid();
  const now = Date.now();
  return {
    requestId,
    costMsat,
    promptTokens: 1,
    completionTokens: 0,
    model: 'm',
    description: 'm: 1 token',
    estimated: false,
    auditRecord: callRecord(apiKey, requestId, now),
    atMs: now,
  };
}

function step(h: StoreHarness, apiKey: string, id: string, seq: number, over: Partial<LeaseInput>) {
  return h.ledger.lease({
    credential: { apiKey },
    leaseId: id,
    seq,
    wantMsat: 10_000,
    minMsat: 1,
    wantRequests: 100,
    usedRequests: 0,
    ttlMs: 60_000,
    limits: BIG,
    calls: [],
    close: false,
    ...over,
  });
}

describe('redis: the audit stream trimmed by age, by the lease step and by settle', () => {
  it('records older than the retention go; those the step just wrote stay', async () => {
    const h = await factory.create({ auditRetentionMs: RETENTION_MS });
    try {
      const k = await fund(h.ledger, 1_000_000, Date.now());
      const ids = async () =>
        (await h.auditLog().list({ account: k.accountId, limit: 100 })).data.map((x) => x.request_id);
      const id = `l~abcdef012345~${randomUUID()}`;
      await step(h, k.apiKey, id, 1, { now: Date.now() });
      const first = [call(k.apiKey, 10), call(k.apiKey, 11), call(k.apiKey, 12)];
      expect(
        await step(h, k.apiKey, id, 2, { calls: first, usedRequests: 3, now: Date.now() }),
      ).toMatchObject({
        ok: true,
        chargedMsat: [10, 11, 12],
      });
      expect(await ids()).toEqual(first.map((c) => c.requestId).reverse());

      await pastRetention();
      const second = [call(k.apiKey, 20), call(k.apiKey, 21)];
      expect(
        await step(h, k.apiKey, id, 3, { calls: second, usedRequests: 2, now: Date.now() }),
      ).toMatchObject({
        ok: true,
        chargedMsat: [20, 21],
      });
      // The first step's records are past the retention: the second step's trim took them.
      expect(await ids()).toEqual(second.map((c) => c.requestId).reverse());
      await step(h, k.apiKey, id, 4, { close: true, now: Date.now() });

      await pastRetention();
      const now = Date.now();
      const a = await admitOk(h.ledger, k.apiKey, 1000, 0, now);
      const record = callRecord(k.apiKey, a.requestId, now);
      await h.ledger.settle(settleInput(a, { costMsat: 30, auditRecord: record, now }));
      // The exact path's settle trims as it adds: only its own record is left.
      expect(await ids()).toEqual([a.requestId]);
      expect((await h.ledger.checkConservation()).breaches).toEqual([]);
    } finally {
      await h.close();
    }
  }, 30_000);
});
