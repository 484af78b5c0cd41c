import { randomBytes } from 'node:crypto';
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector } from '@opentelemetry/resources';
import { BatchSpanProcessor, type IdGenerator, TracerProvider } from '@opentelemetry/sdk-trace';
import { CALL_TRACE } from './call-trace.js';
import { AUTH, CHARGE, RESERVATION, type RequestContext, SERVED_BY, UPSTREAM_COST } from './context.js';
import type { Logger } from './log.js';
import { type AnswerFacts, AnswerReader, answerApiOf } from './otel-response.js';
import { type CallTrace, type OpSpanEvent, parseTraceparent } from './trace-context.js';
import {
  opSpanChannel,
  requestEndChannel,
  requestStartChannel,
  responseChunkChannel,
  type StageEvent,
  stageChannel,
} from './tracing.js';

/**
 * OpenTelemetry traces (README, "Tracing"): loaded by core/server.ts only when an OTLP endpoint is set
 * (core/trace-context.ts `otelTracesEnabled`), so with tracing off nothing of it is imported and it subscribes
 * to no diagnostics channel (the start and stage events are then not published at all). Built on the gateway's tracing channels
 * (core/tracing.ts), not on instrumentation of node:http or undici:
 *
 * - at a pipeline request's start: the sampling decision (OTEL_TRACES_SAMPLER / _ARG, parent-based by default,
 *   the client's `traceparent` as the parent) and the call's span ids, kept on the request (CALL_TRACE) so the
 *   relay stage sends the provider a `traceparent` naming the relay span;
 * - after each stage hook: when the reserve and settle stages ran;
 * - at the request's end: one SERVER span per call, named `<gen_ai.operation.name> <model>`, with the GenAI
 *   semantic conventions' attributes and the gateway's own under `gateway.*` (payment method, key id — never
 *   the key —, msats reserved and charged, the breakdown's token dimensions, provider, failovers), and child
 *   spans `reserve`, `relay` (CLIENT: dispatch to the provider's last byte, an event at its first) and `settle`
 *   — the phases of Server-Timing. Exported in batches over OTLP/HTTP (the OTEL_EXPORTER_OTLP_* settings);
 * - for each chunk of a sampled call's answer (`gateway:response:chunk`): the answer's `gen_ai.response.id` and
 *   `gen_ai.response.finish_reasons`, read as it passes (core/otel-response.ts);
 * - for each operation span (`gateway:span`, core/trace-context.ts `startOpSpan`): a batch's creation and
 *   settlement, a background response's settlement, a payout and its steps, exported as INTERNAL spans with the
 *   same sampling rule (parent-based on the request that started them, else by trace id).
 */

const OPERATIONS: Record<string, string> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'chat',
  '/v1/messages': 'chat',
  '/v1/completions': 'text_completion',
  '/v1/embeddings': 'embeddings',
};

/** Span ids the gateway chose before the span exists (the relay's id goes to the provider first). */
class PresetIds implements IdGenerator {
  traceId: string | undefined;
  spanId: string | undefined;
  generateTraceId(): string {
    const t = this.traceId;
    this.traceId = undefined;
    return t ?? randomBytes(16).toString('hex');
  }
  generateSpanId(): string {
    const s = this.spanId;
    this.spanId = undefined;
    return s ?? randomBytes(8).toString('hex');
  }
}

type RootSampler = (traceId: string) => boolean;

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the SDK specification names them. */
export function samplerFromEnv(env: Record<string, string | undefined>): {
  root: RootSampler;
  parentBased: boolean;
} {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratio = Number.isFinite(arg) ? Math.min(1, Math.max(0, arg)) : 1;
  // traceidratio: the trace id's last 8 bytes against the ratio, so every process decides alike.
  const byRatio: RootSampler = (traceId) => Number.parseInt(traceId.slice(-13), 16) / 2 ** 52 < ratio;
  switch (name) {
    case 'always_on':
      return { root: () => true, parentBased: false };
    case 'always_off':
      return { root: () => false, parentBased: false };
    case 'traceidratio':
      return { root: byRatio, parentBased: false };
    case 'parentbased_always_off':
      return { root: () => false, parentBased: true };
    case 'parentbased_traceidratio':
      return { root: byRatio, parentBased: true };
    default:
      return { root: () => true, parentBased: true };
  }
}

