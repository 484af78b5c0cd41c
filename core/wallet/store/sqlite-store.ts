import type Database from 'libsql';
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
 * Proof store on the embedded SQLite database (tables `wallet_*`, own migrations table `wallet_migrations`).
 * Every multi-row change runs in `BEGIN IMMEDIATE` so it is atomic across processes sharing the file.
 */

const MIGRATIONS: string[] = [
  `CREATE TABLE wallet_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE wallet_counters (keyset_id TEXT PRIMARY KEY, next INTEGER NOT NULL);
   CREATE TABLE wallet_receipts (token_hash TEXT PRIMARY KEY, data TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE TABLE wallet_ops (id TEXT PRIMARY KEY, data TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE TABLE wallet_proofs (
     y TEXT PRIMARY KEY, mint TEXT NOT NULL, unit TEXT NOT NULL, amount INTEGER NOT NULL,
     data TEXT NOT NULL, reserved_by TEXT, created_at INTEGER NOT NULL);
   CREATE INDEX wallet_proofs_pool ON wallet_proofs (mint, unit, reserved_by);`,
];

interface ProofRow {
  y: string;
  mint: string;
  unit: string;
  amount: number;
  data: string;
  reserved_by: string | null;
}

export class SqliteProofStore implements ProofStore {
  readonly kind = 'sqlite' as const;
  constructor(private readonly db: Database.Database) {}

  private tx<T>(fn: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const out = fn();
      this.db.exec('COMMIT');
      return out;
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  async init(): Promise<void> {
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS wallet_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
    );
    this.tx(() => {
      const row = this.db.prepare('SELECT MAX(version) AS v FROM wallet_migrations').get() as {
        v: number | null;
      };
      for (let v = (row.v ?? 0) + 1; v <= MIGRATIONS.length; v++) {
        this.db.exec(MIGRATIONS[v - 1] as string);
        this.db
          .prepare('INSERT INTO wallet_migrations (version, applied_at) VALUES (?, ?)')
          .run(v, Date.now());
      }
    });
  }

  async metaSetIfAbsent(key: string, value: string): Promise<string> {
    return this.tx(() => {
      this.db.prepare('INSERT OR IGNORE INTO wallet_meta (key, value) VALUES (?, ?)').run(key, value);
      return (this.db.prepare('SELECT value FROM wallet_meta WHERE key = ?').get(key) as { value: string })
        .value;
    });
  }

  async reserveCounters(keysetId: string, n: number): Promise<number> {
    const row = this.db
      .prepare(
        `INSERT INTO wallet_counters (keyset_id, next) VALUES (?, ?)
         ON CONFLICT(keyset_id) DO UPDATE SET next = next + excluded.next RETURNING next`,
      )
      .get(keysetId, n) as { next: number };
    return row.next - n;
  }

