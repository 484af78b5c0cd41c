import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../core/audit/audit-log.js';
import { freePort } from '../../scripts/lib/net.js';
import { lnurlRecipientPerSuite } from '../support/lnurl-recipient.js';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';
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
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}
interface ExportTraceServiceRequest {
  resourceSpans: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

const plain = (v: OtlpValue): unknown =>
  v.arrayValue !== undefined
    ? v.arrayValue.values.map(plain)
    : (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue)));
const attrs = (s: OtlpSpan): Record<string, unknown> =>
  Object.fromEntries((s.attributes ?? []).map((a) => [a.key, plain(a.value)]));

const SPAN_KIND_INTERNAL = 1;
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;
const newTraceId = () => randomBytes(16).toString('hex');
const newSpanId = () => randomBytes(8).toString('hex');

const spans: OtlpSpan[] = [];
const resources: Record<string, unknown>[] = [];
let receiver: Server;
let receiverPort = 0;

beforeAll(async () => {
  receiverPort = await freePort();
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
  await new Promise<void>((ok) => receiver.listen(receiverPort, '127.0.0.1', ok));
});
afterAll(async () => {
  await new Promise((ok) => receiver?.close(ok));
});

/** No secret in anything exported: no API key, eCash token, Lightning invoice or preimage, provider key. */
function expectNoSecret(...secrets: string[]): void {
  const exported = JSON.stringify({ spans, resources });
  for (const s of secrets) expect(exported).not.toContain(s);
  expect(exported).not.toMatch(/sk-[A-Za-z0-9]{8,}|cashu[AB][A-Za-z0-9_-]{20,}|lnbc[a-z0-9]{20,}|preimage/i);
}

async function spanNamed(name: string, pred: (s: OtlpSpan) => boolean = () => true): Promise<OtlpSpan> {
  await until(`the ${name} span`, () => spans.some((s) => s.name === name && pred(s)), 15_000);
  return spans.find((s) => s.name === name && pred(s))!;
}

const childrenOf = (s: OtlpSpan) =>
  spans.filter((c) => c.parentSpanId === s.spanId && c.traceId === s.traceId);

