import { getDecodedToken, getTokenMetadata, Wallet } from '@cashu/cashu-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import type { StoreConnection } from '../../core/store/connection.js';
import { encodeTokenV3 } from '../../core/wallet/token-codec.js';
import type { WalletService } from '../../core/wallet/types.js';
import type { DevMint, StoreKind } from '../support/dev-mint.js';
import { dropStore, startTestMint, testStore, testWallet } from '../support/dev-mint.js';

/**
 * Redeeming tokens against the dev mint over HTTP (cashu-ts on both sides), on both proof stores: exact credit
 * after the mint's input fee, v3/v4, sat/msat, trust and unit checks, idempotency under a 10× race, and the
 * mint errors a caller must be able to tell apart.
 */

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isGatewayError(err) ? err.code : err).toBe(code);
}

/** NUT-02: fee = ceil(sum of input_fee_ppk over the inputs / 1000), in unit. */
function expectedFee(token: string, ppk: number): number {
  return Math.ceil((getTokenMetadata(token).proofAmounts.length * ppk) / 1000);
}

const FEES = [0, 100, 1000] as const;

export function receiveSuite(kind: StoreKind): void {
  describe(`wallet receive (${kind} store)`, () => {
    const mints: Record<number, DevMint> = {};
    let other: DevMint;
    let conn: StoreConnection;
    let wallet: WalletService;

    beforeAll(async () => {
      for (const fee of FEES) mints[fee] = await startTestMint({ inputFeePpk: fee });
      other = await startTestMint();
      conn = testStore(kind);
      wallet = await testWallet(
        conn,
        FEES.map((f) => (mints[f] as DevMint).url),
      );
    });

    afterAll(async () => {
      for (const m of Object.values(mints)) await m.close();
      await other.close();
      await dropStore(conn);
    });

    for (const fee of FEES) {
      for (const unit of ['sat', 'msat'] as const) {
        for (const version of [3, 4] as const) {
          it(`credits exactly face minus the input fee: ${fee} ppk, ${unit}, v${version}`, async () => {
            const mint = mints[fee] as DevMint;
            const amount = unit === 'sat' ? 1234 : 98_765;
            const token = await mint.mintTokens(amount, unit, { version });
            expect(token.startsWith(version === 3 ? 'cashuA' : 'cashuB')).toBe(true);
            const d = wallet.decodeToken(token);
            expect(d).toMatchObject({ mint: mint.url, unit, amount, version });
            const unitMsat = unit === 'sat' ? 1000 : 1;
            const feeUnits = expectedFee(token, fee);
            const r = await wallet.receive(token);
            expect(r.faceMsat).toBe(amount * unitMsat);
            expect(r.feeMsat).toBe(feeUnits * unitMsat);
            expect(r.amountMsat).toBe((amount - feeUnits) * unitMsat);
            expect(r.tokenHash).toBe(wallet.tokenHash(token));
            if (fee > 0) expect(r.feeMsat).toBeGreaterThan(0);
          });
        }
      }
    }

    it('gives v3 and v4 encodings of the same proofs the same tokenHash', async () => {
      const mint = mints[0] as DevMint;
      const v4 = await mint.mintTokens(77, 'sat');
      const decoded = getDecodedToken(v4, [mint.keysetIds.sat as string]);
      const v3 = encodeTokenV3({ mint: mint.url, unit: 'sat', proofs: decoded.proofs });
      expect(wallet.tokenHash(v3)).toBe(wallet.tokenHash(v4));
      const r4 = await wallet.receive(v4);
      const r3 = await wallet.receive(v3);
      expect(r3).toEqual(r4);
    });

    it('credits a token raced 10 times exactly once', async () => {
      const mint = mints[100] as DevMint;
      const token = await mint.mintTokens(500, 'sat');
      const before = await wallet.balances();
      const receipts = await Promise.all(Array.from({ length: 10 }, () => wallet.receive(token)));
      for (const r of receipts) expect(r).toEqual(receipts[0]);
      const after = await wallet.balances();
      const sat = (lines: typeof before) =>
        lines.filter((l) => l.mint === mint.url && l.unit === 'sat').reduce((s, l) => s + l.amountMsat, 0);
      expect(sat(after) - sat(before)).toBe(receipts[0]?.amountMsat);
    });

    it('credits a token raced by two wallet instances on the same store once', async () => {
      const mint = mints[0] as DevMint;
      const second = await testWallet(conn, [mint.url]);
      const token = await mint.mintTokens(64, 'sat');
      const [a, b] = await Promise.all([wallet.receive(token), second.receive(token)]);
      expect(a).toEqual(b);
    });

    it('refuses a token from an untrusted mint, a malformed token and an unsupported unit', async () => {
      const token = await other.mintTokens(10, 'sat');
      await expectCode(wallet.receive(token), 'mint_not_trusted');
      await expectCode(wallet.receive('cashuBnot-a-token'), 'invalid_token');
      await expectCode(wallet.receive('hello'), 'invalid_token');
      const mint = mints[0] as DevMint;
      const good = await mint.mintTokens(10, 'sat');
      const proofs = getDecodedToken(good, [mint.keysetIds.sat as string]).proofs;
      await expectCode(
        wallet.receive(encodeTokenV3({ mint: mint.url, unit: 'usd', proofs })),
        'unsupported_unit',
      );
    });

    it('maps a token spent elsewhere to token_already_spent, and a pending one to token_pending', async () => {
      const mint = mints[0] as DevMint;
      const token = await mint.mintTokens(40, 'sat');
      const { Wallet } = await import('@cashu/cashu-ts');
      const thief = new Wallet(mint.url, { unit: 'sat' });
      await thief.loadMint();
      await thief.receive(token);
      await expectCode(wallet.receive(token), 'token_already_spent');

      const held = await mint.mintTokens(40, 'sat');
      const heldProofs = getDecodedToken(held, [mint.keysetIds.sat as string]).proofs;
      mint.setLightningMode('pending');
      try {
        const quote = await thief.createMeltQuoteBolt11(mint.invoice(30_000));
        await thief.meltProofsBolt11(quote, heldProofs);
        await expectCode(wallet.receive(held), 'token_pending');
      } finally {
        mint.setLightningMode('pay');
      }
    });

    it('refuses tampered proofs and tampered DLEQ proofs as invalid_token', async () => {
      const mint = mints[0] as DevMint;
      const keysets = [mint.keysetIds.sat as string];
      const badSig = getDecodedToken(await mint.mintTokens(20, 'sat'), keysets);
      const p0 = badSig.proofs[0];
      if (!p0) throw new Error('no proof');
      // Another valid point, wrong signature: the mint answers 10001 (proof verification failed).
      p0.C = badSig.proofs[1]?.C ?? p0.C;
      delete p0.dleq;
      await expectCode(
        wallet.receive(encodeTokenV3({ mint: mint.url, unit: 'sat', proofs: badSig.proofs })),
        'invalid_token',
      );

      const badDleq = getDecodedToken(await mint.mintTokens(20, 'sat'), keysets);
      const q0 = badDleq.proofs[0];
      if (!q0?.dleq) throw new Error('dev mint proofs carry DLEQ');
      q0.dleq = { ...q0.dleq, s: q0.dleq.e };
      const token = encodeTokenV3({ mint: mint.url, unit: 'sat', proofs: badDleq.proofs });
      await expectCode(wallet.receive(token), 'invalid_token');
      // Nothing was swapped: the mint reports every proof of both refused tokens unspent (NUT-07).
      const checker = new Wallet(mint.url, { unit: 'sat' });
      await checker.loadMint();
      const states = await checker.checkProofsStates([...badSig.proofs, ...badDleq.proofs]);
      expect(states.map((s) => s.state)).toEqual(states.map(() => 'UNSPENT'));
      expect(states).toHaveLength(badSig.proofs.length + badDleq.proofs.length);
    });

    it('answers mint_unavailable and credits nothing when the mint is down or failing', async () => {
      const mint = await startTestMint();
      const w = await testWallet(conn, [mint.url]);
      await w.receive(await mint.mintTokens(5, 'sat')); // loads the keys: the failures below hit the swap itself
      const before = await w.balances();

      // A failing mint (HTTP 500): the answer is ambiguous, so the journal keeps the attempt, nothing credited…
      const failing = await mint.mintTokens(30, 'sat');
      mint.setOutage(500);
      await expectCode(w.receive(failing), 'mint_unavailable');
      expect(await w.balances()).toEqual(before);
      // …and once the mint is back, the same token redeems normally, once.
      mint.setOutage(null);
      const r = await w.receive(failing);
      expect(r.amountMsat).toBe(30_000);
      expect(await w.receive(failing)).toEqual(r);
      const mid = await w.balances();

      // A stopped mint: nothing credited either.
      const token = await mint.mintTokens(50, 'sat');
      await mint.close();
      await expectCode(w.receive(token), 'mint_unavailable');
      await expectCode(w.receive(token), 'mint_unavailable');
      expect(await w.balances()).toEqual(mid);
      const report = await w.recover();
      expect(report.receivesCompleted).toBe(0);
      expect(await w.balances()).toEqual(mid);
    });

    it('answers mint_unavailable for a token of a trusted mint that never answered', async () => {
      const mint = await startTestMint();
      const token = await mint.mintTokens(10, 'sat');
      const w = await testWallet(conn, [mint.url]);
      await mint.close();
      await expectCode(w.receive(token), 'mint_unavailable');
    });
  });
}
