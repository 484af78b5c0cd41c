import type Database from 'libsql';

/**
 * Prepared statements of one connection by SQL text: each distinct SQL is compiled once, on first use, and the
 * statement is reused after (libsql compiles on every `prepare`). `raw`: rows as arrays in column order.
 */
export function statementCache(db: Database.Database, raw = false): (sql: string) => Database.Statement {
  const stmts = new Map<string, Database.Statement>();
  return (sql) => {
    let st = stmts.get(sql);
    if (st === undefined) {
      st = raw ? db.prepare(sql).raw(true) : db.prepare(sql);
      stmts.set(sql, st);
    }
    return st;
  };
}
