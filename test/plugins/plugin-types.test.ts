import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The plugin kit's types as a plugin author gets them: the package's own build configuration
 * (tsconfig.build.json, what `npm run build` compiles) emits declarations into a copy of the package — its real
 * `exports` map — and a consumer project that imports `prepaid-model-gateway/plugin` type-checks: a TypeScript
 * plugin (a hook with a bare `return;`, a registered routing policy) and the JavaScript examples under checkJs.
 * A consumer that misuses the contract must fail, so the check is known to run. Declarations only, into a temp
 * directory: no race with the start-command test's `npm run build` into dist/.
 */

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

let dir: string;
let consumer: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-plugin-types-'));
  const pkg = join(dir, 'pkg');
  mkdirSync(pkg);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: manifest.name, type: manifest.type, exports: manifest.exports }),
  );
  // The declarations import their own dependencies' types (undici, ioredis …): found through the package's
  // node_modules, as after an install.
  symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  await run(process.execPath, [
    tsc,
    '-p',
    join(root, 'tsconfig.build.json'),
    '--emitDeclarationOnly',
    '--outDir',
    join(pkg, 'dist'),
  ]);
  consumer = join(dir, 'consumer');
  mkdirSync(join(consumer, 'node_modules'), { recursive: true });
  symlinkSync(pkg, join(consumer, 'node_modules', 'prepaid-model-gateway'), 'dir');
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', type: 'module', private: true }),
  );
}, 180_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Type-checks `files` in the consumer project; resolves with tsc's output and whether it passed. */
async function typecheck(files: string[]): Promise<{ ok: boolean; out: string }> {
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        allowJs: true,
        checkJs: true,
        skipLibCheck: true,
        types: [],
      },
      files,
    }),
  );
  try {
    const r = await run(process.execPath, [tsc, '-p', join(consumer, 'tsconfig.json')]);
    return { ok: true, out: r.stdout };
  } catch (err) {
    return { ok: false, out: (err as { stdout?: string }).stdout ?? String(err) };
  }
}

describe('prepaid-model-gateway/plugin as a plugin author imports it', () => {
  it('the exports map points at the emitted declarations', () => {
    const exportsMap = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        exports: Record<string, { types: string }>;
      }
    ).exports;
    expect(exportsMap['./plugin']?.types).toBe('./dist/core/plugin.d.ts');
    expect(existsSync(join(dir, 'pkg', 'dist', 'core', 'plugin.d.ts'))).toBe(true);
  });

  it('a TypeScript plugin and the JavaScript examples type-check; a misuse does not', async () => {
    writeFileSync(
      join(consumer, 'plugin.ts'),
      `import type { PluginFactory, PluginNeeds, RoutingPolicy } from 'prepaid-model-gateway/plugin';

const first: RoutingPolicy = { name: 'first-only', order: (providers) => providers.slice(0, 1) };

export const needs = { required: ['providers', 'log'], optional: ['wallet'] } as const satisfies PluginNeeds;

const factory: PluginFactory<typeof needs> = (options, services) => {
  services.providers.registerPolicy(first);
  // An optional service may be absent: it is typed so.
  const canDecode: boolean = services.wallet?.decodeToken !== undefined;
  const fee = typeof options?.fee_msat === 'number' ? options.fee_msat : 0;
  return {
    name: canDecode ? 'typed-plugin' : 'typed-plugin-without-wallet',
    onRequest(ctx) {
      if (ctx.model === undefined) return;
      ctx.adjustPrice({ multiplierPpm: 1_000_000, addMsat: fee });
      ctx.preferProviders(['a'], { only: false });
    },
    async onFinally(ctx) {
      services.log.info({ outcome: ctx.outcome }, 'done');
    },
  };
};
export default factory;
`,
    );
    for (const f of ['model-surcharge.js', 'pin-provider.js', 'round-robin.js']) {
      cpSync(join(root, 'examples', 'plugins', f), join(consumer, f));
    }
    const good = await typecheck(['plugin.ts', 'model-surcharge.js', 'pin-provider.js', 'round-robin.js']);
    expect(good.out).toBe('');
    expect(good.ok).toBe(true);

    writeFileSync(
      join(consumer, 'misuse.ts'),
      `import type { PluginFactory } from 'prepaid-model-gateway/plugin';
const factory: PluginFactory = () => ({ name: 'x', onRequest: () => 'later' });
export default factory;
`,
    );
    const bad = await typecheck(['misuse.ts']);
    expect(bad.ok).toBe(false);
    expect(bad.out).toMatch(/misuse\.ts\(2,\d+\): error TS2322/);

    // A service the plugin did not declare is not in its parameter's type; a name that is no service is refused.
    writeFileSync(
      join(consumer, 'undeclared.ts'),
      `import type { PluginFactory, PluginNeeds } from 'prepaid-model-gateway/plugin';
export const needs = { required: ['providers'] } as const satisfies PluginNeeds;
const factory: PluginFactory<typeof needs> = (_options, services) => ({ name: String(services.ledger) });
export const typo = { required: ['ledgr'] } as const satisfies PluginNeeds;
export default factory;
`,
    );
    const undeclared = await typecheck(['undeclared.ts']);
    expect(undeclared.ok).toBe(false);
    expect(undeclared.out).toMatch(/undeclared\.ts\(3,\d+\): error TS2339: Property 'ledger' does not exist/);
    expect(undeclared.out).toMatch(/undeclared\.ts\(4,\d+\): error TS\d+: Type '"ledgr"' is not assignable/);
  }, 120_000);
});
