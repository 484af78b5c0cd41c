import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODELS } from '../../bench/upstream/mock-upstream.js';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';

/**
 * Balances exact to the msat under fixed and model-based pricing (BTC_USD_PRICE pinned), checked against
 * the exported formula; max_tokens lowered when the balance cannot cover the model's maximum; 402 details;
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

async function post(h: PaidGateway, body: unknown, headers: Record<string, string>) {
  return fetch(`${h.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

describe.each<PaidStore>(['sqlite', 'redis'])('pricing on %s', (store) => {
  describe('fixed', () => {
    let h: PaidGateway;
    beforeAll(async () => {
      h = await startPaidGateway({ store, env: { FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '5' } });
    });
    afterEach(async () => h.auditOk());
    afterAll(async () => h?.close());

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

    it('402 payment_required with balance, required and shortfall', async () => {
      const { apiKey } = await h.fundKey(3);
      const res = await post(h, { model: 'mock-gpt', messages }, { authorization: `Bearer ${apiKey}` });
      expect(res.status).toBe(402);
      const body = (await res.json()) as { error: { code: string; details: unknown } };
      expect(body.error.code).toBe('payment_required');
      expect(body.error.details).toEqual({ balance: 3000, required: 5000, shortfall: 2000 });
      expect(await h.available(apiKey)).toBe(3000);
    });

    it('an X-Cashu 402 gives the whole token value back in X-Cashu (stateless) and the shortfall as a NUT-18 request', async () => {
      const token = await h.mintToken(3);
      const res = await post(h, { model: 'mock-gpt', messages }, { 'x-cashu': token });
      expect(res.status).toBe(402);
      expect(res.headers.get('x-cashu-payment-request')).toMatch(/^creqA/);
      const back = res.headers.get('x-cashu');
      expect(back).toMatch(/^cashu/);
      const w = await h.newWallet();
      const proofs = await w.receive(back!);
      expect(proofs.reduce((s, p) => s + Number(p.amount), 0)).toBe(3);
      // Nothing stays behind on the token's identity.
      expect(await h.available(token)).toBe(0);
    });

    it('X-Cashu: an upstream error status (nothing spent) returns the whole token too', async () => {
      const token = await h.mintToken(10);
      h.upstream.setBehaviour({
        error: { status: 400, body: '{"error":{"message":"bad request upstream"}}' },
      });
      try {
        const res = await post(h, { model: 'mock-gpt', messages }, { 'x-cashu': token });
        expect(res.status).toBe(400);
        const w = await h.newWallet();
        const proofs = await w.receive(res.headers.get('x-cashu')!);
        expect(proofs.reduce((s, p) => s + Number(p.amount), 0)).toBe(10);
        expect(await h.available(token)).toBe(0);
      } finally {
        h.upstream.setBehaviour({ error: undefined });
      }
    });

    it('no credentials: 401 with a NUT-18 payment request in X-Cashu', async () => {
      const res = await post(h, { model: 'mock-gpt', messages }, {});
      expect(res.status).toBe(401);
      expect(res.headers.get('x-cashu')).toMatch(/^creqA/);
    });
  });

  describe('model-based', () => {
    let h: PaidGateway;
    beforeAll(async () => {
      h = await startPaidGateway({ store, env: MODEL_ENV });
    });
    afterEach(async () => h.auditOk());
    afterAll(async () => h?.close());

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
        const res = await post(h, { model, messages }, { authorization: `Bearer ${apiKey}` });
        expect(res.status).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
      }
      expect(await h.available(apiKey)).toBe(balanceMsat);
    });

    it('lowers max_tokens to what the balance affords when the caller set none', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(20);
      const body = { model: 'mock-gpt', messages };
      const res = await post(h, body, { authorization: `Bearer ${apiKey}` });
      expect(res.status).toBe(200);
      const forwarded = h.upstream.stats.lastBody as { max_tokens?: number };
      const bound = promptTokensUpperBound(body, Buffer.byteLength(JSON.stringify(body)));
      // The model's maximum (context 8192 − prompt bound) is not affordable with 20 sats…
      expect(modelCost(bound, 8192 - bound)).toBeGreaterThan(balanceMsat);
      // …so the forwarded max_tokens is the largest completion the balance covers.
      const m = forwarded.max_tokens!;
      expect(m).toBeGreaterThan(0);
      expect(modelCost(bound, m)).toBeLessThanOrEqual(balanceMsat);
      expect(modelCost(bound, m + 1)).toBeGreaterThan(balanceMsat);
      expect(await h.available(apiKey)).toBe(balanceMsat - modelCost(PROMPT, 8));
    });

    it('keeps the caller max_tokens when it is set', async () => {
      const { apiKey } = await h.fundKey(20);
      await post(h, { model: 'mock-gpt', messages, max_tokens: 3 }, { authorization: `Bearer ${apiKey}` });
      expect((h.upstream.stats.lastBody as { max_tokens?: number }).max_tokens).toBe(3);
    });
  });
});
