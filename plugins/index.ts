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

/** Stage names that resolve to a named pass-through (none left: every default stage is built). */
export const PLACEHOLDER_STAGES = new Set<string>();

/** One pipeline entry: a registered name, a name with options, or a ready plugin (tests, embedders). */
export type PipelineEntry = string | { plugin: string; options?: Record<string, unknown> } | Plugin;

function isPlugin(e: PipelineEntry): e is Plugin {
  return typeof e === 'object' && !('plugin' in e);
}

export function buildPlugins(entries: readonly PipelineEntry[], services: Services, log?: Logger): Plugin[] {
  const placeholders: string[] = [];
  const plugins = entries.map((entry): Plugin => {
    if (isPlugin(entry)) return entry;
    const name = typeof entry === 'string' ? entry : entry.plugin;
    const options = typeof entry === 'string' ? undefined : entry.options;
    const factory = PLUGINS[name];
    if (factory !== undefined) return factory(options, services);
    if (PLACEHOLDER_STAGES.has(name)) {
      placeholders.push(name);
      return { name };
    }
    throw new ConfigError(
      `PIPELINE names an unknown plugin "${name}" (known: ${[...Object.keys(PLUGINS), ...PLACEHOLDER_STAGES].join(', ')})`,
    );
  });
  if (placeholders.length > 0) {
    log?.warn({ stages: placeholders }, 'pipeline stages not built yet run as pass-through');
  }
  return plugins;
}
