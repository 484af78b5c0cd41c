import type { Logger } from './log.js';
import type { Plugin } from './plugin.js';
import { SHUTDOWN_STEP_MS, within } from './shutdown.js';
import type { StageEvent } from './tracing.js';

export type Hook = StageEvent['hook'];

/**
 * The stages as a list, outside any request: what PIPELINE must satisfy at start, each hook's stages, and closing
 * them at shutdown. A request never enters here: running it through the hooks is the runner's (core/pipeline.ts).
 */

/**
 * The checks a PIPELINE must pass at start (each failure names the stages and the fix): every stage once, at
 * most one stage that calls the upstream (`onDispatch`), each stage after the stages it names in `after`, and
 * chunk hooks synchronous (they run for every chunk).
 */
export function checkStages(plugins: readonly Plugin[]): void {
  const names = new Set<string>();
  for (const p of plugins) {
    if (names.has(p.name)) throw new Error(`Plugin "${p.name}" appears twice in the pipeline`);
    names.add(p.name);
  }
  const dispatchers = plugins.filter((p) => p.onDispatch);
  if (dispatchers.length > 1) {
    throw new Error(
      `Only one plugin may call the upstream (onDispatch): ${dispatchers.map((p) => p.name).join(', ')}`,
    );
  }
  const order = new Map(plugins.map((p, i) => [p.name, i]));
  for (const [i, p] of plugins.entries()) {
    for (const before of p.after ?? []) {
      const at = order.get(before);
      if (at === undefined || at > i) {
        throw new Error(
          `PIPELINE: "${p.name}" must come after "${before}" (${at === undefined ? `"${before}" is not in the pipeline` : `"${before}" is listed after it`}): ${plugins.map((q) => q.name).join(', ')}`,
        );
      }
    }
  }
  for (const p of plugins) {
    if (p.onResponseChunk?.constructor.name === 'AsyncFunction') {
      throw new Error(`Plugin "${p.name}": onResponseChunk must be synchronous (it runs for every chunk)`);
    }
  }
}

/**
 * Each plugin's `close` once, in reverse pipeline order, each given what is left of `graceMs` plus
 * SHUTDOWN_STEP_MS to finish (a close that never resolves is left behind). Resolves true when every close
 * finished in time without throwing; never rejects.
 */
export async function closePlugins(
  plugins: readonly Plugin[],
  graceMs: number,
  log: Logger | undefined,
): Promise<boolean> {
  const deadline = Date.now() + graceMs;
  let settled = true;
  for (const p of [...plugins].reverse()) {
    if (!p.close) continue;
    const left = Math.max(0, deadline - Date.now());
    const err = await within(
      Promise.resolve().then(() => p.close!(left)),
      left + SHUTDOWN_STEP_MS,
    );
    if (err !== undefined) {
      settled = false;
      log?.error({ err, plugin: p.name }, 'plugin close failed or did not finish');
    }
  }
  return settled;
}

/** Each hook's stages, in PIPELINE order (only those that have it). */
export function hookTable(plugins: readonly Plugin[]): Record<Hook, Plugin[]> {
  const having = (h: Hook) => plugins.filter((p) => p[h] !== undefined);
  return {
    onRequest: having('onRequest'),
    onDispatch: having('onDispatch'),
    onResponseHead: having('onResponseHead'),
    onResponseEnd: having('onResponseEnd'),
    onError: having('onError'),
    onFinally: having('onFinally'),
  };
}
