import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { KeysetGeneration, MintUnit } from './keysets.js';

/**
 * The dev mint's whole state. In memory; with a data file it is written (atomically, tmp + rename) after
 * every change and read back at start, so a restarted dev mint keeps its keys, spent set and quotes.
 */

export interface SignedOutput {
  id: string;
  amount: number;
  C_: string;
  dleq: { e: string; s: string };
}

export interface MintQuote {
  quote: string;
  unit: MintUnit;
  amount: number;
  request: string;
  state: 'UNPAID' | 'PAID' | 'ISSUED';
  expiry: number;
  /**
   * The preimage of the invoice's payment hash (hex), kept by the fake Lightning node that issued it and told
   * only to whoever pays it (`POST /dev/pay`). Never part of the NUT-04 quote view. Absent in older data files.
   */
  preimage?: string;
}

export interface MeltQuote {
  quote: string;
  unit: MintUnit;
  amount: number;
  fee_reserve: number;
  request: string;
  state: 'UNPAID' | 'PENDING' | 'PAID';
  expiry: number;
  payment_preimage: string | null;
  /** Set when paid: the routing fee the fake backend charged (out of fee_reserve). */
  fee_paid?: number;
  /** Input Ys held pending by this quote, and the blank outputs to sign change onto when it settles. */
  pendingYs?: string[];
  pendingOutputs?: Array<{ amount: number; id: string; B_: string }>;
  pendingInputsTotal?: number;
  pendingInputFee?: number;
  change?: Array<{ amount: number; id: string; C_: string; dleq: { e: string; s: string } }>;
}

export interface MintState {
  seedHex: string;
  generations: KeysetGeneration[];
  /** Y (hex) → 'SPENT' | 'PENDING'. */
  proofStates: Map<string, 'SPENT' | 'PENDING'>;
  /** B_ (hex) → what we signed for it (NUT-09 restore, and 11003 on reuse). */
  signed: Map<string, SignedOutput>;
  mintQuotes: Map<string, MintQuote>;
  meltQuotes: Map<string, MeltQuote>;
}

interface StateFile {
  seedHex: string;
  generations: KeysetGeneration[];
  proofStates: Array<[string, 'SPENT' | 'PENDING']>;
  signed: Array<[string, SignedOutput]>;
  mintQuotes: MintQuote[];
  meltQuotes: MeltQuote[];
}

export function freshState(): MintState {
  return {
    seedHex: randomBytes(32).toString('hex'),
    generations: [],
    proofStates: new Map(),
    signed: new Map(),
    mintQuotes: new Map(),
    meltQuotes: new Map(),
  };
}

export function loadState(file: string): MintState | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const f = JSON.parse(raw) as StateFile;
  return {
    seedHex: f.seedHex,
    generations: f.generations,
    proofStates: new Map(f.proofStates),
    signed: new Map(f.signed),
    mintQuotes: new Map(f.mintQuotes.map((q) => [q.quote, q])),
    meltQuotes: new Map(f.meltQuotes.map((q) => [q.quote, q])),
  };
}

export function saveState(file: string, s: MintState): void {
  const f: StateFile = {
    seedHex: s.seedHex,
    generations: s.generations,
    proofStates: [...s.proofStates],
    signed: [...s.signed],
    mintQuotes: [...s.mintQuotes.values()],
    meltQuotes: [...s.meltQuotes.values()],
  };
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(f), { mode: 0o600 });
  renameSync(tmp, file);
}
