import { ConfigError } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Plugin, PluginFactory, Services } from '../core/plugin.js';
import { auth } from './auth.js';
import { changeToken } from './change-token.js';
import { meter } from './meter.js';
import { rateLimit } from './rate-limit.js';
import { relay } from './relay.js';
import { reserve } from './reserve.js';
import { settle } from './settle.js';

/**
 * The plugin registry: pipeline stage name → factory. The composition root builds the configured pipeline
 * (`PIPELINE`, default auth, rate-limit, reserve, relay, meter, settle, change-token) from it.
 */
export const PLUGINS: Record<string, PluginFactory> = {
  auth,
  'rate-limit': rateLimit,
  reserve,
  relay,
  meter,
  settle,
  'change-token': changeToken,
};

/** Without these (by name) a pipeline that relays does not charge its calls. */
export const CHARGING_STAGES = ['auth', 'reserve', 'settle'] as const;

/** One pipeline entry: a registered name, a name with options, or a ready plugin (tests, embedders). */
export type PipelineEntry = string | { plugin: string; options?: Record<string, unknown> } | Plugin;

function isPlugin(e: PipelineEntry): e is Plugin {
  return typeof e === 'object' && !('plugin' in e);
}

export function buildPlugins(entries: readonly PipelineEntry[], services: Services, log?: Logger): Plugin[] {
  const plugins = entries.map((entry): Plugin => {
    if (isPlugin(entry)) return entry;
    const name = typeof entry === 'string' ? entry : entry.plugin;
    const options = typeof entry === 'string' ? undefined : entry.options;
    const factory = PLUGINS[name];
    if (factory !== undefined) return factory(options, services);
    throw new ConfigError(
      `PIPELINE names an unknown plugin "${name}" (known: ${Object.keys(PLUGINS).join(', ')})`,
    );
  });
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
