import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cruise, type IConfiguration, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

/**
 * The import rules of `.dependency-cruiser.cjs` can fail: each rule has a fixture tree under
 * test/lint-fixtures/<rule name>/ (real TypeScript, laid out as core/ and plugins/ are) that breaks it, and the
 * rule must name exactly the imports the fixture breaks it with, and no other rule may fire there. Then the real
 * tree passes them, as `npm run lint` runs them.
 */

const root = join(import.meta.dirname, '..', '..');
const fixtures = join(import.meta.dirname, '..', 'lint-fixtures');
const require = createRequire(import.meta.url);
const config = require(join(root, '.dependency-cruiser.cjs')) as IConfiguration;

async function cruiseFixture(rule: string): Promise<IViolation[]> {
  const dir = join(fixtures, rule);
  const roots = ['core', 'plugins'].filter((d) => existsSync(join(dir, d)));
  const { tsConfig: _projectTsConfig, ...options } = config.options ?? {};
  const res = await cruise(roots, {
    ...options,
    baseDir: dir,
    validate: true,
    ruleSet: { forbidden: config.forbidden ?? [] },
  });
  return (res.output as ICruiseResult).summary.violations;
}

/** from → to, and for a reachable rule the modules in between. */
const pairs = (vs: IViolation[]): string[] => vs.map((v) => `${v.from} → ${v.to}`).sort();
const between = (v: IViolation): string[] => (v.via ?? []).map((m) => m.name).slice(0, -1);

/** The fixture of `rule` breaks that rule alone, with exactly the `expected` imports (from → to). */
async function expectBroken(rule: string, expected: string[]): Promise<IViolation[]> {
  const vs = await cruiseFixture(rule);
  expect(new Set(vs.map((v) => v.rule.name))).toEqual(new Set([rule]));
  expect(pairs(vs)).toEqual(expected);
  return vs;
}

describe('dependency-cruiser rules: each fixture breaks its rule', () => {
  it('every rule has a fixture tree, and every fixture tree a rule', () => {
    const rules = (config.forbidden ?? []).map((r) => r.name).sort();
    expect(readdirSync(fixtures).sort()).toEqual(rules);
  });

  it('no-circular: a types module and its implementation importing each other', async () => {
    const vs = await cruiseFixture('no-circular');
    expect(new Set(vs.map((v) => v.rule.name))).toEqual(new Set(['no-circular']));
    // One cycle, reported once, naming both modules.
    expect(vs).toHaveLength(1);
    expect((vs[0]!.cycle ?? []).map((m) => m.name).sort()).toEqual([
      'core/pricing/rate-card.ts',
      'core/pricing/types.ts',
    ]);
  });

  it('no-plugin-imports-plugin: settle importing reserve (paid-state and the registry are allowed)', async () => {
    await expectBroken('no-plugin-imports-plugin', ['plugins/settle.ts → plugins/reserve.ts']);
  });

  it('money-reaches-no-http: the account layer reaching core/http/ through metrics, not directly', async () => {
    const vs = await expectBroken('money-reaches-no-http', [
      'core/account/pay-out.ts → core/http/server-timing.ts',
    ]);
    // Transitive: the rule sees through the module in between (a direct-only rule would pass this tree).
    expect(between(vs[0]!)).toEqual(['core/metrics.ts']);
  });

  it('pipeline-reaches-no-money-implementation: the contract naming a pricing module; the runner reaches it through the contract', async () => {
    // core/context.ts → core/metering/types.ts is a types module: allowed, so context.ts is not named.
    const vs = await expectBroken('pipeline-reaches-no-money-implementation', [
      'core/plugin.ts → core/pricing/holder.ts',
      'core/stages.ts → core/pricing/holder.ts',
    ]);
    expect(between(vs.find((v) => v.from === 'core/stages.ts')!)).toEqual(['core/plugin.ts']);
  });

  it('engines-know-only-the-exchange: an engine importing the router (exchange and Server-Timing allowed)', async () => {
    await expectBroken('engines-know-only-the-exchange', ['core/http/node-engine.ts → core/http/router.ts']);
  });

  it('config-knows-no-http: config reaching core/http/ through the relay-path parser', async () => {
    const vs = await expectBroken('config-knows-no-http', ['core/config.ts → core/http/router.ts']);
    expect(between(vs[0]!)).toEqual(['core/relay-paths.ts']);
  });
});

describe('dependency-cruiser rules: the real tree', () => {
  it('passes them as `npm run lint` runs them, with no known violation let through', async () => {
    const bin = join(root, 'node_modules', '.bin', 'depcruise');
    const args = ['core', 'plugins', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'];
    const { stdout } = await promisify(execFile)(bin, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    const { summary } = JSON.parse(stdout) as ICruiseResult;
    expect(summary.error).toBe(0);
    expect(summary.warn).toBe(0);
    expect(summary.ignore).toBe(0);
    // The whole tree (about 250 modules) is parsed in a child process: seconds, more on a loaded machine.
  }, 120_000);
});
