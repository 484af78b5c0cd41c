import { createHash } from 'node:crypto';
import { createNewMintKeys, type IntRange, serializeMintKeys } from '@cashu/cashu-ts';

/**
 * The dev mint's keysets (NUT-01/02). Keys are derived from the mint seed, the unit and a generation index,
 * so a mint restarted from its --data file has the same keys; changing the input fee starts a new keyset
 * generation (the old one stays known but inactive, as NUT-02 describes for rotated keysets).
 */

export type MintUnit = 'sat' | 'msat';

/** Largest amount exponent per unit: sat up to 2^31 sat, msat up to 2^41 msat (both ~21 BTC). */
const POW2_HEIGHT: Record<MintUnit, IntRange<0, 65>> = { sat: 32, msat: 42 };

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
}

export function deriveKeyset(seedHex: string, gen: KeysetGeneration): MintKeyset {
  const seed = createHash('sha256').update(`${seedHex}|${gen.unit}|${gen.index}`).digest();
  const pair = createNewMintKeys(POW2_HEIGHT[gen.unit], new Uint8Array(seed), {
    unit: gen.unit,
    ...(gen.inputFeePpk > 0 ? { input_fee_ppk: gen.inputFeePpk } : {}),
  });
  return {
    id: pair.keysetId,
    unit: gen.unit,
    active: gen.active,
    inputFeePpk: gen.inputFeePpk,
    pubKeys: serializeMintKeys(pair.pubKeys),
    privKeys: pair.privKeys,
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
