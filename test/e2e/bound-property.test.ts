import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESERVATION, type RequestContext } from '../../core/context.js';
import { requestEndChannel } from '../../core/tracing.js';
import { dataUrl, png } from '../support/images.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { BOOK_PRICES } from '../support/prices.js';
import { until } from '../support/until.js';

/**
 * The bill cannot be gamed, as a property (issue 34): generated request shapes — chat, completions and Responses,
 * streamed or not, `n`, `best_of`, any of the three max-tokens fields, hosted tools and `max_tool_calls`, chat web
 * search, service tiers, a continued stored response, a conversation, images (inline PNGs of any size and detail,
 * by URL), files (inline, by URL), background Responses, and a client that leaves once the provider has the request
 * — sent through the full gateway (HTTP, the default pipeline, SQLite or Redis) to the mock provider billing the most
 * each request allows (`billMax`: every choice to the largest cap or, with none, the whole window, every tool call allowed, a new container per code
 * interpreter call, the requested tier with `auto` served as priority, reasoning only `total_tokens` shows;
 * `billMedia`: images by OpenAI's tile formula from their header, 8 tiles when unseen, an inline PDF one image per page, REFERENCE_MAX_TOKENS per
 * file by URL; the search results of each web search as input).
 *
 * Every request is either refused before the provider sees it (and nothing moves), or charged EXACTLY what the
 * provider billed — computed here from the provider's own answer with the price book below, independently of the
 * gateway's metering — and that bill is within what the call reserved (read from the request's end event), so the
 * operator's loss is 0 whatever the balance; and nothing stays reserved.
 *
 * Prices at BTC $100,000 and fees 1 (1 micro-USD = 1 msat): mock-gpt prompt 1, completion 2, reasoning 3 msat
 * per token, web search 1,000, file search 300, code interpreter 700 per container, image output 5 per token (at
 * most 50 per image), flex × 0.5, priority × 2; mock-mini prompt 1, completion 2 and nothing else.
 */
const MODELS = {
  models: [
    {
      id: 'mock-gpt',
      context_length: 8192,
      image_tokens: { formula: 'tiles', base: 85, tile: 170 },
      pricing: {
        prompt: '0.000001',
        completion: '0.000002',
        internal_reasoning: '0.000003',
        web_search: '0.001',
        file_search: '0.0003',
        code_interpreter: '0.0007',
        image_output: '0.000005',
        image_output_max_tokens: '50',
        service_tiers: { flex: '0.5', priority: '2' },
      },
    },
    { id: 'mock-mini', context_length: 8192, pricing: { prompt: '0.000001', completion: '0.000002' } },
  ],
};

const RUNS = Number(process.env.BOUND_PROPERTY_RUNS ?? 2000);
const TOOLS = ['web_search', 'image_generation', 'code_interpreter', 'file_search'] as const;

// biome-ignore lint/suspicious/noExplicitAny: provider answers, read field by field
type Json = Record<string, any>;

interface Shape {
  endpoint: 'chat' | 'completions' | 'responses';
  model: 'mock-gpt' | 'mock-mini';
  stream: boolean;
  n: number;
  bestOf: number | undefined;
  caps: { max_tokens?: number; max_completion_tokens?: number; max_output_tokens?: number };
  tools: (typeof TOOLS)[number][];
  maxToolCalls: number | undefined;
  chatSearch: 'options' | 'plugin' | undefined;
  tier: 'default' | 'auto' | 'flex' | 'priority' | 'scale' | undefined;
  chain: boolean;
  conversation: boolean;
  unreported: number;
  text: string;
  /** Images and files in the prompt (chat and Responses). */
  media: Media[];
  /** Responses, not streamed: `background: true` (settled by the watcher). */
  background: boolean;
  /** The client leaves once the provider has the request. */
  gone: boolean;
}

type Media =
  | { kind: 'png'; width: number; height: number; detail: 'low' | 'high' | 'auto' | undefined }
  | { kind: 'image_url'; detail: 'low' | 'high' | undefined }
  | { kind: 'file_data'; bytes: number; pages: number }
  | { kind: 'file_url' };

