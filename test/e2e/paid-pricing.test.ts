import { describe, expect, it } from 'vitest';
import { DEFAULT_MODELS } from '../../bench/upstream/mock-upstream.js';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';

/**
 * Balances exact to the msat under fixed and model-based pricing (BTC_USD_PRICE pinned), checked against
 * the exported formula; 402 naming the affordable tokens when the balance cannot cover the model's maximum
 * (max_tokens lowered instead with CLAMP_MAX_TOKENS=true); the catch-all relays only RELAY_PATHS; 402 details;
 * an X-Cashu 402 carries a NUT-18 payment request; unknown models are 404 before any money moves.
 */
const messages = [{ role: 'user' as const, content: 'Say something, please.' }]; // mock: 6 prompt tokens
const PROMPT = 6;
const RATES = DEFAULT_MODELS[0]!.pricing!;
const MODEL_ENV = {
  FIXED_PRICING: 'false',
  FIXED_COST_PER_REQUEST: '1',
  BTC_USD_PRICE: '50000',
  EXCHANGE_FEE: '1.005',
  UPSTREAM_PROVIDER_FEE: '1.05',
};
/**
 * Independent of the production formula, worked by hand: $0.000001 per prompt token at $50,000/BTC is
 * 0.002 sat = 2 msat, × 1.005 × 1.05 = 2.1105 msat; completion ($0.000002) 4.221 msat; rounded up once; plus
 * 1 sat per call. E.g. 6 prompt + 5 completion tokens: 12.663 + 21.105 = 33.768 → 34 + 1000 = 1034 msat.
 */
const modelCost = (p: number, c: number) => 1000 + Math.ceil((21_105 * p + 42_210 * c) / 10_000);
// The rates the hand calculation assumes are the mock provider's catalogue prices for mock-gpt.
if (RATES.prompt !== '0.000001' || RATES.completion !== '0.000002' || RATES.request !== '0') {
  throw new Error('mock-gpt prices changed: rework modelCost by hand');
}

