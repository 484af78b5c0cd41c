import { randomBytes } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDepositStore } from '../../core/account/lightning-deposits.js';
import { AuditLog } from '../../core/audit/audit-log.js';
import { loadConfig } from '../../core/config.js';
import { GatewayError } from '../../core/errors.js';
import { Router } from '../../core/http/router.js';
import { createLedger } from '../../core/ledger/index.js';
import { LeasingLedger } from '../../core/ledger/leasing.js';
import type { Credential, Ledger } from '../../core/ledger/types.js';
import { WindowLimiter } from '../../core/limits/window-limiter.js';
import { createLogger } from '../../core/log.js';
import { healthRoutes } from '../../core/routes/health.js';
import type { Services } from '../../core/service-types.js';
import { AdminStats } from '../../core/stats/admin-stats.js';
import { openStore, type RedisStore } from '../../core/store/connection.js';
import { describeRedis, readRedisConfig } from '../../core/store/redis-config.js';
import { loadSettings, saveSettings } from '../../core/store/settings-store.js';
import { StoreSignals } from '../../core/store/signals.js';
import type { StoredProof } from '../../core/wallet/store/proof-store.js';
import { RedisProofStore } from '../../core/wallet/store/redis-store.js';
import { ask } from '../../scripts/lib/redis-topology.js';
import { type RedisTopology, startRedisCluster } from '../support/redis-cluster.js';
import { until } from '../support/until.js';
import { journalEntry } from '../wallet/support/journal.js';

/** What a settled 2,000 msat call reports (1 prompt token, 2 completion tokens). */
const CALL_2000 = {
  costMsat: 2000,
  promptTokens: 1,
  completionTokens: 2,
  estimated: false,
  model: 'm',
  description: 'x',
};

/**
 * The three Redis forms from configuration, and the stores other than the ledger on a 3-master, 3-replica
 * Redis Cluster: each script in one slot, EVALSHA surviving an emptied script cache, the replica rule (a WAIT
 * after every money write; a write no replica acknowledges is not done, and its retry applies it once), the
 * store signals by pub/sub, and /readyz with nodes down. One cluster for the file; the test that kills nodes
 * runs last. (The ledger's own conformance suite runs on a cluster in test/ledger/redis-cluster.test.ts.)
 */

describe('Redis forms in the configuration', () => {
  it('reads each form, with credentials kept out of every message', () => {
    expect(readRedisConfig({})).toBeUndefined();
    expect(readRedisConfig({ REDIS_URL: 'redis://127.0.0.1:6390' })).toMatchObject({
      form: 'single',
      minReplicaAcks: 'auto',
      replicaAckTimeoutMs: 1000,
    });
    const cluster = readRedisConfig({
      REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001',
      REDIS_PASSWORD: 's3cret pass',
      REDIS_USERNAME: 'gw',
      REDIS_TLS: 'true',
      REDIS_MIN_REPLICA_ACKS: '2',
    });
    expect(cluster).toMatchObject({
      form: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      password: 's3cret pass',
      username: 'gw',
      tls: true,
      minReplicaAcks: 2,
    });
    expect(describeRedis(cluster)).toBe('cluster 10.0.0.1:7000,10.0.0.2:7001');
    const sentinel = readRedisConfig({
      REDIS_SENTINELS: 's1:26379,s2:26379',
      REDIS_SENTINEL_NAME: 'mymaster',
    });
    expect(sentinel).toMatchObject({ form: 'sentinel', sentinelName: 'mymaster' });
    expect(describeRedis(sentinel)).toBe('sentinel mymaster via s1:26379,s2:26379');
    expect(describeRedis(readRedisConfig({ REDIS_URL: 'redis://user:pw123@h:6379/0' }))).toBe(
      'single redis://h:6379',
    );
  });

  it('stops the start when two forms are set, naming them and never a value', () => {
    const env = {
      REDIS_URL: 'redis://:topsecret@127.0.0.1:6379',
      REDIS_CLUSTER_NODES: '127.0.0.1:7000',
      REDIS_PASSWORD: 'hunter2',
    };
    expect(() => loadConfig(env)).toThrow(/REDIS_URL and REDIS_CLUSTER_NODES are all set: set exactly one/);
    try {
      loadConfig(env);
    } catch (e) {
      expect(String(e)).not.toMatch(/topsecret|hunter2|7000/);
    }
    expect(() => loadConfig({ REDIS_SENTINELS: 'a:1' })).toThrow(/REDIS_SENTINELS needs REDIS_SENTINEL_NAME/);
    expect(() => loadConfig({ REDIS_SENTINEL_NAME: 'm' })).toThrow(/without REDIS_SENTINELS/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'nohost' })).toThrow(/host:port/);
    expect(() => loadConfig({ REDIS_PASSWORD: 'x' })).toThrow(/REDIS_PASSWORD is set but no Redis/);
    expect(() => loadConfig({ REDIS_URL: 'redis://h', REDIS_MIN_REPLICA_ACKS: '-1' })).toThrow(
      /REDIS_MIN_REPLICA_ACKS/,
    );
  });
});

