import { afterEach, describe, expect, it } from 'vitest';
import { bookPricedGatewayPerSuite, mockModels } from '../support/models-file.js';
import type { PaidGateway, PaidStore } from '../support/paid-gateway.js';

/**
 * The bill cannot be gamed (issue 34): every request reserves what the provider can bill for it, or is refused
 * before the provider sees it — end to end on both stores, against the mock provider billing as a provider does
 * (every choice, every tool call the request allows, the stored chain read again as input).
 *
 * Prices (models.json) at BTC $100,000, fees 1, no base fee, so 1 micro-USD = 1 msat: prompt and completion
 * 1 msat per token; mock-gpt adds web search 10,000 msat per call, image output tokens 40 msat each (at most
 * 100 per image), code interpreter 30,000 msat per container, file search 2,500 msat per call, tiers flex × 0.5
 * and priority × 2. mock-mini has only prompt and completion prices. The mock counts 6 prompt tokens for the
 * message below and answers 8 completion tokens per choice unless told more.
 */
const MODELS = mockModels(
  {
    prompt: '0.000001',
    completion: '0.000001',
    web_search: '0.01',
    image_output: '0.00004',
    image_output_max_tokens: '100',
    code_interpreter: '0.03',
    file_search: '0.0025',
    service_tiers: { flex: '0.5', priority: '2' },
  },
  [
    { id: 'mock-gpt:online', pricing: { prompt: '0.000001', completion: '0.000001', web_search: '0.01' } },
    { id: 'mock-mini', pricing: { prompt: '0.000001', completion: '0.000001' } },
    { id: 'mock-mini:online', pricing: { prompt: '0.000001', completion: '0.000001' } },
    // Output dearer than input: a prompt far below its byte bound must not buy output beyond the reservation.
    { id: 'mock-wide', pricing: { prompt: '0.000001', completion: '0.000004' } },
  ],
);
// A model whose context length the catalogue does not know (an OpenAI-style model list gives none).
MODELS.models.push({ id: 'mock-open', pricing: { prompt: '0.000001', completion: '0.000004' } } as never);
const messages = [{ role: 'user' as const, content: 'Say something, please.' }];
const input = 'Say something, please.';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field
type Json = Record<string, any>;

