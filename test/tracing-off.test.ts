import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { samplerFromEnv } from '../core/otel-tracing.js';
import { otelTracesEnabled, parseTraceparent, startOpSpan } from '../core/trace-context.js';
import {
  opSpanChannel,
  requestEndChannel,
  requestStartChannel,
  responseChunkChannel,
  stageChannel,
} from '../core/tracing.js';
import { testGatewayPerSuite } from './support/gateway.js';

/**
 * OpenTelemetry tracing is off unless an OTLP endpoint is set (README, "Tracing"): a gateway started without one
 * subscribes to none of the tracing channels (the start and stage events are then never published). And the
 * settings it reads.
 */
describe('tracing off by default', () => {
  const gw = testGatewayPerSuite({ engine: 'node' });

  it('a gateway without an OTLP endpoint subscribes to no tracing channel of its own', async () => {
    expect(process.env.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect((await fetch(`${gw.url}/v1/info`)).status).toBe(200);
    expect(requestStartChannel.hasSubscribers).toBe(false);
    expect(stageChannel.hasSubscribers).toBe(false);
    expect(responseChunkChannel.hasSubscribers).toBe(false);
    expect(opSpanChannel.hasSubscribers).toBe(false);
    // Batches, background responses and payouts make no span object at all.
    expect(startOpSpan('payout', { 'gateway.msats.held': 1 })).toBeUndefined();
    // The end channel always has the metrics and console statistics (core/metrics.ts): OpenTelemetry adds none.
    expect(requestEndChannel.hasSubscribers).toBe(true);
  });

  it('is on only with an endpoint, and OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none keep it off', () => {
    expect(otelTracesEnabled({})).toBe(false);
    expect(otelTracesEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(otelTracesEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(
      true,
    );
    expect(otelTracesEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_SDK_DISABLED: 'true' })).toBe(
      false,
    );
    expect(otelTracesEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_TRACES_EXPORTER: 'none' })).toBe(
      false,
    );
  });

  it('reads a client traceparent (W3C version 00) and refuses malformed or all-zero ids', () => {
    expect(parseTraceparent('00-a1b2c3d4e5f60718293a4b5c6d7e8f90-0123456789abcdef-01')).toEqual({
      traceId: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
      spanId: '0123456789abcdef',
      sampled: true,
    });
    expect(parseTraceparent('00-a1b2c3d4e5f60718293a4b5c6d7e8f90-0123456789abcdef-00')?.sampled).toBe(false);
    expect(parseTraceparent('00-00000000000000000000000000000000-0123456789abcdef-01')).toBeUndefined();
    expect(parseTraceparent('00-a1b2c3d4e5f60718293a4b5c6d7e8f90-0000000000000000-01')).toBeUndefined();
    expect(parseTraceparent('garbage')).toBeUndefined();
    expect(parseTraceparent(undefined)).toBeUndefined();
  });

  it('samples as OTEL_TRACES_SAMPLER and _ARG say', () => {
    const ids = Array.from({ length: 2000 }, () => randomBytes(16).toString('hex'));
    const share = (env: Record<string, string>) =>
      ids.filter((t) => samplerFromEnv(env).root(t)).length / ids.length;
    expect(share({})).toBe(1);
    expect(samplerFromEnv({}).parentBased).toBe(true);
    expect(share({ OTEL_TRACES_SAMPLER: 'always_off' })).toBe(0);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_on' }).parentBased).toBe(false);
    const ratio = share({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' });
    expect(ratio).toBeGreaterThan(0.15);
    expect(ratio).toBeLessThan(0.35);
  });
});
