import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis } from 'ioredis';

/**
 * The one way Lua reaches Redis. Loads a folder of Lua scripts (one file per state change, BullMQ style:
 * `<name>-<numberOfKeys>.lua`, or `<name>-n.lua` when the caller decides how many keys, each starting with a
 * KEYS/ARGV/Returns header) into an ioredis client with `defineCommand`, under
 * version-stamped names (`<prefix>_<name>_v<version>_<sha>`) so two gateway versions sharing one Redis never
 * run each other's scripts. `--- @include "x"` lines are replaced by `includes/x.lua` (recursively, once per
 * script). ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT, per node, so a script cache emptied by a
 * failover (a promoted replica, a restarted node) or SCRIPT FLUSH costs one extra round trip, never an error;
 * this works on Redis Cluster. Every script's keys must share one hash slot (their callers hash-tag them).
 * Used by the ledger (core/ledger/redis/), the webhook store (core/events/redis/), the wallet's proof and
 * Lightning deposit stores (core/wallet/store/redis/) and the window limiter (core/limits/redis/).
 */

export interface LoadedScript {
  command: string;
  /** null: the caller passes any number of keys (`<name>-n.lua`). */
  numberOfKeys: number | null;
  lua: string;
}

export type ScriptRunner<N extends string> = (
  name: N,
  keys: string[],
  args: Array<string | number>,
) => Promise<unknown>;

/**
 * The folder holding `probe` (a script file name) next to the calling module `moduleUrl`: the module's own
 * folder in the source tree, or the source folder a compiled copy in dist/ was built from.
 */
export function scriptDirOf(moduleUrl: string, probe: string): string {
  const here = dirname(fileURLToPath(moduleUrl));
  if (existsSync(join(here, probe))) return here;
  const src = here.replace(`${sep}dist${sep}`, sep);
  if (existsSync(join(src, probe))) return src;
  throw new Error(`Lua scripts (${probe}) not found next to ${here}`);
}

/** Inlines includes recursively, each file once per script (later repeats become empty lines). */
function expand(dir: string, source: string, seen: Set<string> = new Set()): string {
  return source.replace(/^--- @include "([a-z-]+)"$/gm, (_m, name: string) => {
    if (seen.has(name)) return '';
    seen.add(name);
    return expand(dir, readFileSync(join(dir, 'includes', `${name}.lua`), 'utf8'), seen);
  });
}

/** Reads and expands every `files` entry (`<name>-<keys>`) of `dir`; keyed by `<name>`. */
export function loadScriptFiles<N extends string>(opts: {
  dir: string;
  files: readonly string[];
  prefix: string;
  version: number;
}): Map<N, LoadedScript> {
  const out = new Map<N, LoadedScript>();
  for (const file of opts.files) {
    const m = /^(.*)-(\d+|n)$/.exec(file);
    if (!m) throw new Error(`Lua script file name without its key count: ${file}`);
    const name = m[1] as N;
    const lua = expand(opts.dir, readFileSync(join(opts.dir, `${file}.lua`), 'utf8'));
    out.set(name, scriptOf(opts.prefix, name, opts.version, m[2] === 'n' ? null : Number(m[2]), lua));
  }
  return out;
}

/** A script under its version-stamped command name (`<prefix>_<name>_v<version>_<sha>`). */
export function scriptOf(
  prefix: string,
  name: string,
  version: number,
  numberOfKeys: number | null,
  lua: string,
): LoadedScript {
  const sha = createHash('sha1').update(lua).digest('hex').slice(0, 8);
  return { command: `${prefix}_${name.replace(/-/g, '_')}_v${version}_${sha}`, numberOfKeys, lua };
}

/** Defines every script on the client and returns a runner that checks the key count. */
export function defineScriptSet<N extends string>(
  client: Redis | Cluster,
  scripts: Map<N, LoadedScript>,
): ScriptRunner<N> {
  for (const s of scripts.values())
    client.defineCommand(s.command, {
      ...(s.numberOfKeys !== null ? { numberOfKeys: s.numberOfKeys } : {}),
      lua: s.lua,
    });
  const callable = client as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>;
  return (name, keys, args) => {
    const s = scripts.get(name);
    if (!s) throw new Error(`unknown Lua script ${name}`);
    if (s.numberOfKeys === null) return callable[s.command]!(keys.length, ...keys, ...args);
    if (keys.length !== s.numberOfKeys)
      throw new Error(`${name} takes ${s.numberOfKeys} keys, got ${keys.length}`);
    return callable[s.command]!(...keys, ...args);
  };
}
