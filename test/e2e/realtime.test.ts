import { request as httpRequest } from 'node:http';
import { connect as netConnect } from 'node:net';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  billMsat,
  pcm,
  REALTIME_MODELS,
  REALTIME_PRICING_ENV,
  type RealtimeBillUsage,
  userText,
} from '../../bench/upstream/realtime-rig.js';
import type { HttpEngine } from '../../core/config.js';
import { realtimeSessionMsats } from '../../core/metrics.js';
import type { PaidGateway, PaidStore } from '../support/paid-gateway.js';
import { paidGatewayPerSuite } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * Realtime sessions over WebSocket, paid as they go, with the official `openai` SDK's Realtime client
 * (`openai/realtime/ws`) against the mock provider's Realtime double (bench/upstream/mock-realtime.ts), which
 * bills each response in `usage` as OpenAI does. On both stores and both engines (node:http through `ws`, uWS
 * natively).
 *
 * Prices: bench/upstream/realtime-rig.ts (msats per token: text in 4, cached text 1, audio in 32, cached audio
 * 2, text out 16, audio out 64). The double bills audio in at 10 tokens a second, audio out at 20, text items at
 * ceil(chars / 4).
 *
 * The SDK always dials wss://; TLS terminates in front of a gateway, so the tests hand the SDK a plain TCP
 * connection (`createConnection`) to the gateway's port.
 */
const ENV = {
  ...REALTIME_PRICING_ENV,
  REALTIME_MAX_FRAME_BYTES: String(64 * 1024),
  UPSTREAM_API_KEY: 'sk-operator-realtime',
};
const MODELS = REALTIME_MODELS;
const ENGINES: HttpEngine[] = ['node', 'uws'];
const STORES_ENGINES = (['sqlite', 'redis'] as const).flatMap((store) =>
  ENGINES.map((engine) => [store, engine] as [PaidStore, HttpEngine]),
);

type Ev = { type: string; [k: string]: unknown };

interface Client {
  rt: OpenAIRealtimeWS;
  events: Ev[];
  closed: { code: number; reason: string } | undefined;
  send(e: Record<string, unknown>): void;
  waitFor(type: string, n?: number): Promise<Ev>;
  waitClosed(): Promise<{ code: number; reason: string }>;
}

async function connect(h: PaidGateway, apiKey: string): Promise<Client> {
  const rt = new OpenAIRealtimeWS(
    {
      model: 'mock-realtime',
      options: { createConnection: (o: { host?: string; port?: number }) => netConnect(o.port!, o.host!) },
    } as ConstructorParameters<typeof OpenAIRealtimeWS>[0],
    h.openai(apiKey),
  );
  const c: Client = {
    rt,
    events: [],
    closed: undefined,
    send: (e) => rt.send(e as never),
    async waitFor(type, n = 1) {
      await until(`${n} × ${type}`, () => c.events.filter((e) => e.type === type).length >= n);
      return c.events.filter((e) => e.type === type)[n - 1]!;
    },
    async waitClosed() {
      await until('the socket closed', () => c.closed !== undefined);
      return c.closed!;
    },
  };
  rt.on('event', (e) => c.events.push(e as unknown as Ev));
  rt.on('error', () => undefined);
  rt.socket.on('close', (code, reason) => {
    c.closed = { code, reason: reason.toString() };
  });
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  return c;
}

/** The user message the tests send (7 input tokens at the mock provider). */
const HELLO = userText('Hello there, how are you?');

/** `c` sends the hello and asks for a response. */
function askHello(c: Client): void {
  c.send(HELLO);
  c.send({ type: 'response.create' });
}

async function sessionMsatsSum(): Promise<number> {
  const m = await realtimeSessionMsats.get();
  return m.values.find((v) => v.metricName === 'gateway_realtime_session_msats_sum')?.value ?? 0;
}

