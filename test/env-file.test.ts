import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, readEnvFile } from '../core/config.js';
import { projectRoot } from '../core/openapi/document.js';
import type { DevMint } from '../scripts/mint/index.js';
import { startTestMint } from './support/dev-mint.js';

/**
 * One settings file for the gateway and the operator tools (ENV_FILE, default .env): its variables are read
 * into the environment, the environment winning; a named file that is missing is a configuration error; and
 * `wallet:balance` run with nothing but ENV_FILE reads CASHU_MINTS and DATA_DIR from it.
 */
describe('ENV_FILE', () => {
  let dir: string;
  let mint: DevMint;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'env-file-'));
    mint = await startTestMint();
  });
  afterAll(async () => {
    await mint?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the file into the environment; a variable already set wins', () => {
    const file = join(dir, 'a.env');
    writeFileSync(file, 'ENV_FILE_TEST_SET=from-file\nENV_FILE_TEST_NEW=from-file\n');
    process.env.ENV_FILE_TEST_SET = 'from-env';
    try {
      expect(readEnvFile({ ENV_FILE: file })).toBe(file);
      expect(process.env.ENV_FILE_TEST_SET).toBe('from-env');
      expect(process.env.ENV_FILE_TEST_NEW).toBe('from-file');
    } finally {
      delete process.env.ENV_FILE_TEST_SET;
      delete process.env.ENV_FILE_TEST_NEW;
    }
  });

  it('a named file that does not exist is a ConfigError naming it', () => {
    const missing = join(dir, 'missing.env');
    expect(() => readEnvFile({ ENV_FILE: missing })).toThrow(ConfigError);
    expect(() => readEnvFile({ ENV_FILE: missing })).toThrow(
      `ENV_FILE names ${missing}, which does not exist`,
    );
  });

  it('wallet:balance reads the gateway settings from the file', async () => {
    const file = join(dir, 'gateway.env');
    writeFileSync(file, `CASHU_MINTS=${mint.url}\nDATA_DIR=${join(dir, 'data')}\n`);
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          ['--import', 'tsx', 'scripts/wallet-balance.ts'],
          { cwd: projectRoot(), env: { PATH: process.env.PATH ?? '', ...env } },
          (_err, stdout, stderr) => resolve({ code: child.exitCode, out: stdout + stderr }),
        );
      });
    const without = await run({ ENV_FILE: '' });
    expect(without).toMatchObject({ code: 1 });
    expect(without.out).toMatch(
      /^CASHU_MINTS is empty: set it \(and REDIS_URL or DATA_DIR\) as the gateway has them/,
    );
    const withFile = await run({ ENV_FILE: file });
    expect(withFile).toEqual({ code: 0, out: 'no proofs held\n' });
  }, 60_000);
});
