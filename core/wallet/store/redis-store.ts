import { join } from 'node:path';
import type { RedisStore } from '../../store/connection.js';
import {
  defineScriptSet,
  type LoadedScript,
  loadScriptFiles,
  type ScriptRunner,
  scriptDirOf,
} from '../../store/lua-scripts.js';
import type { CashuUnit, ReceiveReceipt } from '../types.js';
import type {
  HeldProof,
  JournalEntry,
  OwnerBeat,
  ProofStore,
  SettleInput,
  StoredProof,
} from './proof-store.js';

/**
 * Proof store on Redis. Every key lives under `${prefix}:{wallet}:` — one hash slot, so the multi-key Lua
 * scripts (files in ./redis/, loaded through core/store/lua-scripts.ts) run unchanged on Cluster.
 *
 *   meta, counters, receipts, ops      hashes
 *   avail:<mint>|<unit>                hash y -> proof JSON (available proofs of one pool)
 *   reserved                           hash y -> opId \n pool \n proof JSON
 *   pools                              set of pool names
 *   lnd:<idHash>, lnd:open             Lightning deposit records (core/account/lightning-deposits.ts)
 *   owners                             hash instance id -> heartbeat JSON (core/wallet/owners.ts)
 *
 * Proofs are money: a step that stores or spends them waits for the replica acknowledgement
 * (core/store/replica-acks.ts) before it counts as done.
 */

type WalletScript =
  | 'reserve-proofs'
  | 'settle-op'
  | 'advance-counter'
  | 'put-deposit'
  | 'move-op'
  | 'update-op';
/** Bumped when the stored shape changes (script names carry it). */
const WALLET_SCRIPT_VERSION = 1;
let scripts: Map<WalletScript, LoadedScript> | undefined;

/** The wallet's scripts on `conn`'s client (defined once per client). */
export function walletScripts(conn: RedisStore): ScriptRunner<WalletScript> {
  scripts ??= loadScriptFiles<WalletScript>({
    dir: join(scriptDirOf(import.meta.url, join('redis', 'settle-op-5.lua')), 'redis'),
    files: [
      'reserve-proofs-3',
      'settle-op-5',
      'advance-counter-1',
      'put-deposit-2',
      'move-op-1',
      'update-op-1',
    ],
    prefix: 'gwWallet',
    version: WALLET_SCRIPT_VERSION,
  });
  return defineScriptSet(conn.redis, scripts);
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
  private readonly r: RedisStore['redis'];
  private readonly k: (s: string) => string;
  private readonly run: ScriptRunner<WalletScript>;

  constructor(private readonly conn: RedisStore) {
    this.r = conn.redis;
    const base = `${conn.prefix}:{wallet}:`;
    this.k = (s) => base + s;
    this.run = walletScripts(conn);
  }

  private pool(mint: string, unit: CashuUnit): string {
    return `${mint}|${unit}`;
  }

  async init(): Promise<void> {
    // The shared connection does not queue commands while offline: wait (bounded) for it to be ready.
    await this.conn.ready();
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
    await this.run('advance-counter', [this.k('counters')], [keysetId, minNext]);
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

  async updateOp(entry: JournalEntry): Promise<boolean> {
    return (await this.run('update-op', [this.k('ops')], [entry.id, JSON.stringify(entry)])) === 1;
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

  async moveOp(fromId: string, entry: JournalEntry): Promise<boolean> {
    const moved = await this.run('move-op', [this.k('ops')], [fromId, entry.id, JSON.stringify(entry)]);
    return moved === 1;
  }

  async reserveProofs(entry: JournalEntry, target: number, feePpk: number): Promise<StoredProof[] | null> {
    const pool = this.pool(entry.mint, entry.unit);
    const avail = this.k(`avail:${pool}`);
    const res = (await this.run(
      'reserve-proofs',
      [avail, this.k('reserved'), this.k('ops')],
      [entry.id, target, feePpk, JSON.stringify(entry), pool],
    )) as string | number;
    if (res === -1) return null;
    // The journal entry naming these proofs must survive a failover before anything is sent to a mint.
    if (typeof res === 'string') await this.conn.replicated(avail);
    if (typeof res === 'number') throw new Error(`reserve-proofs failed with ${res}`);
    return (JSON.parse(res) as string[]).map((s) => JSON.parse(s) as StoredProof);
  }

  async settleOp(entry: JournalEntry, input: SettleInput): Promise<boolean> {
    const pool = this.pool(entry.mint, entry.unit);
    const add: string[] = [];
    for (const p of input.add) add.push(p.y, JSON.stringify(p));
    const avail = this.k(`avail:${pool}`);
    const settled = await this.run(
      'settle-op',
      [avail, this.k('reserved'), this.k('ops'), this.k('receipts'), this.k('pools')],
      [
        entry.id,
        // cjson decodes [] fine; an empty array must still be an array for ipairs
        JSON.stringify(input.spentYs),
        JSON.stringify(add),
        input.receipt ? input.receipt.tokenHash : '',
        input.receipt ? JSON.stringify(input.receipt) : '',
        pool,
        input.next ? input.next.id : '',
        input.next ? JSON.stringify(input.next) : '',
        input.applyIfGone === true ? '1' : '',
        entry.submitted ? '1' : '0',
      ],
    );
    // New proofs (a receive's, a send's change) are money: held by a replica before the caller credits.
    await this.conn.replicated(avail);
    return settled === 1;
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

  async beat(beat: OwnerBeat): Promise<void> {
    await this.r.hset(this.k('owners'), beat.id, JSON.stringify(beat));
  }

  async owners(): Promise<OwnerBeat[]> {
    return Object.values(await this.r.hgetall(this.k('owners'))).map((v) => JSON.parse(v) as OwnerBeat);
  }

  async forgetOwner(id: string): Promise<void> {
    await this.r.hdel(this.k('owners'), id);
  }
}