describe.each<PaidStore>(['sqlite', 'redis'])('OpenTelemetry traces over OTLP/HTTP on %s', (store) => {
  let h: PaidGateway;
  const saved = { ...process.env };
  /** A Lightning address to refund to: an LNURL server whose invoices are a second dev mint's quotes. */
  const rcpt = lnurlRecipientPerSuite();

  beforeAll(async () => {
    // The standard settings, read by the gateway at start (core/server.ts) and by the OTLP exporter.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${receiverPort}`;
    process.env.OTEL_SERVICE_NAME = 'gw-under-test';
    process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
    h = await startPaidGateway({
      store,
      env: {
        FIXED_PRICING: 'false',
        BTC_USD_PRICE: '100000',
        BATCH_POLL_MS: '50',
        LIGHTNING_ADDRESS_ALLOW_PRIVATE: 'true',
        EXPIRED_KEY_SWEEP: 'false',
      },
      // The routing fee equals the 1 % reserve (a refund to a Lightning address).
      mint: { feeReservePpk: 10_000, lightningFeePpk: 10_000 },
      upstream: { chunks: 5, usage: { cachedTokens: 3, reasoningTokens: 2 } },
    });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    process.env = saved;
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

  /** POSTs `body` to the wallet route `path` with `apiKey`, in the trace `traceparent` names when given. */
  function walletPost(path: string, apiKey: string, body: object, traceparent?: string): Promise<Response> {
    return fetch(`${h.baseURL}/wallet/${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        ...(traceparent ? { traceparent } : {}),
      },
      body: JSON.stringify(body),
    });
  }

  /** The payout span of the trace `traceId`, once exported. */
  const payoutIn = (traceId: string) => spanNamed('payout', (s) => s.traceId === traceId);

  /**
   * POSTs to the wallet route `path` in a client trace of its own; `payout()` is the payout span that made, once
   * exported, a child of the client's span.
   */
  async function inClientTrace(
    path: string,
    apiKey: string,
    body: object,
  ): Promise<{ res: Response; payout(): Promise<OtlpSpan> }> {
    const traceId = newTraceId();
    const clientSpan = newSpanId();
    const res = await walletPost(path, apiKey, body, `00-${traceId}-${clientSpan}-01`);
    const payout = async () => {
      const span = await payoutIn(traceId);
      expect(span.parentSpanId).toBe(clientSpan);
      return span;
    };
    return { res, payout };
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
    const traceId = newTraceId();
    const clientSpan = newSpanId();
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
      'gen_ai.response.id': data.id,
      'gen_ai.response.finish_reasons': ['stop'],
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
    expectNoSecret(apiKey);
    expect(resources.some((r) => r['service.name'] === 'gw-under-test')).toBe(true);
  });

  it('a streamed chat call, a Responses call and an Anthropic Messages call each get their call span', async () => {
    const { apiKey } = await h.fundKey(200);
    const ids = { stream: newTraceId(), responses: newTraceId(), messages: newTraceId() };
    const tp = (t: string) => ({ traceparent: `00-${t}-${newSpanId()}-01` });
    const stream = await h.openai(apiKey, tp(ids.stream)).chat.completions.create({
      model: 'mock-gpt',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream it' }],
    });
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    const chunkIds = new Set<string>();
    for await (const ev of stream) {
      chunkIds.add(ev.id);
      if (ev.usage) usage = ev.usage;
    }
    const response = await h
      .openai(apiKey, tp(ids.responses))
      .responses.create({ model: 'mock-gpt', input: 'respond' });
    const anthropic = new Anthropic({
      apiKey,
      baseURL: h.gateway.url,
      maxRetries: 0,
      defaultHeaders: tp(ids.messages),
    });
    const message = await anthropic.messages.create({
      model: 'mock-gpt',
      max_tokens: 40,
      messages: [{ role: 'user', content: 'hi' }],
    });

    const s = attrs((await callSpans(ids.stream)).call);
    expect(s).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gateway.stream': true,
      'gen_ai.usage.input_tokens': usage!.prompt_tokens,
      'gen_ai.usage.output_tokens': usage!.completion_tokens,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    // Every chunk of a stream names the answer.
    expect([...chunkIds]).toEqual([s['gen_ai.response.id']]);
    expect(s['gateway.msats.charged']).toBeGreaterThan(0);
    const r = attrs((await callSpans(ids.responses)).call);
    expect(r).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'mock-gpt',
      'gen_ai.response.id': response.id,
      'gen_ai.response.finish_reasons': [response.status],
    });
    expect(r['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    await until(
      'the Messages call span',
      () => spans.some((x) => x.traceId === ids.messages && x.kind === SPAN_KIND_SERVER),
      15_000,
    );
    const m = attrs(spans.find((x) => x.traceId === ids.messages && x.kind === SPAN_KIND_SERVER)!);
    expect(m).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.response.id': message.id,
      'gen_ai.response.finish_reasons': [message.stop_reason],
    });
    expectNoSecret(apiKey);
  });

  it('streamed Responses and Messages answers: the id and finish reasons read from their events', async () => {
    const { apiKey } = await h.fundKey(200);
    const ids = { responses: newTraceId(), messages: newTraceId() };
    const tp = (t: string) => ({ traceparent: `00-${t}-${newSpanId()}-01` });
    let completed: { id: string; status?: string } | undefined;
    const rs = await h
      .openai(apiKey, tp(ids.responses))
      .responses.create({ model: 'mock-gpt', input: 'stream a response', stream: true });
    for await (const ev of rs) if (ev.type === 'response.completed') completed = ev.response;
    const anthropic = new Anthropic({
      apiKey,
      baseURL: h.gateway.url,
      maxRetries: 0,
      defaultHeaders: tp(ids.messages),
    });
    const ms = anthropic.messages.stream({
      model: 'mock-gpt',
      max_tokens: 3,
      messages: [{ role: 'user', content: 'stream a message' }],
    });
    const final = await ms.finalMessage();
    expect(completed?.status).toBe('completed');
    expect(final.stop_reason).toBe('max_tokens');
    expect(attrs((await callSpans(ids.responses)).call)).toMatchObject({
      'gateway.stream': true,
      'gen_ai.response.id': completed!.id,
      'gen_ai.response.finish_reasons': ['completed'],
    });
    expect(attrs((await callSpans(ids.messages)).call)).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gateway.stream': true,
      'gen_ai.response.id': final.id,
      'gen_ai.response.finish_reasons': ['max_tokens'],
    });
  });

  it("a batch: its creation in the client's trace, its settlement by the watcher linked to it, the money in msats", async () => {
    const { apiKey, keyId } = await h.fundKey(100);
    const traceId = newTraceId();
    const clientSpan = newSpanId();
    const client = h.openai(apiKey, { traceparent: `00-${traceId}-${clientSpan}-01` });
    let jsonl = '';
    for (let i = 0; i < 3; i++) {
      jsonl += `${JSON.stringify({
        custom_id: `req-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'mock-gpt', max_tokens: 20, messages: [{ role: 'user', content: 'x'.repeat(40) }] },
      })}\n`;
    }
    const file = await client.files.create({
      file: await toFile(Buffer.from(jsonl), 'input.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const create = await spanNamed('batch create', (s) => s.traceId === traceId);
    expect(create.parentSpanId).toBe(clientSpan);
    expect(create.kind).toBe(SPAN_KIND_INTERNAL);
    const c = attrs(create);
    expect(c).toMatchObject({
      'gateway.batch.id': batch.id,
      'gateway.key_id': keyId,
      'gen_ai.request.model': 'mock-gpt',
      'gateway.batch.endpoint': '/v1/chat/completions',
      'gateway.batch.lines': 3,
    });
    expect(c['gateway.job_id']).toMatch(/^b_/);
    // The settlement: a trace of its own, linked to the creation.
    const settle = await spanNamed('batch settle', (x) => attrs(x)['gateway.job_id'] === c['gateway.job_id']);
    expect(settle.traceId).not.toBe(traceId);
    expect(settle.parentSpanId ?? '').toBe('');
    expect(settle.links?.map((l) => [l.traceId, l.spanId])).toEqual([[traceId, create.spanId]]);
    const tx = (await h.ledger.listTransactions({ apiKey }))!.transactions.find((t) => t.type === 'batch')!;
    const a = attrs(settle);
    expect(a).toMatchObject({
      'gateway.batch.id': batch.id,
      'gateway.batch.status': 'completed',
      'gateway.batch.lines': 3,
      'gateway.batch.answered': 3,
      'gateway.batch.failed': 0,
      'gateway.msats.reserved': c['gateway.msats.reserved'],
      'gateway.msats.charged': -tx.amountMsat,
      'gateway.msats.released': (c['gateway.msats.reserved'] as number) + tx.amountMsat,
      'gateway.msats.balance_after': (await h.ledger.getKeyInfo({ apiKey }))!.account.balanceMsat,
      'gateway.settle.replay': false,
    });
    expect(a['gateway.msats.charged']).toBeGreaterThan(0);
    await until('the settlement steps', () => childrenOf(settle).length === 2, 15_000);
    expect(
      childrenOf(settle)
        .map((x) => x.name)
        .sort(),
    ).toEqual(['output', 'settle']);
    expectNoSecret(apiKey);
  });

  it('a background response: the call names it, the watch that settles it links to the call', async () => {
    const { apiKey } = await h.fundKey(100);
    const traceId = newTraceId();
    const r = await h
      .openai(apiKey, { traceparent: `00-${traceId}-${newSpanId()}-01` })
      .responses.create({ model: 'mock-gpt', input: 'in the background', background: true });
    expect(r.status).toBe('queued');
    const { call } = await callSpans(traceId);
    // Not ended at the answer: an id, no finish reason yet, nothing charged by the call.
    expect(attrs(call)['gen_ai.response.id']).toBe(r.id);
    expect(attrs(call)['gen_ai.response.finish_reasons']).toBeUndefined();
    // (Each store's run has its own mock provider, whose response ids start again: the link tells them apart.)
    const settle = await spanNamed(
      'response settle',
      (x) => attrs(x)['gen_ai.response.id'] === r.id && x.links?.[0]?.traceId === traceId,
    );
    expect(settle.links?.map((l) => [l.traceId, l.spanId])).toEqual([[traceId, call.spanId]]);
    const tx = (await h.ledger.listTransactions({ apiKey }))!.transactions.find((t) => t.type === 'usage')!;
    const a = attrs(settle);
    expect(a).toMatchObject({
      'gateway.response.status': 'completed',
      'gateway.msats.reserved': attrs(call)['gateway.msats.reserved'],
      'gateway.msats.charged': -tx.amountMsat,
      'gateway.msats.balance_after': (await h.ledger.getKeyInfo({ apiKey }))!.account.balanceMsat,
      'gateway.settle.replay': false,
    });
    expect(a['gateway.msats.charged']).toBeGreaterThan(0);
    expect(a['gateway.job_id']).toMatch(/^g_/);
  });

  it("payouts: a withdrawal in the client's trace and an X-Cashu call's change under the call, steps and msats, no token", async () => {
    const { apiKey, keyId, balanceMsat } = await h.fundKey(50);
    const w = await inClientTrace('withdraw', apiKey, { amount: 20 });
    expect(w.res.status).toBe(200);
    const withdrawal = (await w.res.json()) as { cashu_token: string; balance: number };
    const payout = await w.payout();
    expect(attrs(payout)).toMatchObject({
      'gateway.payout.kind': 'withdrawal',
      'gateway.payout.method': 'token',
      'gateway.key_id': keyId,
      'gateway.msats.requested': 20_000,
      'gateway.msats.held': 20_000,
      'gateway.msats.paid': 20_000,
      'gateway.msats.balance_after': balanceMsat - 20_000,
      'gateway.cashu.unit': 'sat',
    });
    expect(withdrawal.balance).toBe(balanceMsat - 20_000);
    await until('the payout steps', () => childrenOf(payout).length === 3, 15_000);
    expect(childrenOf(payout).map((x) => x.name)).toEqual(['hold', 'send', 'settle']);

    // A payout refused (more than the balance): the span says so by its code, nothing else.
    const refusedTrace = newTraceId();
    const refused = await walletPost(
      'withdraw',
      apiKey,
      { amount: 1_000 },
      `00-${refusedTrace}-${newSpanId()}-01`,
    );
    expect(refused.status).toBe(402);
    const no = await payoutIn(refusedTrace);
    expect(no.status?.code).toBe(STATUS_ERROR);
    expect(attrs(no)['error.type']).toBe('payment_required');

    // Change of an X-Cashu call: a payout under the call's span.
    const token = await h.mintToken(30);
    const callTrace = newTraceId();
    const res = await h.post(
      '/chat/completions',
      { model: 'mock-gpt', messages: [{ role: 'user', content: 'pay per call' }] },
      { 'x-cashu': token, traceparent: `00-${callTrace}-${newSpanId()}-01` },
    );
    expect(res.status).toBe(200);
    const change = res.headers.get('x-cashu');
    expect(change).toMatch(/^cashu/);
    const { call } = await callSpans(callTrace);
    expect(attrs(call)['gateway.payment.method']).toBe('x_cashu');
    const changePayout = await payoutIn(callTrace);
    expect(changePayout.parentSpanId).toBe(call.spanId);
    const p = attrs(changePayout);
    expect(p).toMatchObject({
      'gateway.payout.kind': 'refund',
      'gateway.msats.balance_after': 0,
      'gateway.key_id': attrs(call)['gateway.key_id'],
    });
    expect(p['gateway.msats.paid']).toBe(30_000 - (attrs(call)['gateway.msats.charged'] as number));
    expect(await h.redeem(change!)).toBe((p['gateway.msats.paid'] as number) / 1000);
    expectNoSecret(apiKey, token, change!, withdrawal.cashu_token);
  });

  it('a refund to a Lightning address: a payout span with hold, quote, melt and settle, no invoice or preimage', async () => {
    const { apiKey, keyId } = await h.fundKey(1000);
    const set = await walletPost('update', apiKey, { refund_address: rcpt.lnurl.address('alice') });
    expect(set.status).toBe(200);
    const before = rcpt.lnurl.invoices.length;
    const r = await inClientTrace('refund', apiKey, { to: 'refund_address' });
    const refund = (await r.res.json()) as {
      amount_msats: number;
      fee_msats: number;
      payment_preimage: string;
    };
    expect(r.res.status).toBe(200);
    // 1,000 sats do not cover 1,000 + a 10-sat reserve: 990 sats sent, the 10-sat reserve charged as the fee.
    expect(refund).toMatchObject({ amount_msats: 990_000, fee_msats: 10_000 });
    const payout = await r.payout();
    expect(attrs(payout)).toMatchObject({
      'gateway.payout.kind': 'refund',
      'gateway.payout.method': 'lightning',
      'gateway.key_id': keyId,
      'gateway.msats.held': 1_000_000,
      'gateway.msats.paid': 990_000,
      'gateway.msats.fee': 10_000,
      'gateway.msats.fee_reserve': 10_000,
      'gateway.msats.balance_after': 0,
    });
    await until('the refund steps', () => childrenOf(payout).length === 4, 15_000);
    expect(childrenOf(payout).map((x) => x.name)).toEqual(['hold', 'quote', 'melt', 'settle']);
    expectNoSecret(apiKey, refund.payment_preimage, ...rcpt.lnurl.invoices.slice(before));
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
