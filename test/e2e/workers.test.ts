import { describe, expect, it } from 'vitest';
import { expectSettled, openStream, paidProcessesPerTest } from '../support/paid-process.js';
import { until } from '../support/until.js';

/**
 * WORKERS=2: one port, two worker processes under a node:cluster primary. Both serve; /metrics
 * on either counts what both did; paid calls spread over both are each charged once and the balance read on
 * either is exact; a worker killed with SIGKILL is replaced; SIGTERM to the primary lets open streams on both
 * workers finish and settle, then every process exits 0. On SQLite and Redis.
 */

const pidOf = async (base: string): Promise<number> => {
  // Bounded: a connection handed to a worker as it is killed may never be answered.
  const r = await fetch(`${base}/healthz`, {
    headers: { connection: 'close' },
    signal: AbortSignal.timeout(3000),
  });
  return ((await r.json()) as { pid: number }).pid;
};

async function metric(base: string, series: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { connection: 'close' } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe.each(['sqlite', 'redis'] as const)('WORKERS=2 on %s', (store) => {
  const paidProcesses = paidProcessesPerTest();

  it('both workers serve, metrics aggregate, calls are charged once, a dead worker is replaced, SIGTERM drains all', async () => {
    const rig = await paidProcesses(store, { chunks: 10, chunkDelayMs: 100 });
    const { up, ps } = rig;
    const gw = await rig.spawn({ WORKERS: '2', SHUTDOWN_GRACE_MS: '20000' });
    const base = `http://127.0.0.1:${gw.port}`;
    // The other worker may still be starting: wait until both answer.
    const pids = new Set<number>();
    await until(
      'both workers answer',
      async () => {
        pids.add(await pidOf(base));
        return pids.size >= 2;
      },
      15_000,
      50,
    );
    expect(pids.size).toBe(2);
    expect(pids.has(gw.pid!)).toBe(false);

    // Paid calls over both workers (fixed price 1 sat), balance read on either: exact.
    const apiKey = await rig.createKey(base, 100);
    const chat = (stream: boolean) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${apiKey}`,
          connection: 'close',
        },
        body: JSON.stringify({ model: 'mock-gpt', stream, messages: [{ role: 'user', content: 'hi' }] }),
      });
    up.setBehaviour({ chunkDelayMs: 0 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => chat(false)));
    for (const a of answers) expect(a.status).toBe(200);
    await Promise.all(answers.map((a) => a.text()));
    for (let i = 0; i < 4; i++) {
      const bal = await fetch(`${base}/v1/wallet/balance`, {
        headers: { authorization: `Bearer ${apiKey}`, connection: 'close' },
      });
      expect(((await bal.json()) as { balance: number }).balance).toBe(100_000 - 10 * 1000);
    }

    // /metrics on either worker counts what both charged (each worker alone charged about half).
    for (let i = 0; i < 4; i++) {
      expect(await metric(base, 'gateway_charged_msats_total{endpoint="/v1/chat/completions"}')).toBe(10_000);
    }

    // A worker killed outright is replaced; the node keeps serving.
    const victim = [...pids][0]!;
    process.kill(victim, 'SIGKILL');
    const seen = new Set<number>();
    await until(
      'a new worker answers',
      async () => {
        try {
          seen.add(await pidOf(base));
        } catch {
          /* a connection handed to the dying worker */
        }
        return [...seen].some((p) => !pids.has(p));
      },
      15_000,
      50,
    );
    expect([...seen].some((p) => !pids.has(p))).toBe(true);
    expect(gw.logs()).toContain('a worker died; starting another');

    // SIGTERM to the primary while streams are open on the workers: all finish, settled, exit 0.
    up.setBehaviour({ chunkDelayMs: 100 });
    const streams = await Promise.all(Array.from({ length: 6 }, async () => openStream(await chat(true))));
    const exited = gw.exited;
    process.kill(gw.pid!, 'SIGTERM');
    const texts = await Promise.all(streams.map((s) => s.finish()));
    for (const t of texts) expect(t).toContain('data: [DONE]');
    expect(await exited).toBe('exit code 0, signal null');
    expect(gw.logs()).toContain('all workers stopped');
    await expectSettled(ps, apiKey, { requests: 16, balanceMsat: 100_000 - 16 * 1000 });
  }, 120_000);
});
