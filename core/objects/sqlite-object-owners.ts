import type Database from 'libsql';
import type { ObjectKind, ObjectOwners, OwnedObject } from './types.js';

/** SQLite ownership records (table `provider_objects`, ledger migration 6). */
export class SqliteObjectOwners implements ObjectOwners {
  constructor(private readonly db: Database.Database) {}

  async record(o: OwnedObject): Promise<void> {
    this.db
      .prepare(
        'INSERT OR IGNORE INTO provider_objects (id, kind, account_id, key_id, created_at, meta) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(o.id, o.kind, o.accountId, o.keyId, o.createdAtMs, o.meta);
  }

  async get(id: string): Promise<OwnedObject | null> {
    const r = this.db
      .prepare('SELECT id, kind, account_id, key_id, created_at, meta FROM provider_objects WHERE id = ?')
      .get(id) as
      | {
          id: string;
          kind: ObjectKind;
          account_id: string;
          key_id: string;
          created_at: number;
          meta: string | null;
        }
      | undefined;
    if (r === undefined) return null;
    return {
      id: r.id,
      kind: r.kind,
      accountId: r.account_id,
      keyId: r.key_id,
      createdAtMs: r.created_at,
      meta: r.meta,
    };
  }

  async list(keyId: string, kind: ObjectKind, limit: number, after?: string): Promise<string[]> {
    if (after === undefined) {
      const rows = this.db
        .prepare(
          'SELECT id FROM provider_objects WHERE key_id = ? AND kind = ? ORDER BY created_at DESC, id DESC LIMIT ?',
        )
        .all(keyId, kind, limit) as Array<{ id: string }>;
      return rows.map((r) => r.id);
    }
    const from = this.db
      .prepare('SELECT created_at FROM provider_objects WHERE id = ? AND key_id = ? AND kind = ?')
      .get(after, keyId, kind) as { created_at: number } | undefined;
    if (from === undefined) return [];
    const rows = this.db
      .prepare(
        `SELECT id FROM provider_objects WHERE key_id = ? AND kind = ?
           AND (created_at < ? OR (created_at = ? AND id < ?))
         ORDER BY created_at DESC, id DESC LIMIT ?`,
      )
      .all(keyId, kind, from.created_at, from.created_at, after, limit) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  async annotate(id: string, meta: string): Promise<void> {
    this.db.prepare('UPDATE provider_objects SET meta = ? WHERE id = ?').run(meta, id);
  }

  async forget(o: Pick<OwnedObject, 'id'>): Promise<void> {
    this.db.prepare('DELETE FROM provider_objects WHERE id = ?').run(o.id);
  }
}
