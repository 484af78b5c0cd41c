import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withTempDir } from '../support/temp-dir.js';

/**
 * biome.json's function-length rule for core/ and plugins/ (`noExcessiveLinesPerFunction`, 80 lines, blank lines
 * and IIFEs not counted) can fail: a function one line too long in core/ is an error, an 80-line one is not, a
 * `biome-ignore` with a reason above it passes, and the same function under test/ is not checked. The real tree
 * passes it as `npm run lint` runs it.
 */

const root = join(import.meta.dirname, '..', '..');
const biome = join(root, 'node_modules', '.bin', 'biome');

/**
 * Lints `source` as the file `path` of a scratch tree that has the project's biome.json (its schema path made
 * absolute): the rules that fired, and biome's exit status.
 */
function lint(path: string, source: string): { status: number | null; rules: string[] } {
  return withTempDir('gw-fnlen-', (dir) => {
    const config = readFileSync(join(root, 'biome.json'), 'utf8').replace(
      '"./node_modules',
      `"${root}/node_modules`,
    );
    writeFileSync(join(dir, 'biome.json'), config);
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), source);
    const r = spawnSync(biome, ['lint', path], { cwd: dir, encoding: 'utf8' });
    const rules = [...`${r.stdout}${r.stderr}`.matchAll(/lint\/\w+\/(\w+)/g)].map((m) => m[1]!);
    return { status: r.status, rules };
  });
}

/** A function of `n` counted lines (a blank line between each pair, which the rule does not count). */
function fn(n: number, before = ''): string {
  const body = Array.from({ length: n - 2 }, (_, i) => `  total += ${i};\n`).join('\n');
  return `${before}export function long(): number {\n  let total = 0;\n${body}  return total;\n}\n`;
}

describe('function length rule (biome noExcessiveLinesPerFunction)', () => {
  it('an 81-line function in core/ is an error; 80 lines, blank lines aside, pass', () => {
    expect(lint('core/fixture-long.ts', fn(81))).toEqual({
      status: 1,
      rules: ['noExcessiveLinesPerFunction'],
    });
    expect(lint('plugins/fixture-long.ts', fn(81)).rules).toEqual(['noExcessiveLinesPerFunction']);
    expect(lint('core/fixture-long.ts', fn(80))).toEqual({ status: 0, rules: [] });
  });

  it('a reason above it passes; code outside core/ and plugins/ is not checked', () => {
    const reasoned = fn(
      120,
      '// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a flat table, one line per entry\n',
    );
    expect(lint('core/fixture-long.ts', reasoned)).toEqual({ status: 0, rules: [] });
    expect(lint('test/fixture-long.test.ts', fn(120))).toEqual({ status: 0, rules: [] });
  });

  it('the tree passes: every longer function in core/ and plugins/ says why', () => {
    const r = spawnSync(
      biome,
      ['lint', 'core', 'plugins', '--only', 'complexity/noExcessiveLinesPerFunction'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/noExcessiveLinesPerFunction/);
    expect(r.status).toBe(0);
  });
});