const media: fc.Arbitrary<Media> = fc.oneof(
  fc.record({
    kind: fc.constant('png' as const),
    width: fc.integer({ min: 1, max: 6000 }),
    height: fc.integer({ min: 1, max: 6000 }),
    detail: fc.constantFrom('low' as const, 'high' as const, 'auto' as const, undefined),
  }),
  fc.record({
    kind: fc.constant('image_url' as const),
    detail: fc.constantFrom('low' as const, 'high' as const, undefined),
  }),
  fc.record({
    kind: fc.constant('file_data' as const),
    bytes: fc.integer({ min: 1, max: 300 }),
    // A PDF's page objects: each renders as an image the provider bills; a few bytes each.
    pages: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 })),
  }),
  fc.record({ kind: fc.constant('file_url' as const) }),
);

/** A content part of `m` in the chat or Responses shape. */
function partOf(m: Media, endpoint: 'chat' | 'responses'): Json {
  const chat = endpoint === 'chat';
  switch (m.kind) {
    case 'png': {
      const url = dataUrl(png(m.width, m.height));
      const detail = m.detail !== undefined ? { detail: m.detail } : {};
      return chat
        ? { type: 'image_url', image_url: { url, ...detail } }
        : { type: 'input_image', image_url: url, ...detail };
    }
    case 'image_url': {
      const url = 'https://images.example/photo.jpg';
      const detail = m.detail !== undefined ? { detail: m.detail } : {};
      return chat
        ? { type: 'image_url', image_url: { url, ...detail } }
        : { type: 'input_image', image_url: url, ...detail };
    }
    case 'file_data': {
      const file = {
        filename: 'a.pdf',
        file_data: `data:application/pdf;base64,${Buffer.concat([
          Buffer.alloc(m.bytes, 7),
          Buffer.from('<</Type /Page>>'.repeat(m.pages)),
        ]).toString('base64')}`,
      };
      return chat ? { type: 'file', file } : { type: 'input_file', ...file };
    }
    case 'file_url':
      // Chat files come by id or inline only: the URL form is the Responses one.
      return chat
        ? { type: 'text', text: 'no file' }
        : { type: 'input_file', file_url: 'https://files.example/report.pdf' };
  }
}

const cap = () => fc.option(fc.integer({ min: 1, max: 300 }), { nil: undefined });
const shapes: fc.Arbitrary<Shape> = fc.record({
  endpoint: fc.constantFrom('chat', 'completions', 'responses'),
  model: fc.constantFrom('mock-gpt', 'mock-gpt', 'mock-mini'),
  stream: fc.boolean(),
  n: fc.integer({ min: 1, max: 4 }),
  bestOf: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  caps: fc.record(
    { max_tokens: cap(), max_completion_tokens: cap(), max_output_tokens: cap() },
    { requiredKeys: [] },
  ),
  tools: fc.subarray([...TOOLS]),
  maxToolCalls: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  chatSearch: fc.constantFrom(undefined, undefined, 'options', 'plugin'),
  tier: fc.constantFrom(undefined, undefined, 'default', 'auto', 'flex', 'priority', 'scale'),
  chain: fc.boolean(),
  conversation: fc.integer({ min: 0, max: 9 }).map((v) => v === 0),
  unreported: fc.integer({ min: 0, max: 3 }),
  text: fc.string({ minLength: 1, maxLength: 120, unit: 'grapheme-ascii' }),
  media: fc.oneof(fc.constant([]), fc.array(media, { minLength: 1, maxLength: 3 })),
  background: fc.integer({ min: 0, max: 2 }).map((v) => v === 0),
  gone: fc.integer({ min: 0, max: 6 }).map((v) => v === 0),
}) as fc.Arbitrary<Shape>;

/** Background applies to Responses not streamed; a background call is not left (it answers at once). */
const isBackground = (s: Shape) => s.background && s.endpoint === 'responses' && !s.stream;
const leaves = (s: Shape) => s.gone && !isBackground(s);

