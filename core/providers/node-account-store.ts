import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type Database from 'libsql';
import type { RedisStore, StoreConnection } from '../store/connection.js';
import { defineScriptSet, loadScriptFiles, type ScriptRunner, scriptDirOf } from '../store/lua-scripts.js';
import { migrate } from '../store/sqlite-migrations.js';

/**
 * Where the prepaid keys this node holds at other nodes live (`"payment": "cashu-balance"`, node-accounts.ts): in
 * the money store, so every process sharing it, and every restart, uses the same key. One record per node, by
 * its base URL: the key (made once, never replaced), the payment on its way to the node, the count of top-ups, and
 * the lock that makes one process at a time create or top up the key.
 *
 * - SQLite: table `node_accounts` (migration 17); each step one statement or one IMMEDIATE transaction.
 * - Redis: one hash `<prefix>:{node}:account:<sha256(base URL)>`, changed by the Lua scripts in ./redis/ (lock,
 *   unlock, write-while-holding-the-lock), each one atomic; writes wait for the replicas (`replicated`) as the
 *   wallet's do.
 *
 * The key and the pending token are secrets (bearer money): nothing here logs them, and no reader outside
 * node-accounts.ts gets them.
 */

/** A token sent (or about to be sent) to the node and not yet confirmed by it: written BEFORE it is sent. */
export interface PendingPayment {
  /** `create`: POST /v1/wallet/create makes the key; `topup`: POST /v1/wallet/topup adds to it. */
  kind: 'create' | 'topup';
  /** The eCash token (bearer money: never log it). */
  token: string;
  amountMsat: number;
  atMs: number;
}

export interface NodeAccountRecord {
  /** The key at the node (secret), once made. */
  apiKey: string | undefined;
  pending: PendingPayment | undefined;
  /** Top-ups confirmed by the node (the creation not counted). */
  topups: number;
}

export interface NodeAccountWrite {
  /** The key the node made (kept only when none is stored yet). */
  apiKey?: string;
  /** The payment on its way (write-ahead), or null once the node confirmed or refused it. */
  pending?: PendingPayment | null;
  /** A top-up the node confirmed. */
  topup?: boolean;
}

export interface NodeAccountStore {
  read(baseUrl: string): Promise<NodeAccountRecord>;
  /** Claims the node key's lock until now + ttlMs (or extends it): true when `owner` holds it now. */
  lock(baseUrl: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Frees the lock if `owner` still holds it. */
  unlock(baseUrl: string, owner: string): Promise<void>;
  /** Writes while `owner` still holds the lock; false (nothing written) when it lost it. */
  write(baseUrl: string, owner: string, w: NodeAccountWrite): Promise<boolean>;
}

function parsePending(raw: string | null | undefined): PendingPayment | undefined {
  if (!raw) return undefined;
  const p = JSON.parse(raw) as PendingPayment;
  return p.kind === 'create' || p.kind === 'topup' ? p : undefined;
}

class SqliteNodeAccounts implements NodeAccountStore {
  constructor(private readonly db: Database.Database) {
    migrate(db);
  }

  async read(baseUrl: string): Promise<NodeAccountRecord> {
    const row = this.db
      .prepare('SELECT api_key, pending, topups FROM node_accounts WHERE base_url = ?')
      .get(baseUrl) as { api_key: string | null; pending: string | null; topups: number } | undefined;
    return {
      apiKey: row?.api_key ?? undefined,
      pending: parsePending(row?.pending),
      topups: Number(row?.topups ?? 0),
    };
  }

  async lock(baseUrl: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const r = this.db
      .prepare(
        `INSERT INTO node_accounts (base_url, lock_owner, lock_until, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (base_url) DO UPDATE SET lock_owner = excluded.lock_owner, lock_until = excluded.lock_until
         WHERE node_accounts.lock_owner IS NULL OR node_accounts.lock_owner = excluded.lock_owner
            OR node_accounts.lock_until <= ?`,
      )
      .run(baseUrl, owner, now + ttlMs, now, now);
    return Number(r.changes) === 1;
  }

