import type Database from 'libsql';

/**
 * Schema migrations, applied in order at start inside one IMMEDIATE transaction each and recorded in
 * `ledger_migrations`. Append only: never edit a shipped migration. All money columns are INTEGER (msat) in
 * STRICT tables, so a float can never be stored.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'initial ledger schema',
    sql: `
CREATE TABLE ledger_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) STRICT;
CREATE TABLE ledger_accounts (
  id TEXT PRIMARY KEY,
  balance INTEGER NOT NULL DEFAULT 0,
  reserved INTEGER NOT NULL DEFAULT 0,
  deposited INTEGER NOT NULL DEFAULT 0,
  spent INTEGER NOT NULL DEFAULT 0,
  withdrawn INTEGER NOT NULL DEFAULT 0,
  fees INTEGER NOT NULL DEFAULT 0,
  requests INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  origin TEXT,
  deleted INTEGER NOT NULL DEFAULT 0,
  tx_seq INTEGER NOT NULL DEFAULT 0,
  audit_seq INTEGER NOT NULL DEFAULT 0,
  CHECK (reserved >= 0 AND balance >= reserved)
) STRICT;
CREATE TABLE ledger_keys (
  hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
  key_id TEXT NOT NULL,
  is_child INTEGER NOT NULL DEFAULT 0,
  parent_hash TEXT,
  display TEXT NOT NULL,
  name TEXT,
  allowed_ips TEXT,
  allowed_models TEXT,
  refund_address TEXT,
  expires_at INTEGER,
  balance_limit INTEGER,
  balance_limit_reset TEXT,
  validity_date INTEGER,
  created_at INTEGER NOT NULL,
  deleted INTEGER NOT NULL DEFAULT 0,
  reserved INTEGER NOT NULL DEFAULT 0,
  open INTEGER NOT NULL DEFAULT 0,
  period_id INTEGER NOT NULL DEFAULT 0,
  period_spent INTEGER NOT NULL DEFAULT 0,
  total_spent INTEGER NOT NULL DEFAULT 0,
  total_requests INTEGER NOT NULL DEFAULT 0,
  last_used INTEGER,
  rpm_window INTEGER NOT NULL DEFAULT 0,
  rpm_count INTEGER NOT NULL DEFAULT 0,
  tph_window INTEGER NOT NULL DEFAULT 0,
  tph_count INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX ledger_keys_account ON ledger_keys(account_id);
CREATE TABLE ledger_reservations (
  account_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  kind TEXT NOT NULL,
  amount INTEGER NOT NULL,
  status TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  client_ip TEXT,
  note TEXT,
  result TEXT,
  finished_at INTEGER,
  PRIMARY KEY (account_id, request_id)
) STRICT;
CREATE INDEX ledger_res_open ON ledger_reservations(account_id, expires_at) WHERE status = 'open';
CREATE INDEX ledger_res_lease ON ledger_reservations(expires_at) WHERE status = 'open';
CREATE INDEX ledger_res_finished ON ledger_reservations(finished_at) WHERE status != 'open';
CREATE TABLE ledger_token_credits (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  tx_id TEXT NOT NULL,
  amount INTEGER NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE TABLE ledger_transactions (
  account_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  type TEXT NOT NULL,
  amount INTEGER NOT NULL,
  balance_after INTEGER NOT NULL,
  description TEXT NOT NULL,
  ts INTEGER NOT NULL,
  key_id TEXT,
  model TEXT,
  estimated INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, seq)
) STRICT;
CREATE TABLE ledger_audit_log (
  account_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  method TEXT NOT NULL,
  ip_address TEXT,
  user_agent TEXT,
  cost_msat INTEGER NOT NULL,
  response_status INTEGER NOT NULL,
  PRIMARY KEY (account_id, seq)
) STRICT;
`,
  },
  {
    version: 2,
    name: 'process heartbeats (orphaned reservations are released when a process stops beating)',
    sql: `
CREATE TABLE ledger_processes (
  id TEXT PRIMARY KEY,
  seen_at INTEGER NOT NULL
) STRICT;
`,
  },
  {
    version: 3,
    name: 'credit-lease recalls (a process short of money asks the holders of other leases to return them)',
    sql: `
CREATE TABLE ledger_recalls (
  account_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (account_id, kind)
) STRICT;
CREATE INDEX ledger_recalls_at ON ledger_recalls(at_ms);
`,
  },
  {
    version: 4,
    name: 'request-limit windows (core/limits/window-limiter.ts) and the audit log (core/audit/audit-log.ts)',
    sql: `
CREATE TABLE limit_windows (
  k TEXT PRIMARY KEY,
  n INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX limit_windows_expires ON limit_windows(expires_at);
CREATE TABLE audit_records (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ts INTEGER NOT NULL,
  account TEXT,
  record TEXT NOT NULL
) STRICT;
CREATE INDEX audit_records_account_ts ON audit_records(account, ts);
CREATE INDEX audit_records_ts ON audit_records(ts);
`,
  },
  {
    version: 5,
    name: 'audit records carry key id and status columns (the admin reader filters on them)',
    sql: `
DROP TABLE audit_records;
CREATE TABLE audit_records (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ts INTEGER NOT NULL,
  account TEXT,
  key_id TEXT,
  status INTEGER NOT NULL,
  record TEXT NOT NULL
) STRICT;
CREATE INDEX audit_records_account_ts ON audit_records(account, ts);
CREATE INDEX audit_records_ts ON audit_records(ts);
CREATE INDEX audit_records_key_ts ON audit_records(key_id, ts);
`,
  },
  {
    version: 6,
    name: 'provider objects (responses, files, batches) and their owning key; batch settlement jobs',
    sql: `
CREATE TABLE provider_objects (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  account_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  meta TEXT
) STRICT;
CREATE INDEX provider_objects_key ON provider_objects(key_id, kind, created_at);
CREATE TABLE batch_jobs (
  id TEXT PRIMARY KEY,
  due_at INTEGER NOT NULL,
  job TEXT NOT NULL
) STRICT;
CREATE INDEX batch_jobs_due ON batch_jobs(due_at);
`,
  },
  {
    version: 7,
    name: 'the ledger keeps no audit list of its own (settle and lease steps write to audit_records)',
    sql: `
DROP TABLE ledger_audit_log;
ALTER TABLE ledger_accounts DROP COLUMN audit_seq;
`,
  },
  {
    version: 8,
    name: 'keys disabled by the operator (a disabled parent key marks its account, refusing every child)',
    sql: `
ALTER TABLE ledger_keys ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_accounts ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
`,
  },
  {
    version: 9,
    name: 'node secrets made once and shared by every process (core/network/nostr-identity.ts)',
    sql: `
CREATE TABLE node_secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
`,
  },
  // 10 to 15: tables each store used to create itself at start (CREATE TABLE IF NOT EXISTS). They keep that
  // guard here, so a database made before these migrations existed, which already holds them, migrates as is.
  {
    version: 10,
    name: 'Lightning deposits the server finishes (core/wallet/lightning-deposits.ts)',
    sql: `
CREATE TABLE IF NOT EXISTS lightning_deposits (
  id_hash TEXT PRIMARY KEY, status TEXT NOT NULL, next_at INTEGER NOT NULL, data TEXT NOT NULL);
`,
  },
  {
    version: 11,
    name: 'webhooks, per-key alert state, delivery outbox and delivery log (core/events/sqlite-webhook-store.ts)',
    sql: `
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
  },
  {
    version: 12,
    name: 'cross-process signal versions (core/store/signals.ts)',
    sql: `
CREATE TABLE IF NOT EXISTS store_signals (name TEXT PRIMARY KEY, version INTEGER NOT NULL) STRICT;
`,
  },
  {
    version: 13,
    name: 'persisted operator settings (core/store/settings-store.ts)',
    sql: `
CREATE TABLE IF NOT EXISTS admin_settings (id INTEGER PRIMARY KEY CHECK (id = 1), json TEXT NOT NULL, updated_at INTEGER NOT NULL);
`,
  },
  {
    version: 14,
    name: 'console statistics and solvency samples (core/stats/stats-store.ts)',
    sql: `
CREATE TABLE IF NOT EXISTS admin_stats (g TEXT NOT NULL, bucket INTEGER NOT NULL, calls INTEGER NOT NULL, errors INTEGER NOT NULL, charged_msat INTEGER NOT NULL, PRIMARY KEY (g, bucket));
CREATE TABLE IF NOT EXISTS admin_solvency (t INTEGER NOT NULL, proofs_msat INTEGER NOT NULL, user_balances_msat INTEGER NOT NULL);
`,
  },
  {
    version: 15,
    name: 'console sessions (core/routes/admin-session.ts)',
    sql: `
CREATE TABLE IF NOT EXISTS admin_sessions (id_hash TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) STRICT;
`,
  },
  {
    version: 16,
    name: 'the expired-key sweep jobs (core/account/refund-sweep.ts), a durable job queue like batch_jobs',
    sql: `
CREATE TABLE refund_sweep_jobs (
  id TEXT PRIMARY KEY,
  due_at INTEGER NOT NULL,
  job TEXT NOT NULL
) STRICT;
CREATE INDEX refund_sweep_jobs_due ON refund_sweep_jobs(due_at);
`,
  },
  {
    version: 17,
    name: 'prepaid keys at other nodes, their write-ahead payments and top-up lock (core/providers/node-account-store.ts)',
    sql: `
CREATE TABLE node_accounts (
  base_url TEXT PRIMARY KEY,
  api_key TEXT,
  pending TEXT,
  lock_owner TEXT,
  lock_until INTEGER NOT NULL DEFAULT 0,
  topups INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER,
  updated_at INTEGER NOT NULL
) STRICT;
`,
  },
  {
    version: 18,
    name: "the payment doors' marks with a lifetime expire on SQLite as on Redis (core/doors/door-secrets.ts)",
    sql: `
ALTER TABLE node_secrets ADD COLUMN expires_at INTEGER;
CREATE INDEX node_secrets_expiry ON node_secrets(expires_at) WHERE expires_at IS NOT NULL;
`,
  },
];

/**
 * Applies the migrations not yet recorded; returns how many it applied. Every store on the database calls it
 * before its first statement (the ledger, wallet deposits, events, limiters, audit, settings, signals, console
 * statistics and sessions share one file), so the first caller migrates and the others read one row.
 */
export function migrate(db: Database.Database): number {
  db.exec(
    'CREATE TABLE IF NOT EXISTS ledger_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
  );
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  const have = db.prepare('SELECT COUNT(*) AS n FROM ledger_migrations WHERE version <= ?').get(latest) as {
    n: number;
  };
  if (Number(have.n) === MIGRATIONS.length) return 0;
  let applied = 0;
  for (const m of MIGRATIONS) {
    db.exec('BEGIN IMMEDIATE');
    try {
      const done = db.prepare('SELECT 1 FROM ledger_migrations WHERE version = ?').get(m.version);
      if (!done) {
        db.exec(m.sql);
        db.prepare('INSERT INTO ledger_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
          m.version,
          m.name,
          Date.now(),
        );
        applied++;
      }
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  }
  return applied;
}
