import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  accountIndexCompleteKey,
  accountIndexKey,
  accountKeys,
  keyIdIndexKey,
} from '../../core/ledger/redis/redis-keys.js';
import { createRedisLedger, type RedisLedger } from '../../core/ledger/redis/redis-ledger.js';
import { deleteKeys } from '../../scripts/lib/redis-cleanup.js';
import { admitInput } from './support/conformance.js';
import { randomTokenHash } from './support/harness.js';

/**
 * The Redis ledger's account index (`<p>:{meta}:accounts`, redis-keys.ts): sums, audits and sweeps walk the
 * store's own accounts, never the whole keyspace of a Redis that other things share; an account is indexed
 * before the credit that creates it (a failed index write refuses the credit, so the index is never one short);
 * a store from before the index is scanned once and then never again.
 */

const url = process.env.TEST_REDIS_URL!;
let client: Redis;
const prefixes: string[] = [];

beforeAll(() => {
  client = new Redis(url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  for (const p of prefixes) await deleteKeys(client, `${p}:*`);
  client.disconnect();
});

function newPrefix(): string {
  const p = `tidx${randomBytes(6).toString('hex')}`;
  prefixes.push(p);
  return p;
}

async function ledgerAt(prefix: string): Promise<RedisLedger> {
  return createRedisLedger(client, prefix, { warn: () => {} });
}

/** What every whole-store read answers: the conservation check, the user balances, both sweeps. */
async function wholeStoreReads(ledger: RedisLedger) {
  const report = await ledger.checkConservation();
  return {
    ok: report.ok,
    accounts: report.accounts,
    total: await ledger.totalUserBalancesMsat(),
    swept: await ledger.sweepExpired(Date.now() + 3_600_000),
    orphans: await ledger.releaseOrphans(0, Date.now() + 3_600_000),
  };
}

describe('Redis account index', () => {
  it('a new store starts complete; each deposit and token account is indexed; whole-store reads never SCAN', async () => {
    const prefix = newPrefix();
    const ledger = await ledgerAt(prefix);
    expect(await client.exists(accountIndexCompleteKey(prefix))).toBe(1);
    const scan = vi.spyOn(client, 'scan');
    try {
      const deposits = [];
      for (let i = 0; i < 3; i++) {
        const r = await ledger.createKeyFromDeposit({
          tokenHash: randomTokenHash(),
          amountMsat: 1000 * (i + 1),
        });
        expect(r.ok).toBe(true);
        if (r.ok) deposits.push(r);
      }
      const tokenHash = randomTokenHash();
      const token = await ledger.credit({
        credential: { tokenHash },
        tokenHash,
        amountMsat: 500,
        kind: 'deposit',
      });
      expect(token.ok).toBe(true);
      const ids = await client.smembers(accountIndexKey(prefix));
      expect(ids.sort()).toEqual(
        [...deposits.map((d) => d.key.accountId), token.ok ? token.accountId : ''].sort(),
      );

      // An open reservation past its expiry is swept; one held by a dead process is released.
      const k = deposits[0]!;
      const admitted = await ledger.admit(
        admitInput(k.apiKey, { maxMsat: 400, minMsat: 400, expiresInMs: 1_000, now: Date.now() }),
      );
      expect(admitted.ok).toBe(true);
      const reads = await wholeStoreReads(ledger);
      expect(reads).toMatchObject({ ok: true, accounts: 4, total: 6_500, swept: 1 });

      // A key id the console's index forgot is still found, through the account index.
      await client.del(keyIdIndexKey(prefix));
      expect(await ledger.findKeyById(k.key.keyId)).toEqual({
        keyRef: { accountId: k.key.accountId, keyHash: expect.any(String) },
      });
      expect(scan).not.toHaveBeenCalled();
    } finally {
      scan.mockRestore();
    }
  });

  it('an index write that fails refuses the credit: no account exists that the sums would miss', async () => {
    const prefix = newPrefix();
    const ledger = await ledgerAt(prefix);
    const sadd = vi.spyOn(client, 'sadd').mockRejectedValueOnce(new Error('connection reset'));
    try {
      const tokenHash = randomTokenHash();
      await expect(ledger.createKeyFromDeposit({ tokenHash, amountMsat: 2_000 })).rejects.toMatchObject({
        code: 'store_unavailable',
      });
      expect(await ledger.totalUserBalancesMsat()).toBe(0);
      // The retry indexes and credits it once.
      const again = await ledger.createKeyFromDeposit({ tokenHash, amountMsat: 2_000 });
      expect(again).toMatchObject({ ok: true, replay: false, balanceMsat: 2_000 });
      expect(await ledger.totalUserBalancesMsat()).toBe(2_000);
    } finally {
      sadd.mockRestore();
    }
  });

  it('a store from before the index is scanned once, by the first reader, then never again', async () => {
    const prefix = newPrefix();
    const old = await ledgerAt(prefix);
    const made = [];
    for (let i = 0; i < 5; i++) {
      const r = await old.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: 1_000 });
      if (r.ok) made.push(r.key.accountId);
    }
    // As a store written before the index: neither the index nor its completion mark.
    await client.del(accountIndexKey(prefix), accountIndexCompleteKey(prefix));
    // Another prefix's accounts in the same Redis are never taken for this store's.
    await ledgerAt(newPrefix()).then((other) =>
      other.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: 7_000 }),
    );

    const upgraded = await ledgerAt(prefix);
    expect(await client.exists(accountIndexCompleteKey(prefix))).toBe(0);
    const scan = vi.spyOn(client, 'scan');
    try {
      expect(await upgraded.totalUserBalancesMsat()).toBe(5_000);
      const scans = scan.mock.calls.length;
      expect(scans).toBeGreaterThan(0);
      expect((await client.smembers(accountIndexKey(prefix))).sort()).toEqual(made.sort());
      expect(await client.exists(accountIndexCompleteKey(prefix))).toBe(1);
      expect((await upgraded.checkConservation()).accounts).toBe(5);
      // A second process on the upgraded store reads the mark: no scan.
      const next = await ledgerAt(prefix);
      expect(await next.totalUserBalancesMsat()).toBe(5_000);
      expect(scan.mock.calls.length).toBe(scans);
    } finally {
      scan.mockRestore();
    }
    // The account hashes are where the layout says.
    expect(await client.hget(accountKeys(prefix, made[0]!).acct, 'balance')).toBe('1000');
  });
});
