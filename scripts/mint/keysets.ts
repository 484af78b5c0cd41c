import { createHash } from 'node:crypto';
import { deriveKeysetId, serializeMintKeys } from '@cashu/cashu-ts';
import { HDKey } from '@scure/bip32';
import * as ecc from 'tiny-secp256k1';

/**
 * The dev mint's keysets (NUT-01/02). Keys are derived from the mint seed, the unit and a generation index,
 * so a mint restarted from its --data file has the same keys; changing the input fee starts a new keyset
 * generation (the old one stays known but inactive, as NUT-02 describes for rotated keysets).
 */

export type MintUnit = 'sat' | 'msat';

/** Largest amount exponent per unit: sat up to 2^31 sat, msat up to 2^41 msat (both ~21 BTC). */
const POW2_HEIGHT: Record<MintUnit, number> = { sat: 32, msat: 42 };
/** The BIP-32 node whose children are the keys (cashu-ts's createNewMintKeys: `m/0'/0'/0'/<exponent>`). */
const KEYS_NODE = "m/0'/0'/0'";

export interface KeysetGeneration {
  unit: MintUnit;
  inputFeePpk: number;
  index: number;
  active: boolean;
}

export interface MintKeyset {
  id: string;
  unit: MintUnit;
  active: boolean;
  inputFeePpk: number;
  /** amount (decimal string) → compressed public key hex. */
  pubKeys: Record<string, string>;
  /** amount (decimal string) → private key bytes. Never leaves the process. */
  privKeys: Record<string, Uint8Array>;
  /** amount (decimal string) → public key, uncompressed (what NUT-12's DLEQ hash is taken over). */
  pubKeysUncompressed: Record<string, Uint8Array>;
}

/**
 * The keys of cashu-ts's `createNewMintKeys(height, seed)`, the same bytes (test/mint/mint-crypto.test.ts), at a
 * fifth of its cost: it derives each key from the master seed along the whole path, every node on the way
 * computing its public key; here the node `m/0'/0'/0'` is derived once and each key is one child of it (a mint
 * derives 74 keys at every start, and the suites start hundreds of mints).
 */
export function deriveKeyset(seedHex: string, gen: KeysetGeneration): MintKeyset {
  const seed = createHash('sha256').update(`${seedHex}|${gen.unit}|${gen.index}`).digest();
  const node = HDKey.fromMasterSeed(new Uint8Array(seed)).derive(KEYS_NODE);
  const privKeys: Record<string, Uint8Array> = {};
  const pubKeys: Record<string, Uint8Array> = {};
  const pubKeysUncompressed: Record<string, Uint8Array> = {};
  for (let e = 0; e < POW2_HEIGHT[gen.unit]; e++) {
    const amount = (2n ** BigInt(e)).toString();
    const child = node.deriveChild(e);
    if (!child.privateKey || !child.publicKey) throw new Error(`no key derived at ${KEYS_NODE}/${e}`);
    privKeys[amount] = child.privateKey;
    pubKeys[amount] = child.publicKey;
    pubKeysUncompressed[amount] = ecc.pointCompress(child.publicKey, false);
  }
  const serialized = serializeMintKeys(pubKeys);
  return {
    id: deriveKeysetId(serialized, {
      unit: gen.unit,
      ...(gen.inputFeePpk > 0 ? { input_fee_ppk: gen.inputFeePpk } : {}),
      versionByte: 1,
    }),
    unit: gen.unit,
    active: gen.active,
    inputFeePpk: gen.inputFeePpk,
    pubKeys: serialized,
    privKeys,
    pubKeysUncompressed,
  };
}

/**
 * Reconciles stored generations with the configured units and fee: an existing active generation whose
 * fee differs is deactivated and a new one appended. Returns the updated list (input is not mutated).
 */
export function planGenerations(
  existing: KeysetGeneration[],
  units: MintUnit[],
  inputFeePpk: number,
): KeysetGeneration[] {
  const out = existing.map((g) => ({ ...g }));
  for (const unit of units) {
    const mine = out.filter((g) => g.unit === unit);
    const active = mine.find((g) => g.active);
    if (active && active.inputFeePpk === inputFeePpk) continue;
    if (active) active.active = false;
    out.push({ unit, inputFeePpk, index: mine.length, active: true });
  }
  return out;
}