async function settledBalance(h: PaidGateway, apiKey: string): Promise<number> {
  await until('nothing reserved', async () => {
    const info = await h.ledger.getKeyInfo({ apiKey });
    return info !== null && info.usage.reservedMsat === 0;
  });
  return (await h.ledger.getKeyInfo({ apiKey }))!.account.balanceMsat;
}

describe.each(STORES_ENGINES)('Realtime over WebSocket on %s, %s engine', (store, engine) => {
  const h = paidGatewayPerSuite({ store, engine, modelsFile: MODELS, env: ENV });
  beforeEach(() => {
    h.upstream.realtime.behaviour = {
      textTokens: 8,
      audioOutMs: 1000,
      cached: undefined,
      vadMs: 500,
      deltaDelayMs: 0,
      dropAfterDeltas: undefined,
      transcription: 'tokens',
    };
  });

  it('three responses (text, audio, cached input) are each charged what the provider billed, in gateway.cost and the balance', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(1000);
    expect(balanceMsat).toBe(1_000_000);
    const c = await connect(h, apiKey);
    await c.waitFor('session.created');
    // The operator's key went to the provider, never the caller's.
    expect(h.upstream.realtime.stats.lastHeaders?.authorization).toBe('Bearer sk-operator-realtime');

    // 1. Text: 7 input tokens × 4 + 8 output × 16 = 156.
    askHello(c);
    const cost1 = await c.waitFor('gateway.cost');
    expect(cost1.msats).toBe(156);
    expect((cost1.breakdown as { dimensions: Record<string, number> }).dimensions).toEqual({
      prompt: 28,
      completion: 128,
      fees: 0,
    });
    // Each gateway.cost follows its response.done.
    const types = c.events.map((e) => e.type);
    expect(types.indexOf('gateway.cost')).toBeGreaterThan(types.indexOf('response.done'));

    // 2. Audio in and out: 1 s appended (10 tokens), context 15 text; 1 s of audio out (20 tokens):
    //    15 × 4 + 10 × 32 + 20 × 64 = 60 + 320 + 1,280 = 1,660.
    c.send({ type: 'input_audio_buffer.append', audio: pcm(500) });
    c.send({ type: 'input_audio_buffer.append', audio: pcm(500) });
    c.send({ type: 'input_audio_buffer.commit' });
    c.send({ type: 'response.create', response: { output_modalities: ['audio'] } });
    const cost2 = await c.waitFor('gateway.cost', 2);
    expect(cost2.msats).toBe(1660);
    expect(c.events.some((e) => e.type === 'response.output_audio.delta')).toBe(true);

    // 3. Cached input: context 17 text (10 cached) and 30 audio (10 cached); 8 out:
    //    7 × 4 + 10 × 1 + 20 × 32 + 10 × 2 + 8 × 16 = 28 + 10 + 640 + 20 + 128 = 826.
    h.upstream.realtime.behaviour.cached = { text: 10, audio: 10 };
    c.send(userText('Again'));
    c.send({ type: 'response.create' });
    const cost3 = await c.waitFor('gateway.cost', 3);
    expect(cost3.msats).toBe(826);
    expect((cost3.breakdown as { dimensions: Record<string, number> }).dimensions).toEqual({
      prompt: 28,
      input_cache_read: 10,
      input_audio: 640,
      input_audio_cache_read: 20,
      completion: 128,
      fees: 0,
    });
    expect(cost3.session_msats).toBe(2642);
    const before = await sessionMsatsSum();
    c.rt.close();
    await c.waitClosed();
    expect(await settledBalance(h, apiKey)).toBe(1_000_000 - 2642);
    // The session's charge in gateway_realtime_session_msats (one observation of 2,642).
    await until('the session metric', async () => (await sessionMsatsSum()) - before === 2642);
    // Nothing but the three responses was charged: three usage transactions.
    const page = await h.ledger.listTransactions({ apiKey }, { limit: 10 });
    const usage = page!.transactions.filter((t) => t.type === 'usage' && t.amountMsat !== 0);
    expect(usage.map((t) => -t.amountMsat).sort((a, b) => a - b)).toEqual([156, 826, 1660]);
  });

  it('a balance that runs out: error insufficient_balance, close 4402, charged exactly the bills, nothing reserved after', async () => {
    const { apiKey } = await h.fundKey(300);
    h.upstream.realtime.behaviour.audioOutMs = 30_000;
    const c = await connect(h, apiKey);
    askHello(c);
    expect((await c.waitFor('gateway.cost')).msats).toBe(156);
    // 30 s of audio out = 600 tokens × 64 + 15 × 4 = 38,460: the next response (615 tokens of context at the
    // dearest input rate, 32, and 4,096 output tokens at 64) no longer fits the 261,384 left.
    c.send({ type: 'response.create', response: { output_modalities: ['audio'] } });
    const err = await c.waitFor('error');
    expect(err.error).toMatchObject({
      code: 'insufficient_balance',
      details: { balance: 261_384, needed: 615 * 32 + 4096 * 64 },
    });
    expect((await c.waitClosed()).code).toBe(4402);
    expect(c.events.filter((e) => e.type === 'gateway.cost').map((e) => e.msats)).toEqual([156, 38_460]);
    expect(await settledBalance(h, apiKey)).toBe(300_000 - 156 - 38_460);
    // Nothing reached the provider after the refusal: the last event it received is the response.create.
    expect(h.upstream.realtime.stats.received.at(-1)).toBe('response.create');
  });

  /** A funded key's realtime connection whose session was updated to `session`. */
  async function updatedSession(session: Record<string, unknown>) {
    const { apiKey } = await h.fundKey(1000);
    const c = await connect(h, apiKey);
    c.send({ type: 'session.update', session });
    await c.waitFor('session.updated');
    return { apiKey, c };
  }

  it('server VAD: the response the provider starts on its own is covered and charged', async () => {
    const { apiKey, c } = await updatedSession({
      type: 'realtime',
      audio: { input: { turn_detection: { type: 'server_vad' } } },
    });
    // 500 ms: the double's VAD ends the turn and responds: 5 audio tokens × 32 + 8 × 16 = 288.
    c.send({ type: 'input_audio_buffer.append', audio: pcm(500) });
    const cost = await c.waitFor('gateway.cost');
    expect(cost.msats).toBe(288);
    expect(c.events.some((e) => e.type === 'input_audio_buffer.speech_stopped')).toBe(true);
    c.rt.close();
    await c.waitClosed();
    expect(await settledBalance(h, apiKey)).toBe(1_000_000 - 288);
  });

  it('input audio transcription is charged at its model’s price with the next response', async () => {
    const { apiKey, c } = await updatedSession({
      type: 'realtime',
      audio: { input: { transcription: { model: 'mock-transcribe' } } },
    });
    // 2 s: 20 audio tokens. Transcription: 20 × 3 + 3 × 5 = 75. Response: 20 × 32 + 8 × 16 = 768.
    for (let i = 0; i < 4; i++) c.send({ type: 'input_audio_buffer.append', audio: pcm(500) });
    c.send({ type: 'input_audio_buffer.commit' });
    await c.waitFor('conversation.item.input_audio_transcription.completed');
    c.send({ type: 'response.create' });
    const cost = await c.waitFor('gateway.cost');
    expect(cost.msats).toBe(768 + 75);
    expect(cost.transcription_msats).toBe(75);
    c.rt.close();
    await c.waitClosed();
    expect(await settledBalance(h, apiKey)).toBe(1_000_000 - 843);
  });

  it('a client that vanishes mid-response: the response is still settled from the provider’s response.done', async () => {
    const { apiKey } = await h.fundKey(1000);
    h.upstream.realtime.behaviour.textTokens = 20;
    h.upstream.realtime.behaviour.deltaDelayMs = 20;
    const c = await connect(h, apiKey);
    askHello(c);
    await c.waitFor('response.output_text.delta');
    c.rt.socket.terminate();
    // 7 × 4 + 20 × 16 = 348, billed by the provider after the client left.
    await until('the provider finished', () => h.upstream.realtime.stats.responses >= 1);
    expect(await settledBalance(h, apiKey)).toBe(1_000_000 - 348);
  });

  it('a provider that drops the socket: the client is told (1014) and what arrived is charged once, estimated', async () => {
    const { apiKey } = await h.fundKey(1000);
    h.upstream.realtime.behaviour.dropAfterDeltas = 3;
    const c = await connect(h, apiKey);
    askHello(c);
    const err = await c.waitFor('error');
    expect(err.error).toMatchObject({ code: 'upstream_error' });
    expect((await c.waitClosed()).code).toBe(1014);
    const balance = await settledBalance(h, apiKey);
    const page = await h.ledger.listTransactions({ apiKey }, { limit: 10 });
    const usage = page!.transactions.filter((t) => t.type === 'usage' && t.amountMsat !== 0);
    expect(usage).toHaveLength(1);
    expect(usage[0]!.estimated).toBe(true);
    // 3 output tokens arrived (3 × 16); the input sent is estimated at 4 characters a token of its events (× 4).
    const sentChars = JSON.stringify(HELLO).length + JSON.stringify({ type: 'response.create' }).length;
    expect(-usage[0]!.amountMsat).toBe(Math.ceil(sentChars / 4) * 4 + 3 * 16);
    expect(balance).toBe(1_000_000 + usage[0]!.amountMsat);
  });

  it.each([
    ['binary', 1003, (c: Client) => c.rt.socket.send(Buffer.from([1, 2, 3]))],
    ['invalid JSON', 1007, (c: Client) => c.rt.socket.send('{"type": nope')],
    [
      'oversized',
      1009,
      (c: Client) => c.rt.socket.send(JSON.stringify({ type: 'x', pad: 'a'.repeat(70_000) })),
    ],
  ] as const)(
    'a hostile frame (%s) closes with %i, after one charged response, nothing charged twice',
    async (_what, code, hostile) => {
      const { apiKey } = await h.fundKey(1000);
      const c = await connect(h, apiKey);
      askHello(c);
      expect((await c.waitFor('gateway.cost')).msats).toBe(156);
      hostile(c);
      expect((await c.waitClosed()).code).toBe(code);
      expect(await settledBalance(h, apiKey)).toBe(1_000_000 - 156);
    },
  );

  it('a frame over twice REALTIME_MAX_FRAME_BYTES: 1009 on node:http; on uWS cut before the gateway sees it (1006); nothing charged twice', async () => {
    const { apiKey } = await h.fundKey(1000);
    const c = await connect(h, apiKey);
    askHello(c);
    expect((await c.waitFor('gateway.cost')).msats).toBe(156);
    c.rt.socket.send(JSON.stringify({ type: 'x', pad: 'a'.repeat(200_000) }));
    expect((await c.waitClosed()).code).toBe(engine === 'uws' ? 1006 : 1009);
    expect(await settledBalance(h, apiKey)).toBe(1_000_000 - 156);
  });

  it('a browser’s key subprotocol authenticates (the answer names `realtime`, never the key); an eCash token pays in whole sats', async () => {
    const { apiKey } = await h.fundKey(1000);
    const u = new URL(h.gateway.url);
    const ws = new WebSocket(`ws://${u.host}/v1/realtime?model=mock-realtime`, [
      'realtime',
      `openai-insecure-api-key.${apiKey}`,
    ]);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    expect(ws.protocol).toBe('realtime');
    ws.close();
    await new Promise((r) => ws.once('close', r));
    expect(await settledBalance(h, apiKey)).toBe(1_000_000);

    // A bearer eCash token of 300 sats: 156 msats are charged as 1,000 (whole units of the token's sat).
    const token = await h.mintToken(300);
    const c = await connect(h, token);
    askHello(c);
    expect((await c.waitFor('gateway.cost')).msats).toBe(1000);
    c.rt.close();
    await c.waitClosed();
    await until('the token identity settled', async () => (await h.available(token)) === 299_000);
  });

  it('refuses before the upgrade: no credential 401, unknown model 404, client_secrets stays refused', async () => {
    const res = await fetch(`${h.gateway.url}/v1/realtime?model=mock-realtime`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    }).catch((e: unknown) => e);
    // fetch refuses upgrade requests itself; the SDK's handshake is what clients do:
    expect(res).toBeDefined();
    const { apiKey } = await h.fundKey(10);
    await expect(connect(h, 'sk-nope')).rejects.toThrow(/401/);
    const bad = new OpenAIRealtimeWS(
      {
        model: 'no-such-model',
        options: { createConnection: (o: { host?: string; port?: number }) => netConnect(o.port!, o.host!) },
      } as ConstructorParameters<typeof OpenAIRealtimeWS>[0],
      h.openai(apiKey),
    );
    bad.on('error', () => undefined);
    const status = await new Promise<number>((resolve) =>
      bad.socket.once('unexpected-response', (_req, r) => resolve(r.statusCode ?? 0)),
    );
    expect(status).toBe(404);
    const secrets = await h.post('/realtime/client_secrets', {}, { authorization: `Bearer ${apiKey}` });
    expect(secrets.status).toBe(404);
    expect(((await secrets.json()) as { error: { code: string } }).error.code).toBe('endpoint_not_enabled');
  });
});