/** The request body of a shape (`previous`: a stored response of this key to continue). */
function bodyOf(s: Shape, previous: string | undefined): Json {
  const caps = Object.fromEntries(Object.entries(s.caps).filter(([, v]) => v !== undefined));
  const common: Json = { model: s.model, ...caps, ...(s.tier !== undefined ? { service_tier: s.tier } : {}) };
  if (s.stream) common.stream = true;
  if (s.endpoint === 'completions') {
    return {
      ...common,
      prompt: s.text,
      n: s.n,
      ...(s.bestOf !== undefined ? { best_of: Math.max(s.bestOf, s.n) } : {}),
    };
  }
  if (s.endpoint === 'chat') {
    return {
      ...common,
      messages: [
        {
          role: 'user',
          content:
            s.media.length === 0
              ? s.text
              : [{ type: 'text', text: s.text }, ...s.media.map((m) => partOf(m, 'chat'))],
        },
      ],
      n: s.n,
      ...(s.chatSearch === 'options' ? { web_search_options: {} } : {}),
      ...(s.chatSearch === 'plugin' ? { plugins: [{ id: 'web' }] } : {}),
    };
  }
  return {
    ...common,
    input:
      s.media.length === 0
        ? s.text
        : [
            {
              role: 'user',
              content: [{ type: 'input_text', text: s.text }, ...s.media.map((m) => partOf(m, 'responses'))],
            },
          ],
    ...(isBackground(s) ? { background: true } : {}),
    ...(s.tools.length > 0
      ? {
          tools: s.tools.map((type) =>
            type === 'file_search' ? { type, vector_store_ids: ['vs_1'] } : { type },
          ),
        }
      : {}),
    ...(s.maxToolCalls !== undefined && s.tools.length > 0 ? { max_tool_calls: s.maxToolCalls } : {}),
    ...(s.chain && previous !== undefined ? { previous_response_id: previous } : {}),
    ...(s.conversation ? { conversation: 'conv_never_seen' } : {}),
  };
}

/** The refusal a shape must get before the provider, or undefined when it must be served. */
function mustRefuse(s: Shape): string | undefined {
  const toolsDeclared =
    // `max_tool_calls: 0` lets the provider call no tool: nothing to price.
    (s.endpoint === 'responses' && s.tools.length > 0 && s.maxToolCalls !== 0) ||
    (s.endpoint === 'chat' && s.chatSearch !== undefined);
  // Stored context is read first, then the price book.
  if (s.endpoint === 'responses' && s.conversation) return 'context_not_bounded';
  if (s.model === 'mock-mini' && (s.tier === 'flex' || s.tier === 'priority' || s.tier === 'scale')) {
    return 'service_tier_not_priced';
  }
  if (s.tier === 'scale') return 'service_tier_not_priced';
  if (s.model === 'mock-mini' && toolsDeclared) {
    // A web_search entry in `tools` keeps its older code.
    return s.endpoint === 'responses' && s.tools[0] === 'web_search' ? 'model_not_priced' : 'tool_not_priced';
  }
  return undefined;
}

/** Server-sent events' JSON payloads. */
function events(text: string): Json[] {
  const out: Json[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    out.push(JSON.parse(line.slice(6)) as Json);
  }
  return out;
}

/** The provider's refusal of a prompt longer than the model's window (the mock's `windowTokens`). */
const windowRefusal = (raw: string | undefined): boolean =>
  raw?.startsWith('{"error"') === true && raw.includes('"context_length_exceeded"');

/**
 * What the provider billed for its answer `raw`, in msat, from the price book above: an independent reading of
 * each API's own usage shape (not the gateway's metering).
 */
function providerBill(s: Shape, raw: string): number {
  // A prompt longer than the window is refused by the provider, unbilled.
  if (windowRefusal(raw)) return 0;
  const gpt = s.model === 'mock-gpt';
  let usage: Json;
  let tier: string | undefined;
  let extra = 0;
  if (s.endpoint === 'responses') {
    const r: Json = s.stream
      ? events(raw)
          .filter((e) => e.type === 'response.completed' || e.type === 'response.incomplete')
          .at(-1)!.response
      : JSON.parse(raw);
    usage = {
      prompt_tokens: r.usage.input_tokens,
      completion_tokens: r.usage.output_tokens,
      total_tokens: r.usage.total_tokens,
    };
    tier = r.service_tier;
    const containers = new Set<string>();
    for (const item of r.output as Json[]) {
      if (item.type === 'web_search_call') extra += 1000;
      if (item.type === 'file_search_call') extra += 300;
      if (item.type === 'code_interpreter_call') containers.add(item.container_id);
    }
    extra += containers.size * 700;
    const gen = r.tool_usage?.image_gen;
    if (gen !== undefined) extra += gen.input_tokens * 1 + gen.output_tokens * 5;
  } else {
    const parts = s.stream ? events(raw) : [JSON.parse(raw) as Json];
    usage = parts.findLast((p) => p.usage)!.usage;
    tier = parts.find((p) => p.service_tier !== undefined)?.service_tier;
    if (s.endpoint === 'chat' && s.chatSearch !== undefined) {
      // Billed per call: one search unless the provider counts them.
      extra += 1000 * Math.max(1, usage.server_tool_use?.web_search_requests ?? 0);
    }
  }
  const gap = usage.total_tokens - usage.prompt_tokens - usage.completion_tokens;
  const reasoningRate = gpt ? 3 : 2;
  const sum = usage.prompt_tokens * 1 + usage.completion_tokens * 2 + gap * reasoningRate + extra;
  // flex × 0.5, priority × 2; a tier the book does not know at its dearest (mock-gpt: priority; mock-mini: 1).
  const [num, den] =
    tier === undefined || tier === 'default' ? [1, 1] : !gpt ? [1, 1] : tier === 'flex' ? [1, 2] : [2, 1];
  return Math.ceil((sum * num) / den);
}