  async advanceCounter(keysetId: string, minNext: number): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO wallet_counters (keyset_id, next) VALUES (?, ?)
         ON CONFLICT(keyset_id) DO UPDATE SET next = MAX(next, excluded.next)`,
      )
      .run(keysetId, minNext);
  }

  async counters(): Promise<Record<string, number>> {
    const rows = this.db.prepare('SELECT keyset_id, next FROM wallet_counters').all() as Array<{
      keyset_id: string;
      next: number;
    }>;
    return Object.fromEntries(rows.map((r) => [r.keyset_id, r.next]));
  }

  async getReceipt(tokenHash: string): Promise<ReceiveReceipt | null> {
    const row = this.db.prepare('SELECT data FROM wallet_receipts WHERE token_hash = ?').get(tokenHash) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as ReceiveReceipt) : null;
  }

  async claimOp(entry: JournalEntry): Promise<JournalEntry | null> {
    const r = this.db
      .prepare('INSERT OR IGNORE INTO wallet_ops (id, data, created_at) VALUES (?, ?, ?)')
      .run(entry.id, JSON.stringify(entry), entry.createdAt);
    return r.changes === 1 ? null : ((await this.getOp(entry.id)) ?? entry);
  }

  async putOp(entry: JournalEntry): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO wallet_ops (id, data, created_at) VALUES (?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET data = excluded.data`,
      )
      .run(entry.id, JSON.stringify(entry), entry.createdAt);
  }

  async updateOp(entry: JournalEntry): Promise<boolean> {
    const r = this.db
      .prepare('UPDATE wallet_ops SET data = ? WHERE id = ?')
      .run(JSON.stringify(entry), entry.id);
    return r.changes === 1;
  }

  async getOp(id: string): Promise<JournalEntry | null> {
    const row = this.db.prepare('SELECT data FROM wallet_ops WHERE id = ?').get(id) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as JournalEntry) : null;
  }

  async listOps(): Promise<JournalEntry[]> {
    const rows = this.db.prepare('SELECT data FROM wallet_ops ORDER BY created_at').all() as Array<{
      data: string;
    }>;
    return rows.map((r) => JSON.parse(r.data) as JournalEntry);
  }

  async deleteOp(id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM wallet_ops WHERE id = ?').run(id).changes === 1;
  }

  async moveOp(fromId: string, entry: JournalEntry): Promise<boolean> {
    return this.tx(() => {
      if (this.db.prepare('DELETE FROM wallet_ops WHERE id = ?').run(fromId).changes !== 1) return false;
      this.db
        .prepare('INSERT INTO wallet_ops (id, data, created_at) VALUES (?, ?, ?)')
        .run(entry.id, JSON.stringify(entry), entry.createdAt);
      return true;
    });
  }

  async reserveProofs(entry: JournalEntry, target: number, feePpk: number): Promise<StoredProof[] | null> {
    return this.tx(() => {
      const rows = this.db
        .prepare(
          `SELECT y, amount, data FROM wallet_proofs WHERE mint = ? AND unit = ? AND reserved_by IS NULL
           ORDER BY amount DESC, y`,
        )
        .all(entry.mint, entry.unit) as Array<{ y: string; amount: number; data: string }>;
      const picked: StoredProof[] = [];
      let sum = 0;
      for (const r of rows) {
        if (sum >= target + Math.ceil((picked.length * feePpk) / 1000)) break;
        picked.push(JSON.parse(r.data) as StoredProof);
        sum += r.amount;
      }
      if (picked.length === 0 || sum < target + Math.ceil((picked.length * feePpk) / 1000)) return null;
      const mark = this.db.prepare(
        'UPDATE wallet_proofs SET reserved_by = ? WHERE y = ? AND reserved_by IS NULL',
      );
      for (const p of picked) mark.run(entry.id, p.y);
      const full = { ...entry, inputYs: picked.map((p) => p.y), inputTotal: sum };
      this.db
        .prepare('INSERT INTO wallet_ops (id, data, created_at) VALUES (?, ?, ?)')
        .run(full.id, JSON.stringify(full), full.createdAt);
      return picked;
    });
  }

  async settleOp(entry: JournalEntry, input: SettleInput): Promise<boolean> {
    return this.tx(() => {
      const row = this.db.prepare('SELECT data FROM wallet_ops WHERE id = ?').get(entry.id) as
        | { data: string }
        | undefined;
      // Compared on `submitted` too: a rollback decided on "not sent yet" never applies once it was sent.
      const present =
        row !== undefined && ((JSON.parse(row.data) as JournalEntry).submitted === true) === entry.submitted;
      if (!present && input.applyIfGone !== true) return false;
      const del = this.db.prepare('DELETE FROM wallet_proofs WHERE y = ?');
      for (const y of input.spentYs) del.run(y);
      const ins = this.db.prepare(
        `INSERT OR IGNORE INTO wallet_proofs (y, mint, unit, amount, data, reserved_by, created_at)
         VALUES (?, ?, ?, ?, ?, NULL, ?)`,
      );
      const now = Date.now();
      for (const p of input.add) ins.run(p.y, entry.mint, entry.unit, p.amount, JSON.stringify(p), now);
      if (input.receipt) {
        this.db
          .prepare('INSERT OR IGNORE INTO wallet_receipts (token_hash, data, created_at) VALUES (?, ?, ?)')
          .run(input.receipt.tokenHash, JSON.stringify(input.receipt), now);
      }
      if (!present) return false;
      this.db.prepare('UPDATE wallet_proofs SET reserved_by = NULL WHERE reserved_by = ?').run(entry.id);
      this.db.prepare('DELETE FROM wallet_ops WHERE id = ?').run(entry.id);
      if (input.next) {
        this.db
          .prepare('INSERT INTO wallet_ops (id, data, created_at) VALUES (?, ?, ?)')
          .run(input.next.id, JSON.stringify(input.next), input.next.createdAt);
      }
      return true;
    });
  }

  async listProofs(): Promise<HeldProof[]> {
    const rows = this.db
      .prepare('SELECT y, mint, unit, amount, data, reserved_by FROM wallet_proofs')
      .all() as ProofRow[];
    return rows.map((r) => ({
      ...(JSON.parse(r.data) as StoredProof),
      mint: r.mint,
      unit: r.unit as CashuUnit,
      reservedBy: r.reserved_by,
    }));
  }

  // Heartbeats live in wallet_meta under `owner:<id>` (no migration: a key-value table).
  async beat(beat: OwnerBeat): Promise<void> {
    this.db
      .prepare('INSERT OR REPLACE INTO wallet_meta (key, value) VALUES (?, ?)')
      .run(`owner:${beat.id}`, JSON.stringify(beat));
  }

  async owners(): Promise<OwnerBeat[]> {
    const rows = this.db.prepare("SELECT value FROM wallet_meta WHERE key LIKE 'owner:%'").all() as Array<{
      value: string;
    }>;
    return rows.map((r) => JSON.parse(r.value) as OwnerBeat);
  }

  async forgetOwner(id: string): Promise<void> {
    this.db.prepare('DELETE FROM wallet_meta WHERE key = ?').run(`owner:${id}`);
  }
}
