import { describe, expect, it } from 'vitest';
import { openStream, paidProcessesPerTest, postJson } from '../support/paid-process.js';
import { until } from '../support/until.js';

/**
 * No funds locked by a dead process: kill -9 a gateway with 20 paid streams in flight. Its
 * 20 reservations (15-minute lease) are released by a restarted gateway on the same store within
 * ORPHAN_RELEASE_MS of the last heartbeat — not after the lease — exactly once, and the audit stays clean.
 */
const STREAMS = 20;
const ORPHAN_MS = 1_500;

describe.each(['sqlite', 'redis'] as const)('kill -9 with 20 streams in flight (%s)', (store) => {
  const paidProcesses = paidProcessesPerTest();

  it('a restarted process releases the dead one’s reservations within ORPHAN_RELEASE_MS', async () => {
    const procs = await paidProcesses(store, { chunks: 40, chunkDelayMs: 500 });
    const { ps } = procs;
    const env = {
      RATE_LIMIT_CONCURRENT: '100',
      RESERVATION_LEASE_MS: '900000',
      ORPHAN_RELEASE_MS: String(ORPHAN_MS),
    };
    const a = await procs.spawn(env);
    const base = `http://127.0.0.1:${a.port}`;
    const apiKey = await procs.createKey(base, 100);
    const body = { model: 'mock-gpt', stream: true, messages: [{ role: 'user', content: 'x' }] };
    const streams = await Promise.all(
      Array.from({ length: STREAMS }, async () =>
        openStream(await postJson(base, apiKey, '/v1/chat/completions', body)),
      ),
    );

    await ps.withLedger(async (ledger) => {
      const reserved = async () => (await ledger.getKeyInfo({ apiKey }))!.account.reservedMsat;
      expect(await reserved()).toBeGreaterThan(0);

      await a.kill('SIGKILL');
      const killedAt = Date.now();
      for (const s of streams) await s.cancel();
      // Still locked: nothing else runs yet, and the 15-minute lease is far away.
      expect(await reserved()).toBeGreaterThan(0);

      await procs.spawn(env);
      await until(
        'the orphan released',
        async () => (await reserved()) === 0,
        killedAt + 15_000 - Date.now(),
        100,
      );
      expect(await reserved()).toBe(0);
      // Bound: the last heartbeat (≤ ORPHAN_MS/3 before the kill) + ORPHAN_MS + the start-up and one beat.
      expect(Date.now() - killedAt).toBeLessThan(12_000);
      // The killed calls were never settled: the user keeps the whole balance (the documented loss is the
      // operator's unreported usage, never the user's money).
      expect((await ledger.getKeyInfo({ apiKey }))!.availableMsat).toBe(100_000);
      expect((await ledger.checkConservation()).breaches).toEqual([]);
    });
  }, 90_000);
});
