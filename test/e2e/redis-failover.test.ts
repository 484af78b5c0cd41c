import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ask, waitFor } from '../../scripts/lib/redis-topology.js';
import { type PaidProcesses, paidProcesses } from '../support/paid-process.js';
import { type RedisTopology, startRedisCluster, startRedisSentinel } from '../support/redis-cluster.js';

const run = promisify(execFile);

/**
 * The gateway on Redis Cluster (3 masters, 3 replicas) and on Sentinel (master, replica, 3 sentinels): two
 * gateway processes serve one key, exactly; the master holding the key's account is SIGKILLed under paid
 * traffic from both. Every call is served (and charged once) or refused with 503 store_unavailable; service
 * resumes once the replica took over, without a restart; after both gateways stop, the balance moved by
 * exactly 1,000 msat per call served, nothing is reserved, and `npm run audit` and `npm run wallet:solvency`
 * pass on the store.
 */

// Enough for every call the six callers make at full speed until the failover is over (1 sat each).
const FUNDED_SATS = 20_000;
const PER_CALL_MSAT = 1000;
const BODY = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] });

const topologies = [
  ['Redis Cluster', () => startRedisCluster({ replicas: 1, nodeTimeoutMs: 2000 })],
  ['Redis Sentinel', () => startRedisSentinel({ downAfterMs: 1000 })],
] as const;

describe.each(topologies)('failover on %s', (_name, start) => {
  let topo: RedisTopology | undefined;
  let rig: PaidProcesses | undefined;
  afterEach(async () => {
    await rig?.close();
    await topo?.stop();
  });

  it('two gateways serve one key; a master SIGKILLed under paid traffic: served once or refused, resumed, audited', async () => {
    topo = await start();
    const procs = await paidProcesses(topo);
    rig = procs;
    const env = {
      RATE_LIMIT_REQUESTS_PER_MINUTE: '100000',
      RATE_LIMIT_CONCURRENT: '100',
      ORPHAN_RELEASE_MS: '3000',
      SHUTDOWN_GRACE_MS: '20000',
    };
    const gateways = await Promise.all([procs.spawn(env), procs.spawn(env)]);
    const bases = gateways.map((g) => `http://127.0.0.1:${g.port}`);
    const apiKey = await procs.createKey(bases[0]!, FUNDED_SATS);
    const auth = { authorization: `Bearer ${apiKey}` };

    // The key made on the first gateway is the same key on the second one.
    const bal = await fetch(`${bases[1]}/v1/wallet/balance`, { headers: auth });
    expect(bal.status).toBe(200);
    expect(((await bal.json()) as { balance: number }).balance).toBe(FUNDED_SATS * 1000);
    const ready = (await (await fetch(`${bases[1]}/readyz`)).json()) as { redis: unknown };
    expect(ready.redis).toEqual(
      topo.form === 'cluster'
        ? { form: 'cluster', nodes: 6, answering: 6 }
        : { form: 'sentinel', nodes: 2, answering: 2 },
    );

    // Paid traffic: three sequential callers per gateway until told to stop.
    const outcomes = { served: 0, refused: 0, other: [] as string[] };
    const servedAt: Array<{ gw: number; startedAt: number }> = [];
    let stop = false;
    const caller = async (gw: number) => {
      while (!stop) {
        const startedAt = Date.now();
        const res = await fetch(`${bases[gw]}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          body: BODY,
        }).catch((err: unknown) => ({ status: 0, text: async () => String(err) }));
        const text = await res.text();
        if (res.status === 200) {
          outcomes.served++;
          servedAt.push({ gw, startedAt });
        } else if (res.status === 503 && text.includes('"store_unavailable"')) {
          outcomes.refused++;
          await new Promise((r) => setTimeout(r, 50)); // a client's pause before it retries a refused call
        } else outcomes.other.push(`${res.status} ${text.slice(0, 200)}`);
      }
    };
    const callers = [0, 0, 0, 1, 1, 1].map((gw) => caller(gw));
    await waitFor(async () => outcomes.served >= 30, '30 calls served before the kill', 30_000);

    // The master holding the key's account (cluster: the owner of its slot; Sentinel: the master).
    const accountId = await procs.ps.withLedger(
      async (l) => (await l.getKeyInfo({ apiKey }))!.account.accountId,
    );
    const masters = await topo.masters();
    let victim = masters[0]!;
    if (topo.form === 'cluster') {
      const key = `${procs.ps.env.REDIS_PREFIX}:{a:${accountId}}:acct`;
      const slot = await ask(masters[0]!, 'CLUSTER', 'KEYSLOT', key);
      for (const m of masters) {
        if (Number(await ask(m, 'CLUSTER', 'COUNTKEYSINSLOT', slot)) > 0) victim = m;
      }
    }
    await topo.kill(victim);
    const killedAt = Date.now();

    // Service resumes without a restart: once the replica has taken over, both gateways serve calls again.
    await waitFor(
      async () => {
        const m = await topo!.masters();
        return m.length === (topo!.form === 'cluster' ? 3 : 1) && !m.includes(victim);
      },
      'the replica to take over',
      45_000,
    );
    const promotedAt = Date.now();
    await waitFor(
      async () =>
        [0, 1].every((gw) => servedAt.filter((s) => s.gw === gw && s.startedAt > promotedAt).length >= 5),
      'both gateways serving again after the failover',
      20_000,
    ).catch((err) => {
      // What each gateway said, for the failure report.
      throw new Error(
        `${String(err)}; ${JSON.stringify({ ...outcomes, other: outcomes.other.slice(0, 5) })}\n${gateways
          .map((g) => g.logs().slice(-3000))
          .join('\n---\n')}`,
      );
    });
    const resumedMs = Date.now() - killedAt;
    stop = true;
    await Promise.all(callers);
    expect(outcomes.other).toEqual([]);
    expect(resumedMs).toBeLessThan(60_000);

    // The killed node comes back (as a replica of the new master), then both gateways stop: leases reported.
    await topo.restart(victim);
    await topo.waitHealthy(30_000);
    for (const g of gateways) await g.kill('SIGTERM');
    for (const g of gateways) expect(await g.exited).toBe('exit code 0, signal null');

    const account = await procs.ps.withLedger(async (l) => (await l.getKeyInfo({ apiKey }))!.account);
    expect(account.reservedMsat).toBe(0);
    expect(account.balanceMsat).toBe(FUNDED_SATS * 1000 - outcomes.served * PER_CALL_MSAT);
    expect(account.spentMsat).toBe(outcomes.served * PER_CALL_MSAT);

    // The operator tools on the same store.
    const toolEnv = {
      ...process.env,
      ...procs.ps.env,
      REDIS_URL: '',
      CASHU_MINTS: procs.mint.url,
      LOG_LEVEL: 'warn',
    };
    const tool = (...args: string[]) => run(process.execPath, ['--import', 'tsx', ...args], { env: toolEnv });
    const [audit, solvency] = await Promise.all([
      tool('scripts/audit.ts'),
      tool('scripts/solvency.ts', '--json'),
    ]);
    expect(JSON.parse(audit.stdout)).toMatchObject({ ok: true });
    expect(JSON.parse(solvency.stdout)).toMatchObject({ solvent: true });
  }, 180_000);
});
