import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { depositIdHash, LightningDeposits, openDepositStore } from '../../core/account/lightning-deposits.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import type { WalletService } from '../../core/wallet/types.js';
import { crashRigPerSuite } from '../support/crash-rig.js';
import { captureLog, testWallet } from '../support/dev-mint.js';
import { runChild } from './crash-recovery-suite.js';

/**
 * A process killed with SIGKILL while it finishes a paid Lightning deposit ("a process killed between
 * paid and issued finishes after restart, once"). A real child process (fixtures/deposit-child.ts) runs the
 * watcher over the shared store and dies at a test kill point; a fresh wallet + finisher on the same store then
 * does what a restarted gateway does (recovery pass, then the watcher) and must end with exactly one key (create)
 * or one credit (top-up) of exactly amount × 1000 msat; running it again changes nothing.
 *
 * The dev mint here offers no NUT-17, so the test process's own finisher cannot finish the deposit from a push
 * while the child runs: only the child (then the restarted finisher) touches it.
 */

const CHILD = new URL('./fixtures/deposit-child.ts', import.meta.url).pathname;

export function lightningDepositsCrashSuite(kind: 'sqlite' | 'redis'): void {
  describe(`Lightning deposit finisher killed mid-way (${kind} store)`, () => {
    const { mint, conn, childEnv } = crashRigPerSuite(kind, 'ln-deposit-crash-', {
      mintQuotePayment: 'manual',
      nut17: false,
    });
    let ledger: Ledger;
    const open: Array<{ close(): Promise<void> }> = [];

    /** What a (re)started gateway builds on the store: a wallet and a finisher that polls every record. */
    const restart = async (): Promise<{ wallet: WalletService; deposits: LightningDeposits }> => {
      const wallet = await testWallet(conn, [mint.url]);
      const deposits = new LightningDeposits({ conn, ledger, wallet, log: captureLog().log, pollMs: 0 });
      await deposits.init();
      open.push(wallet, { close: () => deposits.stop() });
      return { wallet, deposits };
    };
    const balanceOf = async (apiKey: string): Promise<number> =>
      (await ledger.getKeyInfo({ apiKey }))?.account.balanceMsat ?? -1;

    beforeAll(async () => {
      ledger = await createLedger(conn, {});
    });
    afterEach(async () => {
      expect((await ledger.checkConservation()).breaches).toEqual([]);
      const { wallet } = await restart();
      expect((await wallet.checkSolvency(() => ledger.totalUserBalancesMsat())).solvent).toBe(true);
      for (const o of open.splice(0)) await o.close();
    });
    afterAll(async () => {
      await ledger.close();
    });

    /** Creates and pays a deposit, then lets a child process die finishing it at `point`. */
    async function killedWhileFinishing(
      deposit: Parameters<LightningDeposits['create']>[0],
      point: string,
    ): Promise<string> {
      const { deposits } = await restart();
      const { id, record } = await deposits.create(deposit);
      mint.payMintQuote(record.quote);
      const child = await runChild({ ...childEnv, WALLET_TEST_CRASH_AT: point }, '', CHILD);
      expect(child.signal, child.out).toBe('SIGKILL');
      expect(child.out).not.toContain('survived');
      // The child got past "paid" and died before the record said issued.
      expect((await openDepositStore(conn).get(depositIdHash(id)))?.status).toBe('paid');
      return id;
    }

    it.each([
      ['after-mint', 'the mint signed, nothing stored yet'],
      ['deposit-before-credit', 'proofs stored, no key yet'],
      ['deposit-before-issued', 'key created, record still paid'],
    ])(
      'create, killed at %s (%s): the restarted gateway issues one key of exactly 321 000 msat',
      async (point) => {
        const usersBefore = await ledger.totalUserBalancesMsat();
        const id = await killedWhileFinishing({ kind: 'create', amountSats: 321, name: 'crash' }, point);
        if (point !== 'deposit-before-issued') {
          expect(await ledger.totalUserBalancesMsat()).toBe(usersBefore);
        }
        const { wallet, deposits } = await restart();
        // Start-up order of services.ts: the wallet's recovery pass, then the watcher.
        const recovered = await wallet.recover();
        expect(recovered.examined).toBe(point === 'after-mint' ? 1 : 0);
        expect(await deposits.watchOnce()).toBe(1);
        const v = await deposits.status(id);
        expect(v).toMatchObject({ status: 'issued', amountSats: 321, creditedMsat: 321_000 });
        const apiKey = v?.apiKey as string;
        expect(apiKey).toMatch(/^sk-/);
        expect(await balanceOf(apiKey)).toBe(321_000);
        expect(await ledger.totalUserBalancesMsat()).toBe(usersBefore + 321_000);
        // Again (another restart, another pass, another read): nothing more.
        const again = await restart();
        expect((await again.wallet.recover()).examined).toBe(0);
        expect(await again.deposits.watchOnce()).toBe(0);
        expect((await again.deposits.status(id))?.apiKey).toBe(apiKey);
        expect(await ledger.totalUserBalancesMsat()).toBe(usersBefore + 321_000);
      },
    );

    it.each(['after-mint', 'deposit-before-credit', 'deposit-before-issued'])(
      'top-up, killed at %s: the restarted gateway credits the key once, exactly 250 000 msat',
      async (point) => {
        const { deposits } = await restart();
        const made = await deposits.create({ kind: 'create', amountSats: 10 });
        mint.payMintQuote(made.record.quote);
        const apiKey = (await deposits.status(made.id))?.apiKey as string;
        expect(await balanceOf(apiKey)).toBe(10_000);
        const id = await killedWhileFinishing({ kind: 'topup', amountSats: 250, topupApiKey: apiKey }, point);
        expect(await balanceOf(apiKey)).toBe(point === 'deposit-before-issued' ? 260_000 : 10_000);
        const fresh = await restart();
        await fresh.wallet.recover();
        expect(await fresh.deposits.watchOnce()).toBe(1);
        expect(await fresh.deposits.status(id, 'topup')).toMatchObject({
          status: 'issued',
          creditedMsat: 250_000,
        });
        expect(await balanceOf(apiKey)).toBe(260_000);
        const again = await restart();
        expect((await again.wallet.recover()).examined).toBe(0);
        expect(await again.deposits.watchOnce()).toBe(0);
        await again.deposits.status(id, 'topup');
        expect(await balanceOf(apiKey)).toBe(260_000);
      },
    );
  });
}
