import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createLedger, createLedgerOnRedis } from '../../core/ledger/index.js';
import { LeasingLedger } from '../../core/ledger/leasing.js';
import type { Ledger } from '../../core/ledger/types.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { startRedisCluster, type TestCluster } from '../support/redis-cluster.js';
import { until } from '../support/until.js';
import { randomTokenHash } from './support/harness.js';
import { dropConnections } from './support/other-process.js';

const WORKER = join(import.meta.dirname, 'support', 'lease-worker.ts');

interface Report {
  ok: number;
  refused: number;
  charged: number;
  done?: boolean;
  holding?: boolean;
  ready?: boolean;
  maxOpen?: number;
  maxShared?: number;
  concurrentRefused?: number;
}

function start(env: Record<string, string>): {
  child: ChildProcess;
  last: () => Report | undefined;
  done: Promise<Report>;
  holding: Promise<Report>;
  ready: Promise<void>;
} {
  const child = fork(WORKER, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: 'inherit',
  });
  let last: Report | undefined;
  // A bound only for a worker that hangs: on a busy machine a worker's calls take many times their idle time
  // (36 s for a test whose timeout was 60 s): the tests' bounds are 3 times what they were.
  const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
  const holding = new Promise<Report>((resolve) => {
    child.on('message', (m) => {
      if ((m as Report).holding) resolve(m as Report);
    });
  });
  const ready = new Promise<void>((resolve) => {
    child.on('message', (m) => {
      if ((m as Report).ready) resolve();
    });
  });
  const done = new Promise<Report>((resolve, reject) => {
    child.on('message', (m) => {
      last = m as Report;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (last?.done) resolve(last);
      else reject(new Error(`worker exited ${code} before finishing`));
    });
  });
  done.catch(() => {});
  return { child, last: () => last, done, holding, ready };
}

async function fundKey(ledger: Ledger, msat: number): Promise<string> {
  const d = await ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: msat });
  if (!d.ok) throw new Error(d.code);
  return d.apiKey;
}

const conns: StoreConnection[] = [];
const dirs: string[] = [];
let cluster: Promise<TestCluster> | undefined;
let clusterClient: Cluster | undefined;
afterAll(async () => {
  clusterClient?.disconnect();
  await (await cluster)?.stop();
  await dropConnections(conns, dirs);
});

const limits = { requestsPerMinute: 1_000_000, tokensPerHour: 1_000_000_000, concurrent: 1_000_000 };
function settleOf(accountId: string, requestId: string) {
  return {
    accountId,
    requestId,
    costMsat: 0,
    promptTokens: 1,
    completionTokens: 1,
    model: 'm',
    description: 'd',
    estimated: false,
  };
}

type Store = { name: string; open(): Promise<{ ledger: Ledger; env: Record<string, string> }> };
const stores: Store[] = [
  {
    name: 'Redis',
    async open() {
      const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
      const prefix = `lp${randomBytes(5).toString('hex')}`;
      const conn = openStore({ redisUrl: url, redisPrefix: prefix });
      conns.push(conn);
      return {
        ledger: await createLedger(conn, { warn: () => {} }),
        env: { W_REDIS_URL: url, W_PREFIX: prefix },
      };
    },
  },
  {
    // A 3-master cluster of its own (started once, on first use); the workers use an ioredis Cluster client.
    name: 'Redis Cluster',
    async open() {
      cluster ??= startRedisCluster();
      const { nodes } = await cluster;
      clusterClient ??= new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
      const prefix = `lp${randomBytes(5).toString('hex')}`;
      return {
        ledger: await createLedgerOnRedis(clusterClient, prefix, { warn: () => {} }),
        env: {
          W_CLUSTER: nodes.map((n) => `${n.host}:${n.port}`).join(','),
          W_PREFIX: prefix,
          W_REDIS_URL: '',
        },
      };
    },
  },
  {
    name: 'SQLite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'gw-lease-'));
      dirs.push(dir);
      const conn = openStore({ dataDir: dir, sqliteFile: 'ledger.db' });
      conns.push(conn);
      return { ledger: await createLedger(conn), env: { W_DATA_DIR: dir, W_REDIS_URL: '' } };
    },
  },
];

