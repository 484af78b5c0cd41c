import { randomBytes } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../core/audit/audit-log.js';
import { loadConfig } from '../../core/config.js';
import { createLedger } from '../../core/ledger/index.js';
import { WindowLimiter } from '../../core/limits/window-limiter.js';
import { createLogger } from '../../core/log.js';
import { AdminStats } from '../../core/stats/admin-stats.js';
import { openStore, type RedisStore } from '../../core/store/connection.js';
import { describeRedis, readRedisConfig } from '../../core/store/redis-config.js';
import { loadSettings, saveSettings } from '../../core/store/settings-store.js';
import { openDepositStore } from '../../core/wallet/lightning-deposits.js';
import { type RedisTopology, startRedisCluster } from '../support/redis-cluster.js';

/**
 * The three Redis forms from configuration, and the stores other than the ledger on a 3-master, 3-replica
 * Redis Cluster: each script in one slot, EVALSHA surviving an emptied script cache, the replica rule.
 * (The ledger's own conformance suite runs on a cluster in test/ledger/redis-cluster.test.ts.)
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

  async function open(extra: Record<string, string> = {}): Promise<RedisStore> {
    const prefix = `rf${randomBytes(4).toString('hex')}`;
    const conn = openStore({ redis: readRedisConfig({ ...topo.env, ...extra }), redisPrefix: prefix });
    if (conn.kind !== 'redis') throw new Error('expected Redis');
    conns.push(conn);
    await conn.ready();
    return conn;
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
    const waits = async () => {
      let n = 0;
      for (const m of (conn.redis as Cluster).nodes('master')) {
        n += Number(/cmdstat_wait:calls=(\d+)/.exec(await m.info('commandstats'))?.[1] ?? 0);
      }
      return n;
    };
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
    const s = await ledger.settle({
      accountId: a.accountId,
      requestId: 'r1',
      costMsat: 2000,
      promptTokens: 1,
      completionTokens: 2,
      estimated: false,
      model: 'm',
      description: 'x',
    });
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
});

const silent = createLogger('silent');
