import { createLocalKey } from './context.js';

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

export const CALL_TRACE = createLocalKey<CallTrace>('call-trace');

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
