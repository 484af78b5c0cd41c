import { describe, expect, it } from 'vitest';
import { postJson, SMALL_CHAT } from '../support/paid-process.js';
import { until } from '../support/until.js';
import { twoProcessesPerSuite } from './support/two-processes.js';

/**
 * A watch gained on one process reaches another's spend hook through the store's `watches` signal. Process B
 * serves a key's calls while its account watches nothing, and remembers that (so an idle account's calls cost
 * no store read: core/events/events.ts). Then alert settings are saved on process A. B's next call, a moment
 * later, crosses the threshold: B must look at the account again (the signal made its "nothing" stale) and
 * fire balance.low. Without the signal B keeps its "nothing" (ten minutes with the signal wired; five seconds
 * before) and the crossing is not seen by that call: nothing else looks at the balance until a later call.
 */
describe.each(['sqlite', 'redis'] as const)('the watches signal across two processes (%s)', (store) => {
  const two = twoProcessesPerSuite(store, { LEDGER_LEASES: 'false' });
  const rx = two.rx;

  it("alert settings saved on A: B's next call sees them and fires balance.low once", {
    timeout: 60_000,
  }, async () => {
    const a = two.base(0);
    const b = two.base(1);
    const apiKey = await two.rig().createKey(a, 200);
    const call = async (base: string) => {
      const r = await postJson(base, apiKey, '/v1/chat/completions', SMALL_CHAT);
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    };
    // B learns the account watches nothing: 200,000 → 198,000 msat.
    await call(b);
    await call(b);
    const saved = await postJson(a, apiKey, '/v1/wallet/alerts', {
      low_balance_threshold: 197_500,
      webhook_url: `${rx.url}/low`,
    });
    expect(saved.status).toBe(200);
    // The signal's bound: Redis publishes at once (and polls every second), SQLite polls every 250 ms.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(rx.on('/low')).toHaveLength(0);
    await call(b); // 197,000 < 197,500
    await until('balance.low from B', () => rx.on('/low').length >= 1, 20_000);
    const got = JSON.parse(rx.on('/low')[0]!.body) as {
      type: string;
      data: { balance: number; threshold: number };
    };
    expect(got).toMatchObject({ type: 'balance.low', data: { threshold: 197_500, balance: 197_000 } });
    // A negative: no second event. There is no event to wait on, so this waits a fixed while.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(rx.on('/low')).toHaveLength(1);
  });
});