  async unlock(baseUrl: string, owner: string): Promise<void> {
    this.db
      .prepare(
        'UPDATE node_accounts SET lock_owner = NULL, lock_until = 0 WHERE base_url = ? AND lock_owner = ?',
      )
      .run(baseUrl, owner);
  }

  async write(baseUrl: string, owner: string, w: NodeAccountWrite): Promise<boolean> {
    const now = Date.now();
    const r = this.db
      .prepare(
        `UPDATE node_accounts SET
           api_key = COALESCE(api_key, ?),
           created_at = CASE WHEN api_key IS NULL AND ? IS NOT NULL THEN ? ELSE created_at END,
           pending = CASE ? WHEN 0 THEN pending WHEN 1 THEN NULL ELSE ? END,
           topups = topups + ?,
           updated_at = ?
         WHERE base_url = ? AND lock_owner = ?`,
      )
      .run(
        w.apiKey ?? null,
        w.apiKey ?? null,
        now,
        w.pending === undefined ? 0 : w.pending === null ? 1 : 2,
        w.pending ? JSON.stringify(w.pending) : null,
        w.topup ? 1 : 0,
        now,
        baseUrl,
        owner,
      );
    return Number(r.changes) === 1;
  }
}

type ScriptName = 'lock-node-account' | 'unlock-node-account' | 'write-node-account';
const SCRIPT_VERSION = 1;

class RedisNodeAccounts implements NodeAccountStore {
  private readonly run: ScriptRunner<ScriptName>;

  constructor(private readonly conn: RedisStore) {
    this.run = defineScriptSet(
      conn.redis,
      loadScriptFiles<ScriptName>({
        dir: join(scriptDirOf(import.meta.url, join('redis', 'lock-node-account-1.lua')), 'redis'),
        files: ['lock-node-account-1', 'unlock-node-account-1', 'write-node-account-1'],
        prefix: 'gwNodeAccount',
        version: SCRIPT_VERSION,
      }),
    );
  }

  /** One key per node, in the `{node}` slot beside the node's own secrets (core/network/nostr-identity.ts). */
  private key(baseUrl: string): string {
    const id = createHash('sha256').update(baseUrl).digest('hex').slice(0, 32);
    return `${this.conn.prefix}:{node}:account:${id}`;
  }

  async read(baseUrl: string): Promise<NodeAccountRecord> {
    const [apiKey, pending, topups] = await this.conn.redis.hmget(
      this.key(baseUrl),
      'api_key',
      'pending',
      'topups',
    );
    return { apiKey: apiKey ?? undefined, pending: parsePending(pending), topups: Number(topups ?? 0) };
  }

  async lock(baseUrl: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.run('lock-node-account', [this.key(baseUrl)], [owner, Date.now(), ttlMs])) === 1;
  }

  async unlock(baseUrl: string, owner: string): Promise<void> {
    await this.run('unlock-node-account', [this.key(baseUrl)], [owner]);
  }

  async write(baseUrl: string, owner: string, w: NodeAccountWrite): Promise<boolean> {
    const key = this.key(baseUrl);
    const pending = w.pending === undefined ? '' : w.pending === null ? '-' : JSON.stringify(w.pending);
    const ok =
      (await this.run(
        'write-node-account',
        [key],
        [owner, Date.now(), w.apiKey ?? '', pending, w.topup ? 1 : 0, baseUrl],
      )) === 1;
    // A key or a token on its way is money: on the replicas before the token leaves.
    if (ok) await this.conn.replicated(key);
    return ok;
  }
}

/** The node keys' store on the money store's connection. */
export function openNodeAccountStore(store: StoreConnection): NodeAccountStore {
  return store.kind === 'redis' ? new RedisNodeAccounts(store) : new SqliteNodeAccounts(store.db);
}
