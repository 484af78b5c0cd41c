import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';

/**
 * For the enclosing describe block (or file): the mock provider and a temp folder named from `prefix` for the
 * files a gateway reads (models.json, providers.json); both gone after the block. Read the fields in hooks and tests.
 */
export function upstreamWithDirPerSuite(prefix: string): { readonly up: MockUpstream; readonly dir: string } {
  let up: MockUpstream | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    up = await startMockUpstream();
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await up?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get up() {
      if (!up) throw new Error('the mock upstream is not started');
      return up;
    },
    get dir() {
      if (!dir) throw new Error('the folder is not made');
      return dir;
    },
  };
}
