import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Runs `fn` with a fresh temp dir whose name starts with `prefix`, and removes the dir once `fn` is done (when
 * `fn` returns a promise: once it settles); answers what `fn` answers.
 */
export function withTempDir<T>(prefix: string, fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let out: T;
  try {
    out = fn(dir);
  } catch (err) {
    remove();
    throw err;
  }
  if (out instanceof Promise) return out.finally(remove) as T;
  remove();
  return out;
}
