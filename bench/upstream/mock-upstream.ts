import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createMockBatches, defaultBatchBehaviour, type MockBatchBehaviour } from './mock-batches.js';
import { createMockRealtime, type MockRealtime } from './mock-realtime.js';

/**
 * A fast, deterministic OpenAI-compatible provider for tests and benchmarks (the one test double).
 *
 * - GET  /v1/models                → the configured model list (OpenAI shape, plus OpenRouter-style pricing).
 * - POST /v1/chat/completions      → JSON or SSE (`chat.completion.chunk` events, `data: [DONE]`); usage is
 *   always in the JSON body, and in a final chunk when `stream_options.include_usage` is true.
 * - POST /v1/completions, /v1/embeddings → minimal valid answers with usage.
 * - POST /v1/images/{generations,edits,variations} → `n` image URLs (at most `maxImages`).
 * - POST /v1/audio/{transcriptions,translations} (multipart) → `json` / `text` / `verbose_json`.
 * - POST /v1/audio/speech → binary audio (audio/mpeg, `speechBytes` in four chunks, no Content-Length).
 * - /v1/files and /v1/batches → the Files and Batch APIs (./mock-batches.ts: configurable delay, outcome,
 *   partial output, per-line usage).
 * - POST /v1/responses with `background: true` → `queued`, then `in_progress`, then ended with its usage as GET
 *   /v1/responses/{id} reads it (`backgroundPolls`); POST …/cancel, DELETE (BackgroundResponses below).
 * - POST /v1/messages (Anthropic Messages API) → a `message` JSON, or its SSE events (`message_start` with the
 *   input and cache counts, text deltas, the last `message_delta` with the output total); POST
 *   /v1/messages/count_tokens → `{input_tokens}`.
 * - `usage` (behaviour) adds cache reads, cache writes (5-minute / 1-hour), reasoning tokens, web search calls
 *   and a service tier to every chat, Responses and Messages answer, each in its API's own usage shape.
 * - anything else                  → 200 JSON echo `{ echo: { method, path, query, body } }` (catch-all tests).
 *
 * Token counts are deterministic: completion_tokens = number of content chunks = min(chunks, max_tokens)
 * (unless `ignoreMaxTokens`), each chunk is the text "tok "; prompt_tokens = ceil(characters of string
 * message contents / 4), at least 1.
 */

export interface MockBehaviour {
  /** Delay before the response head, ms. */
  latencyMs: number;
  /** Content chunks (= completion tokens) per completion. */
  chunks: number;
  /** Delay between SSE chunks, ms (0: all chunks in one write). */
  chunkDelayMs: number;
  /** Produce `chunks` tokens even when `max_tokens` is lower (a provider that overshoots). */
  ignoreMaxTokens: boolean;
  /** Answer every model call with this status and body (default content type application/json). */
  error: { status: number; body: string; contentType?: string } | undefined;
  /** Destroy the connection as soon as the request arrived. */
  reset: boolean;
  /** Never answer. */
  hang: boolean;
  /** Stream the first event and this many more, then stall forever (body idle timeout). */
  stallAfterChunks: number | undefined;
  /** Models listed by GET /v1/models. */
  models: Array<{ id: string; [k: string]: unknown }>;
  /** Images answered at most (default: as many as `n` asked for). */
  maxImages: number | undefined;
  /** Bytes of audio a speech answer streams (in 4 chunks). */
  speechBytes: number;
  /** Batches: delay, outcome, partial output, per-line usage (./mock-batches.ts). */
  batch: MockBatchBehaviour;
  /** Extra usage every chat, Responses and Messages answer reports (each in its API's shape). */
  usage: MockUsage;
  /** Keep the bytes of each response body sent in `stats.lastResponse` (off by default: benchmarks). */
  recordResponses: boolean;
  /**
   * Background responses (`background: true`): the GET that reads one for the `backgroundPolls`-th time finds it
   * ended; the earlier ones find it `queued` (the first) then `in_progress`. Default 2.
   */
  backgroundPolls: number;
}

