import { Amount, type HasKeysetKeys, OutputData, type SerializedBlindedSignature } from '@cashu/cashu-ts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastOutputDataCreator, fastOutputs } from '../../core/wallet/outputs.js';
import { blindSign, publicKeyUncompressed } from '../../scripts/mint/crypto.js';

/**
 * core/wallet/outputs.ts: the wallet's outputs turn a mint's blind signature into a proof on libsecp256k1. Held
 * to cashu-ts's own `toProof` on the same outputs: the same proof (C, secret, DLEQ with r, amount, id) for every
 * valid signature, and the same answer (the same proof or the same error) for tampered ones: another key, a
 * damaged e or s, another C_, no DLEQ, scalars out of range, upper-case hex, a key the keyset lacks.
 */
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const privKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((b) => secp256k1.utils.isValidSecretKey(b));
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A keyset of one key per amount 1, 2, 4, 8 (the private keys `privs`). */
function keysetOf(privs: Uint8Array[]): { keyset: HasKeysetKeys; privs: Map<string, Uint8Array> } {
  const keys: Record<string, string> = {};
  const byAmount = new Map<string, Uint8Array>();
  privs.forEach((p, i) => {
    const amount = String(2 ** i);
    keys[amount] = hex(secp256k1.getPublicKey(p, true));
    byAmount.set(amount, p);
  });
  return { keyset: { id: '00ad268c4d1f5826', keys }, privs: byAmount };
}

/** What a toProof does: the proof, or the error's class and message. */
function outcome(f: () => unknown): unknown {
  try {
    return { proof: JSON.parse(JSON.stringify(f())) };
  } catch (err) {
    return { error: (err as Error).constructor.name, message: (err as Error).message };
  }
}

type Tamper =
  | 'none'
  | 'no-dleq'
  | 'other-key'
  | 'flip-e'
  | 'flip-s'
  | 'other-C_'
  | 's-zero'
  | 's-n'
  | 'upper-hex'
  | 'unknown-amount';
const tampers: Tamper[] = [
  'none',
  'no-dleq',
  'other-key',
  'flip-e',
  'flip-s',
  'other-C_',
  's-zero',
  's-n',
  'upper-hex',
  'unknown-amount',
];

function flip(h: string, at: number): string {
  const i = at % h.length;
  return h.slice(0, i) + ((parseInt(h[i]!, 16) + 1) % 16).toString(16) + h.slice(i + 1);
}

describe('wallet outputs: toProof on libsecp256k1 answers as cashu-ts', () => {
  it('the same proof for valid signatures, the same answer for tampered ones (deterministic and random outputs)', () => {
    fc.assert(
      fc.property(
        fc.array(privKey, { minLength: 4, maxLength: 4 }),
        privKey,
        fc.uint8Array({ minLength: 64, maxLength: 64 }),
        fc.integer({ min: 1, max: 15 }),
        fc.nat(10_000),
        fc.constantFrom(...tampers),
        fc.nat(63),
        fc.boolean(),
        (privs, otherPriv, seed, amount, counter, tamper, at, deterministic) => {
          const { keyset, privs: byAmount } = keysetOf(privs);
          const outputs = deterministic
            ? OutputData.createDeterministicData(amount, seed, counter, keyset)
            : OutputData.createRandomData(amount, keyset);
          for (const o of outputs) {
            const amountStr = o.blindedMessage.amount.toString();
            const priv = tamper === 'other-key' ? otherPriv : byAmount.get(amountStr)!;
            const signed = blindSign(
              Buffer.from(o.blindedMessage.B_, 'hex'),
              priv,
              publicKeyUncompressed(priv),
            );
            let { C_, e, s } = signed;
            if (tamper === 'flip-e') e = flip(e, at);
            if (tamper === 'flip-s') s = flip(s, at);
            if (tamper === 's-zero') s = '0'.repeat(64);
            if (tamper === 's-n') s = N.toString(16);
            if (tamper === 'upper-hex') {
              e = e.toUpperCase();
              s = s.toUpperCase();
            }
            if (tamper === 'other-C_') C_ = hex(secp256k1.getPublicKey(otherPriv, true));
            const sig: SerializedBlindedSignature = {
              id: keyset.id,
              amount: tamper === 'unknown-amount' ? Amount.from(16) : Amount.from(Number(amountStr)),
              C_,
              ...(tamper === 'no-dleq' ? {} : { dleq: { e, s } }),
            };
            const theirs = outcome(() => o.toProof(sig, keyset));
            const ours = outcome(() => fastOutputs(o).toProof(sig, keyset));
            expect(ours).toEqual(theirs);
            if (tamper === 'none' || tamper === 'no-dleq' || tamper === 'upper-hex')
              expect(ours).toHaveProperty('proof.C');
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the creator makes what cashu-ts makes (NUT-13 secrets and blinding factors byte for byte), wrapped', () => {
    const { keyset } = keysetOf(
      Array.from({ length: 4 }, (_, i) => Buffer.from(`${'0'.repeat(62)}0${i + 1}`, 'hex')),
    );
    const seed = new Uint8Array(64).fill(7);
    const theirs = OutputData.createDeterministicData(13, seed, 5, keyset);
    const ours = fastOutputDataCreator.createDeterministicData(13, seed, 5, keyset);
    expect(ours.map((o) => [o.blindedMessage, o.blindingFactor, hex(o.secret)])).toEqual(
      theirs.map((o) => [o.blindedMessage, o.blindingFactor, hex(o.secret)]),
    );
    expect(ours.map((o) => o.toProof)).not.toEqual(theirs.map((o) => o.toProof));
    const single = fastOutputDataCreator.createSingleDeterministicData(4, seed, 9, keyset.id);
    expect(single.blindedMessage).toEqual(
      OutputData.createSingleDeterministicData(4, seed, 9, keyset.id).blindedMessage,
    );
  });
});
