import { readFileSync } from 'node:fs';
import {
  createBlindSignature,
  createDLEQProof,
  createNewMintKeys,
  hashToCurve,
  pointFromHex,
  verifyDLEQProof,
  verifyUnblindedSignature,
  Wallet,
} from '@cashu/cashu-ts';
import { describe, expect, it } from 'vitest';
import { startTestMint } from '../support/dev-mint.js';

/**
 * cashu-ts 4.x declares `engines.node >= 22.4` but the gateway supports Node 20: prove the parts we use work
 * here (ESM import, secp256k1 BDHKE + DLEQ via @noble, fetch, a full mint → receive round trip).
 */
describe('cashu-ts 4.x on this Node', () => {
  it('runs on Node >= 20 with cashu-ts 4.x', () => {
    const pkg = JSON.parse(
      readFileSync(new URL('../../node_modules/@cashu/cashu-ts/package.json', import.meta.url), 'utf8'),
    ) as { version: string; engines: { node: string } };
    expect(pkg.version).toMatch(/^4\./);
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(20);
  });

  it('does the mint-side and wallet-side crypto (BDHKE, DLEQ)', () => {
    const keys = createNewMintKeys(4, new Uint8Array(32).fill(3), { unit: 'sat' });
    const k = keys.privKeys['4'] as Uint8Array;
    const Y = hashToCurve(new TextEncoder().encode('secret'));
    const sig = createBlindSignature(Y, k, keys.keysetId);
    const dleq = createDLEQProof(Y, k);
    const A = pointFromHex(Buffer.from(keys.pubKeys['4'] as Uint8Array).toString('hex'));
    expect(verifyDLEQProof(dleq, Y, sig.C_, A)).toBe(true);
    // With blinding factor r = 1 (B_ = Y), the signature is already unblinded: C = kY.
    expect(
      verifyUnblindedSignature(
        { C: sig.C_, secret: new TextEncoder().encode('secret'), id: keys.keysetId },
        k,
      ),
    ).toBe(true);
  });

  it('mints and receives over HTTP', async () => {
    const mint = await startTestMint();
    try {
      const token = await mint.mintTokens(21, 'sat');
      const w = new Wallet(mint.url, { unit: 'sat' });
      await w.loadMint();
      const proofs = await w.receive(token, { requireDleq: true });
      expect(proofs.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(21);
    } finally {
      await mint.close();
    }
  });
});
