import { Wallet } from '@cashu/cashu-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ForeignMintPolicy, WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { crashRigPerSuite } from '../support/crash-rig.js';
import { captureLog, type DevMint, startTestMint } from '../support/dev-mint.js';
import { receiveKilledAt } from './crash-recovery-suite.js';
import { expectedSwap } from './fixtures/swap-arithmetic.js';

/**
 * eCash from a mint this node does not trust, swapped to the primary mint over Lightning (FOREIGN_MINTS=swap),
 * against two dev mints on one fake Lightning network: the primary leaves its mint quotes
 * UNPAID until the foreign mint's melt pays the invoice, and the foreign mint charges an input fee. Credited =
 * what the quote left after the input fee and the fee reserve, plus the reserve's unused part (NUT-08 change)
 * brought over by a second swap (fixtures/swap-arithmetic.ts works every amount by hand); the foreign proofs end
 * SPENT; a fee beyond the bound spends nothing; a process killed between the melt and the mint is finished once
 * by recovery, with the same amount.
 */

const total = async (w: WalletService): Promise<number> =>
  (await w.balances()).reduce((s, l) => s + l.amountMsat, 0);

const SWAP: ForeignMintPolicy = { mode: 'swap', maxFeePercent: 5, maxSats: 100_000 };

/** NUT-07 states of a token's proofs at its mint, asked by an independent cashu-ts wallet. */
async function proofStates(mintUrl: string, token: string): Promise<string[]> {
  const w = new Wallet(mintUrl, { unit: 'sat' });
  await w.loadMint();
  const states = await w.checkProofsStates(w.decodeToken(token).proofs);
  return states.map((s) => s.state);
}