/** Usage beyond plain prompt/completion tokens, reported on top of the counted ones. */
export interface MockUsage {
  /** Input tokens read from the prompt cache. */
  cachedTokens?: number;
  /** Input tokens written to the cache (5-minute lifetime). */
  cacheWriteTokens?: number;
  /** Input tokens written to the cache for 1 hour (Anthropic only). */
  cacheWrite1hTokens?: number;
  /** Reasoning tokens (inside the output count). */
  reasoningTokens?: number;
  /** Web search calls (Responses `web_search_call` items, Anthropic `server_tool_use`). */
  webSearchCalls?: number;
  /** The service tier reported. */
  serviceTier?: string;
  /** Output tokens counted in `total_tokens` only (chat, Responses): reasoning a provider leaves out. */
  unreportedTokens?: number;
  /**
   * Bill the most the request allows, as a hostile client's provider would: every choice and every built-in
   * tool call the request permits (Responses `max_tool_calls`, Anthropic `max_uses`, 1 otherwise; each call of
   * the tool types declared, in turn), `imageTokens` image output tokens per image_generation call, the
   * requested service tier (`auto` as `priority`), OpenRouter web searches as one reported search.
   */
  billMax?: boolean;
  /** Image output tokens of one image_generation call (default 6,240). */
  imageTokens?: number;
  /**
   * Bill images and files in the prompt as a provider does (off by default: the older tests count text only):
   * an image by OpenAI's tile formula (`imageTiles`, default 85 + 170 per 512 px tile after scaling down to fit
   * 2048² and then a shortest side of 768; `detail: "low"` the base alone), from the size a PNG or GIF header
   * gives; an image whose size it cannot read (a URL, a file id, another format) at the most, 8 tiles. On
   * /v1/messages Anthropic's rule: ⌈w × h / 750⌉, at most 1,600 (unknown: 1,600). A file by id or URL bills
   * `fileTokens` (default 1,000); an inline file 1 token per base64 character plus one image at the most per page
   * (a PDF's `/Type /Page` objects, at least one).
   */
  billMedia?: boolean;
  imageTiles?: { base: number; tile: number };
  fileTokens?: number;
  /** Input tokens each web search call adds (the search results the model reads); default 0. */
  searchContentTokens?: number;
  /**
   * The model's context window, filled as a provider may: a call with no max-tokens field writes
   * `windowTokens − prompt tokens` (its own count of the text) instead of `chunks`; a request whose own input is
   * longer is refused 400 `context_length_exceeded`, unbilled.
   */
  windowTokens?: number;
}

export interface MockStats {
  requests: number;
  /** Of `requests`, the model-list reads (GET /v1/models: the gateway's catalogue fetches and retries). */
  modelLists: number;
  /** Requests whose client (the gateway) went away before the response ended. */
  aborted: number;
  completed: number;
  lastMethod: string | undefined;
  lastPath: string | undefined;
  lastHeaders: Record<string, string | string[] | undefined> | undefined;
  /** Parsed JSON body when it was JSON, else the raw text. */
  lastBody: unknown;
  /** The last request body's bytes, as received. */
  lastRaw: Buffer | undefined;
  /** The last response body's bytes, as sent, once it ended (only with `recordResponses`). */
  lastResponse: Buffer | undefined;
}

