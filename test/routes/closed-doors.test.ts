import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { call } from './http.js';

/**
 * Closed doors: /metrics behind METRICS_TOKEN (401 without it) or, unset, loopback clients only (403 for
 * any other client, also one a trusted proxy forwards); the admin login (session cookie flags, `Secure` only
 * behind an https proxy in TRUSTED_PROXIES, failed logins rate-limited, no password in any cookie) and the
 * same-origin check of state-changing admin requests.
 */

let h: PaidGateway | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const PW = 'closed-doors-pw';

describe('/metrics', () => {
  it('METRICS_TOKEN set: 401 metrics_auth_required without the bearer token or with a wrong one, 200 with it', async () => {
    h = await startPaidGateway({ store: 'sqlite', env: { METRICS_TOKEN: 'the-scrape-token' } });
    const none = await call(h.gateway.url, 'GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((none.body as { error: { code: string } }).error.code).toBe('metrics_auth_required');
    const wrong = await call(h.gateway.url, 'GET', '/metrics', { auth: 'not-the-token' });
    expect(wrong.status).toBe(401);
    const ok = await call(h.gateway.url, 'GET', '/metrics', { auth: 'the-scrape-token' });
    expect(ok.status).toBe(200);
    expect(String(ok.body)).toContain('gateway_requests_total');
  });

  it('unset: loopback answers, a client forwarded by a trusted proxy gets 403; the start-up log says how to open it', async () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (l: string) => void lines.push(l) });
    h = await startPaidGateway({ store: 'sqlite', env: { TRUSTED_PROXIES: '127.0.0.1' }, log });
    expect((await call(h.gateway.url, 'GET', '/metrics')).status).toBe(200);
    const far = await call(h.gateway.url, 'GET', '/metrics', {
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    expect(far.status).toBe(403);
    expect((far.body as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'forbidden',
      message: '/metrics answers loopback clients only; the operator can set METRICS_TOKEN to open it',
    });
    expect(lines.join('')).toContain(
      '/metrics answers loopback clients only; set METRICS_TOKEN to scrape it from elsewhere with Authorization: Bearer <token>',
    );
  });
});

describe('admin login', () => {
  it('sets an HttpOnly SameSite=Strict session cookie (Secure only over https per TRUSTED_PROXIES) that opens the API', async () => {
    h = await startPaidGateway({ store: 'redis', env: { ADMIN_PASSWORD: PW, TRUSTED_PROXIES: '127.0.0.1' } });
    const plain = await call(h.gateway.url, 'POST', '/admin/login', { body: { password: PW } });
    expect(plain.status).toBe(200);
    const cookie = plain.headers.get('set-cookie')!;
    expect(cookie).toMatch(
      /^admin_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/admin; Max-Age=43200$/,
    );
    const tls = await call(h.gateway.url, 'POST', '/admin/login', {
      body: { password: PW },
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(tls.headers.get('set-cookie')).toMatch(/; Max-Age=43200; Secure$/);
    const session = { cookie: cookie.split(';')[0]! };
    expect((await call(h.gateway.url, 'GET', '/admin/api/settings', { headers: session })).status).toBe(200);
    expect(
      (
        await call(h.gateway.url, 'GET', '/admin/api/settings', {
          headers: { cookie: 'admin_session=forged' },
        })
      ).status,
    ).toBe(401);
    // The admin_password cookie still works for API clients.
    expect(
      (
        await call(h.gateway.url, 'GET', '/admin/api/settings', {
          headers: { cookie: `admin_password=${PW}` },
        })
      ).status,
    ).toBe(200);
  });

  it('failed logins are limited per client IP: over the limit even the right password answers 429', async () => {
    h = await startPaidGateway({
      store: 'sqlite',
      env: { ADMIN_PASSWORD: PW, ADMIN_LOGIN_ATTEMPTS_PER_MINUTE: '2' },
    });
    for (let i = 0; i < 2; i++) {
      const r = await call(h.gateway.url, 'POST', '/admin/login', { body: { password: 'wrong' } });
      expect(r.status).toBe(401);
      expect((r.body as { error: { code: string } }).error.code).toBe('admin_auth_required');
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    const third = await call(h.gateway.url, 'POST', '/admin/login', { body: { password: 'wrong' } });
    expect(third.status).toBe(429);
    const right = await call(h.gateway.url, 'POST', '/admin/login', { body: { password: PW } });
    expect(right.status).toBe(429);
    expect(right.headers.get('set-cookie')).toBeNull();
  });

  it('a state-changing admin request from another origin is refused with 403, same-origin and script requests pass', async () => {
    h = await startPaidGateway({ store: 'sqlite', env: { ADMIN_PASSWORD: PW } });
    const admin = { cookie: `admin_password=${PW}` };
    const host = new URL(h.gateway.url).host;
    const patch = (headers: Record<string, string>) =>
      call(h!.gateway.url, 'PATCH', '/admin/api/settings', {
        headers: { ...admin, ...headers },
        body: { node_name: 'x' },
      });
    const foreign = await patch({ origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect((foreign.body as { error: { code: string } }).error.code).toBe('forbidden');
    expect((await patch({ 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await patch({ origin: `http://${host}`, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await patch({})).status).toBe(200);
    // The login itself too (no login CSRF).
    const login = await call(h.gateway.url, 'POST', '/admin/login', {
      headers: { origin: 'http://evil.example' },
      body: { password: PW },
    });
    expect(login.status).toBe(403);
    expect(login.headers.get('set-cookie')).toBeNull();
  });
});