describe.each(ENGINES)('Realtime session limits and lifecycle (sqlite, %s engine)', (engine) => {
  const h = paidGatewayPerSuite({
    store: 'sqlite',
    engine,
    modelsFile: MODELS,
    env: { ...ENV, REALTIME_IDLE_TIMEOUT_MS: '600', REALTIME_SESSIONS_PER_KEY: '1' },
  });

  it('a second session of the same key is refused 429 too_many_sessions before the upgrade', async () => {
    const { apiKey } = await h.fundKey(1000);
    const first = await connect(h, apiKey);
    await expect(connect(h, apiKey)).rejects.toThrow(/429/);
    first.rt.close();
    await first.waitClosed();
    expect(await settledBalance(h, apiKey)).toBe(1_000_000);
  });

  it('a request asking for another upgrade (curl --http2 sends Upgrade: h2c) is answered as the plain request it is', async () => {
    const u = new URL(h.gateway.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({
        host: u.hostname,
        port: u.port,
        path: '/healthz',
        headers: {
          connection: 'Upgrade, HTTP2-Settings',
          upgrade: 'h2c',
          'http2-settings': 'AAMAAABkAAQCAAAAAAIAAAAA',
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('ok');
  });

  it('an idle session closes with 4000 and releases its reservation, nothing charged', async () => {
    const { apiKey } = await h.fundKey(1000);
    const c = await connect(h, apiKey);
    expect((await c.waitClosed()).code).toBe(4000);
    expect(await settledBalance(h, apiKey)).toBe(1_000_000);
  });
});

describe.each(ENGINES)('Realtime sessions at shutdown (sqlite, %s engine)', (engine) => {
  // The gateway is closed by the test: no audit after it (its store is closed); the charge is read from the
  // gateway.cost event, sent only once the store step charged it.
  const h = paidGatewayPerSuite(
    { store: 'sqlite', engine, modelsFile: MODELS, env: ENV },
    { auditEachTest: false },
  );

  it('shutdown: a response in flight is settled, then the client gets 1001', async () => {
    const { apiKey } = await h.fundKey(1000);
    h.upstream.realtime.behaviour = { ...h.upstream.realtime.behaviour, textTokens: 10, deltaDelayMs: 20 };
    const c = await connect(h, apiKey);
    askHello(c);
    await c.waitFor('response.output_text.delta');
    const closed = h.gateway.close(10_000);
    expect((await c.waitClosed()).code).toBe(1001);
    // 7 × 4 + 10 × 16 = 188, settled before the close.
    const cost = c.events.find((e) => e.type === 'gateway.cost');
    expect(cost?.msats).toBe(188);
    // Nothing reserved any more: what the key can spend is its balance.
    expect(cost?.balance_msats).toBe(1_000_000 - 188);
    expect(await closed).toBe(true);
  });
});

describe.each(STORES_ENGINES)('Realtime slow readers on %s, %s engine', (store, engine) => {
  const h = paidGatewayPerSuite({
    store,
    engine,
    modelsFile: MODELS,
    env: { ...ENV, REALTIME_MAX_BUFFERED_BYTES: String(64 * 1024), REALTIME_SLOW_READER_MS: '300' },
  });

  it('a client that does not read while a long audio response streams is closed 4008; the response is still charged what the provider billed', async () => {
    const { apiKey } = await h.fundKey(1000);
    // 200 s of audio out: 2,000 deltas of 6.4 KB (≈ 13 MB), sent at once: more than the kernel buffers hold.
    h.upstream.realtime.behaviour.audioOutMs = 200_000;
    const c = await connect(h, apiKey);
    await c.waitFor('session.created');
    const billsBefore = h.upstream.realtime.stats.bills.length;
    c.rt.socket.pause();
    c.send(HELLO);
    c.send({ type: 'response.create', response: { output_modalities: ['audio'] } });
    // The gateway stops relaying to the client, reads the provider on and settles the response from its
    // response.done, then releases the rest: nothing reserved, while the client still has not read a byte.
    await until('the response billed', () => h.upstream.realtime.stats.bills.length > billsBefore);
    const bill = h.upstream.realtime.stats.bills.at(-1)!;
    // 7 text tokens in × 4 + 4,000 audio tokens out × 64.
    expect(billMsat(bill.usage as RealtimeBillUsage)).toBe(7 * 4 + 4000 * 64);
    expect(await settledBalance(h, apiKey)).toBe(1_000_000 - (7 * 4 + 4000 * 64));
    // Now the client reads: its backlog (not the whole response: the gateway stopped relaying), then the close.
    c.rt.socket.resume();
    expect((await c.waitClosed()).code).toBe(4008);
    const deltas = c.events.filter((e) => e.type === 'response.output_audio.delta').length;
    expect(deltas).toBeLessThan(2000);
    expect(c.events.some((e) => e.type === 'gateway.cost')).toBe(false);
  });
});

describe.each(STORES_ENGINES)('Realtime maximum session length on %s, %s engine', (store, engine) => {
  const h = paidGatewayPerSuite({
    store,
    engine,
    modelsFile: MODELS,
    env: { ...ENV, REALTIME_MAX_SESSION_MS: '1500' },
  });

  it('a session that reaches REALTIME_MAX_SESSION_MS closes with 4001 after settling the response in flight', async () => {
    const { apiKey } = await h.fundKey(1000);
    // 40 deltas 60 ms apart: the response runs past the session's 1.5 s.
    h.upstream.realtime.behaviour.textTokens = 40;
    h.upstream.realtime.behaviour.deltaDelayMs = 60;
    const c = await connect(h, apiKey);
    const opened = Date.now();
    askHello(c);
    const closed = await c.waitClosed();
    expect(closed.code).toBe(4001);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(1400);
    // 7 × 4 + 40 × 16 = 668: the provider's whole response, settled before the close.
    const cost = c.events.find((e) => e.type === 'gateway.cost');
    expect(cost?.msats).toBe(668);
    expect(c.events.filter((e) => e.type === 'response.output_text.delta')).toHaveLength(40);
    expect(await settledBalance(h, apiKey)).toBe(1_000_000 - 668);
  });
});
