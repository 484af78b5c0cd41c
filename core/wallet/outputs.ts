import {
  type HasKeysetKeys,
  OutputData,
  type OutputDataCreator,
  type OutputDataLike,
  type Proof,
  type SerializedBlindedSignature,
} from '@cashu/cashu-ts';
import { blindSignatureDleqValid, unblindSignature } from './dleq.js';

/**
 * The wallet's outputs, made by cashu-ts (`OutputData.create*`: NUT-13's deterministic secrets and blinding
 * factors byte for byte, the splits, P2PK), with one step moved: turning the mint's blind signature into a proof
 * (`toProof`: the check of the signature's DLEQ, NUT-12, and the unblinding, NUT-00) runs on libsecp256k1
 * (tiny-secp256k1, core/wallet/dleq.ts) instead of cashu-ts's pure-JS BigInt curve.
 *
 * Why: that step cost ≈ 25 ms of one core per proof (a DLEQ check ≈ 20 ms, the unblinding ≈ 6 ms), in one
 * synchronous turn for all the outputs of a swap, a mint or a melt's change: every X-Cashu call, deposit and
 * payout held the event loop for ≈ 25 ms a proof (docs/benchmarks.md, session 27).
 *
 * The fast path answers only when everything is well formed and the DLEQ holds; anything else (no signature, a
 * key the keyset lacks, a malformed or failing DLEQ, a result at infinity) is handed to cashu-ts's own `toProof`,
 * which answers (or throws) exactly as without this creator. A property test holds the two to the same proofs
 * on the dev mint's signatures, valid and tampered (test/wallet/outputs.test.ts).
 */
export function fastOutputs(o: OutputDataLike): OutputDataLike {
  const out: OutputDataLike = {
    blindedMessage: o.blindedMessage,
    blindingFactor: o.blindingFactor,
    secret: o.secret,
    toProof: (sig: SerializedBlindedSignature, keyset: HasKeysetKeys): Proof =>
      fastProof(o, sig, keyset) ?? o.toProof(sig, keyset),
  };
  if (o.ephemeralE !== undefined) out.ephemeralE = o.ephemeralE;
  return out;
}

function fastProof(
  o: OutputDataLike,
  sig: SerializedBlindedSignature,
  keyset: HasKeysetKeys,
): Proof | undefined {
  if (sig == null || typeof sig.C_ !== 'string') return undefined;
  const key = keyset.keys[sig.amount.toString()];
  if (typeof key !== 'string') return undefined;
  const dleq = sig.dleq;
  if (dleq !== undefined) {
    if (typeof dleq.e !== 'string' || typeof dleq.s !== 'string') return undefined;
    if (!blindSignatureDleqValid(o.blindedMessage.B_, sig.C_, key, dleq.e, dleq.s)) return undefined;
  }
  const C = unblindSignature(sig.C_, o.blindingFactor, key);
  if (C === undefined) return undefined;
  const proof: Proof = {
    id: sig.id,
    amount: sig.amount,
    C,
    secret: new TextDecoder().decode(o.secret),
    ...(dleq !== undefined && {
      dleq: {
        s: dleq.s.toLowerCase(),
        e: dleq.e.toLowerCase(),
        r: o.blindingFactor.toString(16).padStart(64, '0'),
      },
    }),
  } as Proof;
  if (o.ephemeralE !== undefined) proof.p2pk_e = o.ephemeralE;
  return proof;
}

/** cashu-ts's `OutputData.create*`, each output's `toProof` on libsecp256k1 (`fastOutputs`). */
export const fastOutputDataCreator: OutputDataCreator = {
  createP2PKData: (...a) => OutputData.createP2PKData(...a).map(fastOutputs),
  createSingleP2PKData: (...a) => fastOutputs(OutputData.createSingleP2PKData(...a)),
  createRandomData: (...a) => OutputData.createRandomData(...a).map(fastOutputs),
  createSingleRandomData: (...a) => fastOutputs(OutputData.createSingleRandomData(...a)),
  createDeterministicData: (...a) => OutputData.createDeterministicData(...a).map(fastOutputs),
  createSingleDeterministicData: (...a) => fastOutputs(OutputData.createSingleDeterministicData(...a)),
};
