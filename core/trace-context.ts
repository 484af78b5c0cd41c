import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { opSpanChannel } from './tracing.js';

/**
 * A call's W3C trace context when OpenTelemetry tracing is on (core/otel-tracing.ts, loaded only then): the trace
 * (the client's, from its `traceparent`, or a new one), the ids of the spans the gateway will export for the call,
 * and whether it is sampled. The relay stage sends the provider a `traceparent` naming the relay span, so the
 * provider's work joins the same trace; the audit record carries the trace id.
 */
export interface CallTrace {
  traceId: string;
  /** The client's span (from its `traceparent`), the call span's parent; absent for a new trace. */
  parentSpanId?: string;
  callSpanId: string;
  relaySpanId: string;
  sampled: boolean;
  /** Providers the relay stage asked (set by it): failovers are this less one. */
  attempts?: number;
}

/** The `traceparent` sent to the provider: the relay span as the parent of the provider's work. */
export function providerTraceparent(t: CallTrace): string {
  return `00-${t.traceId}-${t.relaySpanId}-${t.sampled ? '01' : '00'}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A client's `traceparent` (W3C Trace Context, version 00), or undefined when absent or malformed. */
export function parseTraceparent(
  v: string | undefined,
): { traceId: string; spanId: string; sampled: boolean } | undefined {
  if (v === undefined) return undefined;
  const m = TRACEPARENT.exec(v.trim().toLowerCase());
  if (m === null || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, sampled: (Number.parseInt(m[3]!, 16) & 1) === 1 };
}

/**
 * Tracing is on when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`), unless `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` (the
 * OpenTelemetry SDK environment variables).
 */
export function otelTracesEnabled(env: Record<string, string | undefined>): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** The W3C `traceparent` naming a call's own span (its children and the work it starts join or link to it). */
export function callTraceparent(t: CallTrace): string {
  return `00-${t.traceId}-${t.callSpanId}-${t.sampled ? '01' : '00'}`;
}

/** The attributes of an operation span: numbers (msats, counts), strings, booleans. Never a secret. */
export type OpSpanAttributes = Record<string, string | number | boolean | undefined>;

/**
 * A finished span of work outside the paid pipeline, published on `gateway:span` (core/tracing.ts) and exported
 * by core/otel-tracing.ts: a batch's creation and settlement, a background response's settlement, a payout and its
 * steps. Times are Unix milliseconds (fractional).
 */
export interface OpSpanEvent {
  name: string;
  traceId: string;
  spanId: string;
  /** The parent span (a client's, a call's, or the operation's own root), absent for a new trace. */
  parentSpanId?: string;
  /** The sampled flag of the remote parent the trace continues (parent-based sampling), when there is one. */
  parentSampled?: boolean;
  /** Spans this one follows from without being their child (a batch's settlement → its creation). */
  links: { traceId: string; spanId: string }[];
  startMs: number;
  endMs: number;
  attributes: OpSpanAttributes;
  /** The error's catalogue code (or `error`) when the work failed: never its message. */
  error?: string;
}

const now = (): number => performance.timeOrigin + performance.now();

/**
 * One operation span (see OpSpanEvent), made only while something subscribes to `gateway:span` (tracing on):
 * `startOpSpan` answers undefined otherwise, so with tracing off the money paths only test one flag.
 */
export class OpSpan {
  readonly spanId = randomBytes(8).toString('hex');
  private readonly startMs = now();
  private readonly attributes: OpSpanAttributes;
  private ended = false;

  constructor(
    readonly name: string,
    readonly traceId: string,
    attributes: OpSpanAttributes,
    private readonly parentSpanId: string | undefined,
    private readonly parentSampled: boolean | undefined,
    private readonly links: { traceId: string; spanId: string }[],
  ) {
    this.attributes = { ...attributes };
  }

  /** Adds (or replaces) attributes. */
  set(attributes: OpSpanAttributes): void {
    Object.assign(this.attributes, attributes);
  }