describe('every store on a 3-master, 3-replica Redis Cluster', () => {
  let topo: RedisTopology;
  const conns: RedisStore[] = [];
  beforeAll(async () => {
    topo = await startRedisCluster({ replicas: 1 });
  }, 120_000);
  afterAll(async () => {
    for (const c of conns) await c.close();
    await topo?.stop();
  });

  async function open(extra: Record<string, string> = {}, shared?: string): Promise<RedisStore> {
    const prefix = shared ?? `rf${randomBytes(4).toString('hex')}`;
    const conn = openStore({ redis: readRedisConfig({ ...topo.env, ...extra }), redisPrefix: prefix });
    if (conn.kind !== 'redis') throw new Error('expected Redis');
    conns.push(conn);
    await conn.ready();
    return conn;
  }

  /** The replicas (data nodes that are not masters now). */
  async function replicaPorts(): Promise<number[]> {
    const masters = await topo.masters();
    return topo.dataPorts().filter((p) => !masters.includes(p));
  }

  it('the connection says cluster, 6 nodes, 6 answering', async () => {
    const conn = await open();
    expect(conn.form).toBe('cluster');
    expect(await conn.nodes()).toEqual({ form: 'cluster', nodes: 6, answering: 6 });
  });

  it('ledger money writes wait for a replica; SCRIPT FLUSH on every node costs nothing but a reload', async () => {
    const conn = await open();
    const ledger = await createLedger(conn, { warn: () => {} });
    const dep = await ledger.createKeyFromDeposit({
      tokenHash: randomBytes(32).toString('hex'),
      amountMsat: 50_000,
    });
    if (!dep.ok) throw new Error('deposit failed');
    const waits = () => replicaWaits(conn);
    const before = await waits();
    for (const node of (conn.redis as Cluster).nodes('all')) await node.script('FLUSH');
    const limits = { requestsPerMinute: 100, tokensPerHour: 1_000_000, concurrent: 10 };
    const a = await ledger.admit({
      credential: { apiKey: dep.apiKey },
      requestId: 'r1',
      model: 'm',
      maxMsat: 3000,
      minMsat: 3000,
      expiresInMs: 60_000,
      limits,
    });
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    const s = await ledger.settle({ accountId: a.accountId, requestId: 'r1', ...CALL_2000 });
    expect(s).toMatchObject({ ok: true, chargedMsat: 2000, balanceMsat: 48_000 });
    // admit and settle each waited for their master's replica (WAIT on the master holding the account).
    expect((await waits()) - before).toBeGreaterThanOrEqual(2);
  });

  it('a money write no replica acknowledges in time is a store failure, and nothing stays reserved', async () => {
    // Two acknowledgements asked of masters that have one replica each: never reached.
    const conn = await open({ REDIS_MIN_REPLICA_ACKS: '2', REDIS_REPLICA_ACK_TIMEOUT_MS: '100' });
    const ledger = await createLedger(conn, { warn: () => {} });
    const tokenHash = randomBytes(32).toString('hex');
    await expect(ledger.createKeyFromDeposit({ tokenHash, amountMsat: 10_000 })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
    // The credit itself is in the store (idempotent by token): read back with the rule satisfied (auto).
    const reader = await createLedger(await open({ REDIS_PREFIX: conn.prefix }), { prefix: conn.prefix });
    const again = await reader.createKeyFromDeposit({ tokenHash, amountMsat: 10_000 });
    expect(again).toMatchObject({ ok: true, replay: true, balanceMsat: 10_000 });
    if (!again.ok) return;
    const limits = { requestsPerMinute: 100, tokensPerHour: 1_000_000, concurrent: 10 };
    await expect(
      ledger.admit({
        credential: { apiKey: again.apiKey },
        requestId: 'r-unacked',
        model: 'm',
        maxMsat: 4000,
        minMsat: 4000,
        expiresInMs: 60_000,
        limits,
      }),
    ).rejects.toMatchObject({ code: 'store_unavailable' });
    // Refused before any upstream: the reservation was given back.
    await expect
      .poll(async () => (await reader.getKeyInfo({ apiKey: again.apiKey }))?.account.reservedMsat, {
        timeout: 5000,
      })
      .toBe(0);
    expect((await reader.getKeyInfo({ apiKey: again.apiKey }))?.account.balanceMsat).toBe(10_000);
  });

  it('credit, withdrawal hold and commit, a lease report and the wallet proof store each wait for a replica', async () => {
    const conn = await open();
    const ledger = await createLedger(conn, { warn: () => {} });
    const dep = await ledger.createKeyFromDeposit({ tokenHash: hex(), amountMsat: 100_000 });
    if (!dep.ok) throw new Error('deposit failed');
    const credential = { apiKey: dep.apiKey };
    // Each money step sends exactly one WAIT, to the master holding the account (nothing else waits meanwhile).
    const [credit, creditWaits] = await step(conn, () =>
      ledger.credit({ credential, tokenHash: hex(), amountMsat: 20_000, kind: 'topup' }),
    );
    expect(credit).toMatchObject({ ok: true, balanceMsat: 120_000, replay: false });
    expect(creditWaits).toBe(1);
    const [hold, holdWaits] = await step(conn, () =>
      ledger.holdWithdrawal({
        credential,
        amountMsat: 10_000,
        holdId: 'w1',
        kind: 'withdrawal',
        expiresInMs: 60_000,
      }),
    );
    expect(hold).toMatchObject({ ok: true, heldMsat: 10_000 });
    expect(holdWaits).toBe(1);
    if (!hold.ok) return;
    const [commit, commitWaits] = await step(conn, () =>
      ledger.commitWithdrawal({ accountId: hold.accountId, holdId: 'w1' }),
    );
    expect(commit).toMatchObject({ ok: true, withdrawnMsat: 10_000, balanceMsat: 110_000 });
    expect(commitWaits).toBe(1);

    // A lease report: calls settled in memory reach the store in one step, which waits like any money write.
    const leasing = new LeasingLedger(ledger, LEASES);
    await paidCall(leasing, credential, 'l1', 700); // a cold key: the exact way
    await paidCall(leasing, credential, 'l2', 700); // opens the lease, settled in memory
    expect(leasing.stats()).toMatchObject({ leases: 1, queuedCalls: 1 });
    const [, reportWaits] = await step(conn, () => leasing.flushAll(false));
    expect(reportWaits).toBe(1);
    expect(leasing.stats().queuedCalls).toBe(0);
    await leasing.close();
    expect((await ledger.getKeyInfo(credential))?.account).toMatchObject({
      balanceMsat: 110_000 - 1400,
      reservedMsat: 0,
    });

    // The wallet's proofs: a receive's new proofs, a send's reservation and its settlement each wait too.
    const proofs = new RedisProofStore(conn);
    await proofs.init();
    const recv = journalEntry('recv:t1', 'receive');
    expect(await proofs.claimOp(recv)).toBeNull();
    const [, receiveWaits] = await step(conn, () =>
      proofs.settleOp(recv, { spentYs: [], add: [storedProof('y1', 8), storedProof('y2', 2)] }),
    );
    expect(receiveWaits).toBe(1);
    const send = journalEntry('send:1', 'send');
    const [reserved, reserveWaits] = await step(conn, () => proofs.reserveProofs(send, 8, 0));
    expect(reserved?.map((p) => p.y)).toEqual(['y1']);
    expect(reserveWaits).toBe(1);
    const [, spendWaits] = await step(conn, () => proofs.settleOp(send, { spentYs: ['y1'], add: [] }));
    expect(spendWaits).toBe(1);
    expect((await proofs.listProofs()).map((p) => [p.y, p.reservedBy])).toEqual([['y2', null]]);
  });

  it('a settlement or lease report no replica acknowledges in time is not done: it fails, and its retry applies it once', async () => {
    const conn = await open({ REDIS_REPLICA_ACK_TIMEOUT_MS: '300' });
    const ledger = await createLedger(conn, { warn: () => {} });
    const dep = await ledger.createKeyFromDeposit({ tokenHash: hex(), amountMsat: 100_000 });
    if (!dep.ok) throw new Error('deposit failed');
    const credential = { apiKey: dep.apiKey };
    const admitted = await ledger.admit({
      credential,
      requestId: 's1',
      model: 'm',
      maxMsat: 3000,
      minMsat: 3000,
      expiresInMs: 60_000,
      limits: LIMITS,
    });
    if (!admitted.ok) throw new Error('admit failed');
    const settle = { accountId: admitted.accountId, requestId: 's1', ...CALL_2000 };
    const leasing = new LeasingLedger(ledger, LEASES);
    await paidCall(leasing, credential, 'l1', 700);
    await paidCall(leasing, credential, 'l2', 700);
    await leasing.flushAll(false);
    await paidCall(leasing, credential, 'l3', 700); // settled in memory, reported below
    expect(leasing.stats().queuedCalls).toBe(1);

    // Every replica frozen: the masters apply the writes, and no replica acknowledges them.
    const replicas = await replicaPorts();
    expect(replicas).toHaveLength(3);
    for (const r of replicas) topo.pause(r);
    try {
      await expect(ledger.settle(settle)).rejects.toMatchObject({ code: 'store_unavailable' });
      await expect(leasing.flushAll(false)).rejects.toMatchObject({ code: 'store_unavailable' });
      // Not counted as done: the report stays with this process, to be resent unchanged (same sequence number).
      expect(leasing.stats().queuedCalls).toBe(1);
    } finally {
      for (const r of replicas) topo.resume(r);
    }

    // The retries (the settle stage's, plugins/settle.ts; the lease's next step) once a replica answers again:
    // the store answers the settlement it already applied as a replay, the same charge, never a second one.
    let again: Awaited<ReturnType<Ledger['settle']>> | undefined;
    await until(
      'the settlement retried and acknowledged',
      async () => {
        again = await ledger.settle(settle).catch(() => undefined);
        return again !== undefined;
      },
      15_000,
      100,
    );
    expect(again).toMatchObject({ ok: true, replay: true, chargedMsat: 2000 });
    await until(
      'the lease report resent and acknowledged',
      () =>
        leasing.flushAll(false).then(
          () => true,
          () => false,
        ),
      15_000,
      100,
    );
    expect(leasing.stats().queuedCalls).toBe(0);
    await leasing.close();
    // Each call charged exactly once: 2,000 for the settlement, 3 × 700 for the leased calls.
    expect((await ledger.getKeyInfo(credential))?.account).toMatchObject({
      balanceMsat: 100_000 - 2000 - 2100,
      reservedMsat: 0,
    });
    expect((await ledger.checkConservation()).breaches).toEqual([]);
  });

  it('limiter, audit trail, settings, console statistics and Lightning deposits work across the slots', async () => {
    const conn = await open();
    const limiter = new WindowLimiter(conn);
    const limits = [
      { seconds: 60, limit: 2 },
      { seconds: 3600, limit: 5 },
    ] as const;
    const now = Date.UTC(2030, 0, 1);
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
      expect((await limiter.hit('ip', ip, limits, now)).allowed).toBe(true);
      expect((await limiter.hit('ip', ip, limits, now)).allowed).toBe(true);
      expect((await limiter.hit('ip', ip, limits, now)).allowed).toBe(false);
    }

    // One batch naming three accounts (three streams plus the node-wide one): one pipeline, one slot.
    const audit = new AuditLog(conn, { retentionDays: 1, log: silent }).backend;
    const record = (account: string, i: number) => ({
      timestamp: new Date(now + i).toISOString(),
      request_id: `req${i}`,
      api_key_id: '0123456789abcdef',
      endpoint: '/v1/chat/completions',
      method: 'POST',
      ip_address: '10.0.0.1',
      user_agent: null,
      cost_sats: 1,
      cost_msats: 1000,
      response_status: 200,
      kind: 'key' as const,
      account,
    });
    await audit.write([record('acc1', 1), record('acc2', 2), record('acc3', 3)], 86_400_000, Date.now());
    // Newest first by write time: the three streams live on different masters, each stamping its own entry ids,
    // so records written in the same millisecond come in the merge's order of (ms, seq, stream), not by name.
    const page = (await audit.list({ limit: 10 })).data;
    expect(page.map((r) => r.request_id).sort()).toEqual(['req1', 'req2', 'req3']);
    const ms = page.map((r) => Number(r.id.split('-')[0]));
    expect(ms).toEqual([...ms].sort((a, b) => b - a));
    expect((await audit.list({ limit: 10, account: 'acc2' })).data.map((r) => r.request_id)).toEqual([
      'req2',
    ]);

    await saveSettings(conn, { node_name: 'a' });
    await saveSettings(conn, { exchange_fee: 1.01 });
    expect(await loadSettings(conn)).toEqual({ node_name: 'a', exchange_fee: 1.01 });

    // Console statistics: minutes folded into minute, hour and day buckets, one MULTI; a chart is one pipeline.
    const stats = new AdminStats(conn, silent);
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    stats.addCounts(minute - 60_000, { calls: 3, errors: 1, chargedMsat: 3000 });
    stats.addCounts(minute, { calls: 2, errors: 0, chargedMsat: 2000 });
    const series = await stats.series('minute', 2);
    await stats.close();
    expect(series.map((p) => [p.calls, p.errors, p.chargedMsat])).toEqual([
      [3, 1, 3000],
      [2, 0, 2000],
    ]);
    await stats.addSample({ t: now, proofsMsat: 5000, userBalancesMsat: 4000 });
    expect(await stats.samples(1)).toEqual([{ t: now, proofsMsat: 5000, userBalancesMsat: 4000 }]);

    const deposits = openDepositStore(conn);
    const rec = {
      idHash: 'h1',
      kind: 'create' as const,
      quote: 'q',
      request: 'lnbc',
      amountSats: 5,
      expiresAt: null,
      createdAt: now,
      status: 'pending' as const,
      attempts: 0,
      nextAttemptAt: 1,
    };
    await deposits.put(rec);
    expect((await deposits.listDue(10, 5)).map((r) => r.idHash)).toEqual(['h1']);
    await deposits.put({ ...rec, status: 'issued' });
    await deposits.put({ ...rec, status: 'pending' }); // a final record never goes back
    expect((await deposits.get('h1'))?.status).toBe('issued');
    expect(await deposits.listDue(10, 5)).toEqual([]);
  });

  it('settings and recall signals reach another connection by pub/sub on the cluster within 2 s', async () => {
    const a = await open();
    const b = await open({}, a.prefix);
    // No poll (10 minutes): only the notification can tell the other connection in time.
    const sa = await StoreSignals.open(a, { pollMs: 600_000 });
    const sb = await StoreSignals.open(b, { pollMs: 600_000 });
    try {
      // The subscription is made in the background: wait until a node holds it.
      const channel = `${a.prefix}:signals`;
      await until(
        'the subscription',
        async () => {
          let n = 0;
          for (const p of topo.dataPorts()) {
            const r = await ask(p, 'PUBSUB', 'NUMSUB', channel).catch(() => '["",0]');
            n += Number((JSON.parse(r) as [string, number])[1]);
          }
          return n >= 1;
        },
        10_000,
        50,
      );
      for (const name of ['settings', 'recall'] as const) {
        const seen: number[] = [];
        sb.on(name, (v) => seen.push(v));
        const v = await sa.bump(name);
        // The settings' bound (README: every process applies a change within 2 s).
        await until(`the ${name} signal on the other connection`, () => seen.length > 0, 2000, 5);
        expect(seen).toEqual([v]);
        expect(sb.version(name)).toBe(v);
      }
    } finally {
      await sa.close();
      await sb.close();
    }
  });

  // Last: it takes two nodes away for good.
  it('/readyz with nodes down: a replica gone is one node fewer answering; its master gone too fails the store check', async () => {
    const conn = await open();
    const router = new Router();
    healthRoutes(router, { store: conn } as unknown as Services);
    const m = router.match('GET', '/readyz');
    if (m.kind !== 'route' || m.route.target === 'pipeline') throw new Error('no /readyz route');
    const handler = m.route.target;
    const probe = async (): Promise<{ status: number; body: unknown }> => {
      try {
        return { status: 200, body: (await handler({} as never)).json };
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        return { status: err.status, body: { code: err.code, ...err.details } };
      }
    };
    let last: { status: number; body: unknown } | undefined;
    /** Waits until /readyz answers `want` (status and body); the error names the last answer. */
    const answers = (what: string, want: { status: number; body: unknown }) =>
      until(
        what,
        async () => {
          last = await probe();
          return JSON.stringify(last) === JSON.stringify(want);
        },
        15_000,
        200,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; last ${JSON.stringify(last)}`);
      });
    const master = (await topo.masters())[0]!;
    const replica = Number(/^slave0:.*port=(\d+)/m.exec(await ask(master, 'INFO', 'replication'))?.[1]);
    expect(replica).toBeGreaterThan(0);

    await topo.kill(replica);
    const cluster = (answering: number) => ({ form: 'cluster', nodes: 6, answering });
    await answers('readyz: 5 of 6 answering', {
      status: 200,
      body: { status: 'ready', checks: { store: 'ok', mint: 'not_configured' }, redis: cluster(5) },
    });

    // Its master too: a third of the slots has no node left, so the cluster is down and the store check fails.
    await topo.kill(master);
    await answers('readyz: 503, store failing', {
      status: 503,
      body: {
        code: 'service_unavailable',
        checks: { store: 'failing', mint: 'not_configured' },
        redis: cluster(4),
      },
    });
  });
});

const silent = createLogger('silent');
const hex = () => randomBytes(32).toString('hex');
const LIMITS = { requestsPerMinute: 1000, tokensPerHour: 1_000_000, concurrent: 10 };
/** Leases that only step when asked (flushAll) or at a lease's first call: no background step in a count. */
const LEASES = { flushMs: 60_000, idleMs: 60_000, ttlMs: 30_000 };

/** WAIT commands the cluster's masters have served (INFO commandstats). */
async function replicaWaits(conn: RedisStore): Promise<number> {
  let n = 0;
  for (const m of (conn.redis as Cluster).nodes('master')) {
    n += Number(/cmdstat_wait:calls=(\d+)/.exec(await m.info('commandstats'))?.[1] ?? 0);
  }
  return n;
}

/** `fn`'s result and how many WAITs it sent. */
async function step<T>(conn: RedisStore, fn: () => Promise<T>): Promise<[T, number]> {
  const before = await replicaWaits(conn);
  const r = await fn();
  return [r, (await replicaWaits(conn)) - before];
}

/** One paid call through `ledger`: admitted (1,000 msat bound) and settled at `costMsat`. */
async function paidCall(ledger: Ledger, credential: Credential, requestId: string, costMsat: number) {
  const a = await ledger.admit({
    credential,
    requestId,
    model: 'm',
    maxMsat: 1000,
    minMsat: 1000,
    expiresInMs: 60_000,
    limits: LIMITS,
  });
  if (!a.ok) throw new Error(`admit ${requestId}: ${a.code}`);
  const s = await ledger.settle({
    accountId: a.accountId,
    requestId,
    costMsat,
    promptTokens: 1,
    completionTokens: 1,
    estimated: false,
    model: 'm',
    description: 'x',
  });
  if (!s.ok) throw new Error(`settle ${requestId}: ${s.code}`);
}

function storedProof(y: string, amount: number): StoredProof {
  return { y, id: '009a1f293253e41e', amount, secret: `secret-${y}`, C: `02${y}` };
}
