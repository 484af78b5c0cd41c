import type Database from 'libsql';

/**
 * Watches the SQL a libsql connection runs through `exec` (BEGIN, COMMIT, ROLLBACK and the `synchronous` switches
 * of SqliteStore): `before(sql)` is called before each statement runs. A `before` that throws stands for the
 * statement failing (a COMMIT refused by a full disk, say): the statement is then not run, and the transaction
 * it would have ended is still open, as after a failed COMMIT in SQLite.
 */
export function watchExec(db: Database.Database, before: (sql: string) => void): void {
  const exec = db.exec.bind(db);
  db.exec = ((sql: string) => {
    before(sql);
    return exec(sql);
  }) as typeof db.exec;
}
