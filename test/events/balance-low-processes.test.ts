import { describe, expect, it } from 'vitest';
import { postJson, SMALL_CHAT } from '../support/paid-process.js';
import { until } from '../support/until.js';
import { twoProcessesPerSuite } from './support/two-processes.js';

/**
 * balance.low across processes (regression: a stale balance reported by one process's credit-lease settle
 * re-armed the alert, and the next drop fired it again). Two gateway processes on one store, credit leases on
 * with a slow report interval so each process's view of the balance lags the other's calls; calls alternate
 * between them on one key. Exactly one balance.low per crossing; only a top-up re-arms it.
 */
describe.each(['sqlite', 'redis'] as const)('balance.low with two gateway processes (%s)', (store) => {
  const two = twoProcessesPerSuite(store, {
    LEDGER_LEASES: 'true',
    LEASE_FLUSH_MS: '2000',
    LEASE_IDLE_MS: '5000',
  });
  const rx = two.rx;

  it('fires exactly once per crossing; a top-up above the threshold re-arms it', {
    timeout: 120_000,
  }, async () => {
    const base = two.base;
    const apiKey = await two.rig().createKey(base(0), 200);
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const alerts = await postJson(base(0), apiKey, '/v1/wallet/alerts', {
      low_balance_threshold: 190_000,
      webhook_url: `${rx.url}/low`,
    });
    expect(alerts.status).toBe(200);

    // 1 sat (1,000 msat) per call, 16 on each process at the same time: 200,000 → 168,000 msat. Each
    // process's view leaves out the other's unreported calls, so both views cross 190,000 (at 189,000) while
    // the other may still report more than 190,000: one event all the same.
    const stream = async (p: number, n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await postJson(base(p), apiKey, '/v1/chat/completions', SMALL_CHAT);
        expect(r.status).toBe(200);
        await r.arrayBuffer();
      }
    };
    const calls = (n: number) => Promise.all([stream(0, n / 2), stream(1, n / 2)]);
    const balance = async () => {
      const r = await fetch(`${base(0)}/v1/wallet`, { headers: auth });
      return ((await r.json()) as { balance: number }).balance;
    };
    await calls(32);
    await until('the first balance.low', () => rx.on('/low').length >= 1, 30_000);
    // Both processes report their calls (LEASE_FLUSH_MS) while a wrong second event would be enqueued.
    await until('all 32 calls reported', async () => (await balance()) === 168_000, 30_000);
    await stream(0, 1);
    await stream(1, 1);
    // A negative: no further balance.low arrives. There is no event to wait on, so this waits a fixed while.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(rx.on('/low')).toHaveLength(1);

    // A top-up to 206,000 msat (≥ the threshold) re-arms. 32 more calls: 174,000 msat. A process's own view
    // (16 calls below what it last read) may stay at or above the threshold until it reads the other's calls;
    // at the latest the calls after both reported see the real balance. Either way: once.
    const topup = await postJson(base(1), apiKey, '/v1/wallet/topup', {
      cashu_token: await two.rig().mint.mintTokens(40),
    });
    expect(topup.status).toBe(200);
    await calls(32);
    await until('all 66 calls reported', async () => (await balance()) === 174_000, 30_000);
    await stream(0, 1);
    await stream(1, 1);
    await until('the second balance.low', () => rx.on('/low').length >= 2, 30_000);
    // A negative: no further balance.low arrives. There is no event to wait on, so this waits a fixed while.
    await new Promise((r) => setTimeout(r, 1_000));
    const got = rx.on('/low').map((g) => JSON.parse(g.body));
    expect(got).toHaveLength(2);
    expect(new Set(got.map((e) => e.id)).size).toBe(2);
    for (const e of got) {
      expect(e).toMatchObject({ type: 'balance.low', data: { threshold: 190_000 } });
      expect(e.data.balance).toBeLessThan(190_000);
    }
  });
});