export interface MockUpstream {
  /** Base URL including `/v1`, as an OpenAI SDK `baseURL` / the gateway's UPSTREAM_BASE_URL. */
  readonly url: string;
  readonly port: number;
  readonly stats: MockStats;
  /** The Realtime API double (its behaviour, the bills it sent). */
  readonly realtime: MockRealtime;
  setBehaviour(b: Partial<MockBehaviour>): void;
  resetStats(): void;
  /** Resolves when `stats.aborted` reaches `count` (default: one more than now), or rejects after `timeoutMs`. */
  waitForAborted(count?: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_MODELS = [
  {
    id: 'mock-gpt',
    object: 'model',
    created: 1_700_000_000,
    owned_by: 'mock',
    context_length: 8192,
    pricing: { prompt: '0.000001', completion: '0.000002', request: '0' },
  },
  { id: 'mock-mini', object: 'model', created: 1_700_000_000, owned_by: 'mock' },
];

function defaults(): MockBehaviour {
  return {
    latencyMs: 0,
    chunks: 8,
    chunkDelayMs: 0,
    ignoreMaxTokens: false,
    error: undefined,
    reset: false,
    hang: false,
    stallAfterChunks: undefined,
    models: DEFAULT_MODELS,
    maxImages: undefined,
    speechBytes: 64 * 1024,
    batch: defaultBatchBehaviour(),
    usage: {},
    recordResponses: false,
    backgroundPolls: 2,
  };
}

interface ChatBody {
  model?: unknown;
  n?: unknown;
  best_of?: unknown;
  tools?: unknown;
  max_tool_calls?: unknown;
  service_tier?: unknown;
  previous_response_id?: unknown;
  plugins?: unknown;
  messages?: Array<{ content?: unknown }>;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  max_output_tokens?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
  input?: unknown;
  prompt?: unknown;
  system?: unknown;
}

function promptTokens(body: ChatBody): number {
  let chars = 0;
  if (Array.isArray(body.messages)) {
    for (const m of body.messages) if (typeof m?.content === 'string') chars += m.content.length;
  }
  if (typeof body.prompt === 'string') chars += body.prompt.length;
  if (typeof body.system === 'string') chars += body.system.length;
  if (typeof body.input === 'string') chars += body.input.length;
  return Math.max(1, Math.ceil(chars / 4));
}

/** Width and height from a base64 PNG or GIF header (the formats the tests send), else undefined. */
function headerSize(data: string): { w: number; h: number } | undefined {
  const b64 = data.startsWith('data:') ? data.slice(data.indexOf(',') + 1) : data;
  const head = Buffer.from(b64.slice(0, 64), 'base64');
  if (head.length >= 24 && head.toString('latin1', 1, 4) === 'PNG')
    return { w: head.readUInt32BE(16), h: head.readUInt32BE(20) };
  if (head.length >= 10 && head.toString('latin1', 0, 3) === 'GIF')
    return { w: head.readUInt16LE(6), h: head.readUInt16LE(8) };
  return undefined;
}

/** OpenAI's tile formula, as the provider counts: scaled down (rounded), then base + tile per 512 px tile. */
function tileTokens(size: { w: number; h: number } | undefined, detail: unknown, x: MockUsage): number {
  const { base, tile } = x.imageTiles ?? { base: 85, tile: 170 };
  if (detail === 'low') return base;
  if (size === undefined) return base + 8 * tile;
  let { w, h } = size;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w = Math.round(w * fit);
  h = Math.round(h * fit);
  const s = Math.min(1, 768 / Math.min(w, h));
  w = Math.round(w * s);
  h = Math.round(h * s);
  return base + tile * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** A base64 PDF's pages as a provider renders them (one image each): its `/Type /Page` objects, at least 1. */
function pdfPages(data: string): number {
  const b64 = data.startsWith('data:') ? data.slice(data.indexOf(',') + 1) : data;
  const text = Buffer.from(b64, 'base64').toString('latin1');
  return Math.max(1, text.match(/\/Type\s*\/Page(?!s)/g)?.length ?? 0);
}

/** billMedia: the input tokens of the images and files a body carries or refers to. */
function mediaTokens(body: ChatBody, x: MockUsage, anthropic: boolean): number {
  if (!x.billMedia) return 0;
  const area = (size: { w: number; h: number } | undefined) =>
    size === undefined ? 1600 : Math.min(1600, Math.ceil((size.w * size.h) / 750));
  const image = (data: unknown, detail: unknown) => {
    const size = typeof data === 'string' && !data.startsWith('http') ? headerSize(data) : undefined;
    return anthropic ? area(size) : tileTokens(size, detail, x);
  };
  const maxImage = anthropic ? 1600 : tileTokens(undefined, 'high', x);
  let total = 0;
  const walk = (v: unknown, depth: number): void => {
    if (depth > 32 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const e of v) walk(e, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    const src = (o.source ?? {}) as Record<string, unknown>;
    const file = (o.file ?? o) as Record<string, unknown>;
    switch (o.type) {
      case 'image_url': {
        const u = o.image_url as { url?: unknown; detail?: unknown } | string;
        total += typeof u === 'string' ? image(u, undefined) : image(u?.url, u?.detail);
        return;
      }
      case 'input_image':
        total += image(o.image_url, o.detail);
        return;
      case 'image':
        total += image(src.type === 'base64' ? src.data : undefined, undefined);
        return;
      case 'file':
      case 'input_file':
        total +=
          typeof file.file_data === 'string'
            ? file.file_data.length + pdfPages(file.file_data) * maxImage
            : typeof file.file_id === 'string' || typeof file.file_url === 'string'
              ? (x.fileTokens ?? 1000)
              : 0;
        return;
      case 'document':
        if (src.type === 'base64' && typeof src.data === 'string')
          total += src.data.length + pdfPages(src.data) * maxImage;
        else if (src.type === 'url' || src.type === 'file') total += x.fileTokens ?? 1000;
        return;
    }
    for (const k in o) walk(o[k], depth + 1);
  };
  walk(body.messages, 0);
  walk(body.input, 0);
  return total;
}

/** Choices generated and billed: chat `n`, completions `max(n, best_of)`. */
function choicesOf(body: ChatBody): number {
  const v = (x: unknown) => (typeof x === 'number' && Number.isSafeInteger(x) && x >= 1 ? x : 1);
  return Math.max(v(body.n), v(body.best_of));
}

/** The tier reported: the behaviour's, else (billMax) the requested one, `auto` served as `priority`. */
function reportedTier(body: ChatBody, b: MockBehaviour): string | undefined {
  if (b.usage.serviceTier !== undefined) return b.usage.serviceTier;
  if (!b.usage.billMax || typeof body.service_tier !== 'string') return undefined;
  return body.service_tier === 'auto' ? 'priority' : body.service_tier;
}

const HOSTED_TYPES = /^(web_search|image_generation$|code_interpreter$|file_search$|code_execution)/;

/** billMax: the built-in tool calls the request allows, each of the declared types in turn. */
function hostedCalls(body: ChatBody): { type: string; maxUses?: number }[] {
  const tools = Array.isArray(body.tools)
    ? (body.tools as Array<{ type?: unknown; max_uses?: unknown }>)
    : [];
  return tools
    .filter((t) => typeof t?.type === 'string' && HOSTED_TYPES.test(t.type))
    .map((t) => ({
      type: t.type as string,
      ...(typeof t.max_uses === 'number' ? { maxUses: t.max_uses } : {}),
    }));
}

function completionTokens(body: ChatBody, b: MockBehaviour): { n: number; truncated: boolean } {
  // Several max-tokens fields: the provider may read any; this one reads the largest.
  const caps = [body.max_tokens, body.max_completion_tokens, body.max_output_tokens].filter(
    (v): v is number => typeof v === 'number',
  );
  const cap = caps.length > 0 ? Math.max(...caps) : undefined;
  const window = b.usage.windowTokens;
  if (cap === undefined && window !== undefined) {
    return { n: Math.max(0, window - promptTokens(body)), truncated: false };
  }
  if (typeof cap === 'number' && cap < b.chunks && !b.ignoreMaxTokens)
    return { n: Math.max(0, cap), truncated: true };
  return { n: b.chunks, truncated: false };
}

export async function startMockUpstream(
  opts: Partial<MockBehaviour> & { port?: number } = {},
): Promise<MockUpstream> {
  const { port: wantPort, ...initial } = opts;
  let behaviour: MockBehaviour = { ...defaults(), ...initial };
  const stats: MockStats = {
    requests: 0,
    modelLists: 0,
    aborted: 0,
    completed: 0,
    lastMethod: undefined,
    lastPath: undefined,
    lastHeaders: undefined,
    lastBody: undefined,
    lastRaw: undefined,
    lastResponse: undefined,
  };
  let abortWaiters: Array<() => void> = [];
  /** `windowTokens` set: a request whose own input (text, media, a continued response) exceeds it is refused
   *  unbilled, as a provider refuses a prompt longer than the model's context. */
  const overWindow = (body: ChatBody, b: MockBehaviour, anthropic: boolean): boolean => {
    const window = b.usage.windowTokens;
    if (window === undefined || body === null || typeof body !== 'object') return false;
    const chain =
      typeof body.previous_response_id === 'string' ? (stored.get(body.previous_response_id) ?? 0) : 0;
    return promptTokens(body) + chain + mediaTokens(body, b.usage, anthropic) > window;
  };
  let seq = 0;
  /** Stored responses' tokens (input + output), read again as input by a call that continues one. */
  const stored = new Map<string, number>();
  const background = new BackgroundResponses();
  const batches = createMockBatches(
    () => behaviour.batch,
    (body) => ({
      prompt_tokens: promptTokens(body as ChatBody),
      completion_tokens: completionTokens(body as ChatBody, behaviour).n,
    }),
  );

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });

  function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const b = behaviour;
    stats.requests++;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path === '/v1/models' && req.method === 'GET') stats.modelLists++;
    stats.lastMethod = req.method;
    stats.lastPath = url;
    stats.lastHeaders = req.headers;
    let body: ChatBody = {};
    stats.lastRaw = raw;
    const text = raw.toString('utf8');
    try {
      stats.lastBody = text === '' ? undefined : JSON.parse(text);
      if (typeof stats.lastBody === 'object' && stats.lastBody !== null) body = stats.lastBody as ChatBody;
    } catch {
      stats.lastBody = text;
    }
    res.once('close', () => {
      if (res.writableFinished) {
        stats.completed++;
        return;
      }
      stats.aborted++;
      const w = abortWaiters;
      abortWaiters = [];
      for (const cb of w) cb();
    });
    if (b.recordResponses) recordBody(res, (sent) => (stats.lastResponse = sent));
    if (b.reset) {
      req.socket.destroy();
      return;
    }
    if (b.hang) return;
    const respond = () => {
      if (res.destroyed) return;
      if (path === '/v1/models' && req.method === 'GET')
        return json(res, 200, { object: 'list', data: b.models });
      if (batches.handle(req, res, path, body as Record<string, unknown>, raw)) return;
      const isModelCall =
        path === '/v1/chat/completions' ||
        path === '/v1/completions' ||
        path === '/v1/embeddings' ||
        path === '/v1/responses' ||
        path.startsWith('/v1/messages') ||
        path.startsWith('/v1/images/') ||
        path.startsWith('/v1/audio/');
      if (b.error && isModelCall) {
        res.writeHead(b.error.status, { 'content-type': b.error.contentType ?? 'application/json' });
        res.end(b.error.body);
        return;
      }
      if (isModelCall && overWindow(body, b, path.startsWith('/v1/messages'))) {
        return json(res, 400, {
          error: {
            message: `This model's maximum context length is ${b.usage.windowTokens} tokens`,
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        });
      }
      if (path === '/v1/chat/completions' && req.method === 'POST') return chat(res, body, b, ++seq);
      if (path === '/v1/completions' && req.method === 'POST') {
        const { n, truncated } = completionTokens(body, b);
        const pt = promptTokens(body);
        // best_of candidates are all generated and billed; `n` of them are returned.
        const billed = choicesOf(body) * n;
        if (body.stream === true) return streamedCompletion(res, body, b, n, pt, truncated, seq++);
        return json(res, 200, {
          id: `cmpl-mock-${seq++}`,
          object: 'text_completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [
            {
              text: 'tok '.repeat(n),
              index: 0,
              logprobs: null,
              finish_reason: truncated ? 'length' : 'stop',
            },
          ],
          usage: { prompt_tokens: pt, completion_tokens: billed, total_tokens: pt + billed },
        });
      }
      if (path === '/v1/responses' && req.method === 'POST')
        return responses(res, body, b, ++seq, stored, background);
      if (path.startsWith('/v1/responses/') && background.handle(req, res, path, b)) return;
      if (path === '/v1/messages' && req.method === 'POST') return messages(res, body, b, ++seq);
      if (path === '/v1/messages/count_tokens' && req.method === 'POST') {
        return json(res, 200, { input_tokens: promptTokens(body) });
      }
      if (path === '/v1/embeddings' && req.method === 'POST') {
        const pt = promptTokens(body);
        return json(res, 200, {
          object: 'list',
          data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3] }],
          model: body.model,
          usage: { prompt_tokens: pt, total_tokens: pt },
        });
      }
      if (path.startsWith('/v1/images/') && req.method === 'POST') {
        const fields =
          path === '/v1/images/generations' ? (body as Record<string, unknown>) : formFields(text);
        const asked = Number(fields.n ?? 1);
        const n = Math.min(asked, b.maxImages ?? asked);
        return json(res, 200, {
          created: Math.floor(Date.now() / 1000),
          data: Array.from({ length: n }, (_, i) => ({ url: `https://images.example/mock-${seq}-${i}.png` })),
        });
      }
      if (
        (path === '/v1/audio/transcriptions' || path === '/v1/audio/translations') &&
        req.method === 'POST'
      ) {
        const fields = formFields(text);
        const format = fields.response_format ?? 'json';
        const said = path.endsWith('translations') ? 'mock translation' : 'mock transcript';
        if (format === 'text') {
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
          res.end(said);
          return;
        }
        if (format === 'verbose_json') {
          return json(res, 200, {
            task: 'transcribe',
            language: 'english',
            duration: Number(fields.duration_hint ?? 0),
            text: said,
          });
        }
        return json(res, 200, { text: said });
      }
      if (path === '/v1/audio/speech' && req.method === 'POST') {
        // Binary audio, streamed in four chunks without a Content-Length (as providers do).
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        const part = Buffer.alloc(Math.ceil(b.speechBytes / 4), 0x55);
        let sent = 0;
        const next = () => {
          if (res.destroyed) return;
          if (sent === 4) return void res.end();
          sent++;
          res.write(part);
          setTimeout(next, b.chunkDelayMs);
        };
        next();
        return;
      }
      return json(res, 200, {
        echo: { method: req.method, path, query: q === -1 ? '' : url.slice(q + 1), body: stats.lastBody },
      });
    };
    if (b.latencyMs > 0) setTimeout(respond, b.latencyMs);
    else respond();
  }

  // The Realtime API over WebSocket (./mock-realtime.ts).
  const realtime = createMockRealtime();
  server.on('upgrade', realtime.handleUpgrade);
  await new Promise<void>((resolve) => server.listen(wantPort ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    stats,
    realtime,
    setBehaviour(p) {
      behaviour = { ...behaviour, ...p };
    },
    resetStats() {
      Object.assign(stats, {
        requests: 0,
        modelLists: 0,
        aborted: 0,
        completed: 0,
        lastMethod: undefined,
        lastPath: undefined,
      });
      Object.assign(stats, { lastHeaders: undefined, lastBody: undefined, lastResponse: undefined });
    },
    waitForAborted(count = stats.aborted + 1, timeoutMs = 5000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (stats.aborted >= count) {
            clearTimeout(timer);
            resolve();
            return true;
          }
          return false;
        };
        const timer = setTimeout(
          () => reject(new Error(`mock upstream saw ${stats.aborted} aborts, wanted ${count}`)),
          timeoutMs,
        );
        if (check()) return;
        const again = () => {
          if (!check()) abortWaiters.push(again);
        };
        abortWaiters.push(again);
      });
    },
    close() {
      realtime.close();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** Collects the body bytes a response writes and hands them over when it finished. */
function recordBody(res: ServerResponse, done: (sent: Buffer) => void): void {
  const sent: Buffer[] = [];
  const keep = (chunk: unknown) => {
    if (typeof chunk === 'string') sent.push(Buffer.from(chunk));
    else if (chunk instanceof Uint8Array) sent.push(Buffer.from(chunk));
  };
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(chunk);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') keep(chunk);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as typeof res.end;
  res.once('finish', () => done(Buffer.concat(sent)));
}

/** The text fields of a multipart body (enough for a test double: name="x" then the value). */
function formFields(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /Content-Disposition: form-data; name="([^"]+)"\r\n(?:[^\r\n]+\r\n)*\r\n([^\r]*)\r\n/gi;
  for (const m of text.matchAll(re)) {
    if (!/filename=/i.test(m[0])) out[m[1]!] = m[2]!;
  }
  return out;
}

