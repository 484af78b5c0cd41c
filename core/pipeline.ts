import { AUTH, CHARGE, type RequestContext, runnerAccess } from './context.js';
import { GatewayError, toGatewayError } from './errors.js';
import { planBody, ResponseBodyWriter } from './http/body-writer.js';
import type { Exchange } from './http/exchange.js';
import { pumpBody } from './http/relay-body.js';
import { isEventStream, relayedHeaders } from './http/relay-head.js';
import { acceptsGzip, sendComplete, sendFailure } from './http/respond.js';
import type { Logger } from './log.js';
import type { Plugin } from './plugin.js';
import { checkStages, closePlugins, type Hook, hookTable } from './stages.js';
import { requestEndChannel, requestStartChannel, responseChunkChannel, stageChannel } from './tracing.js';
import type { UpstreamResponse } from './upstream/upstream-response.js';

const REQUEST_PHASES = ['onRequest', 'onDispatch'] as const;

/**
 * The pipeline runner: runs the stages' hooks in PIPELINE order and nothing else. It knows the plugin contract
 * (core/plugin.ts) and the exchange; writing the answer (head, body, back-pressure, the error envelope) is
 * core/http's. A hook may answer synchronously: the runner awaits only what is a promise, so a call whose
 * stages need no I/O makes no promise of its own. The relay is a stage like any other; it hands the upstream
 * response over through `ctx.upstream`.
 */
export class Pipeline {
  private readonly hooks: Record<Hook, Plugin[]>;
  private readonly chunkHooks: ChunkHook[];

  constructor(
    readonly plugins: readonly Plugin[],
    private readonly log?: Logger,
  ) {
    checkStages(plugins);
    this.hooks = hookTable(plugins);
    this.chunkHooks = plugins.filter((p) => p.onResponseChunk).map((p) => p.onResponseChunk!.bind(p));
  }

  /** Shutdown: every stage's `close`, in reverse order, within the grace (core/shutdown.ts). */
  close(graceMs: number): Promise<boolean> {
    return closePlugins(this.plugins, graceMs, this.log);
  }

  /** Runs one request through the stages and answers it on `ex`. Never rejects. */
  async run(ex: Exchange, ctx: RequestContext): Promise<void> {
    if (requestStartChannel.hasSubscribers) traceRequestStart(ctx);
    let chunkMs = 0;
    try {
      // Request hooks until one answers (a local reply or `stop`), then the one dispatching stage.
      for (const phase of REQUEST_PHASES) {
        for (const p of this.hooks[phase]) {
          if (ctx.clientAborted || ctx.localReply !== undefined || ctx.upstream !== undefined) break;
          const r = callHook(ctx, p, phase);
          if ((isPromise(r) ? await r : r) === 'stop' && ctx.localReply === undefined) {
            throw new GatewayError('internal_error', {
              message: `Plugin "${p.name}" stopped the pipeline without answering`,
            });
          }
        }
      }
      if (ctx.clientAborted) {
        // The provider has the call and a stage charges its answer: read it on (nobody to write to).
        if (ctx.upstream !== undefined && ctx.drainAfterAbortMs !== undefined) {
          chunkMs = await this.relay(ex, ctx, ctx.upstream);
        }
        runnerAccess.setOutcome(ctx, 'aborted');
      } else if (ctx.localReply !== undefined) {
        const r = ctx.localReply;
        ctx.response.status = r.status;
        await sendComplete(ex, r.status, r.headers, r.body, acceptsGzip(ctx.headers));
        runnerAccess.setOutcome(ctx, 'ok');
      } else if (ctx.upstream !== undefined) {
        chunkMs = await this.relay(ex, ctx, ctx.upstream);
        runnerAccess.setOutcome(ctx, ctx.clientAborted ? 'aborted' : 'ok');
      } else {
        throw new GatewayError('internal_error', {
          message: 'The pipeline ended without an answer (no relay stage configured?)',
        });
      }
    } catch (err) {
      if (ctx.clientAborted) runnerAccess.setOutcome(ctx, 'aborted');
      else await this.fail(ex, ctx, err);
    } finally {
      if (ctx.upstream !== undefined && !ctx.upstream.finished) ctx.upstream.abort();
      ctx.cancel();
      ctx.timings.end = performance.now();
      for (const p of this.hooks.onFinally) await callSafely(ctx, p, 'onFinally', this.log);
      if (requestEndChannel.hasSubscribers) traceRequestEnd(ctx, chunkMs);
    }
  }

