// The build (`npm run build`): tsc with tsconfig.build.json into dist/, then the non-TypeScript files the compiled
// code loads at run time (Lua scripts of the ledger, the webhook store and the wallet's proof store, the console's
// assets, the precompiled request validators) copied next to their compiled modules, so `node dist/core/main.js` works on its own.
//
// `--if-changed` (what `npm start` runs) builds only when the build's inputs changed since the last build, so a
// restart answers in about a second instead of paying the whole tsc build every time. The inputs are read by
// content (a checkout or a copy changes mtimes without changing a byte) and hashed with their paths; the hash is
// taken BEFORE compiling and written to dist/.build-inputs only after a successful build, so an edit made during
// a build, or a failed build, leads to a rebuild on the next start.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stampPath = join(dist, '.build-inputs');
const assetFolders = [
  'core/ledger/redis',
  'core/events/redis',
  'core/audit/redis',
  'core/wallet/store/redis',
  'core/batches/redis',
  'core/limits/redis',
  'core/routes/admin-assets',
  // validators.cjs: the request validators, precompiled by `npm run gen` (core/openapi/validators.ts)
  'core/openapi/generated',
];
// What the build reads: tsconfig.build.json's include (the asset folders are inside it), the compiler options,
// and the lock file (another TypeScript version may emit differently).
const inputFolders = ['core', 'plugins', 'scripts'];
const inputFiles = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (entry.isFile()) out.push(path);
  }
}

function inputsHash() {
  const paths = [];
  for (const folder of inputFolders) walk(join(root, folder), paths);
  for (const file of inputFiles) if (existsSync(join(root, file))) paths.push(join(root, file));
  paths.sort();
  const hash = createHash('sha256');
  for (const path of paths) {
    hash.update(path.slice(root.length));
    hash.update('\0');
    hash.update(readFileSync(path));
    hash.update('\0');
  }
  return hash.digest('hex');
}

const inputs = inputsHash();
if (process.argv.includes('--if-changed')) {
  const upToDate =
    existsSync(stampPath) &&
    existsSync(join(dist, 'core', 'main.js')) &&
    readFileSync(stampPath, 'utf8').trim() === inputs;
  if (upToDate) process.exit(0);
}

rmSync(stampPath, { force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
for (const folder of assetFolders) {
  const from = join(root, folder);
  if (!existsSync(from)) continue;
  cpSync(from, join(dist, folder), { recursive: true, filter: (src) => !/\.ts$/.test(src) });
}
writeFileSync(stampPath, `${inputs}\n`);