/** What each call reserved, read from the request's end event (the gateway runs in this process). */
const reservedOf = new Map<string, number>();
const onEnd = (msg: unknown) => {
  const { ctx, requestId } = msg as { ctx: RequestContext; requestId: string };
  const r = ctx.local(RESERVATION);
  if (r !== undefined) reservedOf.set(requestId, r.amountMsats);
};
beforeAll(() => subscribe(requestEndChannel.name, onEnd));
afterAll(() => unsubscribe(requestEndChannel.name, onEnd));

/** Tokens each file by URL may cost (REFERENCE_MAX_TOKENS, billed in full by the mock) and each search's results. */
const FILE_TOKENS = 300;
const SEARCH_CONTENT_TOKENS = 200;

describe.each<PaidStore>(['sqlite', 'redis'])(
  'every request refused or charged exactly what the provider billed, on %s',
  (store) => {
    const h = paidGatewayPerSuite(
      {
        store,
        modelsFile: MODELS,
        env: {
          ...BOOK_PRICES,
          RATE_LIMIT_IP_PER_MINUTE: '1000000',
          RATE_LIMIT_IP_PER_HOUR: '1000000',
          RATE_LIMIT_IP_PER_DAY: '1000000',
          RATE_LIMIT_REQUESTS_PER_MINUTE: '1000000',
          RATE_LIMIT_TOKENS_PER_HOUR: '1000000000',
          HOSTED_TOOL_CALLS_MAX: '2',
          REFERENCE_MAX_TOKENS: String(FILE_TOKENS),
          WEB_SEARCH_CONTENT_TOKENS: String(SEARCH_CONTENT_TOKENS),
          // Background responses: the watcher polls often, so that each case settles quickly.
          BATCH_POLL_MS: '50',
        },
        upstream: { recordResponses: true },
      },
      { auditEachTest: true },
    );

    it(`${RUNS} generated requests: refused before the provider, or charged its bill within the reservation; loss 0; nothing reserved`, async () => {
      const { apiKey } = await h.fundKey(50_000);
      const stored: string[] = [];
      let served = 0;
      let refusedCount = 0;
      let left = 0;
      let background = 0;
      /** Refused by the provider: a prompt longer than the window. */
      let overWindow = 0;
      /** The account after the previous case (its balance is the next case's before). */
      let last: { balanceMsat: number; reservedMsat: number } | undefined;
      await fc.assert(
        fc.asyncProperty(shapes, async (s) => {
          // Several caps: the provider reads the largest and answers all of it; none: it fills the model's window
          // (8,192 − its count of the prompt) and adds the reasoning only total_tokens shows.
          const caps = Object.values(s.caps).filter((v): v is number => v !== undefined);
          const capped = caps.length > 0;
          const want = mustRefuse(s);
          const gone = leaves(s) && want === undefined;
          h.upstream.setBehaviour({
            chunks: capped ? 100_000 : 8,
            // A client that leaves does so while the provider works (before the answer's head).
            latencyMs: gone ? 30 : 0,
            usage: {
              billMax: true,
              imageTokens: 50,
              billMedia: true,
              fileTokens: FILE_TOKENS,
              searchContentTokens: SEARCH_CONTENT_TOKENS,
              // The models' window: a prompt longer than it is refused unbilled, as a provider does.
              windowTokens: 8192,
              ...(capped ? {} : { unreportedTokens: s.unreported }),
            },
          });
          const body = bodyOf(s, stored.at(-1));
          const path = s.endpoint === 'chat' ? '/chat/completions' : `/${s.endpoint}`;
          const before = last ?? (await h.ledger.getKeyInfo({ apiKey }))!.account;
          const requests = h.upstream.stats.requests;
          reservedOf.clear();
          h.upstream.stats.lastResponse = undefined;
          let status: number;
          let text = '';
          if (gone) {
            const ac = new AbortController();
            const call = fetch(`${h.baseURL}${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
              body: JSON.stringify(body),
              signal: ac.signal,
            }).catch(() => undefined);
            // The provider has the whole request (undici sent it all): the client leaves.
            await until('the provider has the request', () => h.upstream.stats.requests > requests, 5000, 2);
            ac.abort();
            await call;
            status = 200;
            left++;
          } else {
            const res = await h.post(path, body, { authorization: `Bearer ${apiKey}` });
            status = res.status;
            text = await res.text();
          }
          if (status !== 200 && h.upstream.stats.requests > requests) {
            // Seen by the provider and refused there (a prompt longer than the window, as the gateway's bound
            // allows: it bounds the input at the window or more): nothing charged, nothing left reserved.
            await until(
              'the provider answer is recorded',
              () => h.upstream.stats.lastResponse !== undefined,
              5000,
              2,
            );
            expect(windowRefusal(h.upstream.stats.lastResponse!.toString('utf8')), text).toBe(true);
            await until(
              'the call is released',
              async () => {
                last = (await h.ledger.getKeyInfo({ apiKey }))!.account;
                return last.reservedMsat === 0;
              },
              10_000,
              2,
            );
            expect(last!.balanceMsat).toBe(before.balanceMsat);
            overWindow++;
          } else if (status !== 200) {
            const code = (JSON.parse(text) as Json).error?.code;
            expect({ status, code }, JSON.stringify(body)).toEqual({
              status: 400,
              code: want ?? 'served',
            });
            expect(h.upstream.stats.requests).toBe(requests);
            last = (await h.ledger.getKeyInfo({ apiKey }))!.account;
            expect(last.balanceMsat).toBe(before.balanceMsat);
            expect(last.reservedMsat).toBe(0);
            refusedCount++;
          } else {
            expect(want, JSON.stringify(body)).toBeUndefined();
            // A background response: the watcher reads it again until it ended (more provider requests).
            if (!isBackground(s)) expect(h.upstream.stats.requests).toBe(requests + 1);
            // Charged exactly the provider's bill: no overrun (the operator's loss), no overcharge. A background
            // response is settled by the watcher once the provider ended it; the last answer it read is the bill.
            await until(
              'the call is settled',
              async () => {
                last = (await h.ledger.getKeyInfo({ apiKey }))!.account;
                return last.reservedMsat === 0 && reservedOf.size > 0;
              },
              10_000,
              2,
            );
            await until(
              'the provider answer is recorded',
              () => h.upstream.stats.lastResponse !== undefined,
              5000,
              2,
            );
            const bill = providerBill(s, h.upstream.stats.lastResponse!.toString('utf8'));
            expect(before.balanceMsat - last!.balanceMsat, JSON.stringify(body)).toBe(bill);
            // Within what the call reserved: a smaller balance would have paid it all.
            const reserved = [...reservedOf.values()][0]!;
            expect(bill, `reserved ${reserved}: ${JSON.stringify(body).slice(0, 2000)}`).toBeLessThanOrEqual(
              reserved,
            );
            if (isBackground(s)) background++;
            else if (s.endpoint === 'responses' && !gone) {
              const id = s.stream
                ? events(text).find((e) => e.type === 'response.created')?.response.id
                : (JSON.parse(text) as Json).id;
              if (typeof id === 'string') stored.push(id);
            }
            served++;
          }
        }),
        { numRuns: RUNS, seed: Number(process.env.BOUND_PROPERTY_SEED ?? Date.now() % 2 ** 31) },
      );
      // Each case ended one way: served, refused by the gateway, or refused by the provider (over the window).
      expect(served + refusedCount + overWindow).toBe(RUNS);
      // Every outcome was exercised.
      expect(served).toBeGreaterThan(RUNS / 4);
      expect(refusedCount).toBeGreaterThan(RUNS / 20);
      expect(left).toBeGreaterThan(RUNS / 40);
      expect(background).toBeGreaterThan(RUNS / 200);
    }, 900_000);
  },
);
