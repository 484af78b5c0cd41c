import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { freePort } from '../support/global-setup.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { call, errorCode } from './http.js';
import { assertDocumented } from './response-schema.js';

/**
 * GET /admin/api/providers (the console's Providers view) behind a providers file of two: `dead` (priority 0,
 * connections refused, its own API key) and `good` (priority 1, the mock upstream, a secret extra header).
 * Paid calls fail over from `dead` to `good` until `dead`'s breaker opens; the answer shows each provider's
 * routing figures, breaker state and call outcomes exactly as the calls made them, matches its OpenAPI
 * schema, and carries no key, header value or URL path.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const PASSWORD = 'providers-pw';
const COOLDOWN_MS = 600_000;
// Provider names are labels of the process-wide counters: unique per run, so other tests' calls never count.
const run = Math.random().toString(36).slice(2, 8);
const DEAD = `dead-${run}`;
const GOOD = `good-${run}`;
const messages = [{ role: 'user' as const, content: 'hi' }];

let h: PaidGateway;
let up: MockUpstream;

beforeAll(async () => {
  up = await startMockUpstream();
  // A free loopback port: nothing listens there, connections are refused.
  const refused = await freePort();
  h = await startPaidGateway({
    store: 'sqlite',
    providersFile: () => ({
      providers: [
        {
          name: DEAD,
          base_url: `http://127.0.0.1:${refused}/v1`,
          api_key: 'sk-dead-provider-secret',
          models: ['mock-gpt'],
          priority: 0,
          weight: 3,
        },
        {
          name: GOOD,
          base_url: up.url,
          api_key: 'sk-good-provider-secret',
          headers: { 'x-tenant': 'header-secret-value' },
          priority: 1,
        },
      ],
    }),
    env: {
      ADMIN_PASSWORD: PASSWORD,
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '1',
      PROVIDER_BREAKER_FAILURES: '2',
      PROVIDER_BREAKER_COOLDOWN_MS: String(COOLDOWN_MS),
    },
  });
});

afterAll(async () => {
  await h?.close();
  await up?.close();
});

async function providers(): Promise<Json> {
  const r = await call<Json>(h.gateway.url, 'GET', '/admin/api/providers', {
    headers: { cookie: `admin_password=${PASSWORD}` },
  });
  expect(r.status).toBe(200);
  assertDocumented('GET', '/admin/api/providers', 200, r.body);
  for (const secret of ['sk-dead-provider-secret', 'sk-good-provider-secret', 'header-secret-value', '/v1']) {
    expect(r.text).not.toContain(secret);
  }
  return r.body;
}

describe('GET /admin/api/providers', () => {
  it('needs the admin cookie', async () => {
    const r = await call(h.gateway.url, 'GET', '/admin/api/providers');
    expect(r.status).toBe(401);
    expect(errorCode(r)).toBe('admin_auth_required');
    assertDocumented('GET', '/admin/api/providers', 401, r.body);
  });

  it('shows priority, weight, ttfb, status, breaker state and outcomes as the calls left them', async () => {
    const before = await providers();
    expect(before.routing_policy).toBe('priority');
    expect(before.providers.map((p: Json) => p.name)).toEqual([DEAD, GOOD]);
    expect(before.providers[0]).toMatchObject({
      host: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      status: 'active',
      priority: 0,
      weight: 3,
      ttfb_ms: null,
      models: ['mock-gpt'],
      breaker: { state: 'closed', consecutive_failures: 0, opened_at: null, retry_at: null },
      calls: { ok: 0, error: 0, status_5xx: 0, status_429: 0 },
      failovers: 0,
    });
    expect(before.providers[1]).toMatchObject({ host: new URL(up.url).host, models: null, weight: 1 });

    const { apiKey } = await h.fundKey(20);
    // The catalogue fetch at start reached good too: count from here.
    const upstreamBefore = up.stats.requests;
    const client = h.openai(apiKey);
    // Call 1: dead refuses, one failure; the call moves on to good.
    await client.chat.completions.create({ model: 'mock-gpt', messages });
    const one = await providers();
    expect(one.providers[0]).toMatchObject({
      status: 'degraded',
      breaker: { state: 'closed', consecutive_failures: 1, opened_at: null },
      calls: { error: 1, ok: 0 },
      failovers: 1,
    });
    // Call 2: the second failure in a row opens dead's breaker. Call 3: dead is skipped (open breakers last).
    const t0 = Date.now();
    await client.chat.completions.create({ model: 'mock-gpt', messages });
    await client.chat.completions.create({ model: 'mock-gpt', messages });
    const after = await providers();
    const [dead, good] = after.providers as Json[];
    expect(dead).toMatchObject({
      status: 'down',
      breaker: { state: 'open', consecutive_failures: 2 },
      calls: { ok: 0, error: 2, status_5xx: 0, status_429: 0 },
      failovers: 2,
    });
    expect(dead!.breaker.opened_at).toBeGreaterThanOrEqual(t0 - 1);
    expect(dead!.breaker.retry_at).toBe(dead!.breaker.opened_at + COOLDOWN_MS);
    expect(good).toMatchObject({
      status: 'active',
      breaker: { state: 'closed', consecutive_failures: 0, opened_at: null, retry_at: null },
      calls: { ok: 3, error: 0, status_5xx: 0, status_429: 0 },
      failovers: 0,
    });
    expect(good!.ttfb_ms).toBeGreaterThan(0);
    expect(up.stats.requests - upstreamBefore).toBe(3);
    await h.auditOk();
  });
});
