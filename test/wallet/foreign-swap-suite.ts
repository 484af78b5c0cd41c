import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet } from '@cashu/cashu-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import type { ForeignMintPolicy, WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { captureLog, type DevMint, dropStore, startTestMint, testStore } from '../support/dev-mint.js';
import { runChild } from './crash-recovery-suite.js';

/**
 * eCash from a mint this node does not trust, swapped to the primary mint over Lightning (FOREIGN_MINTS=swap,
 * issue 13 item 6), against two dev mints on one fake Lightning network: the primary leaves its mint quotes
 * UNPAID until the foreign mint's melt pays the invoice, and the foreign mint charges an input fee. Credited =
 * face − input fee − fee reserve, exactly as quoted; the foreign proofs end SPENT; a fee beyond the bound spends
 * nothing; a process killed between the melt and the mint is finished once by recovery.
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
    let primary: DevMint;
    let foreign: DevMint;
    let dir: string;
    let conn: StoreConnection;
    let childEnv: Record<string, string>;
    const open = (policy: ForeignMintPolicy = SWAP, claimLeaseMs?: number) =>
      createWallet({
        conn,
        mints: [primary.url],
        log: captureLog().log,
        mintTimeoutMs: 5000,
        foreignMints: policy,
        ...(claimLeaseMs ? { claimLeaseMs } : {}),
      });

    beforeAll(async () => {
      primary = await startTestMint({ mintQuotePayment: 'manual' });
      // 100 ppk: 0.1 sat per input proof, rounded up per melt.
      foreign = await startTestMint({ inputFeePpk: 100 });
      dir = mkdtempSync(join(tmpdir(), 'wallet-fswap-'));
      if (kind === 'sqlite') {
        conn = openStore({ dataDir: dir, sqliteFile: 'gateway.db' });
        childEnv = { CRASH_STORE: 'sqlite', CRASH_SQLITE_DIR: dir };
      } else {
        conn = testStore('redis');
        childEnv = {
          CRASH_STORE: 'redis',
          CRASH_REDIS_URL: process.env.TEST_REDIS_URL ?? '',
          CRASH_REDIS_PREFIX: conn.kind === 'redis' ? conn.prefix : '',
        };
      }
      childEnv.CRASH_MINT = primary.url;
      childEnv.CRASH_FOREIGN = 'swap';
    });

    afterAll(async () => {
      await primary.close();
      await foreign.close();
      await dropStore(conn);
      rmSync(dir, { recursive: true, force: true });
    });

    it('refused as before when FOREIGN_MINTS=refuse; nothing is spent', async () => {
      const w = await open({ ...SWAP, mode: 'refuse' });
      const token = await foreign.mintTokens(1000);
      expect(() => w.decodeToken(token)).toThrow(expect.objectContaining({ code: 'mint_not_trusted' }));
      await expect(w.receive(token)).rejects.toMatchObject({ code: 'mint_not_trusted' });
      expect(await proofStates(foreign.url, token)).not.toContain('SPENT');
    });

    it('credits face − input fee − fee reserve exactly as quoted, once, and the foreign proofs are spent', async () => {
      const w = await open();
      const before = await total(w);
      const token = await foreign.mintTokens(1000);
      const decoded = w.decodeToken(token);
      expect(decoded).toMatchObject({ mint: foreign.url, amount: 1000, foreign: true });
      // The quote arithmetic, worked by hand for the dev mints: input fee ceil(proofs × 100 / 1000) sat; the
      // fee reserve is max(1, ceil(1 % of A)); A is the largest amount with A + reserve + input fee ≤ 1000.
      const inputFee = Math.ceil((decoded.proofs * 100) / 1000);
      let a = 1000 - inputFee;
      while (a + Math.max(1, Math.ceil(a / 100)) + inputFee > 1000) a--;
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
          amountMsat: a * 1000,
          feeMsat: (1000 - a) * 1000,
        });
      }
      expect(await total(w)).toBe(before + a * 1000);
      expect(new Set(await proofStates(foreign.url, token))).toEqual(new Set(['SPENT']));
      // A repeat returns the same receipt and moves nothing.
      expect((await w.receive(token)).amountMsat).toBe(a * 1000);
      expect(await total(w)).toBe(before + a * 1000);
      const solvency = await w.checkSolvency(async () => before + a * 1000);
      expect(solvency).toMatchObject({ spentMsat: 0, solvent: true });
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
      const child = await runChild(
        { ...childEnv, CRASH_OP: 'receive', WALLET_TEST_CRASH_AT: 'after-foreign-melt' },
        token,
      );
      expect(child.signal).toBe('SIGKILL');
      expect(child.out).not.toContain('survived');
      // The foreign mint was paid; nothing is in our store yet.
      expect(new Set(await proofStates(foreign.url, token))).toEqual(new Set(['SPENT']));
      expect(await total(w)).toBe(before);
      const fresh = await open();
      expect(await fresh.recover()).toMatchObject({ examined: 1, receivesCompleted: 1, deferred: 0 });
      const credited = (await total(fresh)) - before;
      expect(credited).toBeGreaterThan(0);
      expect(credited).toBeLessThanOrEqual(500_000);
      expect(await fresh.recover()).toMatchObject({ examined: 0 });
      const receipt = await fresh.receive(token);
      expect(receipt).toMatchObject({ amountMsat: credited, faceMsat: 500_000, feeMsat: 500_000 - credited });
      expect(await total(fresh)).toBe(before + credited);
    });

    it('a live retry finishes a dead process\u2019s swap itself once its claim is stale (no recover())', async () => {
      const before = await total(await open());
      const token = await foreign.mintTokens(300);
      const child = await runChild(
        { ...childEnv, CRASH_OP: 'receive', WALLET_TEST_CRASH_AT: 'after-foreign-melt' },
        token,
      );
      expect(child.signal).toBe('SIGKILL');
      const live = await open(SWAP, 200);
      await new Promise((r) => setTimeout(r, 250));
      const receipt = await live.receive(token);
      expect(receipt.faceMsat).toBe(300_000);
      expect(await total(live)).toBe(before + receipt.amountMsat);
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
