import type { Cluster, Redis } from 'ioredis';
import { GatewayError, isGatewayError } from '../../errors.js';
import { storeUnavailable } from '../errors.js';
import { resolveCredential } from '../keys.js';
import { ownerOf } from '../owner.js';
import { type ConservationInput, conservationReport, pageOf } from '../report.js';
import { keyFree, toMeta, toUsage } from '../rules.js';
import type {
  ConservationReport,
  KeyInfo,
  KeyLookup,
  KeyRef,
  LeaseRecall,
  OtherLease,
  Page,
  RecallKind,
  Transaction,
  TransactionPage,
  TransactionType,
} from '../types.js';
import { RECALL_KEEP_MS } from '../types.js';
import {
  type AccountKeys,
  accountIdFromKey,
  accountIndexCompleteKey,
  accountIndexKey,
  accountKeys,
  decodeKey,
  flatToMap,
  keyIdIndexKey,
} from './redis-keys.js';
import type { ScriptName, ScriptRunner } from './redis-scripts.js';

const KEY_ID_RE = /^[0-9a-f]{16}$/;

export interface Retention {
  tx: number;
  /** Audit records older than this go when a step writes the account's next one (ms). */
  auditMs: number;
  finishedMs: number;
}

interface TxJson {
  id: string;
  t: string;
  a: string;
  b: string;
  d: string;
  ts: string;
  e: string;
  k?: string;
  m?: string;
}

/**
 * Reads, sweeping, audit and the error boundary of the Redis ledger (state changes: redis-ledger.ts).
 * Every store call goes through `run()`/`call()`: transport failures become `store_unavailable` (503).
 */
export class RedisReads {
  constructor(
    protected readonly client: Redis | Cluster,
    protected readonly prefix: string,
    private readonly scripts: ScriptRunner,
    protected readonly retention: Retention,
  ) {}

  protected async run(name: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
    return this.call(() => this.scripts(name, keys, args));
  }

