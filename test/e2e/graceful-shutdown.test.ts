import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { expectSettled, openStream, paidProcessesPerTest, postJson } from '../support/paid-process.js';
import { until } from '../support/until.js';

/**
 * Graceful shutdown of the real process: SIGTERM while 50 paid streams are open. Every stream
 * completes with its `[DONE]`, every call is settled (charged once, nothing left reserved, audit clean), new
 * connections are refused as soon as the shutdown began, and the process exits 0. On SQLite and Redis.
 */
const STREAMS = 50;
const CHAT = {
  model: 'mock-gpt',
  stream: true,
  messages: [{ role: 'user', content: 'a long answer please' }],
};

describe.each(['sqlite', 'redis'] as const)('SIGTERM during 50 open streams (%s)', (store) => {
  const paidProcesses = paidProcessesPerTest();

  it('finishes and settles every stream, refuses new connections, exits 0, audit clean', async () => {
    const rig = await paidProcesses(store, { chunks: 20, chunkDelayMs: 100 });
    const gw = await rig.spawn({ RATE_LIMIT_CONCURRENT: '200', SHUTDOWN_GRACE_MS: '20000' });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await rig.createKey(base, 1_000);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    // 50 streams, each past its first chunk before the signal.
    const streams = await Promise.all(
      Array.from({ length: STREAMS }, async () =>
        openStream(await postJson(base, apiKey, '/v1/chat/completions', CHAT)),
      ),
    );
    const exited = gw.exited;
    process.kill(gw.pid!, 'SIGTERM');
    // A fresh TCP connection (not a pooled keep-alive one) is refused: the listening socket is closed.
    const { hostname, port } = new URL(base);
    const fresh = () =>
      new Promise<string>((resolve) => {
        const s = connect({ host: hostname, port: Number(port) });
        s.once('connect', () => {
          s.destroy();
          resolve('connected');
        });
        s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      });
    await until('the listening socket closed', async () => (await fresh()) === 'ECONNREFUSED', 5_000, 20);
    expect(await fresh()).toBe('ECONNREFUSED');

    const texts = await Promise.all(streams.map((s) => s.finish()));
    for (const t of texts) expect(t).toContain('data: [DONE]');
    expect(await exited).toBe('exit code 0, signal null');
    expect(gw.logs()).toContain('shut down cleanly');

    // Fixed pricing: 1 sat per call, every call charged once, nothing left reserved.
    await expectSettled(rig.ps, apiKey, { requests: STREAMS, balanceMsat: 1_000_000 - STREAMS * 1000 });
  }, 90_000);
});
