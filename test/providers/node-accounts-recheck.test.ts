import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../core/log.js';
import type {
  NodeAccountRecord,
  NodeAccountStore,
  NodeAccountWrite,
} from '../../core/providers/node-account-store.js';
import { NodeAccounts } from '../../core/providers/node-accounts.js';
import type { SurplusGate } from '../../core/providers/node-payment.js';
import type { Provider } from '../../core/providers/types.js';
import { until } from '../support/until.js';

/**
 * A "payment: cashu-balance" key that falls below its minimum while the check cannot settle it is checked again:
 * another process held the lock (its read may predate this process's calls), or the costs were stated while this
 * process's own read was on its way. Without it the key stayed short until a call came after BALANCE_REFRESH_MS
 * (seen as a flaky "topped up exactly once" in test/network/pay-nodes-balance.test.ts). The node and the store are
 * in-memory doubles here: the lock and the read order are what is under test; the network suite runs the rest.
 */

const BASE = 'http://node.test/v1';
const MIN = 15_000;
const TOPUP = 20_000;

function rig(opts: { readDelayMs?: number } = {}) {
  const node = { balance: 20_000, topups: 0, reads: 0, topupTries: 0, failTopups: 0 };
  const rec: NodeAccountRecord = { apiKey: 'sk-node', pending: undefined, topups: 0 };
  const lock = { owner: undefined as string | undefined };
  const store: NodeAccountStore = {
    read: async () => ({ ...rec }),
    lock: async (_u, owner) => {
      if (lock.owner !== undefined && lock.owner !== owner) return false;
      lock.owner = owner;
      return true;
    },
    unlock: async (_u, owner) => {
      if (lock.owner === owner) lock.owner = undefined;
    },
    write: async (_u, owner, w: NodeAccountWrite) => {
      if (lock.owner !== owner) return false;
      if (w.pending !== undefined) rec.pending = w.pending ?? undefined;
      if (w.topup) rec.topups++;
      return true;
    },
  };
  const fetchDouble = (async (url: string | URL, init?: RequestInit) => {
    const u = String(url);
    if (u.endsWith('/wallet/balance')) {
      node.reads++;
      const b = node.balance; // read when the request arrives…
      if (opts.readDelayMs) await sleep(opts.readDelayMs); // …answered later
      return Response.json({ balance: b });
    }
    if (u.endsWith('/wallet/topup') && init?.method === 'POST') {
      node.topupTries++;
      if (node.failTopups > 0) {
        node.failTopups--;
        throw new TypeError('fetch failed'); // no answer: the payment stays pending, sent again by the retry
      }
      node.topups++;
      node.balance += TOPUP;
      return Response.json({ balance: node.balance });
    }
    return new Response('{}', { status: 404 });
  }) as typeof fetch;
  const silent = { info() {}, warn() {}, error() {}, debug() {} } as unknown as Logger;
  const accounts = new NodeAccounts({
    store,
    surplus: { send: async () => 'cashuBtoken' } as unknown as SurplusGate,
    wallet: { receive: async () => ({}) as never },
    log: silent,
    fetch: fetchDouble,
    retryMs: [50],
  });
  const provider = {
    name: `recheck-${Math.random().toString(36).slice(2)}`,
    spec: {
      baseUrl: BASE,
      headers: {},
      timeoutMs: 5000,
      prepaid: { minBalanceMsat: MIN, topupMsat: TOPUP },
    },
  } as unknown as Provider;
  return { node, rec, lock, accounts, provider };
}

describe('node prepaid key: a short balance is checked again', () => {
  it('another process held the lock when the key fell short: checked again once it is free, topped up once', async () => {
    const { node, rec, lock, accounts, provider } = rig();
    try {
      await accounts.headers(provider); // loads the key, reads 20,000
      await accounts.settled();
      expect(node.reads).toBe(1);
      lock.owner = 'another-process'; // it read the node's balance before this process's call and found it fine
      node.balance -= 6_000;
      accounts.spent(provider, 'r1', 6_000); // 14,000 < 15,000: a check, refused the lock
      await accounts.settled();
      expect(node.topups).toBe(0);
      lock.owner = undefined; // the other process is done and topped up nothing
      await until('the key was topped up', async () => node.topups === 1, 5000, 20);
      await accounts.settled();
      expect(rec.topups).toBe(1);
      await sleep(600); // no second top-up: the balance read after it is clear of the minimum
      expect(node.topups).toBe(1);
      expect(node.balance).toBe(34_000);
    } finally {
      accounts.close();
    }
  });

  it('costs stated while the check read the balance count against its answer: checked again, topped up once', async () => {
    const { node, accounts, provider } = rig({ readDelayMs: 100 });
    try {
      await accounts.headers(provider);
      await accounts.settled();
      node.balance -= 4_000;
      accounts.spent(provider, 'r1', 4_000); // 16,000: no check
      // A refresh starts (a 402 from the node asks for one); the node answers 16,000 as of its arrival…
      const reads = node.reads;
      accounts.refused(provider, 402);
      await until('the refresh read the balance', () => node.reads > reads, 5000, 5);
      // …while two more calls' costs are stated: the key is at 12,000 before the answer comes back.
      node.balance -= 4_000;
      accounts.spent(provider, 'r2', 2_000);
      accounts.spent(provider, 'r3', 2_000);
      await until('the key was topped up', async () => node.topups === 1, 5000, 20);
      await accounts.settled();
      await sleep(400); // a negative over a window: no second top-up follows (nothing marks "it would have by now")
      expect(node.topups).toBe(1);
      expect(node.balance).toBe(32_000);
    } finally {
      accounts.close();
    }
  });

  it('a key clear of its minimum is not checked again when nothing is short', async () => {
    const { node, accounts, provider } = rig();
    try {
      await accounts.headers(provider);
      await accounts.settled();
      accounts.spent(provider, 'r1', 1_000);
      await sleep(400); // a negative over a window: no check follows
      expect(node.reads).toBe(1);
      expect(node.topups).toBe(0);
    } finally {
      accounts.close();
    }
  });
});

describe('node prepaid key: a failed top-up is retried', () => {
  it('the retry timer fires while Date.now() is short of the retry time (a stale loop clock, a clock stepped back): the top-up is still retried', async () => {
    const { node, accounts, provider } = rig();
    const realNow = Date.now.bind(Date);
    let offsetMs = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offsetMs);
    try {
      await accounts.headers(provider);
      await accounts.settled();
      // The first top-up fails (no answer from the node); the retry is set for 50 ms on.
      node.failTopups = 1;
      node.balance -= 6_000;
      accounts.spent(provider, 'r1', 6_000);
      await until('the top-up failed', () => node.topupTries === 1, 5000, 5);
      await accounts.settled();
      // The clock steps back a second: when the retry timer fires, Date.now() is still before the retry time.
      offsetMs = -1000;
      await until('the top-up was retried and went through', () => node.topups === 1, 3000, 20);
      expect(node.balance).toBe(34_000);
    } finally {
      clock.mockRestore();
      accounts.close();
    }
  });
});