describe.each(stores)('credit leases across OS processes on $name', (store) => {
  it('4 processes racing one key with leases spend it exactly: all 100 calls it affords, charged once', async () => {
    const { ledger, env } = await store.open();
    const apiKey = await fundKey(ledger, 41 * 100);
    const common = { ...env, W_API_KEY: apiKey, W_CALLS: '250', W_MSAT: '41', W_PARALLEL: '16' };
    const results = await Promise.all([1, 2, 3, 4].map(() => start(common).done));
    const ok = results.reduce((s, r) => s + r.ok, 0);
    const charged = results.reduce((s, r) => s + r.charged, 0);
    const info = await ledger.getKeyInfo({ apiKey });
    // Every call a process answered was charged exactly once in the store, never more than was deposited,
    // and no call was refused while money sat in another process's lease (recall).
    expect(charged).toBe(41 * ok);
    expect(ok).toBe(100);
    expect(info?.account).toMatchObject({ spentMsat: charged, balanceMsat: 4100 - charged, reservedMsat: 0 });
    expect((await ledger.checkConservation()).breaches).toEqual([]);
  }, 180_000);

  it('concurrency is leased too (RATE_LIMIT_CONCURRENT=4, 3 processes): never more than 4 calls of the key open in all', async () => {
    const { ledger, env } = await store.open();
    const apiKey = await fundKey(ledger, 10_000_000);
    const counterUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const counterKey = `lpconc${randomBytes(5).toString('hex')}`;
    // 10 lanes each, every call open 30 ms: each process tries to hold 10 calls of the key at once. Each
    // call counts itself in one shared Redis counter while it is open (inside its admit…settle interval).
    const common = {
      ...env,
      W_API_KEY: apiKey,
      W_CALLS: '150',
      W_MSAT: '100',
      W_PARALLEL: '10',
      W_DELAY_MS: '30',
      W_CONCURRENT: '4',
      // A lease's slots return to the store when it expires: a process whose event loop a busy machine stalls
      // for LEASE_TTL_MS (5 s by default here) could see its slots taken while its calls are still open. The
      // TTL is a stall tolerance, not what this test measures: 60 s, beyond any stall a loaded machine makes.
      W_TTL_MS: '60000',
      W_GO: '1',
      W_COUNTER: counterKey,
      W_COUNTER_URL: counterUrl,
    };
    const all = [1, 2, 3].map(() => start(common));
    await Promise.all(all.map((p) => p.ready));
    for (const p of all) p.child.send('go');
    const results = await Promise.all(all.map((p) => p.done));
    const c = new Redis(counterUrl);
    await c.del(counterKey);
    c.disconnect();
    // The key's limit holds across the processes (each lease holds some of its slots in the store), it was
    // really reached, and calls were refused for it.
    expect(Math.max(...results.map((r) => r.maxShared!))).toBeLessThanOrEqual(4);
    expect(Math.max(...results.map((r) => r.maxShared!))).toBeGreaterThanOrEqual(2);
    for (const r of results) expect(r.maxOpen).toBeLessThanOrEqual(4);
    expect(results.reduce((s, r) => s + r.concurrentRefused!, 0)).toBeGreaterThan(0);
    const charged = results.reduce((s, r) => s + r.charged, 0);
    expect(charged).toBe(100 * results.reduce((s, r) => s + r.ok, 0));
    expect((await ledger.getKeyInfo({ apiKey }))?.account).toMatchObject({
      spentMsat: charged,
      reservedMsat: 0,
    });
    expect((await ledger.checkConservation()).breaches).toEqual([]);
  }, 180_000);

  it('recall: the last msats are spent by one process while another holds a lease of the key', async () => {
    const { ledger, env } = await store.open();
    const apiKey = await fundKey(ledger, 41 * 100);
    // The holder makes 2 calls and keeps its lease (idle return after a minute only).
    const holder = start({
      ...env,
      W_API_KEY: apiKey,
      W_CALLS: '2',
      W_MSAT: '41',
      W_PARALLEL: '1',
      W_IDLE_MS: '60000',
      W_HOLD: '1',
    });
    await holder.holding;
    const held = await ledger.getKeyInfo({ apiKey });
    expect(held!.account.reservedMsat).toBeGreaterThanOrEqual(41 * 10); // a slice of ≥ 10 calls is leased
    const here = new LeasingLedger(ledger, { flushMs: 20, idleMs: 300, ttlMs: 5000, recallWaitMs: 3000 });
    let served = 0;
    let inTransit = 0;
    for (let i = 0; i < 200; i++) {
      const a = await here.admit({
        credential: { apiKey },
        requestId: `spend-${i}`,
        model: 'm',
        maxMsat: 41,
        minMsat: 41,
        expiresInMs: 60_000,
        limits,
      });
      if (!a.ok && a.code === 'balance_in_transit' && inTransit < 10) {
        // The holder did not answer within the wait (a loaded machine): not a refusal; a client retries after
        // Retry-After, and so does this one (bounded).
        inTransit++;
        await new Promise((r) => setTimeout(r, a.retryAfterMs));
        continue;
      }
      if (!a.ok) {
        expect(a.code).toBe('payment_required');
        break;
      }
      await here.settle({ ...settleOf(a.accountId, a.requestId), costMsat: 41 });
      served++;
    }
    // Not one call refused while money sat in the other lease: 98 = 100 − the holder's 2.
    if (inTransit > 0)
      console.log(`${store.name}: ${inTransit} answers balance_in_transit before the recall ended`);
    expect(served).toBe(98);
    await here.close();
    holder.child.send('stop');
    expect((await holder.done).charged).toBe(82);
    const info = await ledger.getKeyInfo({ apiKey });
    expect(info?.account).toMatchObject({ spentMsat: 4100, balanceMsat: 0, reservedMsat: 0 });
    expect((await ledger.checkConservation()).breaches).toEqual([]);
  }, 180_000);

  it('read-your-writes across processes: a read here reports the calls another process has not yet', async () => {
    const { ledger, env } = await store.open();
    const apiKey = await fundKey(ledger, 1_000_000);
    // The holder reports at most once a minute: its 5 calls stay in its memory until recalled.
    const holder = start({
      ...env,
      W_API_KEY: apiKey,
      W_CALLS: '5',
      W_MSAT: '41',
      W_PARALLEL: '1',
      W_FLUSH_MS: '60000',
      W_IDLE_MS: '60000',
      W_HOLD: '1',
    });
    await holder.holding;
    // The plain store: only the first call (a cold key's goes the exact way); the other 4 are not reported.
    expect((await ledger.getKeyInfo({ apiKey }))!.account.spentMsat).toBe(41);
    const here = new LeasingLedger(ledger, { flushMs: 20, idleMs: 300, ttlMs: 5000, recallWaitMs: 3000 });
    const info = await here.getKeyInfo({ apiKey });
    expect(info!.account.spentMsat).toBe(205);
    const txs = await here.listTransactions({ apiKey });
    expect(txs!.transactions.filter((t) => t.type === 'usage')).toHaveLength(5);
    await here.close();
    holder.child.send('stop');
    await holder.done;
    expect((await ledger.checkConservation()).breaches).toEqual([]);
  }, 180_000);

  it('kill -9 under load (3 processes, a balance they overdraw): no overspend, the dead lease is released after its TTL, the loss is only the unreported calls', async () => {
    const { ledger, env } = await store.open();
    // 300 calls of 1000 msat, while the survivors alone try 2 × 250 and the victim calls until it is killed:
    // if two processes could spend the same money, more than 300 calls would be charged (or answered).
    const deposit = 300 * 1000;
    const apiKey = await fundKey(ledger, deposit);
    const accountId = (await ledger.getKeyInfo({ apiKey }))!.key.accountId;
    // The lease TTL and the calls' reservation expiry: a survivor whose event loop a busy machine stalls longer
    // than this sees its own reservation expire under an open call (then charged less than it answered): 12 s
    // holds far beyond the stalls seen at load 40 (3 s did not). The dead lease is waited for past it.
    const ttlMs = 12_000;
    const dir = mkdtempSync(join(tmpdir(), 'gw-kill-'));
    dirs.push(dir);
    const snapshot = join(dir, 'victim.json');
    const common = {
      ...env,
      W_API_KEY: apiKey,
      W_MSAT: '1000',
      W_PARALLEL: '4',
      W_DELAY_MS: '10', // each call lasts 10 ms upstream: the three overlap instead of one draining the key
      W_FLUSH_MS: '20',
      W_GO: '1',
      W_TTL_MS: String(ttlMs),
      W_LEASE_MS: String(ttlMs),
    };
    const victim = start({ ...common, W_FOREVER: '1', W_SNAPSHOT: snapshot });
    const others = [1, 2].map(() => start({ ...common, W_CALLS: '250', W_REPORT: '1' }));
    const all = [victim, ...others];
    await Promise.all(all.map((p) => p.ready));
    for (const p of all) p.child.send('go');
    await until('each process answered calls', () => all.every((p) => (p.last()?.ok ?? 0) >= 5), 120_000);
    // Under that load, freeze it while it holds a lease (it writes what it answered and has not reported,
    // then stops dead; asked again until it holds one), then kill -9.
    await until(
      'the snapshot',
      () => {
        if (existsSync(snapshot) && readFileSync(snapshot, 'utf8').endsWith('}')) return true;
        victim.child.send('freeze');
        return false;
      },
      120_000,
    );
    const v = JSON.parse(readFileSync(snapshot, 'utf8')) as {
      processId: string;
      ok: number;
      charged: number;
      queued: number;
      granted: number;
      since: number;
    };
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    // Until its TTL the dead process's lease is still there, reserving its slice (nobody may spend it).
    const dead = (await ledger.otherLeases(accountId, 'none', killedAt)).filter((o) =>
      o.id.includes(v.processId),
    );
    expect(dead).toHaveLength(1);
    expect(dead[0]!.expiresAtMs).toBeLessThanOrEqual(killedAt + ttlMs);
    const survivors = await Promise.all(others.map((o) => o.done));
    const survivorsCharged = survivors.reduce((s, r) => s + r.charged, 0);
    // The survivors ran out of money: the balance really was contested.
    expect(survivors.reduce((s, r) => s + r.refused, 0)).toBeGreaterThan(0);
    // No manual sweep: once the TTL has passed, a live process's next store step releases the dead lease,
    // and that process spends every msat left (none stuck in the dead slice).
    await until(
      "the dead lease's TTL",
      async () => !(await ledger.otherLeases(accountId, 'none')).some((o) => o.id.includes(v.processId)),
      ttlMs + 60_000,
    );
    const here = new LeasingLedger(ledger, { flushMs: 20, idleMs: 300, ttlMs: 5000, recallWaitMs: 3000 });
    let hereCharged = 0;
    for (let i = 0; i < 400; i++) {
      const a = await here.admit({
        credential: { apiKey },
        requestId: `after-${i}`,
        model: 'm',
        maxMsat: 1000,
        minMsat: 1000,
        expiresInMs: 60_000,
        limits,
      });
      if (!a.ok) {
        expect(a.code).toBe('payment_required');
        break;
      }
      const r = await here.settle({ ...settleOf(a.accountId, a.requestId), costMsat: 1000 });
      if (r.ok) hereCharged += r.chargedMsat;
    }
    await here.close();
    expect(await ledger.sweepExpired()).toBe(0); // nothing was left for the sweep
    const info = (await ledger.getKeyInfo({ apiKey }))!;
    // Zero overspend: every msat deposited is spent exactly once, nothing more, nothing reserved.
    expect(info.account).toMatchObject({ balanceMsat: 0, reservedMsat: 0, spentMsat: deposit });
    expect((await ledger.checkConservation()).breaches).toEqual([]);
    // Every call a survivor answered was charged in full, and what the victim's reports put on the store is
    // at most what it answered (never charged twice).
    expect(survivorsCharged).toBe(1000 * survivors.reduce((s, r) => s + r.ok, 0));
    const victimRecorded = (deposit - survivorsCharged - hereCharged) / 1000;
    expect(victimRecorded).toBeLessThanOrEqual(v.ok);
    // Lost-but-bounded: only calls it answered and had not yet reported are lost (a step already sent may
    // still have landed), and those are calls settled since its last answered step began, i.e. within one
    // flush interval plus that step's round trip.
    const lost = v.ok - victimRecorded;
    expect(lost).toBeLessThanOrEqual(v.queued);
    expect(v.queued).toBeLessThanOrEqual(v.since);
    expect(lost * 1000).toBeLessThanOrEqual(v.granted);
    console.log(
      `${store.name}: victim answered ${v.ok} calls, recorded ${victimRecorded}, lost ${lost} (unreported at the kill: ${v.queued})`,
    );
  }, 240_000);
});
