import { AUTH, CHARGE, type RequestContext, runnerAccess } from './context.js';
import { errorBodyFor, GatewayError, isAnthropicPath, toGatewayError } from './errors.js';
import { planBody, ResponseBodyWriter } from './http/body-writer.js';
import type { Exchange } from './http/exchange.js';
import { acceptsGzip, addVary, sendComplete, sendError } from './http/respond.js';
import type { Logger } from './log.js';
import type { Plugin, ResponseHead } from './plugin.js';
import { SHUTDOWN_STEP_MS, within } from './shutdown.js';
import { requestEndChannel, requestStartChannel, type StageEvent, stageChannel } from './tracing.js';
import type { UpstreamResponse } from './upstream/upstream-response.js';

/** Upstream response headers never passed to the client (hop-by-hop, or recomputed here). */
const DROP_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'set-cookie',
  'x-request-id',
  'date',
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
]);

/** What a request hook may answer (its awaited return type). */
type HookResult = Awaited<ReturnType<NonNullable<Plugin['onRequest']>>>;
type ChunkHook = (ctx: RequestContext, chunk: Uint8Array) => Uint8Array | null | undefined;

function isPromise<T>(v: unknown): v is Promise<T> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

/**
 * The pipeline runner. Knows only the plugin contract (core/plugin.ts) and the exchange type; the relay is a
 * plugin like any other, and it hands the upstream response over through `ctx.upstream`.
 */
export class Pipeline {
  readonly plugins: readonly Plugin[];
  private readonly requestHooks: Plugin[];
  private readonly dispatcher: Plugin | undefined;
  private readonly headHooks: Plugin[];
  private readonly chunkHooks: ChunkHook[];
  private readonly endHooks: Plugin[];
  private readonly errorHooks: Plugin[];
  private readonly finallyHooks: Plugin[];

  constructor(
    plugins: readonly Plugin[],
    private readonly log?: Logger,
  ) {
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
    this.plugins = plugins;
    this.dispatcher = dispatchers[0];
    this.requestHooks = plugins.filter((p) => p.onRequest);
    this.headHooks = plugins.filter((p) => p.onResponseHead);
    this.chunkHooks = plugins.filter((p) => p.onResponseChunk).map((p) => p.onResponseChunk!.bind(p));
    this.endHooks = plugins.filter((p) => p.onResponseEnd);
    this.errorHooks = plugins.filter((p) => p.onError);
    this.finallyHooks = plugins.filter((p) => p.onFinally);
  }

  /**
   * Shutdown: each plugin's `close` once, in reverse pipeline order, each given what is left of `graceMs` plus
   * SHUTDOWN_STEP_MS to finish (a close that never resolves is left behind, core/shutdown.ts). Resolves true
   * when every close finished in time without throwing. Never rejects.
   */
  async close(graceMs: number): Promise<boolean> {
    const deadline = Date.now() + graceMs;
    let settled = true;
    for (const p of [...this.plugins].reverse()) {
      if (!p.close) continue;
      const left = Math.max(0, deadline - Date.now());
      const err = await within(
        Promise.resolve().then(() => p.close!(left)),
        left + SHUTDOWN_STEP_MS,
      );
      if (err !== undefined) {
        settled = false;
        this.log?.error({ err, plugin: p.name }, 'plugin close failed or did not finish');
      }
    }
    return settled;
  }