interface StageTimes {
  reserve?: [number, number];
  settle?: [number, number];
  /** The answer's id and finish reasons as they pass (core/otel-response.ts); null: nothing to read. */
  answer?: AnswerReader | null;
}

interface EndEvent {
  ctx: RequestContext;
  status: number;
  outcome: string;
  durationMs: number;
  timings: { start: number; upstreamStart?: number; upstreamHeaders?: number; upstreamEnd?: number };
}

export interface OtelTracing {
  /** Unsubscribes, exports what is buffered and shuts the exporter down. */
  close(): Promise<void>;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the tracer's closure: its short channel handlers share the open-span maps and the exporter
export function startOtelTracing(env: Record<string, string | undefined>, log: Logger): OtelTracing {
  const ids = new PresetIds();
  const provider = new TracerProvider({
    resource: defaultResource().merge(detectResources({ detectors: [envDetector] })),
    idGenerator: ids,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
        // OTEL_BSP_SCHEDULE_DELAY (ms between exports; the specification's default 5,000).
        scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY) || 5_000,
      }),
    ],
  });
  const tracer = provider.getTracer('prepaid-model-gateway');
  const sampler = samplerFromEnv(env);
  const stages = new Map<string, StageTimes>();
  const epoch = performance.timeOrigin;
  const at = (ms: number) => epoch + ms;

  const onStart = (msg: unknown) => {
    const { ctx } = msg as { ctx: RequestContext };
    const parent = parseTraceparent(ctx.headers.traceparent);
    const traceId = parent?.traceId ?? randomBytes(16).toString('hex');
    const sampled = parent !== undefined && sampler.parentBased ? parent.sampled : sampler.root(traceId);
    const t: CallTrace = {
      traceId,
      callSpanId: randomBytes(8).toString('hex'),
      relaySpanId: randomBytes(8).toString('hex'),
      sampled,
      ...(parent !== undefined ? { parentSpanId: parent.spanId } : {}),
    };
    ctx.setLocal(CALL_TRACE, t);
    if (sampled) stages.set(ctx.requestId, {});
  };

  const onChunk = (msg: unknown) => {
    const { ctx, chunk } = msg as { ctx: RequestContext; chunk: Uint8Array };
    const s = stages.get(ctx.requestId);
    if (s === undefined || s.answer === null) return;
    if (s.answer === undefined) {
      const api = answerApiOf(ctx.path);
      s.answer =
        api === undefined || ctx.response.status >= 400 ? null : new AnswerReader(api, ctx.responseIsSse);
      if (s.answer === null) return;
    }
    s.answer.push(chunk);
  };

  const onStage = (msg: unknown) => {
    const e = msg as StageEvent;
    const s = stages.get(e.requestId);
    if (s === undefined) return;
    const now = performance.now();
    if (e.plugin === 'reserve' && e.hook === 'onRequest') s.reserve = [now - e.durationMs, now];
    else if (e.plugin === 'settle' && (e.hook === 'onResponseEnd' || e.hook === 'onFinally')) {
      if (s.settle === undefined || e.durationMs > s.settle[1] - s.settle[0])
        s.settle = [now - e.durationMs, now];
    }
  };

  const onEnd = (msg: unknown) => {
    const e = msg as EndEvent;
    const t = e.ctx.local(CALL_TRACE);
    const times = stages.get(e.ctx.requestId);
    stages.delete(e.ctx.requestId);
    if (t === undefined || !t.sampled || times === undefined) return;
    try {
      exportCall(e, t, times);
    } catch (err) {
      log.warn({ err }, 'a call span could not be made');
    }
  };

  const startSpan = (
    name: string,
    kind: SpanKind,
    startMs: number,
    attributes: Attributes,
    parent: Context,
    traceId: string,
    spanId: string,
  ): Span => {
    ids.traceId = traceId;
    ids.spanId = spanId;
    return tracer.startSpan(name, { kind, startTime: at(startMs), attributes }, parent);
  };

  function exportCall(e: EndEvent, t: CallTrace, times: StageTimes): void {
    const ctx = e.ctx;
    const endMs = e.timings.start + e.durationMs;
    const parent =
      t.parentSpanId !== undefined
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId: t.traceId,
            spanId: t.parentSpanId,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: true,
          })
        : ROOT_CONTEXT;
    const operation = OPERATIONS[ctx.path];
    const name =
      operation !== undefined ? `${operation} ${ctx.model ?? ''}`.trim() : `${ctx.method} ${ctx.path}`;
    const call = startSpan(
      name,
      SpanKind.SERVER,
      e.timings.start,
      callAttributes(ctx, operation, e, times.answer?.result()),
      parent,
      t.traceId,
      t.callSpanId,
    );
    if (e.status >= 500 || e.outcome === 'error') call.setStatus({ code: SpanStatusCode.ERROR });
    const inner = trace.setSpan(ROOT_CONTEXT, call);
    if (times.reserve !== undefined) {
      const reservation = ctx.local(RESERVATION);
      startSpan(
        'reserve',
        SpanKind.INTERNAL,
        times.reserve[0],
        reservation !== undefined ? { 'gateway.msats.reserved': reservation.amountMsats } : {},
        inner,
        t.traceId,
        randomBytes(8).toString('hex'),
      ).end(at(times.reserve[1]));
    }
    const up = e.timings;
    if (up.upstreamStart !== undefined) {
      const servedBy = ctx.local(SERVED_BY);
      const relay = startSpan(
        'relay',
        SpanKind.CLIENT,
        up.upstreamStart,
        {
          ...(servedBy !== undefined ? { 'gateway.provider': servedBy } : {}),
          ...(up.upstreamHeaders !== undefined
            ? { 'gateway.relay.first_byte_ms': up.upstreamHeaders - up.upstreamStart }
            : {}),
        },
        inner,
        t.traceId,
        t.relaySpanId,
      );
      if (up.upstreamHeaders !== undefined) relay.addEvent('first_byte', at(up.upstreamHeaders));
      relay.end(at(up.upstreamEnd ?? up.upstreamHeaders ?? endMs));
    }
    if (times.settle !== undefined) {
      const charge = ctx.local(CHARGE);
      startSpan(
        'settle',
        SpanKind.INTERNAL,
        times.settle[0],
        charge !== undefined ? { 'gateway.msats.charged': charge.msats } : {},
        inner,
        t.traceId,
        randomBytes(8).toString('hex'),
      ).end(at(times.settle[1]));
    }
    call.end(at(endMs));
  }

  /** A batch's, a background response's or a payout's span (core/trace-context.ts `startOpSpan`). */
  const onOpSpan = (msg: unknown) => {
    const e = msg as OpSpanEvent;
    const sampled =
      e.parentSampled !== undefined && sampler.parentBased ? e.parentSampled : sampler.root(e.traceId);
    if (!sampled) return;
    try {
      const parent =
        e.parentSpanId !== undefined
          ? trace.setSpanContext(ROOT_CONTEXT, {
              traceId: e.traceId,
              spanId: e.parentSpanId,
              traceFlags: TraceFlags.SAMPLED,
              isRemote: true,
            })
          : ROOT_CONTEXT;
      ids.traceId = e.traceId;
      ids.spanId = e.spanId;
      const span = tracer.startSpan(
        e.name,
        {
          kind: SpanKind.INTERNAL,
          startTime: e.startMs,
          attributes: definedOnly(e.attributes),
          links: e.links.map((l) => ({
            context: { traceId: l.traceId, spanId: l.spanId, traceFlags: TraceFlags.SAMPLED },
          })),
        },
        parent,
      );
      if (e.error !== undefined) {
        span.setAttribute('error.type', e.error);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end(e.endMs);
    } catch (err) {
      log.warn({ err }, 'an operation span could not be made');
    }
  };

  // From now on the runner publishes for every pipeline request (each publish is guarded by hasSubscribers).
  requestStartChannel.subscribe(onStart);
  stageChannel.subscribe(onStage);
  responseChunkChannel.subscribe(onChunk);
  requestEndChannel.subscribe(onEnd);
  opSpanChannel.subscribe(onOpSpan);
  return {
    async close() {
      requestStartChannel.unsubscribe(onStart);
      stageChannel.unsubscribe(onStage);
      responseChunkChannel.unsubscribe(onChunk);
      requestEndChannel.unsubscribe(onEnd);
      opSpanChannel.unsubscribe(onOpSpan);
      await provider.shutdown();
    },
  };
}

