import { getTokenMetadata } from '@cashu/cashu-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import type { StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import {
  type CapturedLog,
  captureLog,
  type DevMint,
  dropStore,
  redeemElsewhere,
  type StoreKind,
  startTestMint,
  testStore,
  testWallet,
} from '../support/dev-mint.js';

/**
 * Spending the operator's proofs: change/withdrawal tokens a separate cashu-ts wallet redeems, payouts to a
 * (fake) Lightning invoice, concurrent sends never sharing a proof, solvency consistent with every credit and
 * debit, and logs free of tokens and secrets.
 */
/** The funding hook's bound (see beforeAll). */
const HOOK_MS = 240_000;
const TEST_MS = 180_000;

export function spendSuite(kind: StoreKind): void {
  // Each test is several mint round trips of blind signing: bounded by TEST_MS, not the default 30 s.
  describe(`wallet send / payout / solvency (${kind} store)`, { timeout: TEST_MS }, () => {
    const PPK = 100;
    let mint: DevMint;
    let conn: StoreConnection;
    let wallet: WalletService;
    let logs: CapturedLog;
    const tokensSeen: string[] = [];
    /** What users were credited (receipts) minus what left as tokens and payouts: the user balances. */
    let userMsat = 0;

    // Minting and receiving the three funding tokens is blind signing in JavaScript: seconds at idle, a minute
    // or more on a busy machine. The hook waits for it (bounded by HOOK_MS) instead of the default 60 s.
    beforeAll(async () => {
      mint = await startTestMint({ inputFeePpk: PPK });
      conn = testStore(kind);
      logs = captureLog();
      wallet = await testWallet(conn, [mint.url], logs.log);
      for (const [amount, unit] of [
        [4000, 'sat'],
        [3000, 'sat'],
        [250_000, 'msat'],
      ] as const) {
        const token = await mint.mintTokens(amount, unit);
        tokensSeen.push(token);
        userMsat += (await wallet.receive(token)).amountMsat;
      }
    }, HOOK_MS);

    afterAll(async () => {
      await mint.close();
      await dropStore(conn);
    });

    it('makes change tokens (v4 and v3, sat and msat) that a separate cashu-ts wallet redeems', async () => {
      const cases = [
        { amountMsat: 21_999, unit: 'sat' as const, version: 4 as const, expectMsat: 21_000 },
        { amountMsat: 500_000, unit: 'sat' as const, version: 3 as const, expectMsat: 500_000 },
        { amountMsat: 12_345, unit: 'msat' as const, version: 4 as const, expectMsat: 12_345 },
      ];
      for (const c of cases) {
        const before = await wallet.balances();
        const s = await wallet.send(c.amountMsat, { unit: c.unit, tokenVersion: c.version });
        tokensSeen.push(s.token);
        expect(s).toMatchObject({ amountMsat: c.expectMsat, unit: c.unit, mint: mint.url });
        expect(s.token.startsWith(c.version === 3 ? 'cashuA' : 'cashuB')).toBe(true);
        const meta = getTokenMetadata(s.token);
        expect(meta.amount.toNumber() * (c.unit === 'sat' ? 1000 : 1)).toBe(c.expectMsat);
        // The operator paid the swap fee; the receiver pays its own redemption fee, as with any token.
        const after = await wallet.balances();
        const total = (l: typeof before) => l.reduce((x, b) => x + b.amountMsat, 0);
        expect(total(before) - total(after)).toBe(s.amountMsat + s.feeMsat);
        const redeemed = await redeemElsewhere(mint.url, s.token, c.unit);
        const recvFee = Math.ceil((meta.proofAmounts.length * PPK) / 1000);
        expect(redeemed).toBe(meta.amount.toNumber() - recvFee);
        userMsat -= s.amountMsat + s.feeMsat;
      }
    });

    it('defaults to sat, and refuses amounts below one unit, beyond the proofs held, or at an untrusted mint', async () => {
      const s = await wallet.send(2000);
      tokensSeen.push(s.token);
      expect(s.unit).toBe('sat');
      userMsat -= s.amountMsat + s.feeMsat;
      const err = await wallet.send(10_000_000_000).catch((e: unknown) => e);
      expect(isGatewayError(err) && err.code).toBe('service_unavailable');
      const small = await wallet.send(999, { unit: 'sat' }).catch((e: unknown) => e);
      expect(isGatewayError(small) && small.code).toBe('invalid_request');
      const untrusted = await wallet.send(1000, { mint: 'http://127.0.0.1:1' }).catch((e: unknown) => e);
      expect(isGatewayError(untrusted) && untrusted.code).toBe('mint_not_trusted');
    });

    it('never hands the same proof to two concurrent sends', async () => {
      const sends = await Promise.all(Array.from({ length: 6 }, () => wallet.send(100_000, { unit: 'sat' })));
      const secrets = new Set<string>();
      for (const s of sends) {
        tokensSeen.push(s.token);
        userMsat -= s.amountMsat + s.feeMsat;
        for (const p of getTokenMetadata(s.token).incompleteProofs) {
          expect(secrets.has(p.secret)).toBe(false);
          secrets.add(p.secret);
        }
      }
      const redeemed = await Promise.all(sends.map((s) => redeemElsewhere(mint.url, s.token)));
      expect(redeemed.every((r) => r > 0)).toBe(true);
      expect((await wallet.balances()).every((l) => l.reserved === 0)).toBe(true);
    });

    it('pays a Lightning invoice (NUT-05 melt) and keeps the NUT-08 change', async () => {
      const before = await wallet.balances();
      const p = await wallet.payInvoice(mint.invoice(300_000));
      expect(p).toMatchObject({ amountMsat: 300_000, mint: mint.url, unit: 'sat' });
      expect(p.preimage).toMatch(/^[0-9a-f]{64}$/);
      const total = (l: typeof before) =>
        l.filter((b) => b.unit === 'sat').reduce((x, b) => x + b.amountMsat, 0);
      expect(total(before) - total(await wallet.balances())).toBe(p.amountMsat + p.feeMsat);
      // The fake backend charges no routing fee: what was paid beyond the amount is the input fee only.
      expect(p.feeMsat).toBeLessThanOrEqual(Math.ceil((20 * PPK) / 1000) * 1000);
      userMsat -= p.amountMsat + p.feeMsat;

      mint.setLightningMode('fail');
      const failed = await wallet.payInvoice(mint.invoice(10_000)).catch((e: unknown) => e);
      mint.setLightningMode('pay');
      expect(isGatewayError(failed) && failed.code).toBe('mint_unavailable');
      expect((await wallet.balances()).every((l) => l.reserved === 0)).toBe(true);
      const bad = await wallet.payInvoice('not-an-invoice').catch((e: unknown) => e);
      expect(isGatewayError(bad) && bad.code).toBe('invalid_request');
    });

    it('releases the proofs of a send that failed ambiguously once the mint answers again', async () => {
      const before = await wallet.balances();
      const sum = (l: typeof before) => l.reduce((x, b) => x + b.amountMsat, 0);
      mint.setOutage(502);
      const err = await wallet.send(50_000, { unit: 'sat' }).catch((e: unknown) => e);
      mint.setOutage(null);
      expect(isGatewayError(err) && err.code).toBe('mint_unavailable');
      expect((await wallet.balances()).some((l) => l.reserved > 0)).toBe(true);
      // The next send settles the leftover first (the mint never swapped: released), then proceeds.
      const s = await wallet.send(50_000, { unit: 'sat' });
      tokensSeen.push(s.token);
      userMsat -= s.amountMsat + s.feeMsat;
      expect((await wallet.balances()).every((l) => l.reserved === 0)).toBe(true);
      expect(sum(before) - sum(await wallet.balances())).toBe(s.amountMsat + s.feeMsat);
    });

    it('reports solvency consistent with every credit and debit', async () => {
      const report = await wallet.checkSolvency(async () => userMsat);
      const held = (await wallet.balances()).reduce((x, b) => x + b.amountMsat, 0);
      expect(report.proofsMsat).toBe(held);
      expect(report.spentMsat).toBe(0);
      expect(report.pendingMsat).toBe(0);
      expect(report.userBalancesMsat).toBe(userMsat);
      expect(report.proofsMsat).toBe(userMsat);
      expect(report.solvent).toBe(true);
      const short = await wallet.checkSolvency(async () => userMsat + 1);
      expect(short.solvent).toBe(false);
    });

    it('builds a NUT-18 payment request naming the trusted mints', async () => {
      const { decodePaymentRequest } = await import('@cashu/cashu-ts');
      const creq = wallet.createPaymentRequest({ amountMsat: 1500, unit: 'sat' });
      expect(creq.startsWith('creqA')).toBe(true);
      const req = decodePaymentRequest(creq);
      expect(req.mints).toEqual([mint.url]);
      expect(req.unit).toBe('sat');
      expect(req.amount?.toNumber()).toBe(2);
    });

    it('never writes a token, proof secret or the seed to the logs', async () => {
      const text = logs.text();
      expect(text.length).toBeGreaterThan(0);
      for (const token of tokensSeen) {
        expect(text).not.toContain(token);
        expect(text).not.toContain(token.slice(6, 60));
        for (const p of getTokenMetadata(token).incompleteProofs) {
          expect(text).not.toContain(p.secret);
          expect(text).not.toContain(p.C);
        }
      }
      const seed =
        conn.kind === 'sqlite'
          ? (conn.db.prepare("SELECT value FROM wallet_meta WHERE key = 'seed'").get() as { value: string })
              .value
          : ((await conn.redis.hget(`${conn.prefix}:{wallet}:meta`, 'seed')) as string);
      expect(seed).toMatch(/^[0-9a-f]{128}$/);
      expect(text).not.toContain(seed);
      expect(text).not.toContain(seed.slice(0, 32));
    });
  });
}
