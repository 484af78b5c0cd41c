import { describe, expect, it } from 'vitest';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';

/**
 * Key controls enforced from the admission step: expiry (401 key_expired + details.expired_at), allowed IPs
 * (IPv4, IPv6, CIDR; X-Forwarded-For only from a trusted proxy) → 403 ip_not_allowed, allowed models → 403
 * model_not_allowed, X-RateLimit-* headers on every admitted response, 429 with Retry-After.
 */
const messages = [{ role: 'user' as const, content: 'hi' }];
const ENV = {
  FIXED_PRICING: 'true',
  FIXED_COST_PER_REQUEST: '1',
  TRUSTED_PROXIES: '127.0.0.1',
  RATE_LIMIT_REQUESTS_PER_MINUTE: '6',
};

interface Answer {
  status: number;
  headers: Headers;
  code: string | undefined;
  details: Record<string, unknown> | undefined;
}

describe.each<PaidStore>(['sqlite', 'redis'])('key controls on %s', (store) => {
  const h = paidGatewayPerSuite({ store, env: ENV });

  async function call(apiKey: string, opts: { model?: string; xff?: string } = {}): Promise<Answer> {
    const res = await fetch(`${h.baseURL}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${apiKey}`,
        ...(opts.xff ? { 'x-forwarded-for': opts.xff } : {}),
      },
      body: JSON.stringify({ model: opts.model ?? 'mock-gpt', messages }),
    });
    const body = (await res.json()) as { error?: { code: string; details?: Record<string, unknown> } };
    return { status: res.status, headers: res.headers, code: body.error?.code, details: body.error?.details };
  }

  it('an expired key → 401 key_expired with details.expired_at; an unknown key → 401 invalid_api_key', async () => {
    const expiresAtMs = Date.now() - 60_000;
    const { apiKey } = await h.fundKey(5, { expiresAtMs });
    const r = await call(apiKey);
    expect(r.status).toBe(401);
    expect(r.code).toBe('key_expired');
    expect(new Date(r.details!.expired_at as string).getTime()).toBe(expiresAtMs);
    const u = await call(`sk-${'a'.repeat(29)}`);
    expect([u.status, u.code]).toEqual([401, 'invalid_api_key']);
  });

  it('allowed IPs: IPv4 address, IPv4 CIDR, IPv6 CIDR via a trusted proxy; refusals cost nothing', async () => {
    // Two keys: the test makes more calls than one key's per-minute limit allows.
    const a = await h.fundKey(20);
    const b = await h.fundKey(20);
    const set = async (apiKey: string, ips: string[]) => {
      const r = await h.ledger.updateKey({ credential: { apiKey } }, { allowedIps: ips });
      expect(r.ok).toBe(true);
    };
    await set(a.apiKey, ['127.0.0.1']);
    expect((await call(a.apiKey)).status).toBe(200); // the peer itself
    await set(a.apiKey, ['10.0.0.0/8']);
    const refused = await call(a.apiKey);
    expect([refused.status, refused.code]).toEqual([403, 'ip_not_allowed']);
    expect(refused.headers.get('x-ratelimit-type')).toBe('requests_per_minute'); // admitted, then refused
    expect((await call(a.apiKey, { xff: '10.20.30.40' })).status).toBe(200); // forwarded by a trusted proxy
    // The right-most untrusted hop counts: a client-written left entry cannot forge its way in.
    expect((await call(a.apiKey, { xff: '10.1.1.1, 192.0.2.7' })).status).toBe(403);
    expect(await h.available(a.apiKey)).toBe(a.balanceMsat - 2 * 1000);

    await set(b.apiKey, ['2001:db8::/32']);
    expect((await call(b.apiKey, { xff: '2001:db8::42' })).status).toBe(200);
    expect((await call(b.apiKey, { xff: '2001:db9::1' })).status).toBe(403);
    await set(b.apiKey, ['::ffff:127.0.0.1']); // IPv4-mapped form of the peer
    expect((await call(b.apiKey)).status).toBe(200);
    expect(await h.available(b.apiKey)).toBe(b.balanceMsat - 2 * 1000);
  });

  it('allowed models → 403 model_not_allowed (child key restricted to another model)', async () => {
    const { apiKey } = await h.fundKey(10);
    const child = await h.ledger.createChildKeys({
      parent: { apiKey },
      count: 1,
      feePerKeyMsat: 0,
      allowedModels: ['mock-mini'],
    });
    if (!child.ok) throw new Error(child.code);
    const childKey = child.apiKeys[0]!;
    const r = await call(childKey);
    expect([r.status, r.code]).toEqual([403, 'model_not_allowed']);
    expect((await call(childKey, { model: 'mock-mini' })).status).toBe(200);
    expect((await call(childKey, { model: 'no-such-model' })).status).toBe(404);
  });

  it('X-RateLimit-* on success; 429 rate_limit_exceeded with Retry-After past the limit', async () => {
    const { apiKey } = await h.fundKey(20);
    const first = await call(apiKey);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('6');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('5');
    expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(first.headers.get('x-ratelimit-type')).toBe('requests_per_minute');
    let last: Answer = first;
    for (let i = 0; i < 6 && last.status === 200; i++) last = await call(apiKey);
    if (last.status === 200) {
      // The minute window rolled over mid-loop: one more batch decides.
      for (let i = 0; i < 7 && last.status === 200; i++) last = await call(apiKey);
    }
    expect([last.status, last.code]).toEqual([429, 'rate_limit_exceeded']);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
  });
});

describe('node engine smoke (sqlite)', () => {
  const h = paidGatewayPerSuite(
    { store: 'sqlite', engine: 'node', env: { FIXED_COST_PER_REQUEST: '2' } },
    { auditEachTest: false },
  );

  it('a paid streamed call and an X-Cashu call work on node:http too', async () => {
    expect(h.gateway.engine).toBe('node');
    const { apiKey, balanceMsat } = await h.fundKey(10);
    const s = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages, stream: true });
    let text = '';
    for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    expect(await h.available(apiKey)).toBe(balanceMsat - 2000);
    const token = await h.mintToken(5);
    const res = await h.post('/chat/completions', { model: 'mock-gpt', messages }, { 'x-cashu': token });
    expect(res.status).toBe(200);
    expect(await h.redeem(res.headers.get('x-cashu')!)).toBe(3);
    await h.auditOk();
  });
});