  /** Head hooks, every chunk through the chunk hooks into the body writer, then the end hooks. */
  private async relay(ex: Exchange, ctx: RequestContext, up: UpstreamResponse): Promise<number> {
    const head = ctx.response;
    head.status = up.status;
    head.headers = relayedHeaders(up.headers, head.headers);
    runnerAccess.setResponseIsSse(ctx, isEventStream(head.headers['content-type']));
    const drainMs = ctx.drainAfterAbortMs;
    for (const p of this.hooks.onResponseHead) {
      const r = callHook(ctx, p, 'onResponseHead');
      if (isPromise(r)) await r;
      if (ctx.clientAborted && drainMs === undefined) return 0;
    }
    const plan = planBody({
      requestHeaders: ctx.headers,
      contentType: head.headers['content-type'],
      isSse: ctx.responseIsSse,
      declaredLength: Number(up.headers['content-length'] ?? Number.NaN),
      requested: ctx.bufferResponse,
      holdSseDone: ctx.holdSseDone,
    });
    // A client already gone (a drained call) gets nothing written: the chunks only go through the hooks.
    const writer = ctx.clientAborted ? undefined : new ResponseBodyWriter(ex, head, plan);
    if (writer !== undefined && !plan.hold) runnerAccess.markHeadWritten(ctx);

    let chunkMs = 0;
    const traced = stageChannel.hasSubscribers;
    const observed = responseChunkChannel.hasSubscribers;
    const hooks = this.chunkHooks;
    // Whatever relay produced the response, a client that leaves cancels it — unless a stage charges the
    // answer (drainAfterAbortMs): then it is read on for that long, written nowhere, and cancelled after.
    let drainTimer: NodeJS.Timeout | undefined;
    const drain = () => {
      up.resume(); // it may wait for a client that will never drain
      drainTimer ??= setTimeout(() => up.abort(), drainMs);
    };
    const cancel = drainMs === undefined ? () => up.abort() : drain;
    ctx.onCancel(cancel);
    try {
      if (ctx.cancelled) {
        if (drainMs === undefined) {
          up.abort();
          throw new GatewayError('upstream_error', { message: 'The request was cancelled' });
        }
        drain();
      }
      await pumpBody(up, writer, (chunk) => {
        const t0 = traced ? performance.now() : 0;
        ctx.timings.firstChunk ??= performance.now();
        if (observed) responseChunkChannel.publish({ ctx, chunk });
        const c = passChunk(ctx, hooks, chunk);
        if (traced) chunkMs += performance.now() - t0;
        return ctx.clientAborted ? null : c;
      });
    } finally {
      ctx.offCancel(cancel);
      if (drainTimer !== undefined) clearTimeout(drainTimer);
    }
    ctx.timings.upstreamEnd = performance.now();
    if (writer === undefined || ctx.clientAborted) return chunkMs;
    for (const p of this.hooks.onResponseEnd) {
      const r = callHook(ctx, p, 'onResponseEnd');
      if (isPromise(r)) await r;
      if (ctx.clientAborted) return chunkMs;
    }
    await writer.finish(ctx.takeAppended());
    return chunkMs;
  }

  private async fail(ex: Exchange, ctx: RequestContext, err: unknown): Promise<void> {
    const ge = toGatewayError(err);
    if (ge.code === 'internal_error') {
      this.log?.error({ err: ge.cause ?? ge, requestId: ctx.requestId }, 'request failed');
    }
    runnerAccess.setOutcome(ctx, 'error', ge);
    for (const p of this.hooks.onError) await callSafely(ctx, p, 'onError', this.log);
    if (ex.ended) return;
    ctx.response.status = ge.status;
    sendFailure(ex, ctx.response.headers, ge, ctx.responseIsSse);
  }
}

/*
 * One request through the hooks: the runner's own steps (the stage list's checks and shutdown are core/stages.ts).
 */

const isPromise = (v: unknown): v is Promise<unknown> =>
  v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';

/** Calls one hook; when traced, publishes its duration (an untraced call makes no closure). */
function callHook(ctx: RequestContext, p: Plugin, hook: Hook): unknown {
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

/** `gateway:request:start` (core/tracing.ts); the runner calls it only when someone subscribes. */
function traceRequestStart(ctx: RequestContext): void {
  requestStartChannel.publish({ requestId: ctx.requestId, method: ctx.method, path: ctx.path, ctx });
}

/** `gateway:request:end` after the final hooks (`chunkMs`: time in the chunk hooks when traced). */
function traceRequestEnd(ctx: RequestContext, chunkMs: number): void {
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
type ChunkHook = (ctx: RequestContext, chunk: Uint8Array) => Uint8Array | null | undefined;

/** One response chunk through the chunk hooks in order: what to write, or null when a hook dropped it. */
function passChunk(ctx: RequestContext, hooks: ChunkHook[], chunk: Uint8Array): Uint8Array | null {
  let c = chunk;
  for (let i = 0; i < hooks.length; i++) {
    const r = hooks[i]!(ctx, c);
    if (r === null) return null;
    if (r !== undefined) c = r;
  }
  return c;
}

/** An error or final hook: what it throws is logged, never answered (the answer is already decided). */
async function callSafely(
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
