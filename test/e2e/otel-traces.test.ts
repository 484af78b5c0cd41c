import { createServer, type Server } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../core/audit/audit-log.js';
import { freePort } from '../../scripts/lib/net.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * OpenTelemetry traces (README, "Tracing"): a gateway with OTEL_EXPORTER_OTLP_ENDPOINT set exports, over
 * OTLP/HTTP, one span per paid call with the GenAI semantic conventions' attributes and the gateway's own
 * (`gateway.*`), child spans reserve, relay and settle, in the client's trace (its `traceparent`), the relay
 * span named in the `traceparent` the provider received, the trace id in the call's audit record, and no
 * secret in any attribute. The receiver is a plain HTTP server started here; the OTLP/HTTP JSON encoding
 * (ExportTraceServiceRequest: resourceSpans → scopeSpans → spans, ids in hex) is decoded as the OTLP
 * specification defines it.
 */

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: OtlpValue }[];
  events?: { name: string }[];
}
interface ExportTraceServiceRequest {
  resourceSpans: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

const plain = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attrs = (s: OtlpSpan): Record<string, unknown> =>
  Object.fromEntries((s.attributes ?? []).map((a) => [a.key, plain(a.value)]));

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

describe('OpenTelemetry traces over OTLP/HTTP', () => {
  let receiver: Server;
  const spans: OtlpSpan[] = [];
  const resources: Record<string, unknown>[] = [];
  let h: PaidGateway;
  const saved = { ...process.env };

  beforeAll(async () => {
    const port = await freePort();
    receiver = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        expect(req.url).toBe('/v1/traces');
        const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as ExportTraceServiceRequest;
        for (const rs of body.resourceSpans) {
          resources.push(
            Object.fromEntries((rs.resource?.attributes ?? []).map((a) => [a.key, plain(a.value)])),
          );
          for (const ss of rs.scopeSpans) spans.push(...ss.spans);
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((ok) => receiver.listen(port, '127.0.0.1', ok));
    // The standard settings, read by the gateway at start (core/server.ts) and by the OTLP exporter.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
    process.env.OTEL_SERVICE_NAME = 'gw-under-test';
    process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
    h = await startPaidGateway({
      store: 'sqlite',
      env: { FIXED_PRICING: 'false', BTC_USD_PRICE: '100000' },
      upstream: { chunks: 5, usage: { cachedTokens: 3, reasoningTokens: 2 } },
    });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    process.env = saved;
    await new Promise((ok) => receiver?.close(ok));
  });

  /** The call span of `requestId` and its children, once exported. */
  async function callSpans(traceId: string): Promise<{ call: OtlpSpan; children: OtlpSpan[] }> {
    await until(
      'the call span and its children',
      () => spans.some((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER),
      15_000,
    );
    const call = spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER)!;
    await until(
      'the child spans',
      () => spans.filter((s) => s.parentSpanId === call.spanId).length >= 3,
      15_000,
    );
    return { call, children: spans.filter((s) => s.parentSpanId === call.spanId) };
  }

  async function auditOf(apiKey: string): Promise<AuditRecord[]> {
    const res = await fetch(`${h.baseURL}/wallet/audit?limit=10`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: AuditRecord[] }).data;
  }

  it('a chat call in the client trace: GenAI attributes, money attributes, reserve/relay/settle, traceparent to the provider, trace id in the audit record', async () => {
    const { apiKey, keyId, balanceMsat } = await h.fundKey(100);
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const clientSpan = '0123456789abcdef';
    const client = h.openai(apiKey, { traceparent: `00-${traceId}-${clientSpan}-01` });
    const { data, response } = await client.chat.completions
      .create({ model: 'mock-gpt', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    const { call, children } = await callSpans(traceId);
    expect(call.parentSpanId).toBe(clientSpan);
    expect(call.name).toBe('chat mock-gpt');
    const a = attrs(call);
    const charged = Number(response.headers.get('x-node-cost'));
    expect(a).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'mock-gpt',
      'gen_ai.request.max_tokens': 50,
      'gen_ai.response.model': 'mock-gpt',
      'gen_ai.usage.input_tokens': data.usage!.prompt_tokens,
      'gen_ai.usage.output_tokens': data.usage!.completion_tokens,
      'gen_ai.usage.cache_read.input_tokens': 3,
      'gen_ai.usage.reasoning.output_tokens': 2,
      'gateway.payment.method': 'api_key',
      'gateway.key_id': keyId,
      'gateway.msats.charged': charged,
      'gateway.msats.balance_after': balanceMsat - charged,
      'gateway.failovers': 0,
      'http.response.status_code': 200,
    });
    expect(a['gateway.msats.reserved']).toBeGreaterThanOrEqual(charged);
    expect(a['gateway.breakdown.input_cache_read']).toBe(3);
    expect(children.map((s) => s.name).sort()).toEqual(['relay', 'reserve', 'settle']);
    const relay = children.find((s) => s.name === 'relay')!;
    expect(relay.kind).toBe(SPAN_KIND_CLIENT);
    expect(relay.events?.map((e) => e.name)).toEqual(['first_byte']);
    // The provider's request carried the same trace, with the relay span as its parent.
    expect(h.upstream.stats.lastHeaders?.traceparent).toBe(`00-${traceId}-${relay.spanId}-01`);
    // Spans nest in time: the call covers its children.
    for (const c of children) {
      expect(BigInt(c.startTimeUnixNano) >= BigInt(call.startTimeUnixNano)).toBe(true);
      expect(BigInt(c.endTimeUnixNano) <= BigInt(call.endTimeUnixNano)).toBe(true);
    }
    const audit = await auditOf(apiKey);
    expect(audit.find((r) => r.endpoint === '/v1/chat/completions')?.trace_id).toBe(traceId);
    // No secret anywhere in what was exported: neither the key nor the provider's key.
    const exported = JSON.stringify({ spans, resources });
    expect(exported).not.toContain(apiKey);
    expect(exported).not.toMatch(/sk-[A-Za-z0-9]{8,}|cashu[AB][A-Za-z0-9_-]{20,}/);
    expect(resources.some((r) => r['service.name'] === 'gw-under-test')).toBe(true);
  });

  it('a streamed chat call, a Responses call and an Anthropic Messages call each get their call span', async () => {
    const { apiKey } = await h.fundKey(200);
    const ids = {
      stream: 'b1b2c3d4e5f60718293a4b5c6d7e8f90',
      responses: 'c1b2c3d4e5f60718293a4b5c6d7e8f90',
      messages: 'd1b2c3d4e5f60718293a4b5c6d7e8f90',
    };
    const tp = (t: string) => ({ traceparent: `00-${t}-0123456789abcdef-01` });
    const stream = await h.openai(apiKey, tp(ids.stream)).chat.completions.create({
      model: 'mock-gpt',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream it' }],
    });
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const ev of stream) if (ev.usage) usage = ev.usage;
    await h.openai(apiKey, tp(ids.responses)).responses.create({ model: 'mock-gpt', input: 'respond' });
    const anthropic = new Anthropic({
      apiKey,
      baseURL: h.gateway.url,
      maxRetries: 0,
      defaultHeaders: tp(ids.messages),
    });
    await anthropic.messages
      .create({ model: 'mock-gpt', max_tokens: 40, messages: [{ role: 'user', content: 'hi' }] })
      .catch(() => undefined);

    const s = attrs((await callSpans(ids.stream)).call);
    expect(s).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gateway.stream': true,
      'gen_ai.usage.input_tokens': usage!.prompt_tokens,
      'gen_ai.usage.output_tokens': usage!.completion_tokens,
    });
    expect(s['gateway.msats.charged']).toBeGreaterThan(0);
    const r = attrs((await callSpans(ids.responses)).call);
    expect(r).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'mock-gpt' });
    expect(r['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    await until(
      'the Messages call span',
      () => spans.some((x) => x.traceId === ids.messages && x.kind === SPAN_KIND_SERVER),
      15_000,
    );
    const m = attrs(spans.find((x) => x.traceId === ids.messages && x.kind === SPAN_KIND_SERVER)!);
    expect(m).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic' });
    expect(JSON.stringify(spans)).not.toContain(apiKey);
  });

  it('without a traceparent a call starts its own trace, and its audit record names it', async () => {
    const { apiKey } = await h.fundKey(50);
    await h
      .openai(apiKey)
      .chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'x' }] });
    const audit = await auditOf(apiKey);
    const traceId = audit.find((r) => r.endpoint === '/v1/chat/completions')?.trace_id;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const { call } = await callSpans(traceId!);
    expect(call.parentSpanId ?? '').toBe('');
    expect(h.upstream.stats.lastHeaders?.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });
});
