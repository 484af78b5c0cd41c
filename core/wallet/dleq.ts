import { createHash } from 'node:crypto';
import * as ecc from 'tiny-secp256k1';

/**
 * NUT-12's offline check of a proof's DLEQ (with the proof's blinding factor r: "reblinding") on libsecp256k1
 * compiled to WebAssembly (tiny-secp256k1). It answers what cashu-ts's `hasValidDleq` answers (a property test
 * compares them on valid and tampered proofs: test/wallet/dleq.test.ts), at a fraction of the CPU: cashu-ts
 * computes in pure-JS BigInt (@noble/curves), ≈ 20 ms of one core per proof on the machines here, in one
 * synchronous turn for all the proofs of a token — a token of a dozen proofs held the event loop for a quarter
 * of a second. The receive path checks incoming proofs here and hands cashu-ts the proofs without their DLEQ
 * (core/wallet/receive.ts), so it is checked once, here.
 *
 * The check, for a proof (secret, C, dleq {e, s, r}) signed with the mint's key A:
 *   Y = hash_to_curve(secret), C_ = C + r·A, B_ = Y + r·G,
 *   R1 = s·G − e·A, R2 = s·B_ − e·C_,
 *   valid when e = sha256(hex(R1) ‖ hex(R2) ‖ hex(A) ‖ hex(C_)), each point uncompressed, in lower-case hex.
 * e, s and r must be scalars in [1, n) (cashu-ts refuses 0 and anything ≥ n, and a DLEQ without r).
 */

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HASH_TO_CURVE_DOMAIN = Buffer.from('Secp256k1_HashToCurve_Cashu_', 'utf8');
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

export interface DleqProof {
  secret: string;
  C: string;
  dleq?: { e: string; s: string; r?: string } | undefined;
}

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** A scalar (a number below n) as the 32 big-endian bytes libsecp256k1 takes. The dev mint's too. */
export const scalarBytes = (n: bigint): Buffer => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');

/** A 32-byte scalar in [1, n) from hex, or undefined. `exact`: the hex must be 32 bytes. */
function scalar(hex: string | undefined, exact: boolean): Buffer | undefined {
  // e and s are 32 bytes of hex; r is read as a number from hex of any length (as cashu-ts reads it).
  if (hex === undefined || !(exact ? /^[0-9a-fA-F]{64}$/ : /^[0-9a-fA-F]+$/).test(hex)) return undefined;
  const n = BigInt(`0x${hex}`);
  if (n <= 0n || n >= N) return undefined;
  return scalarBytes(n);
}

const negate = (k: Buffer): Buffer => scalarBytes(N - BigInt(`0x${k.toString('hex')}`));

/**
 * NUT-00 hash_to_curve: the first `02 || sha256(sha256(domain || secret) || counter_le32)` on the curve (compressed).
 * The dev mint's too (scripts/mint/crypto.ts).
 */
export function hashToCurve(secret: Uint8Array): Uint8Array {
  const msg = sha256(HASH_TO_CURVE_DOMAIN, secret);
  const counter = Buffer.alloc(4);
  for (let i = 0; i < 2 ** 16; i++) {
    counter.writeUInt32LE(i);
    const candidate = Buffer.concat([Buffer.from([2]), sha256(msg, counter)]);
    if (ecc.isPoint(candidate)) return candidate;
  }
  throw new Error('hash_to_curve: no valid point found');
}

/** A point's bytes from hex, or undefined when it is not hex of a point on the curve. The dev mint's too. */
export function pointBytes(hex: string): Uint8Array | undefined {
  if (!HEX.test(hex)) return undefined;
  const b = Buffer.from(hex, 'hex');
  return ecc.isPoint(b) ? b : undefined;
}

/**
 * Whether `proof`'s DLEQ proves it was signed with the key `mintKeyHex` (the keyset's key for its amount).
 * Throws for a proof without a DLEQ: whether one is required is the caller's decision.
 */
export function proofDleqValid(proof: DleqProof, mintKeyHex: string): boolean {
  const d = proof.dleq;
  if (d === undefined) throw new Error('proofDleqValid: the proof carries no DLEQ');
  const r = scalar(d.r, false);
  const A = pointBytes(mintKeyHex);
  const C = pointBytes(proof.C);
  if (!r || !A || !C) return false;
  const Y = hashToCurve(new TextEncoder().encode(proof.secret));
  const rA = ecc.pointMultiply(A, r, false);
  const rG = ecc.pointFromScalar(r, false);
  const cBlind = rA && ecc.pointAdd(C, rA, false);
  const bBlind = rG && ecc.pointAdd(Y, rG, false);
  if (!cBlind || !bBlind) return false;
  return dleqHolds(bBlind, cBlind, A, d.e, d.s);
}

/**
 * NUT-12's check of a blind signature's DLEQ, as a wallet makes it on a mint's answer: `C_` (hex) is the mint's
 * signature on the blinded message `B_` (hex) with the key `A` (hex) when (e, s) prove it. The same answer as
 * cashu-ts's `verifyDLEQProof` wherever that one answers (test/wallet/dleq.test.ts); false for anything that
 * is not hex of points and 32-byte scalars in [1, n).
 */
export function blindSignatureDleqValid(B_: string, C_: string, A: string, e: string, s: string): boolean {
  const b = pointBytes(B_);
  const c = pointBytes(C_);
  const a = pointBytes(A);
  if (!b || !c || !a) return false;
  return dleqHolds(ecc.pointCompress(b, false), ecc.pointCompress(c, false), a, e, s);
}

/** R1 = s·G − e·A, R2 = s·B_ − e·C_; whether e = sha256(hex(R1) ‖ hex(R2) ‖ hex(A) ‖ hex(C_)) (uncompressed). */
function dleqHolds(
  bBlind: Uint8Array,
  cBlind: Uint8Array,
  A: Uint8Array,
  eHex: string,
  sHex: string,
): boolean {
  const e = scalar(eHex, true);
  const s = scalar(sHex, true);
  if (!e || !s) return false;
  const minusE = negate(e);
  const sG = ecc.pointFromScalar(s, false);
  const eA = ecc.pointMultiply(A, minusE, false);
  const sB = ecc.pointMultiply(bBlind, s, false);
  const eC = ecc.pointMultiply(cBlind, minusE, false);
  const R1 = sG && eA && ecc.pointAdd(sG, eA, false);
  const R2 = sB && eC && ecc.pointAdd(sB, eC, false);
  if (!R1 || !R2) return false;
  const hex = (p: Uint8Array) => Buffer.from(p).toString('hex');
  const digest = sha256(
    Buffer.from(hex(R1) + hex(R2) + hex(ecc.pointCompress(A, false)) + hex(cBlind), 'utf8'),
  );
  return digest.equals(e);
}

/**
 * NUT-00's unblinding: the proof's C = C_ − r·A (compressed hex), from the mint's signature `C_` (hex) on a
 * message blinded with `r`, signed with the key `A` (hex). Undefined for anything that is not a point, or r not
 * in [1, n), or a result at infinity.
 */
export function unblindSignature(C_: string, r: bigint, A: string): string | undefined {
  const c = pointBytes(C_);
  const a = pointBytes(A);
  if (!c || !a || r <= 0n || r >= N) return undefined;
  const minusRA = ecc.pointMultiply(a, scalarBytes(N - r), true);
  const C = minusRA && ecc.pointAdd(c, minusRA, true);
  return C ? Buffer.from(C).toString('hex') : undefined;
}