  /** Runs one request through the pipeline and answers it on `ex`. Never rejects. */
  async run(ex: Exchange, ctx: RequestContext): Promise<void> {
    if (requestStartChannel.hasSubscribers) {
      requestStartChannel.publish({ requestId: ctx.requestId, method: ctx.method, path: ctx.path });
    }
    let chunkMs = 0;
    try {
      const hooks = this.runRequestHooks(ctx);
      if (hooks !== undefined) await hooks;
      const d = this.dispatcher;
      if (
        d !== undefined &&
        ctx.localReply === undefined &&
        ctx.upstream === undefined &&
        !ctx.clientAborted
      ) {
        const r = stageChannel.hasSubscribers
          ? this.timed(ctx, d, 'onDispatch', () => d.onDispatch!(ctx))
          : d.onDispatch!(ctx);
        if (isPromise(r)) await r;
      }
      if (ctx.clientAborted) {
        runnerAccess.setOutcome(ctx, 'aborted');
      } else if (ctx.localReply !== undefined) {
        const r = ctx.localReply;
        ctx.response.status = r.status;
        await sendComplete(ex, r.status, r.headers, r.body, acceptsGzip(ctx.headers));
        runnerAccess.setOutcome(ctx, 'ok');
      } else if (ctx.upstream !== undefined) {
        chunkMs = await this.relayResponse(ex, ctx, ctx.upstream);
        runnerAccess.setOutcome(ctx, ctx.clientAborted ? 'aborted' : 'ok');
      } else {
        throw new GatewayError('internal_error', {
          message: 'The pipeline ended without an answer (no relay stage configured?)',
        });
      }
    } catch (err) {
      if (ctx.clientAborted) {
        runnerAccess.setOutcome(ctx, 'aborted');
      } else {
        await this.fail(ex, ctx, err);
      }
    } finally {
      if (ctx.upstream !== undefined && !ctx.upstream.finished) ctx.upstream.abort();
      ctx.cancel();
      ctx.timings.end = performance.now();
      for (const p of this.finallyHooks) {
        try {
          await this.timed(ctx, p, 'onFinally', () => p.onFinally!(ctx));
        } catch (err) {
          this.log?.error({ err, plugin: p.name, requestId: ctx.requestId }, 'onFinally hook threw');
        }
      }
      if (requestEndChannel.hasSubscribers) {
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
        });
      }
    }
  }

  /**
   * Runs the request hooks in order. Returns a promise only once a hook returned one: while they answer
   * synchronously (and always with no request hooks, as with PIPELINE=relay) no promise is made.
   */
  private runRequestHooks(ctx: RequestContext): Promise<void> | undefined {
    const hooks = this.requestHooks;
    for (let i = 0; i < hooks.length; i++) {
      const status = this.requestHook(ctx, hooks[i]!);
      if (isPromise(status)) return this.requestHooksFrom(ctx, i, status);
      if (this.stopsHooks(ctx, hooks[i]!, status)) return undefined;
    }
    return undefined;
  }

  /** The rest of `runRequestHooks` after hook `i` returned a promise. */
  private async requestHooksFrom(
    ctx: RequestContext,
    i: number,
    pending: Promise<HookResult>,
  ): Promise<void> {
    const hooks = this.requestHooks;
    if (this.stopsHooks(ctx, hooks[i]!, await pending)) return;
    for (let j = i + 1; j < hooks.length; j++) {
      let status = this.requestHook(ctx, hooks[j]!);
      if (isPromise(status)) status = await status;
      if (this.stopsHooks(ctx, hooks[j]!, status)) return;
    }
  }

  /** One request hook; untraced calls skip `timed` (a closure per hook per call). */
  private requestHook(ctx: RequestContext, p: Plugin): HookResult | Promise<HookResult> {
    return stageChannel.hasSubscribers
      ? this.timed(ctx, p, 'onRequest', () => p.onRequest!(ctx))
      : p.onRequest!(ctx);
  }

  /** After a request hook: whether the hooks stop here (client gone, a local reply, or `stop`). */
  private stopsHooks(ctx: RequestContext, p: Plugin, status: HookResult): boolean {
    if (ctx.clientAborted) return true;
    if (status === 'stop') {
      if (ctx.localReply === undefined) {
        throw new GatewayError('internal_error', {
          message: `Plugin "${p.name}" stopped the pipeline without answering`,
        });
      }
      return true;
    }
    return ctx.localReply !== undefined;
  }

  /** Calls a hook; awaits only when it returned a promise; publishes its duration when traced. */
  private timed<T>(
    ctx: RequestContext,
    p: Plugin,
    hook: StageEvent['hook'],
    fn: () => T | Promise<T>,
  ): T | Promise<T> {
    if (!stageChannel.hasSubscribers) return fn();
    const t0 = performance.now();
    const publish = () =>
      stageChannel.publish({
        requestId: ctx.requestId,
        plugin: p.name,
        hook,
        durationMs: performance.now() - t0,
      });
    const r = fn();
    if (isPromise<T>(r)) return r.finally(publish);
    publish();
    return r;
  }

  /** Head hooks, then every chunk through the chunk hooks into the body writer, then end hooks. */
  private async relayResponse(ex: Exchange, ctx: RequestContext, up: UpstreamResponse): Promise<number> {
    const head: ResponseHead = ctx.response;
    head.status = up.status;
    const headers: Record<string, string | string[]> = {};
    for (const name in up.headers) {
      if (!DROP_RESPONSE_HEADERS.has(name)) headers[name] = up.headers[name]!;
    }
    const upstreamVary = headers.vary;
    Object.assign(headers, head.headers);
    // The upstream's Vary and ours (CORS origin) both hold.
    if (upstreamVary !== undefined && head.headers.vary !== undefined) {
      headers.vary = upstreamVary;
      for (const t of String(head.headers.vary).split(',')) addVary(headers, t.trim());
    }
    head.headers = headers;
    const contentType = headers['content-type'];
    runnerAccess.setResponseIsSse(
      ctx,
      typeof contentType === 'string' && contentType.startsWith('text/event-stream'),
    );
    for (const p of this.headHooks) {
      const r = stageChannel.hasSubscribers
        ? this.timed(ctx, p, 'onResponseHead', () => p.onResponseHead!(ctx, head))
        : p.onResponseHead!(ctx, head);
      if (isPromise(r)) await r;
      if (ctx.clientAborted) return 0;
    }
    const plan = planBody({
      requestHeaders: ctx.headers,
      contentType: head.headers['content-type'],
      isSse: ctx.responseIsSse,
      declaredLength: Number(up.headers['content-length'] ?? Number.NaN),
      requested: ctx.bufferResponse,
      holdSseDone: ctx.holdSseDone,
    });
    ctx.bufferResponse = plan.hold;
    const writer = new ResponseBodyWriter(ex, head, plan);

    let chunkMs = 0;
    const traced = stageChannel.hasSubscribers;
    const hooks = this.chunkHooks;
    // Whatever relay produced the response, a client that goes away cancels it.
    const cancel = () => up.abort();
    ctx.onCancel(cancel);
    try {
      await new Promise<void>((resolve, reject) => {
        if (ctx.cancelled) {
          up.abort();
          reject(new GatewayError('upstream_error', { message: 'The request was cancelled' }));
          return;
        }
        up.pipe({
          onData: (chunk) => {
            try {
              const t0 = traced ? performance.now() : 0;
              if (ctx.timings.firstChunk === undefined) ctx.timings.firstChunk = performance.now();
              let c: Uint8Array = chunk;
              for (let i = 0; i < hooks.length; i++) {
                const r = hooks[i]!(ctx, c);
                if (r === null) return;
                if (r !== undefined) c = r;
              }
              if (traced) chunkMs += performance.now() - t0;
              if (!writer.write(c)) {
                up.pause();
                writer.onDrain(() => up.resume());
              }
            } catch (err) {
              up.abort();
              reject(err);
            }
          },
          onEnd: resolve,
          onError: reject,
        });
      });
    } finally {
      // (try/finally, not `.finally()`: one promise and closure fewer per call)
      ctx.offCancel(cancel);
    }
    ctx.timings.upstreamEnd = performance.now();

    for (const p of this.endHooks) {
      const r = stageChannel.hasSubscribers
        ? this.timed(ctx, p, 'onResponseEnd', () => p.onResponseEnd!(ctx))
        : p.onResponseEnd!(ctx);
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
    for (const p of this.errorHooks) {
      try {
        const r = this.timed(ctx, p, 'onError', () => p.onError!(ctx, ge));
        if (isPromise(r)) await r;
      } catch (hookErr) {
        this.log?.error({ err: hookErr, plugin: p.name, requestId: ctx.requestId }, 'onError hook threw');
      }
    }
    if (ex.ended) return;
    ctx.response.status = ge.status;
    if (!ex.headSent) {
      // Nothing reached the client yet (at most a recorded head): answer with the envelope.
      sendError(ex, ctx.response.headers, ge);
      return;
    }
    // Mid-stream: the status is gone. SSE clients get an error event (the OpenAI SDKs raise it); other
    // bodies are cut so the client cannot mistake a truncated body for a complete one.
    if (ctx.responseIsSse) {
      // Anthropic SDKs read a typed `event: error`; OpenAI SDKs a `data:` line with the envelope.
      const body = JSON.stringify(errorBodyFor(ctx.path, ge));
      ex.end(isAnthropicPath(ctx.path) ? `event: error\ndata: ${body}\n\n` : `data: ${body}\n\n`);
    } else {
      ex.destroy();
    }
  }
}