/** The GenAI semantic conventions' attributes and the gateway's own (`gateway.*`): never a credential. */
function callAttributes(
  ctx: RequestContext,
  operation: string | undefined,
  e: EndEvent,
  answer: AnswerFacts | undefined,
): Attributes {
  const a: Attributes = {
    'http.request.method': ctx.method,
    'http.route': ctx.routeTemplate ?? ctx.path,
    'http.response.status_code': e.status,
    'gateway.request_id': ctx.requestId,
  };
  if (operation !== undefined) {
    a['gen_ai.operation.name'] = operation;
    a['gen_ai.provider.name'] = ctx.path === '/v1/messages' ? 'anthropic' : 'openai';
  }
  if (ctx.model !== undefined) a['gen_ai.request.model'] = ctx.model;
  const body = ctx.body as Record<string, unknown> | undefined;
  if (body !== null && typeof body === 'object') {
    const max = body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens;
    if (typeof max === 'number') a['gen_ai.request.max_tokens'] = max;
    if (typeof body.stream === 'boolean') a['gateway.stream'] = body.stream;
  }
  if (answer?.id !== undefined) a['gen_ai.response.id'] = answer.id;
  if (answer?.finishReasons !== undefined) a['gen_ai.response.finish_reasons'] = answer.finishReasons;
  const auth = ctx.local(AUTH);
  if (auth !== undefined) {
    a['gateway.payment.method'] = auth.method;
    a['gateway.key_id'] = auth.keyId;
  }
  const reservation = ctx.local(RESERVATION);
  if (reservation !== undefined) a['gateway.msats.reserved'] = reservation.amountMsats;
  const servedBy = ctx.local(SERVED_BY);
  if (servedBy !== undefined) a['gateway.provider'] = servedBy;
  const attempts = ctx.local(CALL_TRACE)?.attempts;
  if (attempts !== undefined) a['gateway.failovers'] = attempts - 1;
  const upstreamCost = ctx.local(UPSTREAM_COST);
  if (upstreamCost !== undefined) a['gateway.msats.upstream'] = upstreamCost;
  const charge = ctx.local(CHARGE);
  if (charge !== undefined) {
    a['gateway.msats.charged'] = charge.msats;
    if (charge.balanceAfterMsat !== undefined) a['gateway.msats.balance_after'] = charge.balanceAfterMsat;
    a['gateway.usage.estimated'] = charge.estimated;
    a['gen_ai.response.model'] = charge.model;
    a['gen_ai.usage.input_tokens'] = charge.promptTokens;
    a['gen_ai.usage.output_tokens'] = charge.completionTokens;
    const u = charge.usage;
    if (u !== undefined) {
      a['gen_ai.usage.cache_read.input_tokens'] = u.cacheRead;
      a['gen_ai.usage.cache_creation.input_tokens'] = u.cacheWrite + u.cacheWrite1h;
      a['gen_ai.usage.reasoning.output_tokens'] = u.reasoning;
      a['gateway.breakdown.input'] = u.input;
      a['gateway.breakdown.input_cache_read'] = u.cacheRead;
      a['gateway.breakdown.input_cache_write'] = u.cacheWrite;
      a['gateway.breakdown.input_cache_write_1h'] = u.cacheWrite1h;
      a['gateway.breakdown.input_audio'] = u.inputAudio;
      a['gateway.breakdown.input_image'] = u.inputImage;
      a['gateway.breakdown.completion'] = u.output;
      a['gateway.breakdown.internal_reasoning'] = u.reasoning;
      a['gateway.breakdown.output_audio'] = u.outputAudio;
      a['gateway.breakdown.web_search'] = u.webSearch;
    }
  }
  return a;
}

function definedOnly(a: OpSpanEvent['attributes']): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = v;
  return out;
}
