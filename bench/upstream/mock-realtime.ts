import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * The mock provider's Realtime API (`GET /v1/realtime?model=…`, WebSocket): a double that speaks the GA event
 * names and bills each response in `usage` as OpenAI does — the whole conversation so far is the response's
 * input (text items: ceil(chars / 4) tokens; audio: 10 tokens a second; earlier outputs as their own tokens),
 * `cached_tokens` a subset of it split by modality, output text one token per delta, output audio 20 tokens a
 * second. Every bill (responses and transcriptions) is kept in `stats.bills`, so tests compare the gateway's
 * charges with what the provider billed.
 *
 * - `session.update` → `session.updated` (format, transcription, turn detection remembered);
 * - `conversation.item.create` → `conversation.item.created`;
 * - `input_audio_buffer.append` → buffered; `commit` (or, with server VAD, `vadMs` of audio) → `committed`,
 *   an audio item, a transcription when the session asked for one, and with server VAD a response;
 * - `response.create` → `response.created`, deltas (text, or audio when the output modalities say so),
 *   `response.done` with `usage`.
 */

export interface MockRealtimeBehaviour {
  /** Text deltas (output tokens) per response. */
  textTokens: number;
  /** Output audio per audio response, ms (sent in 100 ms deltas). */
  audioOutMs: number;
  /** Input tokens reported as cached in the next response (text, audio); reset after it. */
  cached: { text: number; audio: number } | undefined;
  /** Server VAD: a turn ends after this much appended audio, ms. */
  vadMs: number;
  /** Delay between deltas, ms (0: all at once). */
  deltaDelayMs: number;
  /** Drop the socket (terminate) after this many deltas of a response. */
  dropAfterDeltas: number | undefined;
  /** How transcriptions are billed. */
  transcription: 'tokens' | 'duration';
}

export interface MockRealtimeBill {
  kind: 'response' | 'transcription';
  /** The usage as sent in the event. */
  usage: Record<string, unknown>;
}

export interface MockRealtimeStats {
  sessions: number;
  closed: number;
  /** The client event types received, in order, across sessions. */
  received: string[];
  bills: MockRealtimeBill[];
  /** Responses sent with response.done. */
  responses: number;
  /** The last upgrade's headers (Authorization: the operator's key). */
  lastHeaders: IncomingMessage['headers'] | undefined;
}

export interface MockRealtime {
  readonly stats: MockRealtimeStats;
  behaviour: MockRealtimeBehaviour;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sessions open now. */
  readonly open: number;
  close(): void;
}

export function defaultRealtimeBehaviour(): MockRealtimeBehaviour {
  return {
    textTokens: 8,
    audioOutMs: 1000,
    cached: undefined,
    vadMs: 500,
    deltaDelayMs: 0,
    dropAfterDeltas: undefined,
    transcription: 'tokens',
  };
}

const IN_AUDIO_PER_S = 10;
const OUT_AUDIO_PER_S = 20;

type Obj = Record<string, unknown>;

export function createMockRealtime(): MockRealtime {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
  const stats: MockRealtimeStats = {
    sessions: 0,
    closed: 0,
    received: [],
    bills: [],
    responses: 0,
    lastHeaders: undefined,
  };
  const open = new Set<WebSocket>();
  const mock: MockRealtime = {
    stats,
    behaviour: defaultRealtimeBehaviour(),
    handleUpgrade(req, socket, head) {
      const url = new URL(req.url ?? '/', 'http://mock');
      if (url.pathname !== '/v1/realtime') {
        socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
        return;
      }
      stats.lastHeaders = req.headers;
      wss.handleUpgrade(req, socket, head, (ws) => {
        stats.sessions++;
        open.add(ws);
        ws.on('close', () => {
          open.delete(ws);
          stats.closed++;
        });
        serve(ws, url.searchParams.get('model') ?? '', mock, stats);
      });
    },
    get open() {
      return open.size;
    },
    close() {
      for (const ws of open) ws.terminate();
      wss.close();
    },
  };
  return mock;
}

