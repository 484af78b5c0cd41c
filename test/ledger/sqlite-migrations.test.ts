import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, migrate } from '../../core/store/sqlite-migrations.js';

/**
 * Every SQLite table is made by the numbered migrations. Before migrations 10 to 15, six stores ran their own
 * `CREATE TABLE IF NOT EXISTS` at start; a database they made must migrate to exactly the schema a fresh one
 * gets, keeping its rows.
 */

/** The start-up DDL of those six stores, verbatim as they ran it before the tables moved into migrations. */
const OLD_STARTUP_DDL = [
  // core/account/lightning-deposits.ts
  `CREATE TABLE IF NOT EXISTS lightning_deposits (
      id_hash TEXT PRIMARY KEY, status TEXT NOT NULL, next_at INTEGER NOT NULL, data TEXT NOT NULL)`,
  // core/events/sqlite-webhook-store.ts
  `
CREATE TABLE IF NOT EXISTS ev_webhooks (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, key_id TEXT NOT NULL, kind TEXT NOT NULL, url TEXT NOT NULL,
  events TEXT NOT NULL, secret TEXT NOT NULL, created_at INTEGER NOT NULL, disabled INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS ev_webhooks_account ON ev_webhooks(account_id);
CREATE TABLE IF NOT EXISTS ev_keys (
  key_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, parent_key_id TEXT, expires_at INTEGER,
  low INTEGER, daily INTEGER, armed INTEGER NOT NULL DEFAULT 1, day TEXT NOT NULL DEFAULT '',
  day_spent INTEGER NOT NULL DEFAULT 0, day_fired TEXT NOT NULL DEFAULT '', expired_fired INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS ev_keys_account ON ev_keys(account_id);
CREATE INDEX IF NOT EXISTS ev_keys_expiry ON ev_keys(expires_at) WHERE expired_fired = 0 AND expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS ev_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT, msg_id TEXT NOT NULL, webhook_id TEXT NOT NULL, account_id TEXT NOT NULL,
  body TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL, lease_until INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS ev_outbox_due ON ev_outbox(next_at);
CREATE TABLE IF NOT EXISTS ev_delivery_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT, webhook_id TEXT NOT NULL, msg_id TEXT NOT NULL, attempt INTEGER NOT NULL,
  at INTEGER NOT NULL, status INTEGER, error TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS ev_delivery_log_hook ON ev_delivery_log(webhook_id, id);
`,
  // core/store/signals.ts
  'CREATE TABLE IF NOT EXISTS store_signals (name TEXT PRIMARY KEY, version INTEGER NOT NULL) STRICT',
  // core/store/settings-store.ts
  'CREATE TABLE IF NOT EXISTS admin_settings (id INTEGER PRIMARY KEY CHECK (id = 1), json TEXT NOT NULL, updated_at INTEGER NOT NULL)',
  // core/routes/admin-stats.ts (two tables; the store is core/stats/stats-store.ts now)
  'CREATE TABLE IF NOT EXISTS admin_stats (g TEXT NOT NULL, bucket INTEGER NOT NULL, calls INTEGER NOT NULL, errors INTEGER NOT NULL, charged_msat INTEGER NOT NULL, PRIMARY KEY (g, bucket))',
  'CREATE TABLE IF NOT EXISTS admin_solvency (t INTEGER NOT NULL, proofs_msat INTEGER NOT NULL, user_balances_msat INTEGER NOT NULL)',
  // core/routes/admin-session.ts
  'CREATE TABLE IF NOT EXISTS admin_sessions (id_hash TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) STRICT',
];

/** Migrations 1 to 9 as the old code applied them (the same loop, recorded the same way). */
function migrateUpTo9(db: Database.Database): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS ledger_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
  );
  for (const m of MIGRATIONS.filter((x) => x.version <= 9)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO ledger_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      m.version,
      m.name,
      Date.now(),
    );
  }
}

interface SchemaEntry {
  type: string;
  name: string;
  table: string;
  sql: string | null;
  columns: unknown[];
}

/** Every table and index with its DDL (whitespace folded) and, for tables, its columns as SQLite reports them. */
function schema(db: Database.Database): SchemaEntry[] {
  const rows = db
    .prepare(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name != 'sqlite_sequence' ORDER BY name",
    )
    .all() as Array<{ type: string; name: string; tbl_name: string; sql: string | null }>;
  return rows.map((r) => ({
    type: r.type,
    name: r.name,
    table: r.tbl_name,
    sql: r.sql === null ? null : r.sql.replace(/\s+/g, ' ').replace(/\( /g, '(').trim(),
    columns: r.type === 'table' ? db.prepare(`PRAGMA table_xinfo(${r.name})`).all() : [],
  }));
}

const STARTUP_TABLES = [
  'lightning_deposits',
  'ev_webhooks',
  'ev_keys',
  'ev_outbox',
  'ev_delivery_log',
  'store_signals',
  'admin_settings',
  'admin_stats',
  'admin_solvency',
  'admin_sessions',
];

describe('SQLite schema from migrations only', () => {
  it('a fresh database gets every table the stores use, and a second run applies nothing', () => {
    const db = new Database(':memory:');
    expect(migrate(db)).toBe(MIGRATIONS.length);
    const tables = schema(db)
      .filter((e) => e.type === 'table')
      .map((e) => e.name);
    for (const t of STARTUP_TABLES) expect(tables).toContain(t);
    expect(migrate(db)).toBe(0);
    const versions = db.prepare('SELECT version FROM ledger_migrations ORDER BY version').all() as Array<{
      version: number;
    }>;
    expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('a database made by the stores’ old start-up DDL migrates to the same schema and keeps its rows', () => {
    const fresh = new Database(':memory:');
    migrate(fresh);

    const old = new Database(':memory:');
    migrateUpTo9(old);
    for (const ddl of OLD_STARTUP_DDL) old.exec(ddl);
    old.prepare('INSERT INTO store_signals (name, version) VALUES (?, ?)').run('settings', 7);
    old.prepare('INSERT INTO admin_settings (id, json, updated_at) VALUES (1, ?, ?)').run('{"a":1}', 1);
    old
      .prepare('INSERT INTO lightning_deposits (id_hash, status, next_at, data) VALUES (?, ?, ?, ?)')
      .run('h1', 'pending', 5, '{}');

    expect(migrate(old)).toBe(MIGRATIONS.length - 9);
    expect(schema(old)).toEqual(schema(fresh));
    expect(old.prepare('SELECT version FROM store_signals WHERE name = ?').get('settings')).toMatchObject({
      version: 7,
    });
    expect(old.prepare('SELECT json FROM admin_settings WHERE id = 1').get()).toMatchObject({
      json: '{"a":1}',
    });
    expect(old.prepare('SELECT status FROM lightning_deposits WHERE id_hash = ?').get('h1')).toMatchObject({
      status: 'pending',
    });
  });

  it('a database where only some stores had run (a partial old start) migrates to the same schema', () => {
    const fresh = new Database(':memory:');
    migrate(fresh);
    const old = new Database(':memory:');
    migrateUpTo9(old);
    old.exec(OLD_STARTUP_DDL[2]!); // store_signals only
    expect(migrate(old)).toBe(MIGRATIONS.length - 9);
    expect(schema(old)).toEqual(schema(fresh));
  });
});
