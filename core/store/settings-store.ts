import type { StoreConnection } from './connection.js';
import { migrate } from './sqlite-migrations.js';

/**
 * Persisted operator settings (the runtime-changeable ones of core/settings.ts), in the same store as the
 * ledger so every process sharing it starts with the same values. A write merges the given fields into what
 * is stored in ONE atomic step, so two processes changing different settings at once lose neither change:
 * Redis: one field per setting in the hash `<prefix>:admin:settings:h` (HSET of several fields is atomic;
 * values are JSON). SQLite: one row `admin_settings(id = 1)` rewritten inside an IMMEDIATE transaction.
 * Values are kept as JSON exactly as given (Lua's cjson would round large integers, hence no Lua merge).
 */

/** Before the hash: the whole object as one JSON string (still read, never written). */
const legacyKey = (prefix: string) => `${prefix}:admin:settings`;
const hashKey = (prefix: string) => `${prefix}:admin:settings:h`;

function parseObject(raw: string | null | undefined): Record<string, unknown> {
  if (!raw) return {};
  const v = JSON.parse(raw) as unknown;
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Every persisted setting (an empty object when none). */
export async function loadSettings(store: StoreConnection): Promise<Record<string, unknown>> {
  if (store.kind === 'redis') {
    const [legacy, fields] = await Promise.all([
      store.redis.get(legacyKey(store.prefix)),
      store.redis.hgetall(hashKey(store.prefix)),
    ]);
    const out = parseObject(legacy);
    for (const [k, v] of Object.entries(fields)) out[k] = JSON.parse(v) as unknown;
    return out;
  }
  migrate(store.db);
  const row = store.db.prepare('SELECT json FROM admin_settings WHERE id = 1').get() as
    | { json: string }
    | undefined;
  return parseObject(row?.json);
}

/** Merges `patch` into the persisted settings atomically (fields not named keep their stored value). */
export async function saveSettings(store: StoreConnection, patch: Record<string, unknown>): Promise<void> {
  const entries = Object.entries(patch);
  if (entries.length === 0) return;
  if (store.kind === 'redis') {
    const flat: string[] = [];
    for (const [k, v] of entries) flat.push(k, JSON.stringify(v));
    await store.redis.hset(hashKey(store.prefix), ...flat);
    return;
  }
  const db = store.db;
  migrate(db);
  db.exec('BEGIN IMMEDIATE');
  try {
    const row = db.prepare('SELECT json FROM admin_settings WHERE id = 1').get() as
      | { json: string }
      | undefined;
    const json = JSON.stringify({ ...parseObject(row?.json), ...patch });
    db.prepare(
      'INSERT INTO admin_settings (id, json, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at',
    ).run(json, Date.now());
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