  /** A child span in the same trace. */
  child(name: string, attributes: OpSpanAttributes = {}): OpSpan {
    return new OpSpan(name, this.traceId, attributes, this.spanId, this.parentSampled, []);
  }

  /** `traceparent` naming this span: stored with a job so that its later settlement links back here. */
  traceparent(): string {
    return `00-${this.traceId}-${this.spanId}-01`;
  }

  /** Ends the span (once) and publishes it; `err`: the failure, recorded by its code only. */
  end(err?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const e: OpSpanEvent = {
      name: this.name,
      traceId: this.traceId,
      spanId: this.spanId,
      links: this.links,
      startMs: this.startMs,
      endMs: now(),
      attributes: this.attributes,
      ...(this.parentSpanId !== undefined ? { parentSpanId: this.parentSpanId } : {}),
      ...(this.parentSampled !== undefined ? { parentSampled: this.parentSampled } : {}),
      ...(err !== undefined ? { error: errorCode(err) } : {}),
    };
    if (opSpanChannel.hasSubscribers) opSpanChannel.publish(e);
  }

  /** Runs `fn` as a child span named `name`: ended when it settles, its failure recorded. */
  async step<T>(name: string, fn: () => Promise<T>, attributes?: OpSpanAttributes): Promise<T> {
    const c = this.child(name, attributes);
    try {
      const r = await fn();
      c.end();
      return r;
    } catch (err) {
      c.end(err);
      throw err;
    }
  }
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : 'error';
}

/**
 * Starts an operation span when tracing is on (undefined otherwise; `attributes` as a function is then not even
 * called). `parent`: the `traceparent` of the request
 * that started the work (a client's or a call's), making this span its child in the same trace; `link`: the
 * `traceparent` of earlier work this one follows from (a batch's creation), making this span the root of a trace
 * of its own linked to it. Without either (or with `parent` absent), the request's `traceparent` of a handler route
 * (`activeTraceparent`) is the parent.
 */
export function startOpSpan(
  name: string,
  attributes: OpSpanAttributes | (() => OpSpanAttributes),
  opts: { parent?: string; link?: string } = {},
): OpSpan | undefined {
  if (!opSpanChannel.hasSubscribers) return undefined;
  const linked = parseTraceparent(opts.link);
  const parent = linked === undefined ? parseTraceparent(opts.parent ?? activeTraceparent()) : undefined;
  return new OpSpan(
    name,
    parent?.traceId ?? randomBytes(16).toString('hex'),
    typeof attributes === 'function' ? attributes() : attributes,
    parent?.spanId,
    parent?.sampled,
    linked !== undefined ? [{ traceId: linked.traceId, spanId: linked.spanId }] : [],
  );
}

/** The client's `traceparent` of the handler route running now (set by the router only while tracing is on). */
const routeTrace = new AsyncLocalStorage<string | undefined>();

export function activeTraceparent(): string | undefined {
  return routeTrace.getStore();
}

/** Runs a handler route with its request's `traceparent` at hand for the operation spans it starts. */
export function withRouteTrace<T>(traceparent: string | undefined, fn: () => T): T {
  return routeTrace.run(traceparent, fn);
}

/** Runs `fn` with `span` (undefined while tracing is off) and ends the span when `fn` settles. */
export async function inSpan<T>(
  span: OpSpan | undefined,
  fn: (span: OpSpan | undefined) => Promise<T>,
): Promise<T> {
  if (span === undefined) return fn(undefined);
  try {
    const r = await fn(span);
    span.end();
    return r;
  } catch (err) {
    span.end(err);
    throw err;
  }
}

/** `fn` as the child step `name` of `span` (just `fn` while tracing is off). */
export function spanStep<T>(
  span: OpSpan | undefined,
  name: string,
  fn: () => Promise<T>,
  attributes?: OpSpanAttributes,
): Promise<T> {
  return span === undefined ? fn() : span.step(name, fn, attributes);
}
