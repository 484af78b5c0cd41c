import { describe, expect, it } from 'vitest';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';

/**
 * The other metered endpoints with the official openai SDK: legacy completions and the Responses API,
 * streamed and not, each charged exactly from the upstream's usage (responses: `input_tokens` /
 * `output_tokens`, streamed in `response.completed`), on both stores.
 */
const PRICING = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '1',
  FIXED_PER_1K_INPUT_TOKENS: '3',
  FIXED_PER_1K_OUTPUT_TOKENS: '11',
  // These calls set no max_tokens on small balances: they test metering, not admission (the 402 naming the
  // affordable tokens is test/e2e/paid-pricing.test.ts), so the gateway lowers max_tokens as before.
  CLAMP_MAX_TOKENS: 'true',
};
/** Independent of the production formula: 1 sat per call + 3 msat per prompt token + 11 per completion token. */
const cost = (p: number, c: number) => 1000 + 3 * p + 11 * c;
const PROMPT_TEXT = 'Write a short poem about ecash.'; // 31 chars → 8 prompt tokens at the mock's 4 chars/token
const PROMPT = 8;

describe.each<PaidStore>(['sqlite', 'redis'])('metered endpoints on %s', (store) => {
  const h = paidGatewayPerSuite({ store, env: PRICING, upstream: { chunks: 6 } });

  it('completions: charged from the usage, max_tokens honoured', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(50);
    const res = await h
      .openai(apiKey)
      .completions.create({ model: 'mock-gpt', prompt: PROMPT_TEXT, max_tokens: 4 });
    expect(res.usage).toMatchObject({ prompt_tokens: PROMPT, completion_tokens: 4 });
    expect(await h.available(apiKey)).toBe(balanceMsat - cost(PROMPT, 4));
  });

  it('responses: non-stream charged from input_tokens/output_tokens', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(50);
    const res = await h.openai(apiKey).responses.create({ model: 'mock-gpt', input: PROMPT_TEXT });
    expect(res.usage).toMatchObject({ input_tokens: PROMPT, output_tokens: 6 });
    expect(res.output_text).toBe('tok '.repeat(6));
    expect(await h.available(apiKey)).toBe(balanceMsat - cost(PROMPT, 6));
  });

  it('responses: streamed, charged from the usage of response.completed', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(50);
    const stream = await h
      .openai(apiKey)
      .responses.create({ model: 'mock-gpt', input: PROMPT_TEXT, stream: true });
    let text = '';
    let completed = false;
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') completed = true;
    }
    expect(text).toBe('tok '.repeat(6));
    expect(completed).toBe(true);
    const forwarded = h.upstream.stats.lastBody as Record<string, unknown>;
    expect(forwarded.stream_options).toBeUndefined(); // chat-only option not forced on the Responses API
    expect(await h.available(apiKey)).toBe(balanceMsat - cost(PROMPT, 6));
  });

  it('responses: streamed X-Cashu call gets its change at the end of the stream', async () => {
    const token = await h.mintToken(30);
    const res = await h.post(
      '/responses',
      { model: 'mock-gpt', input: PROMPT_TEXT, stream: true },
      { 'x-cashu': token },
    );
    expect(res.status).toBe(200);
    const body = await res.text();
    const change = /^: x-cashu (cashu[AB]\S+)$/m.exec(body)?.[1];
    expect(change).toBeDefined();
    expect(body.indexOf('response.completed')).toBeLessThan(body.indexOf(': x-cashu'));
    expect(await h.redeem(change!)).toBe(Math.floor((30_000 - cost(PROMPT, 6)) / 1000));
  });
});
