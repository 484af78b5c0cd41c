import { describe, expect, it } from 'vitest';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { call, errorCode } from './http.js';

/**
 * POST /v1/estimate, the charged prices on GET /v1/models, and GET /metrics (counts requests of route
 * handlers and of the paid pipeline; never shows a key, token, key id or configured secret). Token-based
 * pricing: 1 sat base fee, 2 sats per 1k prompt tokens, 4 sats per 1k completion tokens.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const SECRETS = {
  UPSTREAM_API_KEY: 'sk-upstream-SECRET-4f7a9c',
  ADMIN_PASSWORD: 'admin-SECRET-pw-81d2',
  CASHU_SEED: 'a'.repeat(64),
};

describe.each<PaidStore>(['sqlite', 'redis'])('estimate, models and metrics on %s', (store) => {
  const h = paidGatewayPerSuite({
    store,
    env: {
      FIXED_PRICING: 'false',
      FIXED_COST_PER_REQUEST: '1',
      FIXED_PER_1K_INPUT_TOKENS: '2',
      FIXED_PER_1K_OUTPUT_TOKENS: '4',
      // Its paid call names no max_tokens on a 20-sat key: the clamp, not the 402 naming affordable tokens.
      CLAMP_MAX_TOKENS: 'true',
      // The catch-all request below must reach the pipeline (unlisted paths answer 404 before it).
      RELAY_PATHS: 'POST /v1/some/other/path=0',
      ...SECRETS,
    },
  });
  const req = <T = Json>(method: string, path: string, opts = {}) =>
    call<T>(h.gateway.url, method, path, opts);

  it('estimates a call exactly (msats, sats rounded up, breakdown summing to the total)', async () => {
    const r = await req('POST', '/v1/estimate', {
      body: { model: 'mock-gpt', prompt_tokens: 1000, max_tokens: 500 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      estimated_cost_sats: 5,
      estimated_cost_msats: 5_000,
      breakdown: {
        prompt: 2_000,
        completion: 2_000,
        fees: 1_000,
        dimensions: { prompt: 2_000, completion: 2_000, fees: 1_000 },
      },
    });
    // cached_tokens: the cached part of prompt_tokens, named apart (token pricing charges it as prompt).
    const cached = await req('POST', '/v1/estimate', {
      body: { model: 'mock-gpt', prompt_tokens: 1000, max_tokens: 500, cached_tokens: 400 },
    });
    expect(cached.status).toBe(200);
    expect(cached.body.breakdown.dimensions).toEqual({
      prompt: 1_200,
      input_cache_read: 800,
      completion: 2_000,
      fees: 1_000,
    });
    const odd = await req('POST', '/v1/estimate', {
      body: { model: 'mock-gpt', prompt_tokens: 1, max_tokens: 1 },
    });
    // 1 sat + 2/1000 + 4/1000 sats = 1006 msats → 2 sats rounded up.
    expect(odd.body).toMatchObject({ estimated_cost_msats: 1_006, estimated_cost_sats: 2 });
    expect(
      h.gateway.services.pricing?.estimate({ model: 'mock-gpt', prompt_tokens: 1, max_tokens: 1 }),
    ).toEqual(odd.body);
  });

  it('estimate: unknown model → 404, bad body → 400; credentials are optional', async () => {
    const unknown = await req('POST', '/v1/estimate', {
      body: { model: 'nope', prompt_tokens: 1, max_tokens: 1 },
    });
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('not_found');
    const bad = await req('POST', '/v1/estimate', {
      body: { model: 'mock-gpt', prompt_tokens: -1, max_tokens: 1 },
    });
    expect(bad.status).toBe(400);
    const missing = await req('POST', '/v1/estimate', { body: { model: 'mock-gpt' } });
    expect(missing.status).toBe(400);
  });

  it('/v1/models shows each model price in msats and sats per 1k tokens next to the USD pricing', async () => {
    const r = await req('GET', '/v1/models');
    expect(r.status).toBe(200);
    const gpt = (r.body.data as Json[]).find((m) => m.id === 'mock-gpt');
    expect(gpt?.pricing).toMatchObject({
      prompt: 0.001,
      completion: 0.002,
      unit: '1k tokens',
      mode: 'token',
      prompt_msats: 2_000,
      completion_msats: 4_000,
      request_msats: 1_000,
      prompt_sats: 2,
      completion_sats: 4,
      request_sats: 1,
    });
    const mini = (r.body.data as Json[]).find((m) => m.id === 'mock-mini');
    expect(mini?.pricing).toMatchObject({ prompt_msats: 2_000, completion_msats: 4_000 });
  });

  it('/metrics counts route and pipeline requests and shows no key, token or secret', async () => {
    const token = await h.mintToken(20);
    const created = await req('POST', '/v1/wallet/create', { body: { cashu_token: token } });
    expect(created.status).toBe(201);
    const key = created.body.api_key as string;
    await req('GET', '/v1/wallet/balance', { auth: key });
    await req('GET', '/v1/wallet/balance', { query: { api_key: key } });
    await req('GET', '/v1/balance/info', { auth: `sk-${'x'.repeat(29)}` });
    const paid = await req('POST', '/v1/chat/completions', {
      auth: key,
      body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(paid.status).toBe(200);
    // A paid-pipeline request without credentials: 402 with every payment door's offer (a wallet is configured).
    await req('POST', '/v1/some/other/path', { body: {} });
    await req('POST', '/v1/estimate', { body: { model: 'mock-gpt', prompt_tokens: 1, max_tokens: 1 } });

    const m = await req('GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(m.text).toMatch(
      /gateway_requests_total\{route="\/v1\/wallet\/create",method="POST",status="201"\} \d+/,
    );
    expect(m.text).toMatch(
      /gateway_requests_total\{route="\/v1\/balance\/info",method="GET",status="401"\} \d+/,
    );
    expect(m.text).toMatch(/gateway_requests_total\{route="\/v1\/\{path\}",method="POST",status="402"\} \d+/);
    expect(m.text).toMatch(/gateway_request_duration_seconds_bucket\{le="[\d.+Inf]+",route="\/v1\/estimate"/);
    const charged = /gateway_charged_msats_total\{endpoint="\/v1\/chat\/completions"\} (\d+)/.exec(m.text);
    expect(Number(charged?.[1])).toBeGreaterThan(0);
    for (const name of [
      'gateway_charged_msats_total',
      'gateway_overruns_total',
      'gateway_upstream_errors_total',
      'gateway_store_errors_total',
    ]) {
      expect(m.text).toContain(`# TYPE ${name} counter`);
    }
    for (const secret of [key, created.body.key_id, token, ...Object.values(SECRETS), 'x'.repeat(29)]) {
      expect(m.text).not.toContain(secret);
    }
    expect(m.text).not.toMatch(/api_key|cashu[AB]/);
  });
});
