import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Several processes (WORKERS>1, or several gateways on one DATA_DIR) opening a new SQLite file at the same
 * moment: each must wait for the others' switch to WAL (busy_timeout set before it), not die with
 * SQLITE_BUSY at start-up.
 */
const PROCESSES = 6;
const connection = join(import.meta.dirname, '..', '..', 'core', 'store', 'connection.ts');
const work = mkdtempSync(join(tmpdir(), 'gw-open-race-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SCRIPT = `
import { openStore } from ${JSON.stringify(connection)};
const [dataDir, at] = process.argv.slice(2);
while (Date.now() < Number(at)) {}
const s = openStore({ dataDir });
s.db.exec('CREATE TABLE IF NOT EXISTS t (x)');
await s.close();
`;

function run(script: string, dataDir: string, at: number): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, dataDir, String(at)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (code) => resolve({ code, err }));
  });
}

describe('SQLite: several processes open a new file at once', () => {
  it('every process opens it (no SQLITE_BUSY), 3 rounds on fresh folders', async () => {
    const script = join(work, 'open.mts');
    writeFileSync(script, SCRIPT);
    for (let round = 0; round < 3; round++) {
      const dataDir = join(work, `d${round}`);
      // Start together: each process spins until the same instant, after all have loaded.
      const at = Date.now() + 4_000;
      const results = await Promise.all(Array.from({ length: PROCESSES }, () => run(script, dataDir, at)));
      for (const r of results) expect(r.err).not.toContain('SQLITE_BUSY');
      expect(results.map((r) => r.code)).toEqual(Array(PROCESSES).fill(0));
    }
  }, 60_000);
});
