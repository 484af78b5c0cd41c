import { ConfigError } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Plugin, PluginFactory, Services } from '../core/plugin.js';
import { auth } from './auth.js';
import { relay } from './relay.js';

/**
 * The plugin registry: pipeline stage name → factory. The composition root builds the configured pipeline
 * (`PIPELINE`, default auth, rate-limit, reserve, relay, meter, settle, change-token) from it.
 */
export const PLUGINS: Record<string, PluginFactory> = {
  auth,
  relay,
};

/**
 * Paid-call stages whose services are not wired yet resolve to a named pass-through. That is harmless only
 * because the default `auth` refuses every call; replacing `auth` with a permissive stage while these are
 * placeholders would let calls through unpaid, so a warning names them at start.
 */
export const PLACEHOLDER_STAGES = new Set(['rate-limit', 'reserve', 'meter', 'settle', 'change-token']);

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
