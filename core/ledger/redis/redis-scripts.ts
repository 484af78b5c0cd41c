import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis } from 'ioredis';

/**
 * Loads the ledger's Lua scripts (one file per state change, BullMQ style: `<name>-<numberOfKeys>.lua`)
 * into an ioredis client with `defineCommand`, under version-stamped names so two gateway versions sharing
 * one Redis never run each other's scripts. `--- @include "x"` lines are replaced by `includes/x.lua` (recursively, once per script).
 * ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT, per node, so this works on Redis Cluster.
 */
/** Also the Redis layout version (redis-keys.ts): bumped when the stored shape changes. */
export const LEDGER_SCRIPT_VERSION = 2;

export const SCRIPT_FILES = [
  'admit-5',
  'count-request-2',
  'settle-7',
  'release-5',
  'lease-7',
  'claim-token-1',
  'credit-4',
  'hold-withdrawal-5',
  'commit-withdrawal-5',
  'abort-withdrawal-4',
  'create-child-keys-6',
  'update-key-2',
  'delete-key-2',
  'sweep-leases-4',
  'release-orphans-4',
  'read-account-4',
] as const;

export type ScriptFile = (typeof SCRIPT_FILES)[number];
export type ScriptName =
  | 'admit'
  | 'count-request'
  | 'settle'
  | 'release'
  | 'lease'
  | 'claim-token'
  | 'credit'
  | 'hold-withdrawal'
  | 'commit-withdrawal'
  | 'abort-withdrawal'
  | 'create-child-keys'
  | 'update-key'
  | 'delete-key'
  | 'sweep-leases'
  | 'release-orphans'
  | 'read-account';

/** The .lua files sit next to this module in the source tree; a compiled copy in dist/ reads them there. */
function scriptDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  if (existsSync(join(here, 'admit-5.lua'))) return here;
  const src = here.replace(`${sep}dist${sep}`, sep);
  if (existsSync(join(src, 'admit-5.lua'))) return src;
  throw new Error(`Ledger Lua scripts not found next to ${here}`);
}

/** Inlines includes recursively, each file once per script (later repeats become empty lines). */
function expand(dir: string, source: string, seen: Set<string> = new Set()): string {
  return source.replace(/^--- @include "([a-z-]+)"$/gm, (_m, name: string) => {
    if (seen.has(name)) return '';
    seen.add(name);
    return expand(dir, readFileSync(join(dir, 'includes', `${name}.lua`), 'utf8'), seen);
  });
}

export interface LoadedScript {
  command: string;
  numberOfKeys: number;
  lua: string;
}

let cache: Map<ScriptName, LoadedScript> | undefined;

export function loadScripts(): Map<ScriptName, LoadedScript> {
  if (cache) return cache;
  const dir = scriptDir();
  const out = new Map<ScriptName, LoadedScript>();
  for (const file of SCRIPT_FILES) {
    const m = /^(.*)-(\d+)$/.exec(file)!;
    const name = m[1] as ScriptName;
    const lua = expand(dir, readFileSync(join(dir, `${file}.lua`), 'utf8'));
    const sha = createHash('sha1').update(lua).digest('hex').slice(0, 8);
    out.set(name, {
      command: `gwLedger_${name.replace(/-/g, '_')}_v${LEDGER_SCRIPT_VERSION}_${sha}`,
      numberOfKeys: Number(m[2]),
      lua,
    });
  }
  cache = out;
  return out;
}

export type ScriptRunner = (
  name: ScriptName,
  keys: string[],
  args: Array<string | number>,
) => Promise<unknown>;

/** Defines every script on the client and returns a runner that checks the key count. */
export function defineScripts(client: Redis | Cluster): ScriptRunner {
  const scripts = loadScripts();
  for (const s of scripts.values())
    client.defineCommand(s.command, { numberOfKeys: s.numberOfKeys, lua: s.lua });
  const callable = client as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>;
  return (name, keys, args) => {
    const s = scripts.get(name)!;
    if (keys.length !== s.numberOfKeys)
      throw new Error(`${name} takes ${s.numberOfKeys} keys, got ${keys.length}`);
    return callable[s.command]!(...keys, ...args);
  };
}
