import {
  type CounterSource,
  type OperationCounters,
  type Proof,
  type ProofLike,
  Wallet,
} from '@cashu/cashu-ts';
import type { Logger } from '../log.js';
import { hashToCurve } from './dleq.js';
import { mapMintError } from './mint-errors.js';
import { fastOutputDataCreator } from './outputs.js';
import type { CounterRange, EntryOwner, JournalEntry, ProofStore, StoredProof } from './store/proof-store.js';
import type { CashuUnit } from './types.js';

/**
 * What every wallet operation shares: the store, the NUT-13 seed, one cashu-ts client per (mint, unit) whose
 * deterministic counters come from the store (reserved atomically before any output is built), and the
 * test-only crash hook.
 */
export interface WalletContext {
  store: ProofStore;
  log: Logger;
  mints: readonly string[];
  seedId: string;
  clients: MintClients;
  /** A journal entry older than this is treated as abandoned by a dead process. */
  staleAfterMs: number;
  /** This process as the owner of the entries it writes (core/wallet/owners.ts); absent for offline tools. */
  owner?: EntryOwner;
  /** An owner whose heartbeat is older than this is gone. */
  ownerDeadAfterMs: number;
  /**
   * The journal entries whose operation is still running in this process (`whileRunning`): this process's own
   * recovery pass leaves them to that operation whatever their age. A melt or swap older than `staleAfterMs` may
   * still be on its way to the mint on a loaded machine; a pass that rolled it back (its inputs still unspent,
   * the mint had not seen it yet) would release a hold whose invoice the mint then pays.
   */
  running: Set<string>;
}

/** Runs `op` with the entry `id` marked as running in this process (WalletContext.running). */
export async function whileRunning<T>(ctx: WalletContext, id: string, op: () => Promise<T>): Promise<T> {
  ctx.running.add(id);
  try {
    return await op();
  } finally {
    ctx.running.delete(id);
  }
}

export class MintClients {
  private readonly cache = new Map<string, Promise<Wallet>>();
  private readonly counterSource: CounterSource;

  constructor(
    private readonly seed: Uint8Array,
    store: ProofStore,
  ) {
    this.counterSource = {
      async reserve(keysetId, n) {
        if (n === 0) return { start: (await store.counters())[keysetId] ?? 0, count: 0 };
        return { start: await store.reserveCounters(keysetId, n), count: n };
      },
      advanceToAtLeast: (keysetId, minNext) => store.advanceCounter(keysetId, minNext),
      snapshot: () => store.counters(),
    };
  }

  /** A loaded client; the mint's keys are fetched once and re-fetched after `refresh()`. */
  async get(mint: string, unit: CashuUnit): Promise<Wallet> {
    const key = `${mint}|${unit}`;
    let w = this.cache.get(key);
    if (!w) {
      const wallet = new Wallet(mint, {
        unit,
        bip39seed: this.seed,
        secretsPolicy: 'deterministic',
        counterSource: this.counterSource,
        // cashu-ts's outputs, their signatures checked and unblinded on libsecp256k1 (core/wallet/outputs.ts).
        outputDataCreator: fastOutputDataCreator,
      });
      w = wallet.loadMint().then(() => wallet);
      this.cache.set(key, w);
      w.catch(() => {
        if (this.cache.get(key) === w) this.cache.delete(key);
      });
    }
    try {
      return await w;
    } catch (err) {
      throw mapMintError(err);
    }
  }

  /** Closes the NUT-17 WebSockets the clients opened (at shutdown: an open socket keeps the process alive). */
  async closeSockets(): Promise<void> {
    for (const w of this.cache.values()) {
      try {
        (await w).mint.disconnectWebSocket();
      } catch {
        /* a client that never loaded has no socket */
      }
    }
  }

  refresh(mint: string, unit: CashuUnit): void {
    this.cache.delete(`${mint}|${unit}`);
  }
}

/** Collects the counter ranges cashu-ts reserves while preparing outputs (for the journal). */
export function counterCollector(): { ranges: CounterRange[]; on: (c: OperationCounters) => void } {
  const ranges: CounterRange[] = [];
  return { ranges, on: (c) => ranges.push({ keysetId: c.keysetId, start: c.start, count: c.count }) };
}

export const DETERMINISTIC = { type: 'deterministic', counter: 0 } as const;

/** A proof's Y = hash_to_curve(secret), compressed hex (its key in the stores and at the mint's NUT-07). */
export function proofY(secret: string): string {
  return Buffer.from(hashToCurve(new TextEncoder().encode(secret))).toString('hex');
}

export function toStored(p: Proof): StoredProof {
  const out: StoredProof = {
    y: proofY(p.secret),
    id: p.id,
    amount: p.amount.toNumber(),
    secret: p.secret,
    C: p.C,
  };
  if (p.dleq) out.dleq = { e: p.dleq.e, s: p.dleq.s, ...(p.dleq.r ? { r: p.dleq.r } : {}) };
  return out;
}

export function toProofLike(p: StoredProof): ProofLike {
  return { id: p.id, amount: p.amount, secret: p.secret, C: p.C, ...(p.dleq ? { dleq: p.dleq } : {}) };
}

/** Test-only: kill this process at a named point (honoured only when NODE_ENV=test). */
export function crashPoint(point: string): void {
  if (process.env.NODE_ENV === 'test' && process.env.WALLET_TEST_CRASH_AT === point) {
    process.kill(process.pid, 'SIGKILL');
  }
}

export function newEntry(
  ctx: WalletContext,
  id: string,
  kind: JournalEntry['kind'],
  mint: string,
  unit: CashuUnit,
): JournalEntry {
  return {
    id,
    kind,
    mint,
    unit,
    createdAt: Date.now(),
    seedId: ctx.seedId,
    inputYs: [],
    inputTotal: 0,
    counters: [],
    submitted: false,
    ...(ctx.owner ? { owner: ctx.owner } : {}),
  };
}
