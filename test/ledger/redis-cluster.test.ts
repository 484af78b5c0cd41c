import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type TestCluster } from '../support/redis-cluster.js';
import { conformance } from './support/conformance.js';
import { clusterFactory, leasedFactory, randomTokenHash } from './support/harness.js';

// The whole Redis conformance suite, unchanged, against a 3-master Redis Cluster started here: on the store
// itself and through the credit-lease wrapper (LEDGER_LEASES=on, the default).
let cluster: TestCluster | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('redis-cluster: setup', () => {
  it('spreads accounts over the three masters; audit and totals see all of them', async () => {
    const f = clusterFactory(() => cluster!.nodes);
    const h = await f.create();
    expect(h.ledger.kind).toBe('redis-cluster');
    for (let i = 0; i < 12; i++)
      await h.ledger.createKeyFromDeposit({ tokenHash: randomTokenHash(), amountMsat: 1000 });
    expect(await h.ledger.totalUserBalancesMsat()).toBe(12_000);
    expect((await h.ledger.checkConservation()).accounts).toBe(12);
    const c = new Cluster(cluster!.nodes);
    await new Promise((r) => c.once('ready', r));
    const sizes = await Promise.all(c.nodes('master').map((n) => n.dbsize()));
    expect(sizes.filter((s) => s > 0).length).toBeGreaterThanOrEqual(2);
    c.disconnect();
    await f.teardown();
  });
});

conformance(clusterFactory(() => cluster!.nodes));
conformance(leasedFactory(clusterFactory(() => cluster!.nodes)));
