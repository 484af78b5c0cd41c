import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  openRealtime,
  type RawRealtimeClient,
  REALTIME_MODELS,
  REALTIME_PRICING_ENV,
  userText,
} from '../../bench/upstream/realtime-rig.js';
import { paidProcessesPerTest } from '../support/paid-process.js';
import { until } from '../support/until.js';

/**
 * A gateway process killed (SIGKILL) with a Realtime session open and a response in flight: the session's
 * reservations (owned by the dead process, held for the whole session: a long lease) are released by the
 * orphan pass of a restarted process within ORPHAN_RELEASE_MS of the last heartbeat; the response settled
 * before the kill stays charged once, the one in flight is never charged (the documented loss is the
 * operator's unreported usage, never the user's money), and the audit holds. On both stores and both engines.
 */
const ORPHAN_MS = 1_500;
const dir = mkdtempSync(join(tmpdir(), 'rt-crash-'));
const modelsPath = join(dir, 'models.json');
writeFileSync(modelsPath, JSON.stringify(REALTIME_MODELS));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function waitFor(c: RawRealtimeClient, type: string, n = 1) {
  await until(`${n} × ${type}`, () => c.events.filter((e) => e.type === type).length >= n);
  return c.events.filter((e) => e.type === type)[n - 1]!;
}

describe.each(
  (['sqlite', 'redis'] as const).flatMap((store) =>
    (['node', 'uws'] as const).map((e) => [store, e] as const),
  ),
)('kill -9 with a Realtime session open (%s, %s engine)', (store, engine) => {
  const paidProcesses = paidProcessesPerTest();

  it('a restarted process releases the dead session’s reservation; what was settled stays charged once', async () => {
    const procs = await paidProcesses(store);
    const { ps, up } = procs;
    const env = {
      ...REALTIME_PRICING_ENV,
      HTTP_ENGINE: engine,
      MODELS_PATH: modelsPath,
      RESERVATION_LEASE_MS: '900000',
      ORPHAN_RELEASE_MS: String(ORPHAN_MS),
    };
    const a = await procs.spawn(env);
    // The engine asked for serves (uWS names itself in a `uWebSockets` header).
    const health = await fetch(`http://127.0.0.1:${a.port}/healthz`);
    expect(health.headers.has('uwebsockets')).toBe(engine === 'uws');
    const apiKey = await procs.createKey(`http://127.0.0.1:${a.port}`, 1000);
    const c = await openRealtime(`127.0.0.1:${a.port}`, apiKey);
    // One response settled: 7 × 4 + 8 × 16 = 156.
    c.send(userText('Hello there, how are you?'));
    c.send({ type: 'response.create' });
    expect((await waitFor(c, 'gateway.cost')).msats).toBe(156);
    // A second one in flight (40 deltas, 100 ms apart) when the process dies.
    up.realtime.behaviour.textTokens = 40;
    up.realtime.behaviour.deltaDelayMs = 100;
    c.send({ type: 'response.create' });
    await waitFor(c, 'response.output_text.delta', 9);

    await ps.withLedger(async (ledger) => {
      const info = async () => (await ledger.getKeyInfo({ apiKey }))!;
      expect((await info()).account.reservedMsat).toBeGreaterThan(0);

      await a.kill('SIGKILL');
      const killedAt = Date.now();
      await until('the client saw the socket drop', () => c.closed !== undefined);
      // Still held: no process runs the orphan pass yet, and the lease (15 minutes) is far away.
      expect((await info()).account.reservedMsat).toBeGreaterThan(0);

      await procs.spawn(env);
      await until(
        'the orphan pass released the session',
        async () => (await info()).account.reservedMsat === 0,
        15_000,
        100,
      );
      // Bound: the last heartbeat (≤ ORPHAN_MS/3 before the kill) + ORPHAN_MS + the start-up and one beat.
      expect(Date.now() - killedAt).toBeLessThan(12_000);
      const after = await info();
      expect(after.account.balanceMsat).toBe(1_000_000 - 156);
      expect(after.availableMsat).toBe(1_000_000 - 156);
      const page = await ledger.listTransactions({ apiKey }, { limit: 20 });
      const usage = page!.transactions.filter((t) => t.type === 'usage' && t.amountMsat !== 0);
      expect(usage.map((t) => t.amountMsat)).toEqual([-156]);
      expect((await ledger.checkConservation()).breaches).toEqual([]);
    });
  }, 90_000);
});
