import { createHash, createHmac, randomBytes } from 'node:crypto';
import * as ecc from 'tiny-secp256k1';
import { hashToCurve, pointBytes, scalarBytes, unblindSignature } from '../../core/wallet/dleq.js';

export { hashToCurve, pointBytes };

/**
 * The dev mint's side of the Cashu crypto (NUT-00 blind signatures, NUT-12 DLEQ proofs) on libsecp256k1 compiled
 * to WebAssembly (tiny-secp256k1): a variable-base multiplication takes ~0.34 ms there against ~2.3 ms in
 * pure-JS BigInt (@noble/curves, what cashu-ts computes with), and the mints the suites start do several per
 * signature and per proof checked. The results are those of cashu-ts's `createBlindSignature`,
 * `createDLEQProof` (its deterministic nonce included), `hashToCurve` and `verifyUnblindedSignature`, byte for
 * byte (test/mint/mint-crypto.test.ts compares them on random inputs); wallets keep checking them with
 * cashu-ts.
 */

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const DLEQ_NONCE_DOMAIN = Buffer.from('Cashu_DLEQ_R_v1', 'utf8');

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const toBig = (b: Uint8Array): bigint => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
const hexOf = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** A private key's public key, uncompressed (65 bytes): what the DLEQ hash is taken over. */
export function publicKeyUncompressed(priv: Uint8Array): Uint8Array {
  const p = ecc.pointFromScalar(priv, false);
  if (p === null) throw new Error('invalid private key');
  return p;
}

/**
 * C_ = a·B_ and its NUT-12 DLEQ proof (e, s) for the key a (`aPubUncompressed` = a·G, given: a mint keeps it
 * per key). The nonce r is cashu-ts's: HMAC-SHA256 keyed by a over the domain, A, B_ and C_ (uncompressed) and a
 * counter byte, the first value in [1, n).
 */
export function blindSign(
  B_: Uint8Array,
  priv: Uint8Array,
  aPubUncompressed: Uint8Array,
): { C_: string; e: string; s: string } {
  const cUnc = ecc.pointMultiply(B_, priv, false);
  const bUnc = ecc.pointCompress(B_, false);
  if (cUnc === null) throw new Error('blind signature: point at infinity');
  const base = Buffer.concat([DLEQ_NONCE_DOMAIN, aPubUncompressed, bUnc, cUnc]);
  let r = 0n;
  for (let n = 0; n < 256 && r === 0n; n++) {
    const candidate = toBig(
      createHmac('sha256', priv)
        .update(Buffer.concat([base, Buffer.from([n])]))
        .digest(),
    );
    if (candidate > 0n && candidate < N) r = candidate;
  }
  if (r === 0n) throw new Error('DLEQ nonce derivation failed');
  const rBytes = scalarBytes(r);
  const R1 = ecc.pointFromScalar(rBytes, false);
  const R2 = ecc.pointMultiply(B_, rBytes, false);
  if (R1 === null || R2 === null) throw new Error('DLEQ: point at infinity');
  const e = sha256(Buffer.from(hexOf(R1) + hexOf(R2) + hexOf(aPubUncompressed) + hexOf(cUnc), 'utf8'));
  const s = (r + (((toBig(e) % N) * toBig(priv)) % N)) % N;
  return { C_: hexOf(ecc.pointCompress(cUnc, true)), e: hexOf(e), s: hexOf(scalarBytes(s)) };
}

/**
 * Whether C = a·hash_to_curve(secret) (a proof's signature by the key a). Returns the proof's Y
 * (hash_to_curve(secret), compressed hex, the key of its spent state) when it is, undefined when not.
 */
export function verifyProof(secret: Uint8Array, C: string, priv: Uint8Array): string | undefined {
  const c = pointBytes(C);
  if (c === undefined) return undefined;
  const Y = hashToCurve(secret);
  const expected = ecc.pointMultiply(Y, priv, true);
  if (expected === null) return undefined;
  return Buffer.from(expected).equals(Buffer.from(ecc.pointCompress(c, true))) ? hexOf(Y) : undefined;
}

/** A random scalar in [1, n). */
function randomScalar(): Buffer {
  for (;;) {
    const b = randomBytes(32);
    const n = toBig(b);
    if (n > 0n && n < N) return b;
  }
}

/**
 * A wallet's blinded message for `secret` (NUT-00): B_ = hash_to_curve(secret) + r·G, with r random unless
 * given. What cashu-ts's `blindMessage` computes (the dev mint's own token issue, `DevMint.mintTokens`).
 */
export function blindMessageOf(
  secret: Uint8Array,
  r: Uint8Array = randomScalar(),
): { B_: string; r: Uint8Array } {
  const rG = ecc.pointFromScalar(r, true);
  const B_ = rG === null ? null : ecc.pointAdd(hashToCurve(secret), rG, true);
  if (B_ === null) throw new Error('blinding: point at infinity');
  return { B_: hexOf(B_), r };
}

/** The unblinded signature C = C_ − r·A (NUT-00), compressed hex: what cashu-ts's `unblindSignature` computes. */
export function unblind(C_: string, r: Uint8Array, A: Uint8Array): string {
  const C = unblindSignature(C_, toBig(r) % N, hexOf(A));
  if (C === undefined) throw new Error('unblinding: not a point');
  return C;
}
