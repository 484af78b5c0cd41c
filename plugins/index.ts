import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Plugin, PluginFactory, Services } from '../core/plugin.js';
import { auth } from './auth.js';
import { changeToken } from './change-token.js';
import { meter } from './meter.js';
import { owner } from './owner.js';
import { rateLimit } from './rate-limit.js';
import { relay } from './relay.js';
import { reserve } from './reserve.js';
import { settle } from './settle.js';

/**
 * The plugin registry: pipeline stage name → factory. The composition root builds the configured pipeline
 * (`PIPELINE`, default auth, rate-limit, reserve, relay, owner, meter, settle, change-token) from it.
 */
export const PLUGINS: Record<string, PluginFactory> = {
  auth,
  'rate-limit': rateLimit,
  reserve,
  relay,
  owner,
  meter,
  settle,
  'change-token': changeToken,
};

/** Without these (by name) a pipeline that relays does not charge its calls. */
export const CHARGING_STAGES = ['auth', 'reserve', 'settle'] as const;

/** A plugin factory loaded from a module (`resolvePipeline`), with its options. */
export interface LoadedEntry {
  factory: PluginFactory;
  options?: Record<string, unknown> | undefined;
  /** The PIPELINE entry it came from (a path or package name), for messages. */
  source: string;
}

/**
 * One pipeline entry: a registered name, a name with options, a loaded module's factory, or a ready plugin
 * (tests, embedders).
 */
export type PipelineEntry =
  | string
  | { plugin: string; options?: Record<string, unknown> }
  | LoadedEntry
  | Plugin;

function isPlugin(e: PipelineEntry): e is Plugin {
  return typeof e === 'object' && !('plugin' in e) && !('factory' in e);
}

/** A module path (`./x.js`, `../x.mjs`, `/abs/x.js`) or a package name rather than a registered stage name. */
function isModuleEntry(name: string): boolean {
  return (
    /^(\.{1,2}\/|\/)/.test(name) || (!(name in PLUGINS) && /^(@[\w.-]+\/)?[\w.-]+(\/[\w./-]+)?$/.test(name))
  );
}

/**
 * A package entry as the operator installed it: resolved from the working directory's node_modules first (a
 * plugin installed next to the configuration, not inside the gateway), else left to the gateway's own
 * resolution (a plugin installed in the gateway's node_modules, or a package exporting only `import`).
 */
function packageSpecifier(entry: string, cwd: string): string {
  try {
    return pathToFileURL(createRequire(join(cwd, 'package.json')).resolve(entry)).href;
  } catch {
    return entry;
  }
}

/**
 * Loads PIPELINE's module entries (plugin kit): a path (relative to the working directory) or a package name (from
 * the working directory's node_modules, else the gateway's) whose
 * module's default export (or `plugin` / `factory` export) is a PluginFactory; and applies PIPELINE_CONFIG — a
 * JSON file mapping PIPELINE entries (as written) to their options. A module that cannot be loaded, exports no
 * factory, or a config naming no entry stops the start with a message naming it.
 */
export async function resolvePipeline(
  entries: readonly PipelineEntry[],
  opts: { configPath?: string | undefined; cwd?: string } = {},
): Promise<PipelineEntry[]> {
  let config: Record<string, Record<string, unknown>> = {};
  if (opts.configPath !== undefined) {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(opts.configPath, 'utf8'));
    } catch (err) {
      throw new ConfigError(
        `PIPELINE_CONFIG (${opts.configPath}): cannot read it as JSON (${(err as Error).message})`,
      );
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
      throw new ConfigError(
        `PIPELINE_CONFIG (${opts.configPath}): expected {"<PIPELINE entry>": {options}, …}`,
      );
    }
    for (const [k, v] of Object.entries(doc)) {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        throw new ConfigError(`PIPELINE_CONFIG: the options of "${k}" must be an object`);
      }
      if (!entries.includes(k))
        throw new ConfigError(`PIPELINE_CONFIG names "${k}", which is not in PIPELINE`);
    }
    config = doc as Record<string, Record<string, unknown>>;
  }
  const cwd = opts.cwd ?? process.cwd();
  const out: PipelineEntry[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      out.push(entry);
      continue;
    }
    const options = config[entry];
    if (!isModuleEntry(entry)) {
      out.push(options === undefined ? entry : { plugin: entry, options });
      continue;
    }
    const specifier = /^(\.{1,2}\/|\/)/.test(entry)
      ? pathToFileURL(resolve(cwd, entry)).href
      : packageSpecifier(entry, cwd);
    let mod: Record<string, unknown>;
    try {
      mod = (await import(specifier)) as Record<string, unknown>;
    } catch (err) {
      const code = (err as { code?: string }).code;
      const why = code === 'ERR_MODULE_NOT_FOUND' ? 'not found' : (err as Error).message;
      throw new ConfigError(
        `PIPELINE: plugin "${entry}" could not be loaded (${why})${entry in PLUGINS ? '' : `; built-in plugins: ${Object.keys(PLUGINS).join(', ')}`}`,
      );
    }
    const factory = [mod.default, mod.plugin, mod.factory].find((f) => typeof f === 'function') as
      | PluginFactory
      | undefined;
    if (!factory) {
      throw new ConfigError(
        `PIPELINE: plugin "${entry}" exports no plugin factory (a default export function)`,
      );
    }
    out.push({ factory, options, source: entry });
  }
  return out;
}

export function buildPlugins(entries: readonly PipelineEntry[], services: Services, log?: Logger): Plugin[] {
  const plugins = entries.map((entry): Plugin => {
    if (isPlugin(entry)) return entry;
    if (typeof entry === 'object' && 'factory' in entry) {
      let plugin: Plugin;
      try {
        plugin = entry.factory(entry.options, services);
      } catch (err) {
        throw new ConfigError(
          `PIPELINE: plugin "${entry.source}" refused to start: ${(err as Error).message}`,
        );
      }
      if (
        typeof plugin !== 'object' ||
        plugin === null ||
        typeof plugin.name !== 'string' ||
        plugin.name === ''
      ) {
        throw new ConfigError(
          `PIPELINE: plugin "${entry.source}" returned no plugin (an object with a name)`,
        );
      }
      return plugin;
    }
    const name = typeof entry === 'string' ? entry : entry.plugin;
    const options = typeof entry === 'string' ? undefined : entry.options;
    const factory = PLUGINS[name];
    if (factory !== undefined) return factory(options, services);
    throw new ConfigError(
      `PIPELINE names an unknown plugin "${name}" (known: ${Object.keys(PLUGINS).join(', ')})`,
    );
  });
  // Plugins may have registered routing policies (services.providers.registerPolicy): now every name
  // ROUTING_POLICY and the providers file's `routing` use must be known, or the start stops naming it.
  services.providers?.checkPolicies();
  const missing = unchargedStages(plugins);
  if (missing.length > 0) {
    // An operator may want this (a free internal relay, a benchmark), so it is allowed, but never silently.
    log?.warn({ missing }, 'PIPELINE relays calls without charging them: model calls are FREE on this node');
  }
  return plugins;
}

/** The charging stages a relaying pipeline lacks (empty when it charges, or does not relay). */
export function unchargedStages(plugins: readonly Plugin[]): string[] {
  const names = new Set(plugins.map((p) => p.name));
  if (!names.has('relay')) return [];
  return CHARGING_STAGES.filter((n) => !names.has(n));
}
