import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Plugin, PluginFactory, PluginNeeds } from '../core/plugin.js';
import type { ServiceName, Services } from '../core/service-types.js';
import { auth, authNeeds } from './auth.js';
import { changeToken, changeTokenNeeds } from './change-token.js';
import { meter } from './meter.js';
import { owner, ownerNeeds } from './owner.js';
import { rateLimit } from './rate-limit.js';
import { relay, relayNeeds } from './relay.js';
import { reserve, reserveNeeds } from './reserve.js';
import { settle, settleNeeds } from './settle.js';

/** A factory as the registry calls it: with the services granted from its checked declaration. */
type GrantedFactory = (
  options: Record<string, unknown> | undefined,
  services: Readonly<Record<string, unknown>>,
) => Plugin;

/** A built-in stage: the services it declared and its factory. */
interface Stage {
  readonly needs: PluginNeeds;
  readonly factory: GrantedFactory;
}

/** Pairs a stage's declaration with its factory, whose parameter type must be what the declaration grants. */
function stage<const D extends PluginNeeds>(needs: D, factory: PluginFactory<NoInfer<D>>): Stage {
  return { needs, factory: factory as unknown as GrantedFactory };
}

/**
 * The plugin registry: pipeline stage name → its declared needs and factory. The composition root builds the
 * configured pipeline (`PIPELINE`, default auth, rate-limit, reserve, relay, owner, meter, settle, change-token)
 * from it, handing each factory the services it declared alone (`grant`).
 */
export const PLUGINS: Record<string, Stage> = {
  auth: stage(authNeeds, auth),
  'rate-limit': stage({}, rateLimit),
  reserve: stage(reserveNeeds, reserve),
  relay: stage(relayNeeds, relay),
  owner: stage(ownerNeeds, owner),
  meter: stage({}, meter),
  settle: stage(settleNeeds, settle),
  'change-token': stage(changeTokenNeeds, changeToken),
};

/**
 * Every service's name, at run time: what a plugin may declare. `satisfies` keeps it equal to `ServiceName`
 * (a service added to core/service-types.ts without a row here, or a row naming none, does not type-check).
 */
const SERVICE_NAMES: readonly ServiceName[] = Object.keys({
  config: true,
  log: true,
  upstream: true,
  providers: true,
  catalog: true,
  ledger: true,
  wallet: true,
  pricing: true,
  lightning: true,
  doors: true,
  btc: true,
  store: true,
  signals: true,
  audit: true,
  limiter: true,
  events: true,
  objects: true,
  batchJobs: true,
  batchWatcher: true,
  lightningAddresses: true,
  refundSweep: true,
  lifecycle: true,
  network: true,
  nodes: true,
} satisfies Record<ServiceName, true>) as ServiceName[];
const KNOWN_SERVICES: ReadonlySet<string> = new Set(SERVICE_NAMES);

/** Without these (by name) a pipeline that relays does not charge its calls. */
export const CHARGING_STAGES = ['auth', 'reserve', 'settle'] as const;

/** A plugin factory loaded from a module (`resolvePipeline`), with its declared needs and its options. */
export interface LoadedEntry {
  factory: GrantedFactory;
  /** The module's `needs` export as found (a `PluginNeeds`): checked when the pipeline is built. */
  needs?: unknown;
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
 * module's default export (or `plugin` / `factory` export) is a PluginFactory, with the services it uses in its
 * `needs` export (`PluginNeeds`; none without one); and applies PIPELINE_CONFIG — a
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
      | GrantedFactory
      | undefined;
    if (!factory) {
      throw new ConfigError(
        `PIPELINE: plugin "${entry}" exports no plugin factory (a default export function)`,
      );
    }
    out.push({ factory, needs: mod.needs, options, source: entry });
  }
  return out;
}

/**
 * The services `source` declared in `needs`, alone: a frozen object with its required services (each checked
 * present) and those of its optional ones this gateway built. Reading a service it did not declare throws,
 * naming it (a module plugin in JavaScript has no type check to tell it). A declaration that is not a
 * `PluginNeeds`, names an unknown service, or needs one this gateway has not built stops the start.
 */
function grant(source: string, needs: unknown, services: Services): Readonly<Record<string, unknown>> {
  const { required, optional } = checkNeeds(source, needs);
  const granted: Record<string, unknown> = {};
  for (const name of required) {
    if (services[name] === undefined) {
      const built = SERVICE_NAMES.filter((n) => services[n] !== undefined);
      throw new ConfigError(
        `PIPELINE: plugin "${source}" needs the service "${name}", which this gateway has not built (built: ${built.join(', ')})`,
      );
    }
    granted[name] = services[name];
  }
  for (const name of optional) if (services[name] !== undefined) granted[name] = services[name];
  const declared = new Set<string>([...required, ...optional]);
  for (const name of SERVICE_NAMES) {
    if (declared.has(name)) continue;
    Object.defineProperty(granted, name, {
      enumerable: false,
      get() {
        throw new Error(
          `plugin "${source}" reads the service "${name}", which it did not declare in its needs`,
        );
      },
    });
  }
  return Object.freeze(granted);
}

/** A declaration as a module exported it, checked: `{ required?, optional? }`, lists of known service names. */
function checkNeeds(
  source: string,
  needs: unknown,
): { required: readonly ServiceName[]; optional: readonly ServiceName[] } {
  if (needs === undefined) return { required: [], optional: [] };
  const shape = '{"required": ["<service>", …], "optional": ["<service>", …]}';
  if (typeof needs !== 'object' || needs === null || Array.isArray(needs)) {
    throw new ConfigError(`PIPELINE: plugin "${source}" exports needs that are not ${shape}`);
  }
  const lists: Record<string, readonly ServiceName[]> = { required: [], optional: [] };
  for (const [field, list] of Object.entries(needs)) {
    if (!(field in lists)) {
      throw new ConfigError(
        `PIPELINE: plugin "${source}" declares needs with an unknown field "${field}" (expected ${shape})`,
      );
    }
    if (!Array.isArray(list)) {
      throw new ConfigError(`PIPELINE: plugin "${source}": needs.${field} must be a list of service names`);
    }
    for (const name of list) {
      if (typeof name !== 'string' || !KNOWN_SERVICES.has(name)) {
        throw new ConfigError(
          `PIPELINE: plugin "${source}" needs an unknown service ${JSON.stringify(name)} (services: ${SERVICE_NAMES.join(', ')})`,
        );
      }
    }
    lists[field] = list as ServiceName[];
  }
  return { required: lists.required ?? [], optional: lists.optional ?? [] };
}

export function buildPlugins(entries: readonly PipelineEntry[], services: Services, log?: Logger): Plugin[] {
  const plugins = entries.map((entry): Plugin => {
    if (isPlugin(entry)) return entry;
    if (typeof entry === 'object' && 'factory' in entry) {
      const granted = grant(entry.source, entry.needs, services);
      let plugin: Plugin;
      try {
        plugin = entry.factory(entry.options, granted);
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
    const builtIn = PLUGINS[name];
    if (builtIn !== undefined) return builtIn.factory(options, grant(name, builtIn.needs, services));
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
