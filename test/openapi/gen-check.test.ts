import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiYamlPath, projectRoot } from '../../core/openapi/index.js';
import { generateTypes, generateValidators, HEADER } from '../../scripts/gen-openapi-types.js';

const root = projectRoot();
const script = join(root, 'scripts', 'gen-openapi-types.ts');
const committed = join(root, 'core', 'openapi', 'generated', 'types.ts');
const committedValidators = join(root, 'core', 'openapi', 'generated', 'validators.cjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Each test runs the generator (a tsx process that loads the OpenAPI tooling: several seconds of CPU), up to
 * three at once. On a busy machine that takes far longer than on an idle one, so the bounds are generous: a
 * run is killed after RUN_MS (a hung generator still fails the test, by its exit code), and each test's own
 * timeout leaves room for that.
 */
const RUN_MS = 150_000;
const TEST_MS = RUN_MS + 30_000;

/** Runs the generator script as `npm run gen:check` does (through tsx), bounded to RUN_MS. */
function runGen(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gen-check-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('scripts/gen-openapi-types.ts', () => {
  it(
    'generates deterministically, with the do-not-edit header, exactly the committed file',
    async () => {
      const a = await generateTypes(openApiYamlPath());
      const b = await generateTypes(openApiYamlPath());
      expect(a).toBe(b);
      expect(a.startsWith(HEADER)).toBe(true);
      expect(a).toContain('generated — do not edit; run npm run gen');
      expect(a).toBe(await readFile(committed, 'utf8'));
      // The precompiled request validators too (core/openapi/validators.ts).
      const v = await generateValidators(openApiYamlPath());
      expect(v).toBe(await generateValidators(openApiYamlPath()));
      expect(v).toContain('generated — do not edit; run npm run gen');
      expect(v).toBe(await readFile(committedValidators, 'utf8'));
    },
    TEST_MS,
  );

  it(
    '--check passes on the committed yaml and types, and fails with a clear message on drift',
    async () => {
      const drifted = join(dir, 'drifted.yaml');
      const yaml = await readFile(openApiYamlPath(), 'utf8');
      // A new optional field on the chat request: the committed types no longer match.
      const changed = yaml.replace(
        '        messages:\n          type: array\n          minItems: 1\n',
        '        drift_probe:\n          type: string\n        messages:\n          type: array\n          minItems: 1\n',
      );
      expect(changed).not.toBe(yaml);
      await writeFile(drifted, changed);
      const missingOut = join(dir, 'nowhere', 'types.ts');

      const [clean, drift, missing] = await Promise.all([
        runGen(['--check']),
        runGen(['--check', '--spec', drifted]),
        runGen(['--check', '--out', missingOut]),
      ]);
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.stdout).toContain('up to date');
      expect(drift.code).toBe(1);
      expect(drift.stderr).toContain('types.ts is out of date');
      expect(drift.stderr).toContain('validators.cjs is out of date');
      expect(drift.stderr).toContain('npm run gen');
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('is missing');
    },
    TEST_MS,
  );

  it(
    'writes to --out and a hand edit of the output is drift too',
    async () => {
      const out = join(dir, 'types.ts');
      const written = await runGen(['--out', out]);
      expect(written.code, written.stderr).toBe(0);
      expect(await readFile(out, 'utf8')).toBe(await readFile(committed, 'utf8'));
      // validators.cjs goes next to --out (never over the committed one).
      expect(await readFile(join(dir, 'validators.cjs'), 'utf8')).toBe(
        await readFile(committedValidators, 'utf8'),
      );
      await writeFile(
        out,
        (await readFile(out, 'utf8')).replace('export interface paths', 'export interface Paths'),
      );
      const edited = await runGen(['--check', '--out', out]);
      expect(edited.code).toBe(1);
      expect(edited.stderr).toContain('is out of date');
    },
    TEST_MS,
  );
});
