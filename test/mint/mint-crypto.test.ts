import { createHash } from 'node:crypto';
import {
  blindMessage,
  hashToCurve as cashuHashToCurve,
  constructUnblindedSignature,
  createBlindSignature,
  createDLEQProof,
  createNewMintKeys,
  pointFromHex,
  serializeMintKeys,
  verifyDLEQProof,
  verifyUnblindedSignature,
} from '@cashu/cashu-ts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  blindMessageOf,
  blindSign,
  hashToCurve,
  pointBytes,
  publicKeyUncompressed,
  unblind,
  verifyProof,
} from '../../scripts/mint/crypto.js';
import { deriveKeyset } from '../../scripts/mint/keysets.js';

/**
 * The dev mint's crypto on libsecp256k1 (scripts/mint/crypto.ts, keysets.ts) gives what cashu-ts's own functions
 * give, byte for byte, on random keys, blinded messages and secrets: the blind signature, the DLEQ proof (its
 * deterministic nonce included), hash_to_curve, the proof check (a valid proof passes, a proof signed by another
 * key, for another secret or with a damaged C does not), and the keysets of createNewMintKeys with their ids.
 * Every wallet of the suites (cashu-ts) checks the DLEQ proofs of these signatures on top.
 */
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const scalar = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((b) => secp256k1.utils.isValidSecretKey(b));
const secretText = fc.string({ minLength: 1, maxLength: 80 });

describe('the dev mint crypto equals cashu-ts', () => {
  it('hash_to_curve', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (secret) => {
        expect(hex(hashToCurve(secret))).toBe(cashuHashToCurve(secret).toHex(true));
      }),
      { numRuns: 60 },
    );
  });

  it('the blind signature C_ = a·B_ and its DLEQ proof (e, s); cashu-ts verifies the proof', () => {
    fc.assert(
      fc.property(scalar, secretText, (priv, secret) => {
        const B_ = blindMessage(new TextEncoder().encode(secret)).B_;
        const mine = blindSign(B_.toBytes(true), priv, publicKeyUncompressed(priv));
        const theirs = createBlindSignature(B_, priv, '00');
        const dleq = createDLEQProof(B_, priv);
        expect(mine).toEqual({ C_: theirs.C_.toHex(true), e: hex(dleq.e), s: hex(dleq.s) });
        const A = secp256k1.Point.BASE.multiply(secp256k1.Point.Fn.fromBytes(priv));
        expect(
          verifyDLEQProof(
            { e: Buffer.from(mine.e, 'hex'), s: Buffer.from(mine.s, 'hex') },
            B_,
            pointFromHex(mine.C_),
            A,
          ),
        ).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it('the proof check: a proof of the key passes with its Y; another key, another secret or a damaged C fails', () => {
    fc.assert(
      fc.property(scalar, scalar, secretText, (priv, other, text) => {
        fc.pre(hex(priv) !== hex(other));
        const secret = new TextEncoder().encode(text);
        const blinded = blindMessage(secret);
        const signed = createBlindSignature(blinded.B_, priv, '00');
        const A = secp256k1.Point.BASE.multiply(secp256k1.Point.Fn.fromBytes(priv));
        const proof = constructUnblindedSignature(signed, blinded.r, secret, A);
        const C = proof.C.toHex(true);
        expect(verifyUnblindedSignature(proof, priv)).toBe(true);
        expect(verifyProof(secret, C, priv)).toBe(cashuHashToCurve(secret).toHex(true));
        expect(verifyProof(secret, C, other)).toBeUndefined();
        expect(verifyProof(new TextEncoder().encode(`${text}x`), C, priv)).toBeUndefined();
        // Uncompressed, the same point: accepted, as cashu-ts's point equality does.
        expect(verifyProof(secret, proof.C.toHex(false), priv)).toBeDefined();
        const flipped = (C.startsWith('02') ? '03' : '02') + C.slice(2);
        expect(verifyProof(secret, flipped, priv)).toBeUndefined();
      }),
      { numRuns: 25 },
    );
  });

  it("blinding and unblinding: cashu-ts's blindMessage and unblindSignature", () => {
    fc.assert(
      fc.property(scalar, scalar, secretText, (priv, r, text) => {
        const secret = new TextEncoder().encode(text);
        const mine = blindMessageOf(secret, r);
        const theirs = blindMessage(secret, secp256k1.Point.Fn.fromBytes(r));
        expect(mine.B_).toBe(theirs.B_.toHex(true));
        const signed = createBlindSignature(theirs.B_, priv, '00');
        const A = secp256k1.Point.BASE.multiply(secp256k1.Point.Fn.fromBytes(priv));
        const C = constructUnblindedSignature(signed, theirs.r, secret, A).C.toHex(true);
        expect(unblind(signed.C_.toHex(true), r, A.toBytes(false))).toBe(C);
        // The unblinded signature is the key's signature on the secret.
        expect(verifyProof(secret, C, priv)).toBeDefined();
      }),
      { numRuns: 25 },
    );
  });

  it('points: what is not hex of a point on the curve is refused', () => {
    const G = secp256k1.Point.BASE.toHex(true);
    expect(pointBytes(G)).toBeDefined();
    expect(pointBytes(G.toUpperCase())).toBeDefined();
    for (const bad of [
      '',
      'zz',
      `${G}0`,
      G.slice(0, -2),
      `04${'00'.repeat(64)}`,
      `02${'ff'.repeat(32)}`,
      `${G.slice(0, -1)}g`,
    ])
      expect(pointBytes(bad), bad).toBeUndefined();
  });

  it("keysets: createNewMintKeys's keys, public keys and id, for sat and msat heights, with and without a fee", () => {
    for (const [unit, height] of [
      ['sat', 32],
      ['msat', 42],
    ] as const) {
      for (const inputFeePpk of [0, 100]) {
        const seedHex = hex(secp256k1.utils.randomSecretKey());
        const mine = deriveKeyset(seedHex, { unit, inputFeePpk, index: 1, active: true });
        const seed = new Uint8Array(createHash('sha256').update(`${seedHex}|${unit}|1`).digest());
        const theirs = createNewMintKeys(height, seed, {
          unit,
          ...(inputFeePpk > 0 ? { input_fee_ppk: inputFeePpk } : {}),
        });
        expect(mine.id).toBe(theirs.keysetId);
        expect(mine.pubKeys).toEqual(serializeMintKeys(theirs.pubKeys));
        expect(Object.fromEntries(Object.entries(mine.privKeys).map(([k, v]) => [k, hex(v)]))).toEqual(
          Object.fromEntries(Object.entries(theirs.privKeys).map(([k, v]) => [k, hex(v)])),
        );
        for (const [amount, unc] of Object.entries(mine.pubKeysUncompressed))
          expect(hex(unc)).toBe(pointFromHex(mine.pubKeys[amount]!).toHex(false));
      }
    }
  });
});
