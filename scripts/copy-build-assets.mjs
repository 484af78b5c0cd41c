// Copies the non-TypeScript files the compiled code loads at run time (Lua scripts of the ledger, the audit log, the webhook store,
// the wallet's proof and deposit stores, batches and the window limiter) next to their compiled modules in dist/, so `node dist/core/main.js` works on its own.
import { cpSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const folders = [
  'core/ledger/redis',
  'core/events/redis',
  'core/audit/redis',
  'core/wallet/store/redis',
  'core/batches/redis',
  'core/limits/redis',
  'core/routes/admin-assets',
];
for (const folder of folders) {
  const from = join(root, folder);
  if (!existsSync(from)) continue;
  cpSync(from, join(root, 'dist', folder), {
    recursive: true,
    filter: (src) => !/\.ts$/.test(src),
  });
}