export function foreignSwapSuite(kind: 'sqlite' | 'redis'): void {
  describe(`foreign-mint swaps (${kind} store)`, () => {
    const {
      mint: primary,
      conn,
      childEnv,
    } = crashRigPerSuite(kind, 'wallet-fswap-', { mintQuotePayment: 'manual' });
    let foreign: DevMint;
    const open = (policy: ForeignMintPolicy = SWAP, claimStaleAfterMs?: number) =>
      createWallet({
        conn,
        mints: [primary.url],
        log: captureLog().log,
        mintTimeoutMs: 5000,
        foreignMints: policy,
        ...(claimStaleAfterMs ? { claimStaleAfterMs } : {}),
      });
    /**
     * A live wallet whose claims go stale after 200 ms, once the dead child's claim is that old: the child's
     * journal entry was written before it was killed, so 250 ms after its exit the claim is past the 200 ms.
     */
    const openOnceStale = async () => {
      const live = await open(SWAP, 200);
      await new Promise((r) => setTimeout(r, 250));
      return live;
    };

    beforeAll(async () => {
      // 100 ppk: 0.1 sat per input proof, rounded up per melt.
      foreign = await startTestMint({ inputFeePpk: 100 });
      childEnv.CRASH_FOREIGN = 'swap';
    });

    afterAll(async () => {
      await foreign.close();
    });

    it('refused as before when FOREIGN_MINTS=refuse; nothing is spent', async () => {
      const w = await open({ ...SWAP, mode: 'refuse' });
      const token = await foreign.mintTokens(1000);
      expect(() => w.decodeToken(token)).toThrow(expect.objectContaining({ code: 'mint_not_trusted' }));
      await expect(w.receive(token)).rejects.toMatchObject({ code: 'mint_not_trusted' });
      expect(await proofStates(foreign.url, token)).not.toContain('SPENT');
    });

    it('credits what arrived, fee change included, once, and the foreign proofs are spent', async () => {
      const w = await open();
      const before = await total(w);
      const token = await foreign.mintTokens(1000);
      const decoded = w.decodeToken(token);
      expect(decoded).toMatchObject({ mint: foreign.url, amount: 1000, foreign: true, proofs: 6 });
      // By hand: 1000 sat in 6 proofs (512…8): input fee ceil(6 × 0.1) = 1; A = 989 (reserve 10, 989 + 10 + 1 =
      // 1000); the fake Lightning charges no fee, so the 10-sat reserve comes back as change (8 + 2: input fee 1)
      // and is swapped too: A₂ = 8 (reserve 1, 8 + 1 + 1 = 10). Credited 989 + 8 = 997 sat.
      expect(expectedSwap(1000, 6)).toMatchObject({ credited: 997, first: { amount: 989, change: 10 } });
      const results = await Promise.all(Array.from({ length: 5 }, () => w.receive(token).catch((e) => e)));
      const receipts = results.filter((r) => !(r instanceof Error) && 'amountMsat' in r);
      expect(receipts.length).toBeGreaterThan(0);
      for (const r of results) if (r instanceof Error) expect(r).toMatchObject({ code: 'token_pending' });
      for (const r of receipts) {
        expect(r).toMatchObject({
          tokenHash: decoded.tokenHash,
          mint: primary.url,
          swappedFrom: foreign.url,
          faceMsat: 1_000_000,
          amountMsat: 997_000,
          feeMsat: 3_000,
        });
      }
      expect(await total(w)).toBe(before + 997_000);
      expect(new Set(await proofStates(foreign.url, token))).toEqual(new Set(['SPENT']));
      // A repeat returns the same receipt and moves nothing.
      expect((await w.receive(token)).amountMsat).toBe(997_000);
      expect(await total(w)).toBe(before + 997_000);
      const solvency = await w.checkSolvency(async () => before + 997_000);
      expect(solvency).toMatchObject({ spentMsat: 0, solvent: true });
    });

    it('a real routing fee: credited = face − input fee − actual fee − the change swap\u2019s own cost', async () => {
      // A foreign mint whose Lightning reserve (2 %) exceeds the fee it actually pays (0.5 %).
      const routed = await startTestMint({ inputFeePpk: 100, feeReservePpk: 20_000, lightningFeePpk: 5_000 });
      try {
        const w = await open();
        const before = await total(w);
        const token = await routed.mintTokens(2000);
        expect(w.decodeToken(token).proofs).toBe(6);
        // By hand: input fee 1; A = 1959 (reserve ceil(39.18) = 40; 1959 + 40 + 1 = 2000); the payment costs
        // ceil(1959 × 0.005) = 10, so 40 − 10 = 30 sat come back (16 + 8 + 4 + 2). face − input fee − actual
        // fee = 2000 − 1 − 10 = 1989 = 1959 + 30. The change is eCash of the foreign mint: its swap pays an
        // input fee of 1 (4 proofs) and a 1-sat reserve (A₂ = 28; the 1-sat reserve is all spent on the
        // 1-sat routing fee). Credited 1959 + 28 = 1987 sat; fee 13.
        const hand = expectedSwap(2000, 6, {
          inputFeePpk: 100,
          feeReservePpk: 20_000,
          lightningFeePpk: 5_000,
        });
        expect(hand).toMatchObject({
          credited: 1987,
          first: { inputFee: 1, amount: 1959, reserve: 40, routingFee: 10, change: 30 },
          second: { inputFee: 1, amount: 28, reserve: 1 },
        });
        const r = await w.receive(token);
        expect(r).toMatchObject({ faceMsat: 2_000_000, amountMsat: 1_987_000, feeMsat: 13_000 });
        expect(await total(w)).toBe(before + 1_987_000);
        expect(new Set(await proofStates(routed.url, token))).toEqual(new Set(['SPENT']));
        // Change too small to pay for its own swap is the fee: 100 sat (3 proofs) → A = 97 (reserve 2), the
        // payment costs 1, change 1 — nothing fits a second swap of 1 sat.
        const small = await routed.mintTokens(100);
        expect(
          expectedSwap(100, 3, { inputFeePpk: 100, feeReservePpk: 20_000, lightningFeePpk: 5_000 }),
        ).toMatchObject({
          credited: 97,
          first: { amount: 97, reserve: 2, routingFee: 1, change: 1 },
          second: { amount: 0 },
        });
        expect((await w.receive(small)).amountMsat).toBe(97_000);
        expect(await total(w)).toBe(before + 1_987_000 + 97_000);
      } finally {
        await routed.close();
      }
    });

    it('a fee beyond the bound is refused before anything is spent; the token stays the client\u2019s', async () => {
      const w = await open({ ...SWAP, maxFeePercent: 0.5 });
      const before = await total(w);
      const token = await foreign.mintTokens(1000);
      await expect(w.receive(token)).rejects.toMatchObject({
        code: 'swap_fee_too_high',
        details: expect.objectContaining({ face_sats: 1000, max_fee_percent: 0.5 }),
      });
      expect(await proofStates(foreign.url, token)).toEqual(expect.not.arrayContaining(['SPENT', 'PENDING']));
      expect(await total(w)).toBe(before);
      // Too large a token: refused by FOREIGN_MINT_MAX_SATS, also before anything moves.
      const small = await open({ ...SWAP, maxSats: 999 });
      await expect(small.receive(token)).rejects.toMatchObject({ code: 'invalid_request' });
      expect(await proofStates(foreign.url, token)).not.toContain('SPENT');
      // Within the bound the same token is still good.
      expect((await (await open()).receive(token)).faceMsat).toBe(1_000_000);
    });

    it('a token already spent at the foreign mint is refused and nothing is minted', async () => {
      const w = await open();
      const before = await total(w);
      const token = await foreign.mintTokens(200);
      const elsewhere = new Wallet(foreign.url, { unit: 'sat' });
      await elsewhere.loadMint();
      await elsewhere.receive(token, { requireDleq: false });
      await expect(w.receive(token)).rejects.toMatchObject({ code: 'token_already_spent' });
      expect(await total(w)).toBe(before);
    });

    it('a process killed between the melt and the mint: recovery mints once, a repeat credits nothing more', async () => {
      const w = await open();
      const before = await total(w);
      const token = await foreign.mintTokens(500);
      const child = await receiveKilledAt(childEnv, 'after-foreign-melt', token);
      expect(child.out).not.toContain('survived');
      // The foreign mint was paid; nothing is in our store yet.
      expect(new Set(await proofStates(foreign.url, token))).toEqual(new Set(['SPENT']));
      expect(await total(w)).toBe(before);
      const fresh = await open();
      expect(await fresh.recover()).toMatchObject({ examined: 1, receivesCompleted: 1, deferred: 0 });
      // By hand: 500 sat in 6 proofs, input fee 1, A = 494 (reserve 5); the change (5 sat, restored from the
      // journalled outputs at the foreign mint) swaps to A₂ = 3. Exactly what the live call would credit.
      expect(expectedSwap(500, 6).credited).toBe(497);
      expect((await total(fresh)) - before).toBe(497_000);
      expect(await fresh.recover()).toMatchObject({ examined: 0 });
      const receipt = await fresh.receive(token);
      expect(receipt).toMatchObject({ amountMsat: 497_000, faceMsat: 500_000, feeMsat: 3_000 });
      expect(await total(fresh)).toBe(before + 497_000);
    });

    it('a process killed after melting the fee change: recovery finishes both swaps, the same amount once', async () => {
      const w = await open();
      const before = await total(w);
      const token = await foreign.mintTokens(500);
      const child = await receiveKilledAt(childEnv, 'after-change-melt', token);
      expect(child.out).not.toContain('survived');
      // The first swap's quote was minted (494 sat stored); its change swap paid the primary, nothing minted.
      expect(await total(w)).toBe(before + 494_000);
      const fresh = await open();
      // Two journal entries (the token's swap waits for its change swap): at most two passes settle both.
      let passes = 0;
      while ((await fresh.recover()).examined > 0 && passes < 3) passes++;
      expect(passes).toBeGreaterThanOrEqual(1);
      expect(passes).toBeLessThanOrEqual(2);
      expect(await total(fresh)).toBe(before + 497_000);
      expect(await fresh.receive(token)).toMatchObject({ amountMsat: 497_000, feeMsat: 3_000 });
      expect(await total(fresh)).toBe(before + 497_000);
    });

    it('a foreign melt held PENDING: the call answers token_pending, recovery credits the same amount once it pays', async () => {
      const w = await open();
      const before = await total(w);
      const token = await foreign.mintTokens(500);
      foreign.setLightningMode('pending');
      try {
        await expect(w.receive(token)).rejects.toMatchObject({ code: 'token_pending' });
        expect(new Set(await proofStates(foreign.url, token))).toEqual(new Set(['PENDING']));
        // Still pending: recovery waits (deferred), nothing is credited.
        expect(await w.recover()).toMatchObject({ examined: 1, deferred: 1 });
        expect(await total(w)).toBe(before);
      } finally {
        foreign.setLightningMode('pay');
      }
      // The payment settles (with its change on our journalled outputs): 494 + the change's 3, as live.
      expect(await w.recover()).toMatchObject({ examined: 1, receivesCompleted: 1, deferred: 0 });
      expect(await total(w)).toBe(before + 497_000);
      expect(await w.receive(token)).toMatchObject({ amountMsat: 497_000, feeMsat: 3_000 });
      expect(await total(w)).toBe(before + 497_000);
    });

    it('a live retry finishes a dead process\u2019s swap itself once its claim is stale (no recover())', async () => {
      const before = await total(await open());
      const token = await foreign.mintTokens(300);
      await receiveKilledAt(childEnv, 'after-foreign-melt', token);
      const live = await openOnceStale();
      const receipt = await live.receive(token);
      expect(receipt.faceMsat).toBe(300_000);
      expect(await total(live)).toBe(before + receipt.amountMsat);
    });

    describe('a foreign mint without NUT-09 restore', () => {
      let bare: DevMint;
      beforeAll(async () => {
        bare = await startTestMint({ inputFeePpk: 100, nut09: false });
      });
      afterAll(async () => {
        await bare?.close();
      });

      it('advertises no NUT-09 and has no restore route', async () => {
        const info = (await (await fetch(`${bare.url}/v1/info`)).json()) as { nuts: Record<string, unknown> };
        expect(Object.keys(info.nuts)).not.toContain('9');
        expect((await fetch(`${bare.url}/v1/restore`, { method: 'POST', body: '{}' })).status).toBe(404);
      });

      it('a live swap takes the fee change from the melt answer (NUT-08): credited as with NUT-09', async () => {
        const w = await open();
        const before = await total(w);
        const token = await bare.mintTokens(1000);
        // The same arithmetic as with a NUT-09 mint (first test): A = 989, change 10 swapped to 8 → 997 sat.
        const r = await w.receive(token);
        expect(r).toMatchObject({
          faceMsat: 1_000_000,
          amountMsat: 997_000,
          feeMsat: 3_000,
          swappedFrom: bare.url,
        });
        expect(await total(w)).toBe(before + 997_000);
        expect(new Set(await proofStates(bare.url, token))).toEqual(new Set(['SPENT']));
        expect(await w.recover()).toMatchObject({ examined: 0 });
      });

      it('killed after the melt answer was journalled: recovery swaps that change, no restore needed', async () => {
        const w = await open();
        const before = await total(w);
        const token = await bare.mintTokens(500);
        await receiveKilledAt(childEnv, 'after-foreign-melt', token);
        const fresh = await open();
        expect(await fresh.recover()).toMatchObject({ examined: 1, receivesCompleted: 1, deferred: 0 });
        // 494 + the 5-sat change swapped to 3, as live with or without NUT-09.
        expect(await fresh.receive(token)).toMatchObject({ amountMsat: 497_000, feeMsat: 3_000 });
        expect(await total(fresh)).toBe(before + 497_000);
      });

      it('killed before the melt answer was journalled: recovery credits what reached the primary, the change is fee', async () => {
        const w = await open();
        const before = await total(w);
        const token = await bare.mintTokens(500);
        await receiveKilledAt(childEnv, 'foreign-melt-answered', token);
        expect(new Set(await proofStates(bare.url, token))).toEqual(new Set(['SPENT']));
        expect(await total(w)).toBe(before);
        const fresh = await open();
        // The melt's answer died with the process and the change cannot be restored: 500 sat, input fee 1,
        // A = 494 minted at the primary; the 5-sat change is part of the fee (6 sat). Never stuck pending.
        expect(await fresh.recover()).toMatchObject({ examined: 1, receivesCompleted: 1, deferred: 0 });
        expect((await total(fresh)) - before).toBe(494_000);
        const receipt = await fresh.receive(token);
        expect(receipt).toMatchObject({ faceMsat: 500_000, amountMsat: 494_000, feeMsat: 6_000 });
        expect(await total(fresh)).toBe(before + 494_000);
      });

      it('a live retry finishes a dead process\u2019s swap at such a mint (no 503, no token_pending)', async () => {
        const before = await total(await open());
        const token = await bare.mintTokens(500);
        await receiveKilledAt(childEnv, 'foreign-melt-answered', token);
        const live = await openOnceStale();
        expect(await live.receive(token)).toMatchObject({ amountMsat: 494_000, feeMsat: 6_000 });
        expect(await total(live)).toBe(before + 494_000);
      });
    });

    it('the foreign mint down before the melt: refused, nothing spent; a retry later swaps', async () => {
      const w = await open();
      const before = await total(w);
      const token = await foreign.mintTokens(100);
      foreign.setOutage(503);
      try {
        await expect(w.receive(token)).rejects.toMatchObject({ code: 'mint_unavailable' });
      } finally {
        foreign.setOutage(null);
      }
      expect(await total(w)).toBe(before);
      const r = await w.receive(token);
      expect(await total(w)).toBe(before + r.amountMsat);
    });
  });
}
