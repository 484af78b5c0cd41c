import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { GatewayError } from '../../errors.js';
import type { CashuUnit, ReceiveReceipt } from '../types.js';
import type { HeldProof, JournalEntry, ProofStore, SettleInput, StoredProof } from './proof-store.js';

/**
 * Proof store on Redis. Every key lives under `${prefix}:{wallet}:` — one hash slot, so the multi-key Lua
 * scripts (files in ./redis/, loaded once with defineCommand and called by SHA) run unchanged on Cluster.
 *
 *   meta, counters, receipts, ops      hashes
 *   avail:<mint>|<unit>                hash y -> proof JSON (available proofs of one pool)
 *   reserved                           hash y -> opId \n pool \n proof JSON
 *   pools                              set of pool names
 */

interface WalletCommands {
  walletReserveProofs(
    avail: string,
    reserved: string,
    ops: string,
    opId: string,
    target: number,
    ppk: number,
    entry: string,
    pool: string,
  ): Promise<string | number>;
  walletSettleOp(
    avail: string,
    reserved: string,
    ops: string,
    receipts: string,
    pools: string,
    opId: string,
    spent: string,
    add: string,
    receiptKey: string,
    receipt: string,
    pool: string,
    nextId: string,
    next: string,
  ): Promise<number>;
  walletAdvanceCounter(counters: string, keysetId: string, min: number): Promise<number>;
}

type WalletRedis = Redis & WalletCommands;

function lua(name: string): string {
  return readFileSync(new URL(`./redis/${name}.lua`, import.meta.url), 'utf8');
}

/** cjson encodes empty arrays as `{}`: normalise entries read back from Lua-written JSON. */
export function normalizeEntry(raw: string): JournalEntry {
  const e = JSON.parse(raw) as JournalEntry;
  if (!Array.isArray(e.inputYs)) e.inputYs = [];
  if (!Array.isArray(e.counters)) e.counters = [];
  return e;
}

export class RedisProofStore implements ProofStore {
  readonly kind = 'redis' as const;
  private readonly r: WalletRedis;
  private readonly k: (s: string) => string;

  constructor(redis: Redis, prefix: string) {
    this.r = redis as WalletRedis;
    const base = `${prefix}:{wallet}:`;
    this.k = (s) => base + s;
  }

  private pool(mint: string, unit: CashuUnit): string {
    return `${mint}|${unit}`;
  }

  async init(): Promise<void> {
    // The shared connection does not queue commands while offline: wait (bounded) for it to be ready.
    if (this.r.status !== 'ready') {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new GatewayError('store_unavailable')), 10_000);
        this.r.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const r = this.r as Redis & { walletReserveProofs?: unknown };
    if (r.walletReserveProofs) return;
    this.r.defineCommand('walletReserveProofs', { numberOfKeys: 3, lua: lua('reserve-proofs-3') });
    this.r.defineCommand('walletSettleOp', { numberOfKeys: 5, lua: lua('settle-op-5') });
    this.r.defineCommand('walletAdvanceCounter', { numberOfKeys: 1, lua: lua('advance-counter-1') });
  }

  async metaSetIfAbsent(key: string, value: string): Promise<string> {
    await this.r.hsetnx(this.k('meta'), key, value);
    return (await this.r.hget(this.k('meta'), key)) as string;
  }

  async reserveCounters(keysetId: string, n: number): Promise<number> {
    const next = await this.r.hincrby(this.k('counters'), keysetId, n);
    return next - n;
  }

  async advanceCounter(keysetId: string, minNext: number): Promise<void> {
    await this.r.walletAdvanceCounter(this.k('counters'), keysetId, minNext);
  }

  async counters(): Promise<Record<string, number>> {
    const all = await this.r.hgetall(this.k('counters'));
    return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, Number(v)]));
  }

  async getReceipt(tokenHash: string): Promise<ReceiveReceipt | null> {
    const v = await this.r.hget(this.k('receipts'), tokenHash);
    return v ? (JSON.parse(v) as ReceiveReceipt) : null;
  }

  async claimOp(entry: JournalEntry): Promise<JournalEntry | null> {
    const ok = await this.r.hsetnx(this.k('ops'), entry.id, JSON.stringify(entry));
    return ok === 1 ? null : ((await this.getOp(entry.id)) ?? entry);
  }

  async putOp(entry: JournalEntry): Promise<void> {
    await this.r.hset(this.k('ops'), entry.id, JSON.stringify(entry));
  }

  async getOp(id: string): Promise<JournalEntry | null> {
    const v = await this.r.hget(this.k('ops'), id);
    return v ? normalizeEntry(v) : null;
  }

  async listOps(): Promise<JournalEntry[]> {
    const all = await this.r.hgetall(this.k('ops'));
    return Object.values(all)
      .map(normalizeEntry)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  async deleteOp(id: string): Promise<boolean> {
    return (await this.r.hdel(this.k('ops'), id)) === 1;
  }

  async reserveProofs(entry: JournalEntry, target: number, feePpk: number): Promise<StoredProof[] | null> {
    const pool = this.pool(entry.mint, entry.unit);
    const res = await this.r.walletReserveProofs(
      this.k(`avail:${pool}`),
      this.k('reserved'),
      this.k('ops'),
      entry.id,
      target,
      feePpk,
      JSON.stringify(entry),
      pool,
    );
    if (res === -1) return null;
    if (typeof res === 'number') throw new Error(`reserve-proofs failed with ${res}`);
    return (JSON.parse(res) as string[]).map((s) => JSON.parse(s) as StoredProof);
  }

  async settleOp(entry: JournalEntry, input: SettleInput): Promise<void> {
    const pool = this.pool(entry.mint, entry.unit);
    const add: string[] = [];
    for (const p of input.add) add.push(p.y, JSON.stringify(p));
    await this.r.walletSettleOp(
      this.k(`avail:${pool}`),
      this.k('reserved'),
      this.k('ops'),
      this.k('receipts'),
      this.k('pools'),
      entry.id,
      // cjson decodes [] fine; an empty array must still be an array for ipairs
      JSON.stringify(input.spentYs),
      JSON.stringify(add),
      input.receipt ? input.receipt.tokenHash : '',
      input.receipt ? JSON.stringify(input.receipt) : '',
      pool,
      input.next ? input.next.id : '',
      input.next ? JSON.stringify(input.next) : '',
    );
  }

  async listProofs(): Promise<HeldProof[]> {
    const out: HeldProof[] = [];
    const split = (pool: string): { mint: string; unit: CashuUnit } => {
      const i = pool.lastIndexOf('|');
      return { mint: pool.slice(0, i), unit: pool.slice(i + 1) as CashuUnit };
    };
    for (const pool of await this.r.smembers(this.k('pools'))) {
      const all = await this.r.hgetall(this.k(`avail:${pool}`));
      for (const v of Object.values(all))
        out.push({ ...(JSON.parse(v) as StoredProof), ...split(pool), reservedBy: null });
    }
    const reserved = await this.r.hgetall(this.k('reserved'));
    for (const v of Object.values(reserved)) {
      const [op, pool, json] = v.split('\n') as [string, string, string];
      out.push({ ...(JSON.parse(json) as StoredProof), ...split(pool), reservedBy: op });
    }
    return out;
  }
}
