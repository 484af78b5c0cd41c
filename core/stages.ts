import { AUTH, CHARGE, type RequestContext } from './context.js';
import type { Logger } from './log.js';
import type { Plugin } from './plugin.js';
import { SHUTDOWN_STEP_MS, within } from './shutdown.js';
import { requestEndChannel, requestStartChannel, type StageEvent, stageChannel } from './tracing.js';

export type Hook = StageEvent['hook'];

export const isPromise = (v: unknown): v is Promise<unknown> =>
  v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';

/**
 * The stages as a list: what PIPELINE must satisfy at start, and closing them at shutdown.
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

/** Calls one hook; when traced, publishes its duration (an untraced call makes no closure). */
export function callHook(ctx: RequestContext, p: Plugin, hook: Hook): unknown {
  if (!stageChannel.hasSubscribers) return invoke(ctx, p, hook);
  const t0 = performance.now();
  const publish = () =>
    stageChannel.publish({
      requestId: ctx.requestId,
      plugin: p.name,
      hook,
      durationMs: performance.now() - t0,
    });
  const r = invoke(ctx, p, hook);
  if (isPromise(r)) return r.finally(publish);
  publish();
  return r;
}

function invoke(ctx: RequestContext, p: Plugin, hook: Hook): unknown {
  switch (hook) {
    case 'onResponseHead':
      return p.onResponseHead!(ctx, ctx.response);
    case 'onError':
      return p.onError!(ctx, ctx.error!);
    default:
      return p[hook]!(ctx);
  }
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

/** `gateway:request:start` (core/tracing.ts); the runner calls it only when someone subscribes. */
export function traceRequestStart(ctx: RequestContext): void {
  requestStartChannel.publish({ requestId: ctx.requestId, method: ctx.method, path: ctx.path, ctx });
}

/** `gateway:request:end` after the final hooks (`chunkMs`: time in the chunk hooks when traced). */
export function traceRequestEnd(ctx: RequestContext, chunkMs: number): void {
  requestEndChannel.publish({
    requestId: ctx.requestId,
    method: ctx.method,
    path: ctx.path,
    status: ctx.response.status,
    outcome: ctx.outcome,
    durationMs: performance.now() - ctx.timings.start,
    timings: ctx.timings,
    chunkMs,
    charge: ctx.local(CHARGE),
    keyId: ctx.local(AUTH)?.keyId,
    ctx,
  });
}

/** What a stage's `onResponseChunk` returns: the chunk to pass on, null to drop it, undefined to keep it. */
export type ChunkHook = (ctx: RequestContext, chunk: Uint8Array) => Uint8Array | null | undefined;

/** One response chunk through the chunk hooks in order: what to write, or null when a hook dropped it. */
export function passChunk(ctx: RequestContext, hooks: ChunkHook[], chunk: Uint8Array): Uint8Array | null {
  let c = chunk;
  for (let i = 0; i < hooks.length; i++) {
    const r = hooks[i]!(ctx, c);
    if (r === null) return null;
    if (r !== undefined) c = r;
  }
  return c;
}

/** An error or final hook: what it throws is logged, never answered (the answer is already decided). */
export async function callSafely(
  ctx: RequestContext,
  p: Plugin,
  hook: 'onError' | 'onFinally',
  log: Logger | undefined,
): Promise<void> {
  try {
    const r = callHook(ctx, p, hook);
    if (isPromise(r)) await r;
  } catch (err) {
    log?.error({ err, plugin: p.name, requestId: ctx.requestId }, `${hook} hook threw`);
  }
}
