import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../core/context.js';
import { createLocalKey } from '../../core/context.js';
import { GatewayError } from '../../core/errors.js';
import { Pipeline } from '../../core/pipeline.js';
import { HookStatus, type Plugin } from '../../core/plugin.js';
import { contextFor, FakeExchange, FakeUpstream, type FakeUpstreamScript } from '../support/fake-exchange.js';
import { until } from '../support/until.js';

/** A relay stand-in that attaches a scripted upstream response. */
function fakeRelay(script: FakeUpstreamScript, holder: { up?: FakeUpstream } = {}): Plugin {
  return {
    name: 'relay',
    onRequest(ctx) {
      holder.up = new FakeUpstream(script);
      ctx.upstream = holder.up;
      return HookStatus.Continue;
    },
  };
}

/** A plugin that records every hook call into `log`. */
function recorder(name: string, log: string[], extra: Partial<Plugin> = {}): Plugin {
  return {
    name,
    onRequest: (ctx) => {
      log.push(`${name}.request`);
      return extra.onRequest?.(ctx);
    },
    onResponseHead: (ctx, head) => {
      log.push(`${name}.head`);
      return extra.onResponseHead?.(ctx, head);
    },
    onResponseChunk: (ctx, chunk) => {
      log.push(`${name}.chunk`);
      return extra.onResponseChunk?.(ctx, chunk);
    },
    onResponseEnd: (ctx) => {
      log.push(`${name}.end`);
      return extra.onResponseEnd?.(ctx);
    },
    onError: (ctx, err) => {
      log.push(`${name}.error:${err.code}`);
      return extra.onError?.(ctx, err);
    },
    onFinally: (ctx) => {
      log.push(`${name}.finally:${ctx.outcome}`);
      return extra.onFinally?.(ctx);
    },
  };
}

async function run(plugins: Plugin[], ex = new FakeExchange(), headers: Record<string, string> = {}) {
  const ctx = contextFor(ex, headers);
  await new Pipeline(plugins).run(ex, ctx);
  return { ex, ctx };
}

