import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { SHUTDOWN_BOUND_MS } from '../../core/shutdown.js';
import type { GatewayProcess } from '../../scripts/lib/gateway-process.js';
import { type DevMint, startDevMint } from '../../scripts/mint/index.js';
import { testWallet } from '../support/dev-mint.js';
import { type PaidProcesses, paidProcesses } from '../support/paid-process.js';

/**
 * Issue 30: after SIGTERM the gateway process exits within SHUTDOWN_GRACE_MS + SHUTDOWN_BOUND_MS whatever fails
 * around it, and the money is consistent when it starts again (audit without breaches, solvent). Each case runs
 * a real gateway process on SQLite and on Redis.
 */
const GRACE_MS = 2_000;
const BOUND_MS = GRACE_MS + SHUTDOWN_BOUND_MS;
const CHAT = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] });

async function paidCall(base: string, apiKey: string): Promise<number> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: CHAT,
  });
  await res.arrayBuffer();
  return res.status;
}

/** SIGTERM, then how long until the process ended and how. */
async function terminate(gw: GatewayProcess): Promise<{ ms: number; exit: string }> {
  const t0 = Date.now();
  process.kill(gw.pid!, 'SIGTERM');
  const exit = await gw.exited;
  return { ms: Date.now() - t0, exit };
}

describe.each(['sqlite', 'redis'] as const)('SIGTERM ends the process within its bound (%s)', (store) => {
  let rig: PaidProcesses | undefined;
  let mint: DevMint | undefined;
  let up: MockUpstream | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await rig?.close();
    await Promise.allSettled([mint?.close(), up?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
    rig = mint = up = dir = undefined;
  });

  it('stdout and stderr without a reader, the mint and the provider gone: exits 0, money consistent on restart', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-shutdown-'));
    const dataFile = join(dir, 'mint.json');
    rig = await paidProcesses(store, {}, { dataFile });
    const gw = await rig.spawn({ SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await rig.createKey(base, 100);
    expect(await paidCall(base, apiKey)).toBe(200);

    // The supervisor that read the output has exited; the mint and the provider went away with it.
    gw.dropOutput();
    await rig.up.close();
    await rig.mint.close();
    const { ms, exit } = await terminate(gw);
    expect(exit).toBe('exit code 0, signal null');
    expect(ms).toBeLessThan(BOUND_MS);

    // Everything back: the same store starts a gateway again (the SQLite file and the leases were let go) and
    // the money adds up: 100 sat funded, two calls at 1 sat.
    mint = await startDevMint({ port: rig.mint.port, dataFile });
    up = await startMockUpstream();
    const again = await rig.spawn({ UPSTREAM_BASE_URL: up.url });
    expect(await paidCall(`http://127.0.0.1:${again.port}`, apiKey)).toBe(200);
    await again.kill('SIGTERM');
    expect(again.exitInfo()).toBe('exit code 0, signal null');
    await rig.ps.withLedger(async (ledger, conn) => {
      expect((await ledger.audit()).breaches).toEqual([]);
      const info = await ledger.getKeyInfo({ apiKey });
      expect(info!.account.balanceMsat).toBe(98_000);
      expect(info!.account.reservedMsat).toBe(0);
      const wallet = await testWallet(conn, [mint!.url]);
      try {
        const solvency = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
        expect(solvency.userBalancesMsat).toBe(98_000);
        expect(solvency.solvent).toBe(true);
      } finally {
        await wallet.close();
      }
    });
  }, 120_000);

  it('a plugin whose close never resolves: exits 1 within the bound, says which plugin', async () => {
    rig = await paidProcesses(store);
    const gw = await rig.spawn({
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      PIPELINE:
        'auth,rate-limit,reserve,./test/fixtures/plugins/never-closes.mjs,relay,meter,settle,change-token',
    });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await rig.createKey(base, 100);
    expect(await paidCall(base, apiKey)).toBe(200);
    const { ms, exit } = await terminate(gw);
    expect(exit).toBe('exit code 1, signal null');
    expect(ms).toBeLessThan(BOUND_MS);
    expect(gw.logs()).toMatch(/"plugin":"never-closes"[^\n]*plugin close failed or did not finish/);
    await rig.ps.withLedger(async (ledger) => {
      expect((await ledger.audit()).breaches).toEqual([]);
      const info = await ledger.getKeyInfo({ apiKey });
      expect(info!.account.balanceMsat).toBe(99_000);
      expect(info!.account.reservedMsat).toBe(0);
    });
  }, 120_000);
});
