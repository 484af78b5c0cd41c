import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { StoreConnection } from '../../core/store/connection.js';
import type { DevMintOptions } from '../../scripts/mint/index.js';
import { crashStore, type DevMint, dropStore, type StoreKind, startTestMint } from './dev-mint.js';
import { lateBound } from './late-bound.js';

/** A dev mint and a store that a crash child process can open too, with the environment naming both to it. */
export interface CrashRig {
  readonly mint: DevMint;
  readonly conn: StoreConnection;
  /** The CRASH_* environment of `crashStore` (filled in before the tests; a suite may add its own entries). */
  readonly childEnv: Record<string, string>;
}

/**
 * For a describe block: a dev mint (`mintOptions`) and a crash store of `kind` (SQLite in a temp dir whose name
 * starts with `name`, or Redis under a random prefix), started before the tests; after them the mint is closed,
 * the store dropped and the dir removed. Hooks the suite registers later run after these start and before they
 * close. The fields stand for the started ones.
 */
export function crashRigPerSuite(kind: StoreKind, name: string, mintOptions: DevMintOptions = {}): CrashRig {
  let mint: DevMint | undefined;
  let dir: string | undefined;
  let conn: StoreConnection | undefined;
  const childEnv: Record<string, string> = {};
  beforeAll(async () => {
    mint = await startTestMint(mintOptions);
    dir = mkdtempSync(join(tmpdir(), name));
    const store = crashStore(kind, dir, mint.url);
    conn = store.conn;
    Object.assign(childEnv, store.childEnv);
  });
  afterAll(async () => {
    await mint?.close();
    if (conn) await dropStore(conn);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    mint: lateBound(() => mint, 'the dev mint'),
    conn: lateBound(() => conn, 'the store'),
    childEnv,
  };
}
