import { beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../core/config.js';
import { createLogger, redactUrl } from '../../core/log.js';
import { type Gateway, startGateway } from '../../core/server.js';
import { loadSettings } from '../../core/store/settings-store.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { call, errorCode, expectAnswer } from './http.js';

/**
 * The admin API and page (cookie `admin_password`, constant-time check), redaction of secrets, PATCH of the
 * runtime settings (validated, applied at once, persisted in the store and re-applied by a gateway started
 * later on the same store), and the admin surface being off without ADMIN_PASSWORD.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const PASSWORD = 'admin pw; with=odd chars ✓';
const SECRETS = { UPSTREAM_API_KEY: 'sk-upstream-SECRET-77aa', CASHU_SEED: 'b'.repeat(64) };
const cookie = (pw: string) => ({ cookie: `other=1; admin_password=${encodeURIComponent(pw)}` });

describe('redactUrl', () => {
  it('hides user names and passwords in URLs, keeps the rest', () => {
    expect(redactUrl('redis://:hunter2@cache:6379/0')).toBe('redis://:%5Bredacted%5D@cache:6379/0');
    expect(redactUrl('redis://user:hunter2@cache:6379')).not.toContain('hunter2');
    expect(redactUrl('http://127.0.0.1:9/v1')).toBe('http://127.0.0.1:9/v1');
    expect(redactUrl(undefined)).toBeNull();
  });
});

describe.each<PaidStore>(['sqlite', 'redis'])('admin on %s', (store) => {
  const h = paidGatewayPerSuite({
    store,
    env: {
      ADMIN_PASSWORD: PASSWORD,
      FIXED_PRICING: 'false',
      FIXED_PER_1K_INPUT_TOKENS: '2',
      FIXED_PER_1K_OUTPUT_TOKENS: '4',
      ...SECRETS,
    },
  });
  let pristine: Config;
  beforeAll(() => {
    pristine = structuredClone(h.gateway.services.config);
  });
  const req = <T = Json>(method: string, path: string, opts = {}) =>
    call<T>(h.gateway.url, method, path, opts);

  it('settings need the right cookie (401 otherwise) and redact every secret', async () => {
    const none = await req('GET', '/admin/api/settings');
    expect(none.status).toBe(401);
    expect(errorCode(none)).toBe('admin_auth_required');
    const wrong = await req('GET', '/admin/api/settings', { headers: cookie(`${PASSWORD}x`) });
    expect(wrong.status).toBe(401);
    const ok = await req('GET', '/admin/api/settings', { headers: cookie(PASSWORD) });
    expectAnswer(ok, 200, {
      upstream_api_key: '[redacted]',
      admin_password: '[redacted]',
      cashu_seed: '[redacted]',
      fixed_pricing: false,
      fixed_per_1k_input_tokens: 2,
      cashu_mints: [h.mint.url],
      store,
    });
    for (const s of [PASSWORD, encodeURIComponent(PASSWORD), ...Object.values(SECRETS)]) {
      expect(ok.text).not.toContain(s);
    }
    expect(ok.body.runtime_changeable).toContain('exchange_fee');
  });

  it('PATCH validates, applies at once (pricing, node info, child key fee) and persists', async () => {
    const auth = { headers: cookie(PASSWORD) };
    for (const body of [
      {},
      { bogus: 1 },
      { exchange_fee: 11 },
      { upstream_base_url: 'http://127.0.0.1:1/v1' },
      { cashu_mints: ['http://127.0.0.1:1'] },
      { upstream_api_key: 'sk-new' },
    ]) {
      const r = await req('PATCH', '/admin/api/settings', { ...auth, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect((await req('PATCH', '/admin/api/settings', { body: { node_name: 'x' } })).status).toBe(401);

    const before = await req('POST', '/v1/estimate', {
      body: { model: 'mock-gpt', prompt_tokens: 1000, max_tokens: 0 },
    });
    expect(before.body.estimated_cost_msats).toBe(3_000);
    const patched = await req('PATCH', '/admin/api/settings', {
      ...auth,
      body: {
        fixed_per_1k_input_tokens: 5,
        fixed_cost_per_request: 0,
        child_key_cost_msats: 250,
        node_name: 'Patched node',
        upstream_api_key: '[redacted]',
      },
    });
    expectAnswer(patched, 200, {
      fixed_per_1k_input_tokens: 5,
      fixed_cost_per_request: 0,
      child_key_cost_msats: 250,
      node_name: 'Patched node',
      upstream_api_key: '[redacted]',
    });
    const after = await req('POST', '/v1/estimate', {
      body: { model: 'mock-gpt', prompt_tokens: 1000, max_tokens: 0 },
    });
    expect(after.body.estimated_cost_msats).toBe(5_000);
    expect((await req('GET', '/v1/info')).body.name).toBe('Patched node');
    const parent = await req('POST', '/v1/wallet/create', { body: { cashu_token: await h.mintToken(3) } });
    const kids = await req('POST', '/v1/balance/child-key', {
      auth: parent.body.api_key,
      body: { count: 2 },
    });
    expect(kids.body).toMatchObject({ cost_msats: 500, parent_balance: 2_500 });

    const saved = await loadSettings(h.gateway.services.store!);
    expect(saved).toEqual({
      fixed_per_1k_input_tokens: 5,
      fixed_cost_per_request: 0,
      child_key_cost_msats: 250,
      node_name: 'Patched node',
    });

    // A gateway started later on the same store re-applies them over its environment, before it listens.
    const second: Gateway = await startGateway({
      config: { ...structuredClone(pristine), port: 0 },
      log: createLogger('silent'),
      services: { ledger: h.ledger, wallet: h.wallet },
      money: { store: h.gateway.services.store!, sweepEveryMs: 0 },
    });
    try {
      // Applied before it listens: its very first answers already use them.
      const est0 = await call(second.url, 'POST', '/v1/estimate', {
        body: { model: 'mock-gpt', prompt_tokens: 1000, max_tokens: 0 },
      });
      expect(est0.body.estimated_cost_msats).toBe(5_000);
      expect((await call(second.url, 'GET', '/v1/info')).body.name).toBe('Patched node');
    } finally {
      await second.close(500);
    }
  });

  it('GET /admin/ shows a login form without the cookie and the dashboard with it', async () => {
    const login = await call(h.gateway.url, 'GET', '/admin/');
    expect(login.status).toBe(200);
    expect(login.headers.get('content-type')).toMatch(/^text\/html/);
    expect(login.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(login.text).toContain('id="login"');
    expect(login.text).not.toContain('id="dashboard"');
    const dash = await call(h.gateway.url, 'GET', '/admin/', { headers: cookie(PASSWORD) });
    expect(dash.status).toBe(200);
    expect(dash.text).toContain('id="dashboard"');
    expect(dash.text).toContain('Ledger audit: OK');
    expect(dash.text).toContain(h.mint.url);
    for (const s of [PASSWORD, ...Object.values(SECRETS)]) expect(dash.text).not.toContain(s);
  });

  it('without ADMIN_PASSWORD the admin surface is off (page 404, API 403)', async () => {
    const config = h.gateway.services.config;
    const saved = config.adminPassword;
    config.adminPassword = undefined;
    try {
      expect((await call(h.gateway.url, 'GET', '/admin/', { headers: cookie(PASSWORD) })).status).toBe(404);
      const api = await call(h.gateway.url, 'GET', '/admin/api/settings', { headers: cookie(PASSWORD) });
      expect(api.status).toBe(403);
      expect(errorCode(api)).toBe('forbidden');
      expect((await call(h.gateway.url, 'GET', '/admin/api/settings', { headers: cookie('') })).status).toBe(
        403,
      );
    } finally {
      config.adminPassword = saved;
    }
  });
});
