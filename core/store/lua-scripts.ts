import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis } from 'ioredis';

/**
 * The one way Lua reaches Redis. Loads a folder of Lua scripts (one file per state change, BullMQ style:
 * `<name>-<numberOfKeys>.lua`, or `<name>-n.lua` when the caller decides how many keys, each starting with a
 * KEYS/ARGV/Returns header) and runs them by their SHA-1 (`defineScriptSet`), each under a version-stamped name
 * (`<prefix>_<name>_v<version>_<sha>`, for logs and errors): two gateway versions sharing one Redis never run each
 * other's scripts, since a script is named by its text. `--- @include "x"` lines are replaced by `includes/x.lua`
 * (recursively, once per script). Calls send EVALSHA and fall back to EVAL on NOSCRIPT, per node, so a script cache
 * emptied by a failover (a promoted replica, a restarted node) or SCRIPT FLUSH costs one extra round trip, never an
 * error; this works on Redis Cluster. Every script's keys must share one hash slot (their callers hash-tag them).
 * Used by the ledger (core/ledger/redis/), the webhook store (core/events/redis/), the wallet's proof and
 * Lightning deposit stores (core/wallet/store/redis/) and the window limiter (core/limits/redis/).
 */

export interface LoadedScript {
  command: string;
  /** The SHA-1 of `lua`, hex: what EVALSHA names it by. */
  sha: string;
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
  const sha = createHash('sha1').update(lua).digest('hex');
  return {
    command: `${prefix}_${name.replace(/-/g, '_')}_v${version}_${sha.slice(0, 8)}`,
    sha,
    numberOfKeys,
    lua,
  };
}

/**
 * A runner for `scripts` on `client` that checks the key count. Each call is an `EVALSHA` of the script's SHA-1,
 * and on `NOSCRIPT` (that node's script cache does not hold it: a first use, a failover, a `SCRIPT FLUSH`) the same
 * call is sent as `EVAL` with the script's text, which loads it: Redis ran nothing on `NOSCRIPT`, so nothing is
 * applied twice. Both are plain commands, so ioredis auto-pipelines them and, on Cluster, routes them by their
 * first key (`@ioredis/commands` knows EVALSHA's key positions).
 *
 * Not ioredis's `defineCommand`: every auto-pipeline ioredis builds copies each defined script onto the pipeline
 * object (the command, its Buffer twin and its SHA), which with the gateway's ≈ 60 scripts made each pipeline a
 * 13.6 KB dictionary built in ≈ 31 µs, GC included (docs/benchmarks.md, "ioredis's pipelines and defined
 * scripts"): paid on every lease step, every poll and every batch of cold keys' calls.
 *
 * The scripts are loaded (`SCRIPT LOAD`, on every master of a Cluster) when the client is ready and again at each
 * reconnection, so a process's first calls find them and need no second round trip.
 */
export function defineScriptSet<N extends string>(
  client: Redis | Cluster,
  scripts: Map<N, LoadedScript>,
): ScriptRunner<N> {
  preload(
    client,
    [...scripts.values()].map((s) => s.lua),
  );
  return (name, keys, args) => {
    const s = scripts.get(name);
    if (!s) throw new Error(`unknown Lua script ${name}`);
    if (s.numberOfKeys !== null && keys.length !== s.numberOfKeys)
      throw new Error(`${name} takes ${s.numberOfKeys} keys, got ${keys.length}`);
    return client.evalsha(s.sha, keys.length, ...keys, ...args).catch((err: unknown) => {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return client.eval(s.lua, keys.length, ...keys, ...args);
    });
  };
}

/** The scripts each client loads when it is ready (one `ready` listener per client, whatever the script sets). */
const preloads = new WeakMap<Redis | Cluster, Set<string>>();

function preload(client: Redis | Cluster, lua: string[]): void {
  const known = preloads.get(client) ?? new Set<string>();
  if (!preloads.has(client)) {
    preloads.set(client, known);
    client.on('ready', () => void loadScripts(client, [...known]));
  }
  const fresh = lua.filter((l) => !known.has(l));
  for (const l of fresh) known.add(l);
  if (fresh.length > 0 && client.status === 'ready') void loadScripts(client, fresh);
}

/** SCRIPT LOAD on the node, or every master of a Cluster; a failure is left to the NOSCRIPT fallback. */
async function loadScripts(client: Redis | Cluster, lua: string[]): Promise<void> {
  const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
  await Promise.all(nodes.flatMap((n) => lua.map((l) => n.script('LOAD', l).catch(() => undefined))));
}
