import { spawn } from 'node:child_process';
import { CheckStateEnum, getTokenMetadata, Wallet } from '@cashu/cashu-ts';
import { beforeAll, describe, expect, it } from 'vitest';
import type { WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { crashRigPerSuite } from '../support/crash-rig.js';
import { captureLog, proofsMsat, redeemElsewhere, testWallet } from '../support/dev-mint.js';

/**
 * A process killed between the mint's answer and our store write loses nothing: the next process's
 * `recover()` finds the journal entry, asks the mint (NUT-07) whether the inputs were consumed and restores
 * our outputs from the seed (NUT-09). Runs a real child process on the same store, killed by the wallet's
 * test hook, for a receive, a send and a payout, on both stores.
 */

const CHILD = new URL('./fixtures/crash-child.ts', import.meta.url).pathname;

/** A child process receiving `token`, killed at `at` (WALLET_TEST_CRASH_AT): it did die there. */
export async function receiveKilledAt(env: Record<string, string>, at: string, token: string) {
  const child = await runChild({ ...env, CRASH_OP: 'receive', WALLET_TEST_CRASH_AT: at }, token);
  expect(child.signal).toBe('SIGKILL');
  return child;
}

export async function runChild(
  env: Record<string, string>,
  stdin = '',
  script = CHILD,
): Promise<{ code: number | null; signal: string | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, NODE_ENV: 'test', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  child.stderr.on('data', (d) => {
    out += String(d);
  });
  child.stdin.end(stdin);
  return await new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, out })));
}

export function crashRecoverySuite(kind: 'sqlite' | 'redis'): void {
  describe(`crash recovery (${kind} store)`, () => {
    const { mint, conn, childEnv } = crashRigPerSuite(kind, 'wallet-crash-', { inputFeePpk: 100 });
    let wallet: WalletService;

    beforeAll(async () => {
      wallet = await testWallet(conn, [mint.url]);
    });

    it('recovers the proofs and the receipt of a receive killed right after the swap', async () => {
      const token = await mint.mintTokens(1000, 'sat');
      const child = await receiveKilledAt(childEnv, 'after-swap', token);
      expect(child.out).not.toContain('survived');
      // The mint did swap: the token's proofs are spent, and we hold nothing yet.
      const probe = new Wallet(mint.url, { unit: 'sat' });
      await probe.loadMint();
      const states = await probe.checkProofsStates(
        getTokenMetadata(token).incompleteProofs.map((p) => ({
          secret: p.secret,
          id: mint.keysetIds.sat as string,
        })),
      );
      expect(states.every((s) => s.state === CheckStateEnum.SPENT)).toBe(true);
      expect(await proofsMsat(wallet)).toBe(0);

      const fresh = await testWallet(conn, [mint.url]);
      const report = await fresh.recover();
      expect(report).toMatchObject({ examined: 1, receivesCompleted: 1, deferred: 0 });
      const fee = Math.ceil((getTokenMetadata(token).proofAmounts.length * 100) / 1000);
      const receipt = await fresh.receive(token);
      expect(receipt.amountMsat).toBe((1000 - fee) * 1000);
      expect(receipt.feeMsat).toBe(fee * 1000);
      expect(await proofsMsat(fresh)).toBe(receipt.amountMsat);
      const solvency = await fresh.checkSolvency(async () => receipt.amountMsat);
      expect(solvency).toMatchObject({ proofsMsat: receipt.amountMsat, spentMsat: 0, solvent: true });
      expect((await fresh.recover()).examined).toBe(0);
    });

    it('a retry of the same token in a live process also completes the crashed receive', async () => {
      const token = await mint.mintTokens(300, 'sat');
      await receiveKilledAt(childEnv, 'after-swap', token);
      const before = await proofsMsat(wallet);
      // No recover() call: the live process's retry finds the dead owner's claim, waits out the lease and
      // then settles it from the journal itself.
      const live = await createWallet({
        conn,
        mints: [mint.url],
        log: captureLog().log,
        claimStaleAfterMs: 300,
      });
      const r = await live.receive(token);
      expect(r.amountMsat).toBe(
        (300 - Math.ceil((getTokenMetadata(token).proofAmounts.length * 100) / 1000)) * 1000,
      );
      expect(await proofsMsat(wallet)).toBe(before + r.amountMsat);
      expect(await live.receive(token)).toEqual(r);
    });

    it('recovers a send killed after the swap: the undelivered token comes back to us', async () => {
      const before = await proofsMsat(wallet);
      const child = await runChild({
        ...childEnv,
        CRASH_OP: 'send',
        CRASH_ARG: '200000',
        WALLET_TEST_CRASH_AT: 'after-send-swap',
      });
      expect(child.signal).toBe('SIGKILL');
      const report = await wallet.recover();
      expect(report).toMatchObject({ examined: 1, outputsRestored: 1 });
      const after = await proofsMsat(wallet);
      // Only the swap's input fee is gone (at most 1 sat per 10 inputs at 100 ppk).
      expect(before - after).toBeGreaterThan(0);
      expect(before - after).toBeLessThanOrEqual(2000);
      expect((await wallet.balances()).every((l) => l.reserved === 0)).toBe(true);
      const s = await wallet.send(100_000);
      expect(await redeemElsewhere(mint.url, s.token)).toBeGreaterThan(0);
      const solvency = await wallet.checkSolvency(async () => 0);
      expect(solvency.spentMsat).toBe(0);
      expect(solvency.proofsMsat).toBe(await proofsMsat(wallet));
    });

    it('recovers a payout killed after the melt: inputs gone, change restored', async () => {
      const before = await proofsMsat(wallet);
      const invoice = mint.invoice(50_000);
      const child = await runChild({
        ...childEnv,
        CRASH_OP: 'payout',
        CRASH_ARG: invoice,
        WALLET_TEST_CRASH_AT: 'after-melt',
      });
      expect(child.signal).toBe('SIGKILL');
      const report = await wallet.recover();
      expect(report).toMatchObject({ examined: 1, outputsRestored: 1 });
      const paid = before - (await proofsMsat(wallet));
      expect(paid).toBeGreaterThanOrEqual(50_000);
      expect(paid).toBeLessThanOrEqual(52_000);
      const solvency = await wallet.checkSolvency(async () => 0);
      expect(solvency).toMatchObject({ spentMsat: 0, pendingMsat: 0 });
    });

    it('ignores the crash hook outside NODE_ENV=test', async () => {
      const token = await mint.mintTokens(10, 'sat');
      const child = await runChild(
        { ...childEnv, CRASH_OP: 'receive', WALLET_TEST_CRASH_AT: 'after-swap', NODE_ENV: 'production' },
        token,
      );
      expect(child.out).toContain('survived');
      expect(child.code).toBe(0);
    });
  });
}