function serve(ws: WebSocket, model: string, mock: MockRealtime, stats: MockRealtimeStats): void {
  let seq = 0;
  const id = (p: string) => `${p}_${++seq}`;
  const send = (e: Obj) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ event_id: id('event'), ...e }));
  };
  const session: Obj = { id: id('sess'), model, object: 'realtime.session', output_modalities: ['text'] };
  // The conversation as the provider bills it: text tokens and audio tokens of every item, outputs included.
  let contextText = 0;
  let contextAudio = 0;
  let bufferedBytes = 0;
  let responding = false;
  send({ type: 'session.created', session });

  const vad = () => {
    const a = (session.audio as Obj | undefined)?.input as Obj | undefined;
    const td = (a?.turn_detection ?? session.turn_detection) as Obj | undefined | null;
    return td?.type === 'server_vad';
  };
  const transcriptionModel = () => {
    const a = (session.audio as Obj | undefined)?.input as Obj | undefined;
    const t = (a?.transcription ?? session.input_audio_transcription) as Obj | undefined | null;
    return typeof t?.model === 'string' ? t.model : undefined;
  };

  const commit = () => {
    const ms = Math.floor(bufferedBytes / 48);
    bufferedBytes = 0;
    const tokens = Math.ceil((ms * IN_AUDIO_PER_S) / 1000);
    contextAudio += tokens;
    const itemId = id('item');
    send({ type: 'input_audio_buffer.committed', item_id: itemId });
    send({ type: 'conversation.item.created', item: { id: itemId, type: 'message', role: 'user' } });
    if (transcriptionModel() !== undefined) {
      const usage =
        mock.behaviour.transcription === 'tokens'
          ? {
              type: 'tokens',
              input_tokens: tokens,
              input_token_details: { audio_tokens: tokens, text_tokens: 0 },
              output_tokens: 3,
              total_tokens: tokens + 3,
            }
          : { type: 'duration', seconds: ms / 1000 };
      stats.bills.push({ kind: 'transcription', usage });
      send({
        type: 'conversation.item.input_audio_transcription.completed',
        item_id: itemId,
        content_index: 0,
        transcript: 'hello there you',
        usage,
      });
    }
  };

  const respond = (r: Obj | undefined) => {
    if (responding) {
      send({
        type: 'error',
        error: { type: 'invalid_request_error', code: 'conversation_already_has_active_response' },
      });
      return;
    }
    responding = true;
    const b = mock.behaviour;
    const modalities = (r?.output_modalities ?? r?.modalities ?? session.output_modalities) as
      | string[]
      | undefined;
    const audio = modalities?.includes('audio') === true;
    const cap = (r?.max_output_tokens ?? session.max_output_tokens) as number | 'inf' | undefined;
    const responseId = id('resp');
    send({
      type: 'response.created',
      response: { id: responseId, object: 'realtime.response', status: 'in_progress' },
    });
    const deltas: Obj[] = [];
    let outText = 0;
    let outAudio = 0;
    if (audio) {
      const chunks = Math.ceil(b.audioOutMs / 100);
      for (let i = 0; i < chunks; i++) {
        const ms = Math.min(100, b.audioOutMs - i * 100);
        deltas.push({
          type: 'response.output_audio.delta',
          response_id: responseId,
          delta: Buffer.alloc(ms * 48).toString('base64'),
        });
      }
      outAudio = Math.ceil((b.audioOutMs * OUT_AUDIO_PER_S) / 1000);
    } else {
      outText = typeof cap === 'number' ? Math.min(cap, b.textTokens) : b.textTokens;
      for (let i = 0; i < outText; i++) {
        deltas.push({ type: 'response.output_text.delta', response_id: responseId, delta: 'tok ' });
      }
    }
    const cached = b.cached;
    b.cached = undefined;
    const cachedText = Math.min(cached?.text ?? 0, contextText);
    const cachedAudio = Math.min(cached?.audio ?? 0, contextAudio);
    const usage = {
      total_tokens: contextText + contextAudio + outText + outAudio,
      input_tokens: contextText + contextAudio,
      output_tokens: outText + outAudio,
      input_token_details: {
        text_tokens: contextText,
        audio_tokens: contextAudio,
        image_tokens: 0,
        cached_tokens: cachedText + cachedAudio,
        cached_tokens_details: { text_tokens: cachedText, audio_tokens: cachedAudio, image_tokens: 0 },
      },
      output_token_details: { text_tokens: outText, audio_tokens: outAudio },
    };
    let sent = 0;
    const finish = () => {
      responding = false;
      contextText += outText;
      contextAudio += outAudio;
      stats.bills.push({ kind: 'response', usage });
      stats.responses++;
      send({
        type: 'response.done',
        response: { id: responseId, object: 'realtime.response', status: 'completed', usage },
      });
    };
    const next = () => {
      while (sent < deltas.length) {
        if (b.dropAfterDeltas !== undefined && sent >= b.dropAfterDeltas) {
          ws.terminate();
          return;
        }
        send(deltas[sent++]!);
        if (b.deltaDelayMs > 0) {
          setTimeout(next, b.deltaDelayMs);
          return;
        }
      }
      finish();
    };
    next();
  };

  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    let e: Obj;
    try {
      e = JSON.parse(String(data)) as Obj;
    } catch {
      return;
    }
    const type = String(e.type);
    stats.received.push(type);
    switch (type) {
      case 'session.update':
        Object.assign(session, e.session as Obj);
        send({ type: 'session.updated', session });
        return;
      case 'conversation.item.create': {
        const item = (e.item ?? {}) as Obj;
        let chars = 0;
        for (const c of (item.content as Obj[] | undefined) ?? []) {
          if (typeof c.text === 'string') chars += c.text.length;
        }
        contextText += Math.max(1, Math.ceil(chars / 4));
        send({ type: 'conversation.item.created', item: { id: id('item'), ...item } });
        return;
      }
      case 'input_audio_buffer.append': {
        bufferedBytes += Buffer.from(String(e.audio ?? ''), 'base64').length;
        if (vad() && bufferedBytes / 48 >= mock.behaviour.vadMs && !responding) {
          send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: 'pending' });
          send({
            type: 'input_audio_buffer.speech_stopped',
            audio_end_ms: mock.behaviour.vadMs,
            item_id: 'pending',
          });
          commit();
          respond(undefined);
        }
        return;
      }
      case 'input_audio_buffer.commit':
        commit();
        return;
      case 'response.create':
        respond(e.response as Obj | undefined);
        return;
    }
  });
}
