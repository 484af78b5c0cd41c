import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import { accountKeys } from '../../core/ledger/redis/redis-keys.js';
import { createRedisLedger } from '../../core/ledger/redis/redis-ledger.js';
import { batchScript } from '../../core/ledger/redis/redis-scripts.js';
import { BATCH_MAX } from '../../core/ledger/redis/script-batch.js';
import type { Ledger } from '../../core/ledger/types.js';
import { deleteKeys } from '../../scripts/lib/redis-cleanup.js';
import { admitInput, settleInput } from './support/conformance.js';
import { randomTokenHash } from './support/harness.js';
import { playRounds, roundsOf } from './support/rounds-property.js';

/**
 * The batched exact path on Redis (core/ledger/redis/script-batch.ts): the admit, settle, release and
 * count-request steps asked for in one turn go to Redis as one script. What must hold: each step is answered
 * its own reply, the same as had it run alone, in the order asked; one step's Lua error is its own.
 */

const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const clients: Redis[] = [];
const prefixes: string[] = [];
afterAll(async () => {
  const c = new Redis(url);
  for (const p of prefixes) await deleteKeys(c, `${p}:*`);
  c.disconnect();
  for (const x of clients) x.disconnect();
});

/** A Redis ledger on a client of its own; `batches` records the step count of every batch script sent. */
async function open(): Promise<{ ledger: Ledger; client: Redis; prefix: string; batches: number[] }> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  clients.push(client);
  const prefix = `t${randomBytes(6).toString('hex')}`;
  prefixes.push(prefix);
  const ledger = await createRedisLedger(client, prefix, { warn: () => {} });
  const batches: number[] = [];
  // Every script call is an EVALSHA (lua-scripts.ts): the batch script's are told apart by its SHA-1.
  const { sha } = batchScript();
  const c = client as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>;
  const send = c.evalsha!.bind(client);
  c.evalsha = (...a) => {
    if (a[0] === sha) batches.push(Number(a[2 + Number(a[1])]));
    return send(...a);
  };
  return { ledger, client, prefix, batches };
}

async function fund(ledger: Ledger, amountMsat: number): Promise<{ apiKey: string; accountId: string }> {
  const d = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat });
  if (!d.ok) throw new Error(d.code);
  return { apiKey: d.apiKey, accountId: d.key.accountId };
}

const admit = (ledger: Ledger, apiKey: string, max = 100, min = 1) =>
  ledger.admit(admitInput(apiKey, { maxMsat: max, minMsat: min, expiresInMs: 60_000 }));

describe('Redis batched exact path', () => {
  it('the steps asked for in one turn go as one script, each answered its own reply', async () => {
    const { ledger, batches } = await open();
    const keys = await Promise.all(Array.from({ length: 20 }, () => fund(ledger, 10_000)));
    batches.length = 0;
    const admits = await Promise.all(keys.map((k) => admit(ledger, k.apiKey)));
    expect(batches).toEqual([20]);
    for (const a of admits) expect(a).toMatchObject({ ok: true, reservedMsat: 100, availableMsat: 9_900 });
    const settles = await Promise.all(
      admits.map((a) => {
        if (!a.ok) throw new Error(a.code);
        return ledger.settle(settleInput(a, { costMsat: 40 }));
      }),
    );
    expect(batches).toEqual([20, 20]);
    for (const s of settles) expect(s).toMatchObject({ ok: true, chargedMsat: 40, balanceMsat: 9_960 });
    for (const k of keys) {
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 9_960, reservedMsat: 0 });
    }
    expect((await ledger.checkConservation()).ok).toBe(true);
  });

  it(`more than ${BATCH_MAX} at once: several scripts, the steps still in the order asked`, async () => {
    const { ledger, batches } = await open();
    const k = await fund(ledger, 10_000);
    batches.length = 0;
    const n = 150;
    const answers = await Promise.all(Array.from({ length: n }, () => admit(ledger, k.apiKey, 100, 100)));
    expect(batches).toEqual([BATCH_MAX, BATCH_MAX, n - 2 * BATCH_MAX]);
    // The balance affords 100 of them: the first 100 asked are the ones admitted.
    expect(answers.map((a) => a.ok)).toEqual([...Array(100).fill(true), ...Array(50).fill(false)]);
    for (const a of answers.slice(100)) expect(a).toMatchObject({ ok: false, code: 'payment_required' });
  });

  it("one step's Lua error is its own: the others of the batch are answered and applied", async () => {
    const { ledger, client, prefix, batches } = await open();
    const keys = await Promise.all(Array.from({ length: 3 }, () => fund(ledger, 10_000)));
    // The middle account's record becomes a string: its admit's first HMGET fails inside the batch (WRONGTYPE).
    const acct = accountKeys(prefix, keys[1]!.accountId).acct;
    await client.del(acct);
    await client.set(acct, 'not a hash');
    batches.length = 0;
    const out = await Promise.allSettled(keys.map((k) => admit(ledger, k.apiKey)));
    expect(batches).toEqual([3]);
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const err = (out[1] as PromiseRejectedResult).reason;
    expect(isGatewayError(err) && err.code).toBe('internal_error');
    for (const i of [0, 2]) {
      expect((out[i] as PromiseFulfilledResult<unknown>).value).toMatchObject({
        ok: true,
        reservedMsat: 100,
      });
      const info = await ledger.getKeyInfo({ apiKey: keys[i]!.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 10_000, reservedMsat: 100 });
    }
  });

  it('property: the answers of concurrent rounds equal those of the same steps run one at a time', async () => {
    await fc.assert(
      fc.asyncProperty(roundsOf(true), async (plan) => {
        const setup = async () => {
          const o = await open();
          const keys = [];
          for (let i = 0; i < 3; i++) keys.push(await fund(o.ledger, 5_000 + i * 1_000));
          return { ...o, keys };
        };
        const together = await setup();
        const single = await setup();
        await playRounds(plan, together, single);
        // One at a time, every step went as its own script; together, rounds of several steps went as batches.
        expect(single.batches).toEqual([]);
        if (plan.some((round) => round.length > 1)) expect(together.batches.length).toBeGreaterThan(0);
      }),
      { numRuns: 25 },
    );
  });
});