async function metric(h: PaidGateway, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${h.gateway.url}/metrics`)).text();
  const esc = label.replace(/[{}"]/g, (c) => `\\${c}`);
  const m = new RegExp(`^${name}${esc} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe.each<PaidStore>(['sqlite', 'redis'])('the bound holds on %s', (store) => {
  const h = bookPricedGatewayPerSuite(store, MODELS);
  afterEach(() => {
    h.upstream.setBehaviour({ usage: {}, chunks: 8 });
  });
  const post = (path: string, key: string, body: unknown) =>
    h.post(path, body, { authorization: `Bearer ${key}` });

  /** A refusal before anything reached the provider and before any money moved. */
  async function refused(key: string, path: string, body: unknown, status: number, code: string) {
    const before = h.upstream.stats.requests;
    const balance = await h.available(key);
    const res = await post(path, key, body);
    const err = ((await res.json()) as Json).error;
    expect({ status: res.status, code: err?.code }).toEqual({ status, code });
    expect(h.upstream.stats.requests).toBe(before);
    expect(await h.available(key)).toBe(balance);
    return err as Json;
  }
  const refusedChat = (key: string, body: unknown, status: number, code: string) =>
    refused(key, '/chat/completions', body, status, code);
  const refusedResponse = (key: string, body: unknown, status: number, code: string) =>
    refused(key, '/responses', body, status, code);

  it('n choices multiply the output bound: n 8 × 1,000 on 5,000 msat is refused; funded, charged 8,006', async () => {
    h.upstream.setBehaviour({ chunks: 100_000 });
    const poor = await h.fundKey(5);
    const chat = { model: 'mock-gpt', messages, n: 8, max_tokens: 1000 };
    await refused(poor.apiKey, '/chat/completions', chat, 402, 'payment_required');
    const { apiKey, balanceMsat } = await h.fundKey(20);
    const res = await post('/chat/completions', apiKey, chat);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.choices).toHaveLength(8);
    // 6 prompt + 8 × 1,000 completion
    expect(body['x-node-cost']).toMatchObject({ msats: 8006, estimated: false });
    expect(await h.available(apiKey)).toBe(balanceMsat - 8006);
  });

  it('best_of on completions: every candidate is billed (6 + 3 × 100 = 306 msat); n above 128 is refused', async () => {
    h.upstream.setBehaviour({ chunks: 100_000 });
    const { apiKey, balanceMsat } = await h.fundKey(5);
    const res = await post('/completions', apiKey, {
      model: 'mock-gpt',
      prompt: input,
      best_of: 3,
      max_tokens: 100,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).usage.completion_tokens).toBe(300);
    expect(res.headers.get('x-node-cost')).toBe('306');
    expect(await h.available(apiKey)).toBe(balanceMsat - 306);
    // Beyond the API's 128: the request schema refuses it before anything is reserved.
    await refusedChat(apiKey, { model: 'mock-gpt', messages, n: 129 }, 400, 'validation_failed');
  });

  it('several max-tokens fields: the largest bounds the call (a 1,000-msat key is refused; 1,006 charged)', async () => {
    h.upstream.setBehaviour({ chunks: 100_000 });
    const chat = { model: 'mock-gpt', messages, max_tokens: 10, max_completion_tokens: 1000 };
    const poor = await h.fundKey(1);
    await refused(poor.apiKey, '/chat/completions', chat, 402, 'payment_required');
    const { apiKey, balanceMsat } = await h.fundKey(5);
    const res = await post('/chat/completions', apiKey, chat);
    expect(res.headers.get('x-node-cost')).toBe('1006');
    expect(await h.available(apiKey)).toBe(balanceMsat - 1006);
  });

  it('a tier the price book does not price is refused; auto is bounded and charged at the dearest (28 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(20);
    const err = await refusedChat(
      apiKey,
      { model: 'mock-mini', messages, service_tier: 'priority', max_tokens: 8 },
      400,
      'service_tier_not_priced',
    );
    expect(err.message).toContain('"priority"');
    await refusedResponse(
      apiKey,
      { model: 'mock-gpt', input, service_tier: 'scale', max_output_tokens: 8 },
      400,
      'service_tier_not_priced',
    );
    h.upstream.setBehaviour({ usage: { billMax: true } });
    const res = await post('/chat/completions', apiKey, {
      model: 'mock-gpt',
      messages,
      service_tier: 'auto',
      max_tokens: 8,
    });
    // The provider served it at priority: (6 + 8) × 2
    expect(res.headers.get('x-node-cost')).toBe('28');
    expect(await h.available(apiKey)).toBe(balanceMsat - 28);
  });

  it('a reported tier the book does not know: charged at its dearest tier (28 msat) and counted', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(20);
    const seen = await metric(h, 'gateway_unpriced_dimension_total', '{dimension="service_tier"}');
    h.upstream.setBehaviour({ usage: { serviceTier: 'scale' } });
    const res = await post('/chat/completions', apiKey, { model: 'mock-gpt', messages, max_tokens: 8 });
    expect(res.headers.get('x-node-cost')).toBe('28');
    expect(await h.available(apiKey)).toBe(balanceMsat - 28);
    expect(await metric(h, 'gateway_unpriced_dimension_total', '{dimension="service_tier"}')).toBe(seen + 1);
  });

  it('hosted tools without a price are refused with tool_not_priced before the provider sees them', async () => {
    const { apiKey } = await h.fundKey(20);
    for (const type of ['image_generation', 'code_interpreter', 'file_search']) {
      const err = await refusedResponse(
        apiKey,
        { model: 'mock-mini', input, tools: [{ type }], max_output_tokens: 8 },
        400,
        'tool_not_priced',
      );
      expect(err.message).toContain(type);
    }
    await refusedChat(
      apiKey,
      { model: 'mock-mini', messages, web_search_options: {}, max_tokens: 8 },
      400,
      'tool_not_priced',
    );
    await refusedChat(
      apiKey,
      { model: 'mock-mini', messages, plugins: [{ id: 'web' }], max_tokens: 8 },
      400,
      'tool_not_priced',
    );
    await refusedChat(apiKey, { model: 'mock-mini:online', messages, max_tokens: 8 }, 400, 'tool_not_priced');
  });

  it('image_generation: the image tokens billed in tool_usage are charged by name (6 + 14 + 8 + 100 × 40 = 4,028 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(20);
    h.upstream.setBehaviour({ usage: { billMax: true, imageTokens: 100 } });
    const res = await post('/responses', apiKey, {
      model: 'mock-gpt',
      input,
      tools: [{ type: 'image_generation' }],
      max_output_tokens: 8,
    });
    expect(res.status).toBe(200);
    // The bound's call count went to the provider with the request.
    expect((h.upstream.stats.lastBody as Json).max_tool_calls).toBe(1);
    // The image model read 6 + 8 tokens (input), wrote 100 image tokens at 40 msat.
    expect(((await res.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 4028,
      breakdown: { dimensions: { prompt: 20, completion: 8, image_output: 4000, fees: 0 } },
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 4028);
  });

  it('code_interpreter per container (max_tool_calls 2: 60,014 msat) and file_search per call (2,514 msat)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: { billMax: true } });
    const code = await post('/responses', apiKey, {
      model: 'mock-gpt',
      input,
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
      max_tool_calls: 2,
      max_output_tokens: 8,
    });
    expect(((await code.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 60_014,
      breakdown: { dimensions: { prompt: 6, completion: 8, code_interpreter: 60_000, fees: 0 } },
    });
    const search = await post('/responses', apiKey, {
      model: 'mock-gpt',
      input,
      tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }],
      max_output_tokens: 8,
    });
    expect(((await search.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 2514,
      breakdown: { dimensions: { file_search: 2500 } },
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 60_014 - 2514);
  });

  it('chat web search (web_search_options, the web plugin, :online) is charged its search: 10,014 msat each', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    h.upstream.setBehaviour({ usage: { billMax: true } });
    const bodies = [
      { model: 'mock-gpt', messages, web_search_options: {}, max_tokens: 8 },
      { model: 'mock-gpt', messages, plugins: [{ id: 'web' }], max_tokens: 8 },
      { model: 'mock-gpt:online', messages, max_tokens: 8 },
    ];
    for (const body of bodies) {
      const res = await post('/chat/completions', apiKey, body);
      expect(((await res.json()) as Json)['x-node-cost'], body.model).toMatchObject({
        msats: 10_014,
        breakdown: { dimensions: { web_search: 10_000 } },
      });
    }
    expect(await h.available(apiKey)).toBe(balanceMsat - 3 * 10_014);
  });

  it('a follow-up reserves the stored chain: with 900 msat left, its own bytes fit but the 1,008 stored tokens do not', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(5);
    // 4,000 characters: 1,000 prompt tokens for the mock.
    const first = await post('/responses', apiKey, {
      model: 'mock-gpt',
      input: 'abcd'.repeat(1000),
      max_output_tokens: 8,
    });
    const created = (await first.json()) as Json;
    expect(created['x-node-cost'].msats).toBe(1008);
    const record = await h.gateway.services.objects!.get(created.id);
    expect(JSON.parse(record!.meta!)).toEqual({ input_tokens: 1000, output_tokens: 8 });
    // Spend down to 900 msat: 6 + 3,086 tokens.
    h.upstream.setBehaviour({ chunks: 100_000 });
    const spend = await post('/chat/completions', apiKey, { model: 'mock-gpt', messages, max_tokens: 3086 });
    expect(spend.headers.get('x-node-cost')).toBe('3092');
    expect(await h.available(apiKey)).toBe(900);
    // The follow-up's own bound is about 200 tokens; with the chain it is over 1,200: refused. (Admitted on its own
    // bytes, the provider would bill 1,018 msat, 118 more than the key holds.)
    const err = await refusedResponse(
      apiKey,
      { model: 'mock-gpt', input: 'go on', previous_response_id: created.id, max_output_tokens: 8 },
      402,
      'payment_required',
    );
    expect(err.details.required).toBeGreaterThan(1008);
    expect(err.details.required).toBeLessThan(1008 + 400);
    expect(await h.available(apiKey)).toBe(balanceMsat - 1008 - 3092);
  });

  it('a follow-up is charged the chain the provider read again: 2 + 1,008 input + 8 output = 1,018 msat', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(10);
    const first = (await (
      await post('/responses', apiKey, {
        model: 'mock-gpt',
        input: 'abcd'.repeat(1000),
        max_output_tokens: 8,
      })
    ).json()) as Json;
    const next = await post('/responses', apiKey, {
      model: 'mock-gpt',
      input: 'go on',
      previous_response_id: first.id,
      max_output_tokens: 8,
    });
    expect(next.status).toBe(200);
    expect(next.headers.get('x-node-cost')).toBe('1018');
    expect(await h.available(apiKey)).toBe(balanceMsat - 1008 - 1018);
  });

  it('a conversation or a stored prompt the gateway did not see is refused (context_not_bounded)', async () => {
    const { apiKey } = await h.fundKey(10);
    await refusedResponse(
      apiKey,
      { model: 'mock-gpt', input, conversation: 'conv_123', max_output_tokens: 8 },
      400,
      'context_not_bounded',
    );
    await refusedResponse(
      apiKey,
      { model: 'mock-gpt', prompt: { id: 'pmpt_123', version: '2' }, max_output_tokens: 8 },
      400,
      'context_not_bounded',
    );
  });

  it('no max-tokens field: the whole window is reserved, so a prompt far below its byte bound cannot outspend it', async () => {
    // 4,000 characters the mock counts as 1,000 tokens; the prompt bound is about four times that. The provider
    // fills the window: 8,192 − 1,000 = 7,192 output tokens at 4 msat. Reserving "the window left after the
    // prompt bound" (about 4,150 output tokens) would let it bill ~12,000 msat more than was held.
    h.upstream.setBehaviour({ usage: { windowTokens: 8192 } });
    const chat = { model: 'mock-wide', messages: [{ role: 'user', content: 'a'.repeat(4000) }] };
    const poor = await h.fundKey(32);
    const err = await refused(poor.apiKey, '/chat/completions', chat, 402, 'payment_required');
    expect(err.details.required).toBeGreaterThan(8192 * 4);
    const { apiKey, balanceMsat } = await h.fundKey(40);
    const res = await post('/chat/completions', apiKey, chat);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 7192 });
    // Nothing is written into the body: the window bounds the provider.
    expect(h.upstream.stats.lastBody).not.toHaveProperty('max_completion_tokens');
    expect(body['x-node-cost']).toMatchObject({ msats: 1000 + 7192 * 4, estimated: false });
    expect(await h.available(apiKey)).toBe(balanceMsat - (1000 + 7192 * 4));
  });

  it('no max-tokens field and an unknown window: the cap reserved is the cap the provider is told (4,096; completions 16)', async () => {
    // The provider would write 100,000 tokens if nothing bounded it.
    h.upstream.setBehaviour({ chunks: 100_000, usage: { windowTokens: 100_000 } });
    const { apiKey, balanceMsat } = await h.fundKey(40);
    const chat = await post('/chat/completions', apiKey, { model: 'mock-open', messages });
    expect(chat.status).toBe(200);
    expect(h.upstream.stats.lastBody).toMatchObject({ max_completion_tokens: 4096 });
    expect(((await chat.json()) as Json)['x-node-cost']).toMatchObject({ msats: 6 + 4096 * 4 });
    const resp = await post('/responses', apiKey, { model: 'mock-open', input });
    expect(resp.status).toBe(200);
    expect(h.upstream.stats.lastBody).toMatchObject({ max_output_tokens: 4096 });
    const legacy = await post('/completions', apiKey, { model: 'mock-open', prompt: input });
    expect(legacy.status).toBe(200);
    expect(h.upstream.stats.lastBody).toMatchObject({ max_tokens: 16 });
    expect(legacy.headers.get('x-node-cost')).toBe(String(6 + 16 * 4));
    const respCost = Number(resp.headers.get('x-node-cost'));
    expect(respCost).toBeLessThanOrEqual(6 + 4096 * 4 + 10);
    expect(await h.available(apiKey)).toBe(balanceMsat - (6 + 4096 * 4) - respCost - (6 + 16 * 4));
  });

  it('reasoning the provider left out of completion_tokens (total_tokens shows it) is charged and counted: 19 msat', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(5);
    const seen = await metric(h, 'gateway_unreported_output_tokens_total');
    h.upstream.setBehaviour({ usage: { unreportedTokens: 5 } });
    const res = await post('/chat/completions', apiKey, { model: 'mock-gpt', messages, max_tokens: 8 });
    // 6 prompt + 8 completion + 5 unreported (reasoning, at the completion rate)
    expect(((await res.json()) as Json)['x-node-cost']).toMatchObject({
      msats: 19,
      breakdown: { dimensions: { prompt: 6, completion: 8, internal_reasoning: 5 } },
    });
    expect(await h.available(apiKey)).toBe(balanceMsat - 19);
    expect(await metric(h, 'gateway_unreported_output_tokens_total')).toBe(seen + 5);
  });
});
