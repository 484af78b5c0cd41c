import type { Cluster, Redis } from 'ioredis';
import {
  defineScriptSet,
  type ScriptRunner as LedgerScriptRunner,
  type LoadedScript,
  loadScriptFiles,
  scriptDirOf,
  scriptOf,
} from '../../store/lua-scripts.js';
import { batchingRunner, batchLua } from './script-batch.js';

/**
 * The ledger's Lua scripts (one file per state change, `<name>-<numberOfKeys>.lua`, KEYS/ARGV headers),
 * loaded through the shared loader (core/store/lua-scripts.ts) under version-stamped `gwLedger_…` names.
 */
/** Also the Redis layout version (redis-keys.ts): bumped when the stored shape changes. */
export const LEDGER_SCRIPT_VERSION = 3;

export const SCRIPT_FILES = [
  'admit-5',
  'count-request-2',
  'settle-7',
  'release-4',
  'lease-7',
  'claim-token-1',
  'credit-4',
  'hold-withdrawal-5',
  'commit-withdrawal-5',
  'abort-withdrawal-4',
  'create-child-keys-6',
  'update-key-2',
  'delete-key-2',
  'sweep-expired-4',
  'release-orphans-4',
  'read-account-4',
] as const;

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
  | 'sweep-expired'
  | 'release-orphans'
  | 'read-account';

let cache: Map<ScriptName, LoadedScript> | undefined;

export function loadScripts(): Map<ScriptName, LoadedScript> {
  cache ??= loadScriptFiles<ScriptName>({
    // The .lua files sit next to this module in the source tree; a compiled copy in dist/ reads them there.
    dir: scriptDirOf(import.meta.url, 'admit-5.lua'),
    files: SCRIPT_FILES,
    prefix: 'gwLedger',
    version: LEDGER_SCRIPT_VERSION,
  });
  return cache;
}

export type ScriptRunner = LedgerScriptRunner<ScriptName>;

/** The exact path's per-call steps, batched per turn on a single node or Sentinel (script-batch.ts). */
const BATCHED: ReadonlySet<ScriptName> = new Set<ScriptName>(['admit', 'settle', 'release', 'count-request']);

let batchCache: LoadedScript | undefined;

/** The batch script (a `-n` script: it takes as many keys as its steps have together). */
export function batchScript(): LoadedScript {
  batchCache ??= scriptOf('gwLedger', 'batch', LEDGER_SCRIPT_VERSION, null, batchLua(loadScripts(), BATCHED));
  return batchCache;
}

/**
 * Defines every script on the client and returns a runner that checks the key count; on a single node or
 * Sentinel the exact path's per-call steps of one turn share one script (script-batch.ts).
 */
export function defineScripts(client: Redis | Cluster): ScriptRunner {
  const scripts = loadScripts();
  const run = defineScriptSet(client, scripts);
  const cluster = 'nodes' in client && typeof client.nodes === 'function';
  if (cluster) return run;
  const runBatch = defineScriptSet(client, new Map([['batch', batchScript()]]));
  return batchingRunner(run, (keys, args) => runBatch('batch', keys, args), BATCHED);
}
