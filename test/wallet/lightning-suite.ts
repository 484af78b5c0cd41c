import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import { bolt11AmountMsat } from '../../core/wallet/bolt11.js';
import { QuoteNotPaidError } from '../../core/wallet/mint-quote.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { crashRigPerSuite } from '../support/crash-rig.js';
import { captureLog, proofsMsat, testWallet } from '../support/dev-mint.js';
import { runChild } from './crash-recovery-suite.js';

/**
 * Lightning deposits into the wallet (the wallet part): a NUT-04 quote at the primary mint stays UNPAID
 * until the dev mint is told it was paid; minting it stores exactly its value once — concurrent calls in one
 * or several wallets on the same store, a repeat after ISSUED, and a process killed right after the mint
 * signed (recovered from the journal by NUT-09 restore of the deterministic outputs).
 */

export function lightningSuite(kind: 'sqlite' | 'redis'): void {
  describe(`Lightning deposits into the wallet (${kind} store)`, () => {
    const { mint, conn, childEnv } = crashRigPerSuite(kind, 'wallet-ln-', { mintQuotePayment: 'manual' });

    it('pending → paid → issued: exactly amount × 1000 msat, once, even with 20 concurrent mints in two wallets', async () => {
      const a = await testWallet(conn, [mint.url]);
      const b = await testWallet(conn, [mint.url]);
      const before = await proofsMsat(a);
      const q = await a.createLightningQuote(1234);
      expect(q).toMatchObject({ amountSats: 1234, state: 'UNPAID' });
      expect(bolt11AmountMsat(q.request)).toBe(1_234_000n);
      expect(q.expiresAt).toBeGreaterThan(Date.now());
      await expect(a.mintLightningQuote(q.quote, 1234)).rejects.toBeInstanceOf(QuoteNotPaidError);
      expect(await proofsMsat(a)).toBe(before);
      mint.payMintQuote(q.quote);
      expect((await b.checkLightningQuote(q.quote, 1234)).state).toBe('PAID');
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).mintLightningQuote(q.quote, 1234)),
      );
      const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      // Whoever lost the claim was told 'token_pending' (retry), never given a second mint.
      for (const e of refused) expect(isGatewayError(e) && e.code).toBe('token_pending');
      expect(ok.length).toBeGreaterThan(0);
      for (const r of ok) expect(r).toMatchObject({ amountMsat: 1_234_000, feeMsat: 0, faceMsat: 1_234_000 });
      expect(new Set(ok.map((r) => r.tokenHash)).size).toBe(1);
      expect(await proofsMsat(a)).toBe(before + 1_234_000);
      // After ISSUED the same receipt comes back, nothing more is stored.
      expect((await a.mintLightningQuote(q.quote, 1234)).amountMsat).toBe(1_234_000);
      expect((await b.checkLightningQuote(q.quote, 1234)).state).toBe('ISSUED');
      expect(await proofsMsat(b)).toBe(before + 1_234_000);
      const solvency = await a.checkSolvency(async () => before + 1_234_000);
      expect(solvency).toMatchObject({ proofsMsat: before + 1_234_000, spentMsat: 0, solvent: true });
    });

    /**
     * A quote of `sats` paid, then minted by a child process killed right after the mint signed: the wallet and
     * its total before, the quote, the child's outcome.
     */
    async function paidQuoteKilledAfterMint(sats: number) {
      const w = await testWallet(conn, [mint.url]);
      const before = await proofsMsat(w);
      const q = await w.createLightningQuote(sats);
      mint.payMintQuote(q.quote);
      const child = await runChild({
        ...childEnv,
        CRASH_OP: 'mint-quote',
        CRASH_ARG: `${q.quote}:${sats}`,
        WALLET_TEST_CRASH_AT: 'after-mint',
      });
      expect(child.signal).toBe('SIGKILL');
      return { w, before, q, child };
    }

    it('a process killed right after the mint signed: recovery stores the deposit once', async () => {
      const { w, before, q, child } = await paidQuoteKilledAfterMint(500);
      expect(child.out).not.toContain('survived');
      expect((await w.checkLightningQuote(q.quote, 500)).state).toBe('ISSUED');
      expect(await proofsMsat(w)).toBe(before);
      const fresh = await testWallet(conn, [mint.url]);
      expect(await fresh.recover()).toMatchObject({ examined: 1, receivesCompleted: 1, deferred: 0 });
      expect(await proofsMsat(fresh)).toBe(before + 500_000);
      const receipt = await fresh.mintLightningQuote(q.quote, 500);
      expect(receipt).toMatchObject({ amountMsat: 500_000, feeMsat: 0 });
      expect(await proofsMsat(fresh)).toBe(before + 500_000);
      expect((await fresh.recover()).examined).toBe(0);
    });

    it('a live retry after a crash finishes the dead claim itself once its lease is out (no recover())', async () => {
      const { before, q } = await paidQuoteKilledAfterMint(77);
      const live = await createWallet({
        conn,
        mints: [mint.url],
        log: captureLog().log,
        claimStaleAfterMs: 200,
      });
      // The dead process's claim is older than the lease by now (a child process takes longer to start).
      await new Promise((r) => setTimeout(r, 250));
      expect((await live.mintLightningQuote(q.quote, 77)).amountMsat).toBe(77_000);
      expect(await proofsMsat(live)).toBe(before + 77_000);
    });

    it('a mint that is down delays the deposit and loses nothing', async () => {
      const w = await testWallet(conn, [mint.url]);
      const before = await proofsMsat(w);
      const q = await w.createLightningQuote(9);
      mint.payMintQuote(q.quote);
      mint.setOutage(503);
      try {
        await expect(w.mintLightningQuote(q.quote, 9)).rejects.toMatchObject({ code: 'mint_unavailable' });
      } finally {
        mint.setOutage(null);
      }
      expect(await proofsMsat(w)).toBe(before);
      await w.recover();
      expect((await w.mintLightningQuote(q.quote, 9)).amountMsat).toBe(9_000);
      expect(await proofsMsat(w)).toBe(before + 9_000);
    });
  });
}