function json(res: ServerResponse, status: number, value: unknown): void {
  let payload: string;
  try {
    payload = JSON.stringify(value);
  } catch {
    // A body nested deeper than JSON.stringify can recurse (the fuzzer sends 10,000 levels): echo less.
    payload = JSON.stringify({ echo: { unserialisable: true } });
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

/** The Responses API: JSON with `usage.input_tokens/output_tokens`, or typed SSE events ending with
 * `response.completed` (which carries the usage; there is no `[DONE]`). */
function responses(
  res: ServerResponse,
  body: ChatBody,
  b: MockBehaviour,
  seq: number,
  stored: Map<string, number>,
  background: BackgroundResponses,
): void {
  const { n, truncated } = completionTokens(body, b);
  // A continued response: the provider reads the whole stored conversation again, as input.
  const chain =
    typeof body.previous_response_id === 'string' ? (stored.get(body.previous_response_id) ?? 0) : 0;
  const x = b.usage;
  let pt = promptTokens(body) + chain + mediaTokens(body, x, false);
  const model = typeof body.model === 'string' ? body.model : 'mock-gpt';
  const cached = x.cachedTokens ?? 0;
  const reasoning = x.reasoningTokens ?? 0;
  const searches: object[] = Array.from({ length: x.webSearchCalls ?? 0 }, (_, i) => ({
    type: 'web_search_call',
    id: `ws_mock_${seq}_${i}`,
    status: 'completed',
  }));
  let imageGen: { input_tokens: number; output_tokens: number } | undefined;
  if (x.billMax) {
    const declared = hostedCalls(body);
    const limit = typeof body.max_tool_calls === 'number' ? body.max_tool_calls : 1;
    for (let i = 0; declared.length > 0 && i < limit; i++) {
      const type = declared[i % declared.length]!.type;
      const id = `tc_mock_${seq}_${i}`;
      if (type.startsWith('web_search')) searches.push({ type: 'web_search_call', id, status: 'completed' });
      else if (type === 'file_search') searches.push({ type: 'file_search_call', id, status: 'completed' });
      // A new container per call: the most a provider can bill.
      else if (type === 'code_interpreter')
        searches.push({
          type: 'code_interpreter_call',
          id,
          container_id: `cntr_${seq}_${i}`,
          status: 'completed',
        });
      else if (type === 'image_generation') {
        searches.push({ type: 'image_generation_call', id, status: 'completed', result: '' });
        imageGen ??= { input_tokens: 0, output_tokens: 0 };
        // The image model reads the prompt and the model's text; it writes one image.
        imageGen.input_tokens += pt + n;
        imageGen.output_tokens += x.imageTokens ?? 6240;
      }
    }
  }
  // The search results each web search call read, billed as input.
  const searchContent =
    (x.searchContentTokens ?? 0) *
    searches.filter((s) => (s as { type?: string }).type === 'web_search_call').length;
  pt += searchContent;
  const unreported = x.unreportedTokens ?? 0;
  const tier = reportedTier(body, b);
  const id = `resp_mock_${seq}`;
  stored.set(id, pt + cached + n + reasoning + unreported);
  const response = {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model,
    status: truncated ? 'incomplete' : 'completed',
    ...(tier !== undefined ? { service_tier: tier } : {}),
    ...(imageGen !== undefined ? { tool_usage: { image_gen: imageGen } } : {}),
    output: [
      ...searches,
      {
        type: 'message',
        id: `msg_mock_${seq}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'tok '.repeat(n), annotations: [] }],
      },
    ],
    usage: {
      input_tokens: pt + cached,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: n + reasoning,
      output_tokens_details: { reasoning_tokens: reasoning },
      total_tokens: pt + cached + n + reasoning + unreported,
    },
  };
  if ((body as { background?: unknown }).background === true && body.stream !== true) {
    json(res, 200, background.start(response, pt, n));
    return;
  }
  if (body.stream !== true) {
    json(res, 200, response);
    return;
  }
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const events = [ev('response.created', { response: { ...response, status: 'in_progress', usage: null } })];
  for (let i = 0; i < n; i++)
    events.push(ev('response.output_text.delta', { output_index: 0, delta: 'tok ' }));
  events.push(ev(truncated ? 'response.incomplete' : 'response.completed', { response }));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sendEvents(res, events, b);
}

/**
 * Background responses as a provider runs them: created `queued`, then `in_progress`, then ended with the answer
 * and its usage (`backgroundPolls`); `POST …/cancel` stops one (`cancelled`, billed the input and the output made so
 * far: half of it once in progress); `DELETE` forgets it (a later GET is 404). Ids it never made fall through.
 */
class BackgroundResponses {
  private readonly runs = new Map<
    string,
    { final: Record<string, unknown>; polls: number; input: number; output: number; cancelled?: true }
  >();
  private readonly deleted = new Set<string>();

  start(final: Record<string, unknown>, input: number, output: number): Record<string, unknown> {
    this.runs.set(String(final.id), { final, polls: 0, input, output });
    return { ...final, status: 'queued', background: true, output: [], usage: null };
  }

  handle(req: IncomingMessage, res: ServerResponse, path: string, b: MockBehaviour): boolean {
    const m = /^\/v1\/responses\/([^/]+)(\/cancel)?$/.exec(path);
    if (m === null) return false;
    const id = decodeURIComponent(m[1]!);
    if (this.deleted.has(id)) {
      json(res, 404, {
        error: { message: `No response found with id '${id}'.`, type: 'invalid_request_error' },
      });
      return true;
    }
    const run = this.runs.get(id);
    if (run === undefined) return false;
    if (req.method === 'DELETE' && m[2] === undefined) {
      this.runs.delete(id);
      this.deleted.add(id);
      json(res, 200, { id, object: 'response', deleted: true });
      return true;
    }
    if (req.method === 'POST' && m[2] !== undefined) {
      if (run.polls < b.backgroundPolls) run.cancelled = true;
      json(res, 200, this.view(id, run, b));
      return true;
    }
    if (req.method !== 'GET' || m[2] !== undefined) return false;
    run.polls++;
    json(res, 200, this.view(id, run, b));
    return true;
  }

  private view(
    id: string,
    run: { final: Record<string, unknown>; polls: number; input: number; output: number; cancelled?: true },
    b: MockBehaviour,
  ): Record<string, unknown> {
    if (run.cancelled) {
      const made = Math.floor(run.output / 2);
      return {
        ...run.final,
        id,
        status: 'cancelled',
        background: true,
        output: [],
        usage: { input_tokens: run.input, output_tokens: made, total_tokens: run.input + made },
      };
    }
    if (run.polls >= b.backgroundPolls) return { ...run.final, background: true };
    return {
      ...run.final,
      status: run.polls <= 1 ? 'queued' : 'in_progress',
      background: true,
      output: [],
      usage: null,
    };
  }
}

/**
 * Anthropic's Messages API: `input_tokens` excludes the cache; cache reads, 5-minute and 1-hour writes apart;
 * streamed, `message_start` carries the input and cache counts and the last `message_delta` the output total.
 */
function messages(res: ServerResponse, body: ChatBody, b: MockBehaviour, seq: number): void {
  const { n, truncated } = completionTokens(body, b);
  const x = b.usage;
  const w5 = x.cacheWriteTokens ?? 0;
  const w1 = x.cacheWrite1hTokens ?? 0;
  const output = n + (x.reasoningTokens ?? 0);
  const searches = x.billMax
    ? hostedCalls(body)
        .filter((t) => t.type.startsWith('web_search'))
        .reduce((a, t) => a + (t.maxUses ?? 1), 0)
    : x.webSearchCalls;
  const tier = reportedTier(body, b);
  const pt = promptTokens(body) + mediaTokens(body, x, true) + (x.searchContentTokens ?? 0) * (searches ?? 0);
  const inputUsage = {
    input_tokens: pt,
    cache_creation_input_tokens: w5 + w1,
    cache_read_input_tokens: x.cachedTokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: w5, ephemeral_1h_input_tokens: w1 },
    ...(searches !== undefined && searches > 0 ? { server_tool_use: { web_search_requests: searches } } : {}),
    ...(x.webSearchCalls !== undefined && !x.billMax
      ? { server_tool_use: { web_search_requests: x.webSearchCalls } }
      : {}),
    ...(tier !== undefined ? { service_tier: tier } : {}),
  };
  const message = {
    id: `msg_mock_${seq}`,
    type: 'message',
    role: 'assistant',
    model: typeof body.model === 'string' ? body.model : 'mock-claude',
    content: [{ type: 'text', text: 'tok '.repeat(n) }],
    stop_reason: truncated ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    usage: { ...inputUsage, output_tokens: output },
  };
  if (body.stream !== true) {
    json(res, 200, message);
    return;
  }
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const events = [
    ev('message_start', {
      message: { ...message, content: [], stop_reason: null, usage: { ...inputUsage, output_tokens: 1 } },
    }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ];
  for (let i = 0; i < n; i++) {
    events.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'tok ' } }));
  }
  events.push(ev('content_block_stop', { index: 0 }));
  events.push(
    ev('message_delta', {
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: output },
    }),
  );
  events.push(ev('message_stop', {}));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sendEvents(res, events, b);
}

/**
 * A streamed legacy completion: one `text_completion` event per token ("tok "), the finish event, the usage
 * event (`choices: []`) when `stream_options.include_usage` asks for it, then `data: [DONE]`.
 */
function streamedCompletion(
  res: ServerResponse,
  body: ChatBody,
  b: MockBehaviour,
  n: number,
  pt: number,
  truncated: boolean,
  seq: number,
): void {
  const head = `data: {"id":"cmpl-mock-${seq}","object":"text_completion","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(typeof body.model === 'string' ? body.model : 'mock-gpt')},"choices":[`;
  const events: string[] = [];
  for (let i = 0; i < n; i++) {
    events.push(`${head}{"text":"tok ","index":0,"logprobs":null,"finish_reason":null}]}\n\n`);
  }
  events.push(
    `${head}{"text":"","index":0,"logprobs":null,"finish_reason":"${truncated ? 'length' : 'stop'}"}]}\n\n`,
  );
  if (body.stream_options?.include_usage === true) {
    const billed = choicesOf(body) * n;
    const usage = { prompt_tokens: pt, completion_tokens: billed, total_tokens: pt + billed };
    events.push(`${head}],"usage":${JSON.stringify(usage)}}\n\n`);
  }
  events.push('data: [DONE]\n\n');
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sendEvents(res, events, b);
}

/** Writes SSE events: all at once, or one per `chunkDelayMs` (stopping after `stallAfterChunks`). */
function sendEvents(res: ServerResponse, events: string[], b: MockBehaviour): void {
  const stallAt = b.stallAfterChunks;
  if (b.chunkDelayMs <= 0 && stallAt === undefined) {
    res.end(events.join(''));
    return;
  }
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (stallAt !== undefined && i >= stallAt + 1) return;
    if (i >= events.length) {
      res.end();
      return;
    }
    res.write(events[i++]);
    setTimeout(next, b.chunkDelayMs);
  };
  next();
}

function chat(res: ServerResponse, body: ChatBody, b: MockBehaviour, seq: number): void {
  const { n, truncated } = completionTokens(body, b);
  const id = `chatcmpl-mock-${seq}`;
  const created = Math.floor(Date.now() / 1000);
  const model = typeof body.model === 'string' ? body.model : 'mock-gpt';
  const x = b.usage;
  // A chat web search (web_search_options, OpenRouter's web plugin, `:online`) reads its results as input.
  const chatSearch =
    (body as { web_search_options?: unknown }).web_search_options != null ||
    model.endsWith(':online') ||
    (Array.isArray(body.plugins) && body.plugins.some((p) => (p as { id?: unknown })?.id === 'web'));
  const pt =
    promptTokens(body) + mediaTokens(body, x, false) + (chatSearch ? (x.searchContentTokens ?? 0) : 0);
  // `n` choices, each answered in full and billed.
  const k = choicesOf(body);
  // OpenAI counts cache reads and writes inside prompt_tokens, reasoning inside completion_tokens.
  const extraIn = (x.cachedTokens ?? 0) + (x.cacheWriteTokens ?? 0);
  const reasoning = x.reasoningTokens ?? 0;
  const unreported = x.unreportedTokens ?? 0;
  // OpenRouter's web plugin and `:online` models report their search as Anthropic does.
  const openRouterSearch =
    x.billMax &&
    (model.endsWith(':online') ||
      (Array.isArray(body.plugins) && body.plugins.some((p) => (p as { id?: unknown })?.id === 'web')));
  const usage = {
    prompt_tokens: pt + extraIn,
    completion_tokens: k * n + reasoning,
    total_tokens: pt + extraIn + k * n + reasoning + unreported,
    ...(extraIn > 0
      ? {
          prompt_tokens_details: {
            cached_tokens: x.cachedTokens ?? 0,
            cache_write_tokens: x.cacheWriteTokens ?? 0,
          },
        }
      : {}),
    ...(reasoning > 0 ? { completion_tokens_details: { reasoning_tokens: reasoning } } : {}),
    ...(openRouterSearch ? { server_tool_use: { web_search_requests: 1 } } : {}),
  };
  const finish = truncated ? 'length' : 'stop';
  const reported = reportedTier(body, b);
  const tier = reported !== undefined ? `"service_tier":${JSON.stringify(reported)},` : '';
  if (body.stream !== true) {
    json(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      ...(reported !== undefined ? { service_tier: reported } : {}),
      choices: Array.from({ length: k }, (_, index) => ({
        index,
        message: { role: 'assistant', content: 'tok '.repeat(n) },
        finish_reason: finish,
      })),
      usage,
    });
    return;
  }
  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},${tier}"choices":[`;
  const events: string[] = [];
  for (let c = 0; c < k; c++) {
    events.push(`${head}{"index":${c},"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`);
  }
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < k; c++) {
      events.push(`${head}{"index":${c},"delta":{"content":"tok "},"finish_reason":null}]}\n\n`);
    }
  }
  for (let c = 0; c < k; c++)
    events.push(`${head}{"index":${c},"delta":{},"finish_reason":"${finish}"}]}\n\n`);
  if (body.stream_options?.include_usage === true)
    events.push(`${head}],"usage":${JSON.stringify(usage)}}\n\n`);
  events.push('data: [DONE]\n\n');
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const stallAt = b.stallAfterChunks;
  if (b.chunkDelayMs <= 0 && stallAt === undefined) {
    res.end(events.join(''));
    return;
  }
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (stallAt !== undefined && i >= stallAt + 1) return; // role event + stallAt token events, then silence
    if (i >= events.length) {
      res.end();
      return;
    }
    res.write(events[i++]);
    setTimeout(next, b.chunkDelayMs);
  };
  next();
}

// CLI: tsx bench/upstream/mock-upstream.ts --port 9000 [--chunks 8] [--latency 0] [--chunk-delay 0]
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string, def: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? def : Number(process.argv[i + 1]);
  };
  const m = await startMockUpstream({
    port: arg('port', 9000),
    chunks: arg('chunks', 8),
    latencyMs: arg('latency', 0),
    chunkDelayMs: arg('chunk-delay', 0),
  });
  console.log(`mock upstream listening: ${m.url}`);
  const stop = () => void m.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
