import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The admin console's static files, served by the gateway itself (GET /admin/assets/{name}): its own script
 * and style sheet (core/routes/admin-assets/) and uPlot from the installed npm package — the page loads
 * nothing from elsewhere, so the CSP can stay `'self'` plus a nonce. A fixed list: no path from the request
 * ever reaches the file system.
 */

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

const FILES: Record<string, { path: () => string; type: string }> = {
  'console.js': {
    path: () => join(here, 'admin-assets', 'console.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'console.css': { path: () => join(here, 'admin-assets', 'console.css'), type: 'text/css; charset=utf-8' },
  'uPlot.iife.min.js': {
    path: () => require.resolve('uplot/dist/uPlot.iife.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'uPlot.min.css': {
    path: () => require.resolve('uplot/dist/uPlot.min.css'),
    type: 'text/css; charset=utf-8',
  },
};

const cache = new Map<string, Buffer>();

/** The named asset, or undefined when there is no such asset. Read once, then kept in memory. */
export async function readAsset(name: string): Promise<{ type: string; body: Buffer } | undefined> {
  const f = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
  if (f === undefined) return undefined;
  let body = cache.get(name);
  if (body === undefined) {
    body = await readFile(f.path());
    cache.set(name, body);
  }
  return { type: f.type, body };
}