  protected async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      // Refused input is the caller's (400), never an outage.
      if (isGatewayError(err)) throw err;
      // A Lua runtime error is a bug in a script, not an outage; everything else is the store being away.
      const msg = err instanceof Error ? err.message : '';
      if (/user_script|ERR Error running script/i.test(msg))
        throw new GatewayError('internal_error', { cause: err });
      throw storeUnavailable(err);
    }
  }

  private indexed: Promise<void> | null = null;

  /**
   * Every account id of the store, from the account index (redis-keys.ts): its cost is the accounts, not the
   * keyspace a shared Redis holds. A store from before the index is scanned once, by the first process here.
   */
  protected async accountIds(): Promise<string[]> {
    this.indexed ??= this.completeIndex().catch((err: unknown) => {
      this.indexed = null;
      throw err;
    });
    await this.indexed;
    const index = accountIndexKey(this.prefix);
    const out: string[] = [];
    await this.call(async () => {
      let cursor = '0';
      do {
        const [next, ids] = await this.client.sscan(index, cursor, 'COUNT', 1000);
        cursor = next;
        out.push(...ids);
      } while (cursor !== '0');
    });
    return out;
  }

  /** `read` of each account in `ids`, in order: one pipelined round per 500 accounts. */
  private async inRounds<T>(ids: string[], read: (keys: AccountKeys) => Promise<T>): Promise<T[]> {
    const out: T[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      out.push(
        ...(await this.call(() => Promise.all(batch.map((id) => read(accountKeys(this.prefix, id)))))),
      );
    }
    return out;
  }

  /** Of `ids`, the accounts for which `count` is more than 0. */
  protected async accountsWith(
    ids: string[],
    count: (keys: AccountKeys) => Promise<number>,
  ): Promise<string[]> {
    const counts = await this.inRounds(ids, count);
    return ids.filter((_, i) => counts[i]! > 0);
  }

  /** Fills the account index from a keyspace scan, once per store (a store from before the index). */
  private async completeIndex(): Promise<void> {
    const done = accountIndexCompleteKey(this.prefix);
    if ((await this.call(() => this.client.exists(done))) === 1) return;
    const nodes: Redis[] =
      'nodes' in this.client && typeof this.client.nodes === 'function'
        ? this.client.nodes('master')
        : [this.client as Redis];
    const index = accountIndexKey(this.prefix);
    for (const node of nodes) {
      await this.call(async () => {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', `${this.prefix}:{a:*}:acct`, 'COUNT', 1000);
          cursor = next;
          const ids = keys.map(accountIdFromKey).filter((id): id is string => id !== null);
          if (ids.length > 0) await this.client.sadd(index, ...ids);
        } while (cursor !== '0');
      });
    }
    await this.call(() => this.client.set(done, String(Date.now())));
  }

  private async snapshot(accountId: string, withKeys: boolean) {
    const ak = accountKeys(this.prefix, accountId);
    const r = (await this.run(
      'read-account',
      [ak.acct, ak.keys, ak.res, ak.expiry],
      [withKeys ? '1' : '0'],
    )) as [string[], string[], string];
    return { acct: flatToMap(r[0]), keys: flatToMap(r[1]), open: Number(r[2]) };
  }

  async getKeyInfo(credential: KeyLookup, now = Date.now()): Promise<KeyInfo | null> {
    const c = resolveCredential(credential);
    if (!c) return null;
    const s = await this.snapshot(c.accountId, true);
    const a = s.acct;
    if (!a.has('created') || a.get('deleted') === '1') return null;
    const raw = s.keys.get(c.keyHash);
    if (!raw) return null;
    const k = decodeKey(c.keyHash, c.accountId, raw, s.acct);
    if (k.deleted) return null;
    const n = (f: string) => Number(a.get(f) ?? 0);
    const children = [];
    if (!k.isChild) {
      for (const [hash, m] of s.keys) {
        const x = decodeKey(hash, c.accountId, m, s.acct);
        if (x.parentHash === k.hash && !x.deleted) children.push(x);
      }
      children.sort((p, q) => p.createdAt - q.createdAt || (p.hash < q.hash ? -1 : 1));
    }
    return {
      key: toMeta(k),
      usage: toUsage(k, now),
      account: {
        accountId: c.accountId,
        balanceMsat: n('balance'),
        reservedMsat: n('reserved'),
        depositedMsat: n('deposited'),
        spentMsat: n('spent'),
        withdrawnMsat: n('withdrawn'),
        feesMsat: n('fees'),
        requests: n('requests'),
        createdAtMs: n('created'),
        ...(a.has('payout') ? { payout: { holdId: a.get('payout')!, sinceMs: n('payoutAt') } } : {}),
      },
      availableMsat: Math.max(0, Math.min(n('balance') - n('reserved'), keyFree(k, now))),
      children: children.map((x) => ({ key: toMeta(x), usage: toUsage(x, now) })),
    };
  }

  /** (account, child key id filter) for a valid credential, else null. */
  private async scope(credential: KeyLookup): Promise<{ accountId: string; keyId: string | null } | null> {
    const c = resolveCredential(credential);
    if (!c) return null;
    const ak = accountKeys(this.prefix, c.accountId);
    const [deleted, raw] = await this.call(() =>
      Promise.all([this.client.hget(ak.acct, 'deleted'), this.client.hget(ak.keys, c.keyHash)]),
    );
    if (deleted !== '0' || !raw) return null;
    const k = decodeKey(c.keyHash, c.accountId, raw);
    if (k.deleted) return null;
    return { accountId: c.accountId, keyId: k.isChild ? k.hash.slice(0, 16) : null };
  }

  /**
   * Newest-first page of a list, filtered to one key for children (they see only their own records).
   * Scripts trim the lists in batches (includes/history.lua), so a list may hold a few records past
   * `retention`: nothing beyond it is ever read.
   */
  private async listPage<T extends { k?: string }>(
    key: string,
    retention: number,
    keyId: string | null,
    page?: Page,
  ): Promise<{ items: T[]; hasMore: boolean; total: number }> {
    const { limit, offset } = pageOf(page);
    if (keyId === null) {
      const end = Math.min(offset + limit, retention) - 1;
      const [len, rows] = await this.call(() =>
        Promise.all([
          this.client.llen(key),
          end < offset ? Promise.resolve([] as string[]) : this.client.lrange(key, offset, end),
        ]),
      );
      const total = Math.min(len, retention);
      return { items: rows.map((r) => JSON.parse(r) as T), hasMore: offset + rows.length < total, total };
    }
    const all = (await this.call(() => this.client.lrange(key, 0, retention - 1)))
      .map((r) => JSON.parse(r) as T)
      .filter((r) => r.k === keyId);
    return {
      items: all.slice(offset, offset + limit),
      hasMore: offset + limit < all.length,
      total: all.length,
    };
  }

  async listTransactions(credential: KeyLookup, page?: Page): Promise<TransactionPage | null> {
    const sc = await this.scope(credential);
    if (!sc) return null;
    const p = await this.listPage<TxJson>(
      accountKeys(this.prefix, sc.accountId).tx,
      this.retention.tx,
      sc.keyId,
      page,
    );
    const transactions: Transaction[] = p.items.map((r) => ({
      id: r.id,
      type: r.t as TransactionType,
      amountMsat: Number(r.a),
      balanceAfterMsat: Number(r.b),
      description: r.d,
      timestampMs: Number(r.ts),
      keyId: r.k ?? null,
      model: r.m ?? null,
      estimated: r.e === '1',
    }));
    return { transactions, hasMore: p.hasMore, total: p.total };
  }

  /** Nothing waits in memory here: every call's record is written by its own step. */
  async reportCalls(): Promise<void> {}

  async findKeyById(keyId: string): Promise<KeyRef | null> {
    if (typeof keyId !== 'string' || !KEY_ID_RE.test(keyId)) return null;
    const index = keyIdIndexKey(this.prefix);
    const hit = await this.call(() => this.client.hget(index, keyId));
    if (hit) {
      const [accountId, keyHash] = hit.split(' ');
      if (accountId && keyHash) return { keyRef: { accountId, keyHash } };
    }
    // Not indexed (created before the index existed, or its index write failed): look through every account once.
    for (const accountId of await this.accountIds()) {
      const keysKey = accountKeys(this.prefix, accountId).keys;
      const keyHash = await this.call(async () => {
        let cursor = '0';
        do {
          const [next, flat] = await this.client.hscan(keysKey, cursor, 'MATCH', `${keyId}*`, 'COUNT', 1000);
          for (let i = 0; i < flat.length; i += 2) if (flat[i]!.startsWith(keyId)) return flat[i]!;
          cursor = next;
        } while (cursor !== '0');
        return null;
      });
      if (keyHash) {
        await this.call(() => this.client.hset(index, keyId, `${accountId} ${keyHash}`));
        return { keyRef: { accountId, keyHash } };
      }
    }
    return null;
  }

  async sweepExpired(now = Date.now(), max = 1000): Promise<number> {
    let n = 0;
    const due = await this.accountsWith(await this.accountIds(), (k) =>
      this.client.zcount(k.expiry, '-inf', now),
    );
    for (const id of due) {
      if (n >= max) break;
      const ak = accountKeys(this.prefix, id);
      n += Number(await this.run('sweep-expired', [ak.acct, ak.res, ak.expiry, ak.fin], [now, max - n]));
    }
    return n;
  }

  async heartbeat(processId: string, now = Date.now()): Promise<void> {
    await this.call(() => this.client.hset(`${this.prefix}:procs`, processId, String(now)));
  }

  async releaseOrphans(
    deadAfterMs: number,
    now = Date.now(),
  ): Promise<{ processes: number; released: number }> {
    const seen = await this.call(() => this.client.hgetall(`${this.prefix}:procs`));
    const dead = Object.entries(seen)
      .filter(([, at]) => Number(at) < now - deadAfterMs)
      .map(([id]) => id);
    if (dead.length === 0) return { processes: 0, released: 0 };
    let released = 0;
    const open = await this.accountsWith(await this.accountIds(), (k) => this.client.zcard(k.expiry));
    for (const id of open) {
      const ak = accountKeys(this.prefix, id);
      released += Number(
        await this.run('release-orphans', [ak.acct, ak.res, ak.expiry, ak.fin], [now, 1_000_000, ...dead]),
      );
    }
    // Forgotten only after every account was swept: a pass cut short is completed by the next one.
    await this.call(() => this.client.hdel(`${this.prefix}:procs`, ...dead));
    return { processes: dead.length, released };
  }

  async otherLeases(accountId: string, processId: string, now = Date.now()): Promise<OtherLease[]> {
    const ak = accountKeys(this.prefix, accountId);
    const flat = await this.call(() => this.client.zrangebyscore(ak.expiry, `(${now}`, '+inf', 'WITHSCORES'));
    const out: OtherLease[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const id = flat[i]!;
      if (id.startsWith('l~') && ownerOf(id) !== processId)
        out.push({ id, expiresAtMs: Number(flat[i + 1]) });
    }
    return out;
  }

  /** One sorted set of recalls (account id → time): a single key, so any Redis Cluster node serves it. */
  async recallLeases(accountId: string, kind: RecallKind, now = Date.now()): Promise<void> {
    const key = `${this.prefix}:recalls`;
    await this.call(() =>
      this.client
        .multi()
        .zadd(key, 'GT', now, `${kind}:${accountId}`)
        .zremrangebyscore(key, '-inf', `(${now - RECALL_KEEP_MS}`)
        .exec(),
    );
  }

  async recalledSince(sinceMs: number): Promise<LeaseRecall[]> {
    const flat = await this.call(() =>
      this.client.zrangebyscore(`${this.prefix}:recalls`, sinceMs, '+inf', 'WITHSCORES'),
    );
    const out: LeaseRecall[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const m = /^(report|money):(.+)$/.exec(flat[i]!);
      if (m) out.push({ kind: m[1] as RecallKind, accountId: m[2]!, atMs: Number(flat[i + 1]) });
    }
    return out;
  }

  async checkConservation(): Promise<ConservationReport> {
    const list: ConservationInput[] = [];
    for (const id of await this.accountIds()) {
      const s = await this.snapshot(id, false);
      // An id whose creating credit was refused (the index is written first): no account.
      if (s.acct.size === 0) continue;
      const n = (f: string) => Number(s.acct.get(f) ?? 0);
      list.push({
        accountId: id,
        balanceMsat: n('balance'),
        reservedMsat: n('reserved'),
        depositedMsat: n('deposited'),
        spentMsat: n('spent'),
        withdrawnMsat: n('withdrawn'),
        feesMsat: n('fees'),
        requests: n('requests'),
        openReservedMsat: s.open,
      });
    }
    list.sort((a, b) => (a.accountId < b.accountId ? -1 : 1));
    return conservationReport(list);
  }

  async totalUserBalancesMsat(): Promise<number> {
    const balances = await this.inRounds(await this.accountIds(), (k) => this.client.hget(k.acct, 'balance'));
    return balances.reduce((total, b) => total + Number(b ?? 0), 0);
  }

  async close(): Promise<void> {
    /* the connection belongs to openStore(); its owner closes it */
  }
}