describe.each<PaidStore>(['sqlite', 'redis'])('pricing on %s', (store) => {
  describe('fixed', () => {
    const h = paidGatewayPerSuite({
      store,
      // The catch-all path listed at the flat price (RELAY_PATHS prices are msats).
      env: {
        FIXED_PRICING: 'true',
        FIXED_COST_PER_REQUEST: '5',
        RELAY_PATHS: 'GET /v1/some/other/path=5000,POST /v1/fine_tuning/jobs=2500',
      },
    });

    it('charges the flat price per call, streamed or not, and per call on the catch-all', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(30);
      const client = h.openai(apiKey);
      await client.chat.completions.create({ model: 'mock-gpt', messages });
      const s = await client.chat.completions.create({ model: 'mock-gpt', messages, stream: true });
      for await (const _ of s) {
        // drain
      }
      const other = await fetch(`${h.baseURL}/some/other/path`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(other.status).toBe(200);
      expect(await h.available(apiKey)).toBe(balanceMsat - 3 * 5000);
    });

    it('a RELAY_PATHS entry is relayed and charged its literal price (2,500 msat, not the flat 5 sats)', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(30);
      const res = await h.post(
        '/fine_tuning/jobs',
        { model: 'mock-gpt', training_file: 'file-1' },
        { authorization: `Bearer ${apiKey}` },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('x-node-cost')).toBe('2500');
      await res.arrayBuffer();
      expect(h.upstream.stats.lastMethod).toBe('POST');
      expect(h.upstream.stats.lastPath).toBe('/v1/fine_tuning/jobs');
      expect(await h.available(apiKey)).toBe(balanceMsat - 2500);
      // The same path with another method is not listed.
      const get = await fetch(`${h.baseURL}/fine_tuning/jobs`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(get.status).toBe(404);
      expect(await h.available(apiKey)).toBe(balanceMsat - 2500);
    });

    it('402 payment_required with balance, required and shortfall', async () => {
      const { apiKey } = await h.fundKey(3);
      const res = await h.post(
        '/chat/completions',
        { model: 'mock-gpt', messages },
        { authorization: `Bearer ${apiKey}` },
      );
      expect(res.status).toBe(402);
      const body = (await res.json()) as { error: { code: string; details: unknown } };
      expect(body.error.code).toBe('payment_required');
      expect(body.error.details).toEqual({ balance: 3000, required: 5000, shortfall: 2000 });
      expect(await h.available(apiKey)).toBe(3000);
    });

    it('an X-Cashu 402 gives the whole token value back in X-Cashu (stateless) and the shortfall as a NUT-18 request', async () => {
      const token = await h.mintToken(3);
      const res = await h.post('/chat/completions', { model: 'mock-gpt', messages }, { 'x-cashu': token });
      expect(res.status).toBe(402);
      expect(res.headers.get('x-cashu-payment-request')).toMatch(/^creqA/);
      const back = res.headers.get('x-cashu');
      expect(back).toMatch(/^cashu/);
      expect(await h.redeem(back!)).toBe(3);
      // Nothing stays behind on the token's identity.
      expect(await h.available(token)).toBe(0);
    });

    it('X-Cashu: an upstream error status (nothing spent) returns the whole token too', async () => {
      const token = await h.mintToken(10);
      h.upstream.setBehaviour({
        error: { status: 400, body: '{"error":{"message":"bad request upstream"}}' },
      });
      try {
        const res = await h.post('/chat/completions', { model: 'mock-gpt', messages }, { 'x-cashu': token });
        expect(res.status).toBe(400);
        expect(await h.redeem(res.headers.get('x-cashu')!)).toBe(10);
        expect(await h.available(token)).toBe(0);
      } finally {
        h.upstream.setBehaviour({ error: undefined });
      }
    });

    it('no credentials: a NUT-18 payment request in X-Cashu (402 beside the Lightning doors, README "Paying")', async () => {
      const res = await h.post('/chat/completions', { model: 'mock-gpt', messages }, {});
      expect(res.status).toBe(402);
      expect(res.headers.get('x-cashu')).toMatch(/^creqA/);
    });
  });

  describe('model-based', () => {
    const h = paidGatewayPerSuite({ store, env: MODEL_ENV });

    it('charges per-model USD rates × BTC price × fees, exact to the msat, streamed and not', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(500);
      const client = h.openai(apiKey);
      const r = await client.chat.completions.create({ model: 'mock-gpt', messages, max_tokens: 5 });
      const block = (r as unknown as Record<string, { msats: number; sats: number }>)['x-node-cost']!;
      expect(block.msats).toBe(1034);
      expect(modelCost(PROMPT, 5)).toBe(1034);
      expect(block.sats).toBe(Math.ceil(modelCost(PROMPT, 5) / 1000));
      const s = await client.chat.completions.create({
        model: 'mock-gpt',
        messages,
        stream: true,
        max_tokens: 100,
      });
      for await (const _ of s) {
        // drain
      }
      expect(await h.available(apiKey)).toBe(balanceMsat - modelCost(PROMPT, 5) - modelCost(PROMPT, 8));
    });

    it('unknown model → 404 not_found before admission (nothing reserved or charged)', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(10);
      for (const model of ['no-such-model', 'mock-mini' /* listed, but no price */]) {
        const res = await h.post(
          '/chat/completions',
          { model, messages },
          { authorization: `Bearer ${apiKey}` },
        );
        expect(res.status).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
      }
      expect(await h.available(apiKey)).toBe(balanceMsat);
    });

    it('402 names the completion tokens the balance affords when the caller set none (no silent shortening)', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(20);
      const before = h.upstream.stats.requests;
      const body = { model: 'mock-gpt', messages };
      const res = await h.post('/chat/completions', body, { authorization: `Bearer ${apiKey}` });
      expect(res.status).toBe(402);
      const err = ((await res.json()) as { error: { code: string; message: string; details: unknown } })
        .error;
      expect(err.code).toBe('payment_required');
      // Prompt bound 138 tokens; the model's maximum (its whole 8,192-token window) costs 35,870 msat. The number
      // named is counted for the retry, whose `"max_completion_tokens": N` adds 21 + 4 bytes to the bound: 164
      // tokens, with which 20 sats cover at most 4,419 completion tokens (19,999 msat; 4,420 would cost 20,003).
      const bound = promptTokensUpperBound(body, Buffer.byteLength(JSON.stringify(body)));
      expect(bound).toBe(138);
      expect([modelCost(bound, 8192), modelCost(164, 4419), modelCost(164, 4420)]).toEqual([
        35_870, 19_999, 20_003,
      ]);
      expect(err.details).toEqual({
        balance: 20_000,
        required: 35_870,
        shortfall: 15_870,
        affordable_max_tokens: 4419,
      });
      expect(err.message).toMatch(/at most 4419 completion tokens/);
      expect(h.upstream.stats.requests).toBe(before);
      expect(await h.available(apiKey)).toBe(balanceMsat);
      // What it names is affordable: the same call with that max_tokens is served, its bound (prompt bound 152
      // with `"max_tokens":4419`) covered in full.
      const retry = { ...body, max_tokens: 4419 };
      expect(promptTokensUpperBound(retry, Buffer.byteLength(JSON.stringify(retry)))).toBe(152);
      expect(modelCost(152, 4419)).toBe(19_974);
      const ok = await h.post('/chat/completions', retry, { authorization: `Bearer ${apiKey}` });
      expect(ok.status).toBe(200);
      expect(await h.available(apiKey)).toBe(balanceMsat - modelCost(PROMPT, 8));
    });

    it('fine-tuning, vector stores and assistants are not relayed by default: 404 endpoint_not_enabled, nothing upstream, nothing charged', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(10);
      const before = h.upstream.stats.requests;
      for (const [method, path] of [
        ['POST', '/fine_tuning/jobs'],
        ['POST', '/vector_stores'],
        ['GET', '/assistants'],
        ['POST', '/realtime/sessions'],
      ] as const) {
        const res = await fetch(`${h.baseURL}${path}`, {
          method,
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          ...(method === 'POST'
            ? { body: JSON.stringify({ model: 'mock-gpt', training_file: 'file-1' }) }
            : {}),
        });
        expect(res.status, path).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('endpoint_not_enabled');
      }
      expect(h.upstream.stats.requests).toBe(before);
      expect(await h.available(apiKey)).toBe(balanceMsat);
    });

    it('keeps the caller max_tokens when it is set', async () => {
      const { apiKey } = await h.fundKey(20);
      await h.post(
        '/chat/completions',
        { model: 'mock-gpt', messages, max_tokens: 3 },
        { authorization: `Bearer ${apiKey}` },
      );
      expect((h.upstream.stats.lastBody as { max_tokens?: number }).max_tokens).toBe(3);
    });
  });

  describe('model-based, CLAMP_MAX_TOKENS=true', () => {
    const h = paidGatewayPerSuite({ store, env: { ...MODEL_ENV, CLAMP_MAX_TOKENS: 'true' } });

    it('lowers max_tokens to what the balance affords when the caller set none', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(20);
      const body = { model: 'mock-gpt', messages };
      const res = await h.post('/chat/completions', body, { authorization: `Bearer ${apiKey}` });
      expect(res.status).toBe(200);
      const forwarded = h.upstream.stats.lastBody as { max_completion_tokens?: number };
      const bound = promptTokensUpperBound(body, Buffer.byteLength(JSON.stringify(body)));
      // The model's maximum (its whole 8,192-token window) is not affordable with 20 sats…
      expect(modelCost(bound, 8192)).toBeGreaterThan(balanceMsat);
      // …so the forwarded max_tokens is the largest completion the balance covers with this call's own bound
      // (the reservation is made before the field is added): 4,432 (19,999 msat; 4,433 would cost 20,003).
      expect([modelCost(bound, 4432), modelCost(bound, 4433)]).toEqual([19_999, 20_003]);
      // …written in chat's current field (OpenAI's reasoning models refuse `max_tokens`).
      expect(forwarded.max_completion_tokens).toBe(4432);
      expect(await h.available(apiKey)).toBe(balanceMsat - modelCost(PROMPT, 8));
    });
  });
});
