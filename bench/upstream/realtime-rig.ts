import { WebSocket } from 'ws';

/**
 * The Realtime rig shared by test/e2e/realtime*.test.ts, bench/realtime-load.ts and bench/realtime-latency.ts:
 * the price book and pricing settings the gateway runs with in front of the mock provider's Realtime double
 * (mock-realtime.ts), the client events they send, what a bill of the double costs at those prices, and a
 * plain `ws` client that records the events it receives.
 *
 * Prices (BTC_USD_PRICE 100,000 → 10^6 msat per USD, fees 1, no base fee), msats per token: text in 4, cached
 * text 1, audio in 32, cached audio 2, text out 16, audio out 64; the transcription model: audio in 3, text out 5.
 * The double bills audio in at 10 tokens a second, audio out at 20, text items at ceil(chars / 4).
 */

/** The price book (MODELS_PATH content). */
export const REALTIME_MODELS = {
  models: [
    {
      id: 'mock-realtime',
      pricing: {
        prompt: '0.000004',
        input_cache_read: '0.000001',
        input_audio: '0.000032',
        input_audio_cache_read: '0.000002',
        completion: '0.000016',
        output_audio: '0.000064',
      },
    },
    {
      id: 'mock-transcribe',
      pricing: { prompt: '0.000001', input_audio: '0.000003', completion: '0.000005' },
    },
    { id: 'mock-gpt', pricing: { prompt: '0.000001', completion: '0.000002' } },
  ],
};

/** The settings that make those prices the charges: per-token pricing, BTC at $100,000, no fees. */
export const REALTIME_PRICING_ENV: Record<string, string> = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '0',
  BTC_USD_PRICE: '100000',
  EXCHANGE_FEE: '1',
  UPSTREAM_PROVIDER_FEE: '1',
};

/** `mock-realtime`'s msats per token at those settings. */
export const REALTIME_RATES = { text: 4, cachedText: 1, audio: 32, cachedAudio: 2, out: 16, outAudio: 64 };

interface Counts {
  text_tokens?: number;
  audio_tokens?: number;
}

/** The `usage` of a `response.done` as the double bills it. */
export interface RealtimeBillUsage {
  input_token_details?: Counts & { cached_tokens_details?: Counts };
  output_token_details?: Counts;
}

/** What a response bill of the double costs at REALTIME_RATES, priced by hand (not by the gateway's code). */
export function billMsat(u: RealtimeBillUsage): number {
  const d = u.input_token_details ?? {};
  const c = d.cached_tokens_details ?? {};
  const o = u.output_token_details ?? {};
  const n = (v: number | undefined) => v ?? 0;
  const r = REALTIME_RATES;
  return (
    (n(d.text_tokens) - n(c.text_tokens)) * r.text +
    n(c.text_tokens) * r.cachedText +
    (n(d.audio_tokens) - n(c.audio_tokens)) * r.audio +
    n(c.audio_tokens) * r.cachedAudio +
    n(o.text_tokens) * r.out +
    n(o.audio_tokens) * r.outAudio
  );
}

/** 16-bit 24 kHz mono silence of `ms`, base64 (48 bytes a millisecond). */
export function pcm(ms: number): string {
  return Buffer.alloc(ms * 48).toString('base64');
}

/** A user text item. */
export function userText(text: string) {
  return {
    type: 'conversation.item.create',
    item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
  };
}

export type RealtimeEvent = { type: string; [k: string]: unknown };

/** A plain `ws` Realtime client: the events it received, in order, and how its socket closed. */
export interface RawRealtimeClient {
  readonly ws: WebSocket;
  readonly events: RealtimeEvent[];
  closed: { code: number; reason: string } | undefined;
  send(e: object): void;
}

/**
 * Opens `ws://host:port/v1/realtime?model=…` with `Authorization: Bearer <credential>` (resolves once open,
 * rejects with the refusal). `record: false` keeps no events (a load client counts what it needs itself).
 */
export function openRealtime(
  hostPort: string,
  credential: string,
  opts: { model?: string; record?: boolean } = {},
): Promise<RawRealtimeClient> {
  const ws = new WebSocket(`ws://${hostPort}/v1/realtime?model=${opts.model ?? 'mock-realtime'}`, {
    headers: { authorization: `Bearer ${credential}` },
  });
  const c: RawRealtimeClient = {
    ws,
    events: [],
    closed: undefined,
    send: (e) => ws.send(JSON.stringify(e)),
  };
  if (opts.record !== false) {
    ws.on('message', (data) => c.events.push(JSON.parse(String(data)) as RealtimeEvent));
  }
  ws.on('close', (code, reason) => {
    c.closed = { code, reason: reason.toString() };
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.off('error', reject);
      ws.on('error', () => undefined);
      resolve(c);
    });
    // A refusal: its status and error envelope.
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => reject(new Error(`HTTP ${res.statusCode}: ${body.slice(0, 300)}`)));
    });
    ws.once('error', reject);
  });
}