describe('pipeline runner', () => {
  it('runs hooks in order: requests, heads, chunks, ends, then every final hook once', async () => {
    const log: string[] = [];
    const { ex, ctx } = await run([
      recorder('a', log),
      recorder('b', log, { onRequest: async () => HookStatus.Continue }),
      fakeRelay({ chunks: ['{"x":', '1}'] }),
    ]);
    expect(log).toEqual([
      'a.request',
      'b.request',
      'a.head',
      'b.head',
      'a.chunk',
      'b.chunk',
      'a.chunk',
      'b.chunk',
      'a.end',
      'b.end',
      'a.finally:ok',
      'b.finally:ok',
    ]);
    expect(ex.status).toBe(200);
    expect(ex.body).toBe('{"x":1}');
    expect(ex.head?.['x-request-id']).toBe('req-test');
    expect(ctx.outcome).toBe('ok');
  });

  it('runner-owned fields are read-only to plugins; the runner sets them', async () => {
    const seen: unknown[] = [];
    const meddler: Plugin = {
      name: 'meddler',
      onRequest: (ctx) => {
        const c = ctx as unknown as Record<string, unknown>;
        for (const field of ['outcome', 'error', 'localReply', 'clientAborted', 'responseIsSse']) {
          expect(() => {
            c[field] = 'forged';
          }, field).toThrow(TypeError);
        }
        return ctx.respond(200, { ok: true });
      },
      onFinally: (ctx) => {
        seen.push(ctx.outcome, ctx.error, ctx.localReply?.status, ctx.clientAborted);
      },
    };
    const ex = new FakeExchange();
    await new Pipeline([meddler]).run(ex, contextFor(ex));
    expect(ex.status).toBe(200);
    expect(seen).toEqual(['ok', undefined, 200, false]);
  });

  it('Stop after ctx.respond short-circuits the rest; final hooks still run on all', async () => {
    const log: string[] = [];
    const { ex } = await run([
      recorder('a', log, { onRequest: (ctx) => ctx.respond(200, { cached: true }, { 'x-cache': 'hit' }) }),
      recorder('b', log),
      fakeRelay({ chunks: ['never'] }),
    ]);
    expect(log).toEqual(['a.request', 'a.finally:ok', 'b.finally:ok']);
    expect(ex.status).toBe(200);
    expect(ex.head).toMatchObject({
      'x-cache': 'hit',
      'content-type': 'application/json',
      'x-request-id': 'req-test',
    });
    expect(JSON.parse(ex.body)).toEqual({ cached: true });
  });

  it('Stop without an answer is a 500 (misuse guarded)', async () => {
    const log: string[] = [];
    const { ex } = await run([recorder('a', log, { onRequest: () => HookStatus.Stop })]);
    expect(ex.status).toBe(500);
    expect(JSON.parse(ex.body).error.message).toMatch(/stopped the pipeline without answering/);
    expect(log).toEqual(['a.request', 'a.error:internal_error', 'a.finally:error']);
  });

  it('a thrown GatewayError becomes the envelope; onError hooks may add headers; final once', async () => {
    const log: string[] = [];
    const { ex, ctx } = await run([
      recorder('auth', log, {
        onRequest: async () => {
          throw new GatewayError('payment_required', {
            details: { required: 5 },
            headers: { 'x-extra': '1' },
          });
        },
        onError: (c) => {
          c.response.headers['x-cashu'] = 'refund-token';
        },
      }),
      recorder('relay', log),
    ]);
    expect(ex.status).toBe(402);
    expect(ex.head).toMatchObject({
      'x-cashu': 'refund-token',
      'x-extra': '1',
      'content-type': 'application/json',
    });
    expect(JSON.parse(ex.body)).toEqual({
      error: {
        type: 'insufficient_balance',
        code: 'payment_required',
        message: 'The balance does not cover the cost of this request',
        details: { required: 5 },
      },
    });
    expect(log).toEqual([
      'auth.request',
      'auth.error:payment_required',
      'relay.error:payment_required',
      'auth.finally:error',
      'relay.finally:error',
    ]);
    expect(ctx.error?.code).toBe('payment_required');
  });

  it('unknown throws become internal_error without leaking the message', async () => {
    const { ex } = await run([
      {
        name: 'bad',
        onRequest() {
          throw new Error('secret internals');
        },
      },
    ]);
    expect(ex.status).toBe(500);
    expect(ex.body).not.toContain('secret internals');
  });

  it('a pipeline with no relay answers 500 instead of hanging', async () => {
    const { ex } = await run([{ name: 'noop' }]);
    expect(ex.status).toBe(500);
  });

  it('final hooks run exactly once on a client abort mid-stream; the upstream is cancelled', async () => {
    const log: string[] = [];
    const holder: { up?: FakeUpstream } = {};
    const ex = new FakeExchange();
    const plugins = [
      recorder('meter', log, {
        onResponseChunk: () => {
          if (log.filter((l) => l === 'meter.chunk').length === 2) setImmediate(() => ex.abort());
          return undefined;
        },
      }),
      fakeRelay(
        {
          headers: { 'content-type': 'text/event-stream' },
          chunks: ['data: 1\n\n', 'data: 2\n\n', 'data: 3\n\n'],
          hold: true,
        },
        holder,
      ),
    ];
    const { ctx } = await run(plugins, ex);
    expect(holder.up?.aborted).toBe(true);
    expect(ctx.outcome).toBe('aborted');
    expect(ctx.abort.signal.aborted).toBe(true);
    expect(log.filter((l) => l.startsWith('meter.finally'))).toEqual(['meter.finally:aborted']);
    expect(log.some((l) => l.includes('error') || l === 'meter.end')).toBe(false);
  });

  it('final hooks run exactly once when a final hook throws, and on upstream failure', async () => {
    const log: string[] = [];
    const { ex } = await run([
      recorder('a', log, {
        onFinally: () => {
          throw new Error('boom');
        },
      }),
      recorder('b', log),
      fakeRelay({ chunks: [], failWith: new GatewayError('upstream_timeout') }),
    ]);
    expect(ex.status).toBe(504);
    expect(log.filter((l) => l.includes('finally'))).toEqual(['a.finally:error', 'b.finally:error']);
  });

  it('chunk hooks can transform and drop chunks', async () => {
    const { ex } = await run([
      {
        name: 'upper',
        onResponseChunk: (_ctx, chunk) => Buffer.from(Buffer.from(chunk).toString().toUpperCase()),
      },
      {
        name: 'drop-b',
        onResponseChunk: (_ctx, chunk) => (Buffer.from(chunk).toString() === 'B' ? null : undefined),
      },
      fakeRelay({ headers: { 'content-type': 'text/plain' }, chunks: ['a', 'b', 'c'] }),
    ]);
    expect(ex.body).toBe('AC');
  });

  it('buffered mode writes the head after the end hooks, with their headers and appended bytes', async () => {
    const { ex } = await run([
      {
        name: 'meter',
        onResponseHead: (ctx) => {
          ctx.bufferResponse = true;
        },
        onResponseEnd: async (ctx) => {
          ctx.response.headers['x-cashu'] = 'change';
          ctx.appendToBody('!');
        },
      },
      fakeRelay({ chunks: ['{"a":', '1}'] }),
    ]);
    expect(ex.writeCalls).toBe(0);
    expect(ex.head?.['x-cashu']).toBe('change');
    expect(ex.body).toBe('{"a":1}!');
  });

  it('holdSseDone puts appended bytes before the final data: [DONE]', async () => {
    const { ex } = await run([
      {
        name: 'change-token',
        onResponseHead: (ctx) => {
          ctx.holdSseDone = true;
        },
        onResponseEnd: (ctx) => ctx.appendToBody(': x-cashu tok\n\n'),
      },
      fakeRelay({
        headers: { 'content-type': 'text/event-stream' },
        chunks: ['data: {"n":1}\n\n', 'data: {"n":2}\n\ndata: [DONE]\n\n'],
      }),
    ]);
    expect(ex.body).toBe('data: {"n":1}\n\ndata: {"n":2}\n\n: x-cashu tok\n\ndata: [DONE]\n\n');
  });

  it('a failure mid-SSE-stream ends the stream with an error event', async () => {
    const log: string[] = [];
    const { ex, ctx } = await run([
      recorder('m', log),
      fakeRelay({
        headers: { 'content-type': 'text/event-stream' },
        chunks: ['data: {"n":1}\n\n'],
        failWith: new GatewayError('upstream_timeout', { message: 'idle' }),
      }),
    ]);
    expect(ex.status).toBe(200);
    expect(ex.body).toBe(
      'data: {"n":1}\n\ndata: {"error":{"type":"upstream_error","message":"idle","code":"upstream_timeout"}}\n\n',
    );
    expect(ctx.outcome).toBe('error');
    expect(log).toContain('m.error:upstream_timeout');
  });

  it('a failure mid-stream of a non-SSE body cuts the connection', async () => {
    const { ex } = await run([
      fakeRelay({
        headers: { 'content-type': 'text/plain' },
        chunks: ['part'],
        failWith: new GatewayError('upstream_error'),
      }),
    ]);
    expect(ex.destroyed).toBe(true);
  });

  it('pauses the upstream while the client is slow and resumes on drain', async () => {
    const holder: { up?: FakeUpstream } = {};
    const ex = new FakeExchange();
    ex.slow = true;
    const done = run(
      [fakeRelay({ headers: { 'content-type': 'text/plain' }, chunks: ['1', '2', '3'] }, holder)],
      ex,
    );
    await until('the upstream paused', () => holder.up?.pauses === 1, 5_000, 1);
    expect(holder.up?.pauses).toBe(1);
    expect(ex.body).toBe('1');
    ex.drain();
    await done;
    expect(holder.up?.resumes).toBeGreaterThanOrEqual(1);
    expect(ex.body).toBe('123');
  });

  it('a non-stream JSON body is gzipped when the client accepts it and it is large', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(5000) });
    /** Keeps the bytes as written (the shared fake decodes them as text, which garbles gzip). */
    class RawExchange extends FakeExchange {
      raw: Buffer[] = [];
      override write(chunk: Uint8Array | string): boolean {
        if (!this.ended) this.raw.push(Buffer.from(chunk));
        return super.write(chunk);
      }
      override end(chunk?: Uint8Array | string): void {
        if (!this.ended && chunk !== undefined) this.raw.push(Buffer.from(chunk));
        super.end(chunk);
      }
    }
    const ex = new RawExchange();
    await run([fakeRelay({ chunks: [big] })], ex, { 'accept-encoding': 'gzip, br' });
    expect(ex.head?.['content-encoding']).toBe('gzip');
    const wire = Buffer.concat(ex.raw);
    expect(wire.length).toBeLessThan(big.length);
    expect(gunzipSync(wire).toString()).toBe(big);
  });

  it('per-plugin local slots are typed and private to their key', async () => {
    const key = createLocalKey<{ started: number }>('timer');
    let seen: number | undefined;
    await run([
      {
        name: 'timer',
        onRequest: (ctx: RequestContext) => {
          ctx.setLocal(key, { started: 42 });
          return undefined;
        },
        onFinally: (ctx) => {
          seen = ctx.local(key)?.started;
        },
      },
      fakeRelay({ chunks: ['{}'] }),
    ]);
    expect(seen).toBe(42);
  });

  it('publishes stage timings on diagnostics_channel when subscribed', async () => {
    const events: Array<{ plugin: string; hook: string }> = [];
    const ends: unknown[] = [];
    const onStage = (m: unknown) => events.push(m as { plugin: string; hook: string });
    const onEnd = (m: unknown) => ends.push(m);
    subscribe('gateway:stage', onStage);
    subscribe('gateway:request:end', onEnd);
    try {
      await run([
        { name: 'p', onRequest: () => undefined, onFinally: () => undefined },
        fakeRelay({ chunks: ['{}'] }),
      ]);
    } finally {
      unsubscribe('gateway:stage', onStage);
      unsubscribe('gateway:request:end', onEnd);
    }
    expect(events.map((e) => `${e.plugin}.${e.hook}`)).toEqual([
      'p.onRequest',
      'relay.onRequest',
      'p.onFinally',
    ]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ requestId: 'req-test', status: 200, outcome: 'ok' });
  });

  it('dispatches upstream only after every request hook, also those listed after the dispatcher', async () => {
    const order: string[] = [];
    const dispatcher: Plugin = {
      name: 'relay',
      onDispatch(ctx) {
        order.push(`dispatch (body marked: ${ctx.bodyModified})`);
        ctx.upstream = new FakeUpstream({ chunks: ['{}'] });
      },
    };
    const after: Plugin = {
      name: 'meter-like',
      onRequest(ctx) {
        order.push('after.onRequest');
        ctx.markBodyModified();
        return undefined;
      },
    };
    const { ex } = await run([
      { name: 'first', onRequest: () => void order.push('first.onRequest') },
      dispatcher,
      after,
    ]);
    expect(order).toEqual(['first.onRequest', 'after.onRequest', 'dispatch (body marked: true)']);
    expect(ex.status).toBe(200);
  });

  it('does not dispatch when a request hook answered', async () => {
    let dispatched = false;
    const { ex } = await run([
      { name: 'guard', onRequest: (ctx) => ctx.respond(418, { no: true }) },
      {
        name: 'relay',
        onDispatch: () => {
          dispatched = true;
        },
      },
    ]);
    expect(dispatched).toBe(false);
    expect(ex.status).toBe(418);
  });

  it('refuses two dispatchers and an async chunk hook when the pipeline is built', () => {
    expect(
      () =>
        new Pipeline([
          { name: 'a', onDispatch: () => undefined },
          { name: 'b', onDispatch: () => undefined },
        ]),
    ).toThrow(/Only one plugin may call the upstream/);
    expect(
      () =>
        new Pipeline([
          {
            name: 'slow',
            onResponseChunk: (async () => undefined) as unknown as Plugin['onResponseChunk'],
          },
        ]),
    ).toThrow(/must be synchronous/);
  });

  it('rejects a pipeline with duplicate plugin names', () => {
    expect(() => new Pipeline([{ name: 'x' }, { name: 'x' }])).toThrow(/twice/);
  });
});
