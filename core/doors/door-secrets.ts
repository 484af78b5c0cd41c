import { randomBytes } from 'node:crypto';
import type { StoreConnection } from '../store/connection.js';
import { defineScriptSet, type ScriptRunner, scriptOf } from '../store/lua-scripts.js';
import { migrate } from '../store/sqlite-migrations.js';
import { statementCache } from '../store/statement-cache.js';

/** Each connection's prepared statements (libsql compiles on every `prepare`; a charge claims on every call). */
const statements = new WeakMap<object, ReturnType<typeof statementCache>>();
function stmt(store: Extract<StoreConnection, { kind: 'sqlite' }>, sql: string) {
  let cache = statements.get(store.db);
  if (cache === undefined) {
    cache = statementCache(store.db);
    statements.set(store.db, cache);
  }
  return cache(sql);
}

/**
 * The doors' secrets (the L402 macaroon root key, the MPP challenge key): 32 random bytes made once and kept in
 * the money store, so every process on that store and every restart verifies what another issued. Made atomically
 * by whichever process comes first (Redis `SET NX GET`, SQLite `INSERT OR IGNORE` into `node_secrets`), as the
 * node's Nostr key is (core/network/nostr-identity.ts). Never logged, answered or counted.
 */

/** One key, alone in its slot (single-key commands are cluster-safe); the tag keeps node secrets together. */
const redisKey = (prefix: string, name: string) => `${prefix}:{node}:secret:${name}`;

/** The secret `name` as 64 hex characters; made now when the store has none. */
export async function loadDoorSecret(store: StoreConnection, name: string): Promise<string> {
  const fresh = randomBytes(32).toString('hex');
  if (store.kind === 'redis') {
    // NX with GET answers the value already there (another process was first) or null (ours was stored).
    const before = (await store.redis.call('SET', redisKey(store.prefix, name), fresh, 'NX', 'GET')) as
      | string
      | null;
    return before ?? fresh;
  }
  migrate(store.db);
  store.db
    .prepare('INSERT OR IGNORE INTO node_secrets (name, value, created_at) VALUES (?, ?, ?)')
    .run(name, fresh, Date.now());
  const row = store.db.prepare('SELECT value FROM node_secrets WHERE name = ?').get(name) as {
    value: string;
  };
  return row.value;
}

/** Expired marks deleted by one claim with a lifetime on SQLite: the table stays bounded by the live ones. */
const PRUNE_BATCH = 100;

/**
 * Marks `name` used, atomically across every process on the store: true for the one caller that marked it, false
 * for every other (concurrent or later). Kept beside the secrets (Redis `SET NX`, with a lifetime of `ttlS` or
 * none when null; SQLite `INSERT OR IGNORE` into `node_secrets`, the lifetime in `expires_at`). A mark whose
 * lifetime ended is gone on both stores: it can be claimed again, and `readMark` answers null. On SQLite each claim
 * with a lifetime also deletes up to `PRUNE_BATCH` expired marks (Redis expires them itself). `value`: what
 * `readMark` answers for it. The MPP `charge` door consumes a challenge with it (consume-once, for the challenge's
 * lifetime); a `session` is opened with it (value: the return invoice).
 */
export async function claimOnce(
  store: StoreConnection,
  name: string,
  ttlS: number | null,
  value: string = String(Date.now()),
): Promise<boolean> {
  if (store.kind === 'redis') {
    const key = redisKey(store.prefix, `used:${name}`);
    const set =
      ttlS === null
        ? await store.redis.call('SET', key, value, 'NX')
        : await store.redis.call('SET', key, value, 'NX', 'EX', String(Math.max(1, Math.ceil(ttlS))));
    return set === 'OK';
  }
  // node_secrets exists: loadDoorSecret made it when the doors opened.
  const now = Date.now();
  const expiresAt = ttlS === null ? null : now + Math.max(1, Math.ceil(ttlS * 1000));
  return store.db.transaction((): boolean => {
    if (expiresAt !== null) {
      stmt(
        store,
        `DELETE FROM node_secrets WHERE rowid IN (SELECT rowid FROM node_secrets
             WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ${PRUNE_BATCH})`,
      ).run(now);
    }
    // Claimed when the name is free, or its mark expired (not among the pruned): free again, as an expired Redis
    // key is. A live mark is left as it is (no change: not claimed).
    const r = stmt(
      store,
      `INSERT INTO node_secrets (name, value, created_at, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value, created_at = excluded.created_at,
           expires_at = excluded.expires_at
         WHERE node_secrets.expires_at IS NOT NULL AND node_secrets.expires_at <= ?`,
    ).run(`used:${name}`, value, now, expiresAt, now);
    return r.changes === 1;
  })();
}

/** The value `claimOnce` stored under `name`, or null when none is (never claimed, or its lifetime ended). */
export async function readMark(store: StoreConnection, name: string): Promise<string | null> {
  if (store.kind === 'redis') {
    return (await store.redis.call('GET', redisKey(store.prefix, `used:${name}`))) as string | null;
  }
  const row = stmt(
    store,
    'SELECT value FROM node_secrets WHERE name = ? AND (expires_at IS NULL OR expires_at > ?)',
  ).get(`used:${name}`, Date.now()) as { value: string } | undefined;
  return row?.value ?? null;
}

/** Overwrites the value of a mark `claimOnce` made (no lifetime). A mark's change of state: an MPP session closed. */
export async function setMark(store: StoreConnection, name: string, value: string): Promise<void> {
  if (store.kind === 'redis') {
    await store.redis.call('SET', redisKey(store.prefix, `used:${name}`), value);
    return;
  }
  stmt(
    store,
    `INSERT INTO node_secrets (name, value, created_at) VALUES (?, ?, ?)
       ON CONFLICT(name) DO UPDATE SET value = excluded.value`,
  ).run(`used:${name}`, value, Date.now());
}

/** Redis: SET to ARGV[2] only while the value is ARGV[1] (one key: cluster-safe). */
const REPLACE_IF = new Map([
  [
    'replace-if' as const,
    scriptOf(
      'gwDoorMark',
      'replace-if',
      1,
      1,
      "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0",
    ),
  ],
]);
/** Each client's runner of it (the project's script loader: EVALSHA, not the script text on every call). */
const replaceRunners = new WeakMap<object, ScriptRunner<'replace-if'>>();
function replaceIf(store: Extract<StoreConnection, { kind: 'redis' }>): ScriptRunner<'replace-if'> {
  let run = replaceRunners.get(store.redis);
  if (run === undefined) {
    run = defineScriptSet(store.redis, REPLACE_IF);
    replaceRunners.set(store.redis, run);
  }
  return run;
}

/**
 * Replaces the value of mark `name` with `value` only while it is `expected`, atomically across every process on
 * the store (compare-and-set): true for the one caller that replaced it. An MPP close's claim handed over, or
 * answered by the process that holds it (core/doors/payment-doors.ts).
 */
export async function replaceMark(
  store: StoreConnection,
  name: string,
  expected: string,
  value: string,
): Promise<boolean> {
  if (store.kind === 'redis') {
    const key = redisKey(store.prefix, `used:${name}`);
    return (await replaceIf(store)('replace-if', [key], [expected, value])) === 1;
  }
  const r = stmt(store, 'UPDATE node_secrets SET value = ? WHERE name = ? AND value = ?').run(
    value,
    `used:${name}`,
    expected,
  );
  return r.changes === 1;
}
