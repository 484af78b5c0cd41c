import { describe, expect, it } from 'vitest';
import { paidProcessesPerTest } from '../support/paid-process.js';
import { until } from '../support/until.js';

/**
 * Key lifecycle and settings across processes (two gateways on one store, credit leases on — the default): a key
 * disabled on gateway A is refused on gateway B by the first call B starts after A answered, with its child;
 * its balance is exactly what the calls served cost; it can be enabled again, refunded and deleted by the
 * operator, or closed by its owner. A price changed on A charges B's next call the new price within 2 s, and
 * a console session made on A works on B until it logs out. On SQLite and Redis.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const ADMIN = { cookie: 'admin_password=operator-secret' };

async function chat(base: string, key: string): Promise<{ status: number; code?: string; cost?: number }> {
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await r.json()) as { error?: { code: string }; 'x-node-cost'?: { msats: number } };
  return { status: r.status, code: body.error?.code, cost: body['x-node-cost']?.msats };
}

async function admin(base: string, method: string, path: string, body?: unknown, headers = ADMIN) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return {
    status: r.status,
    headers: r.headers,
    json: (await r.json().catch(() => null)) as Json,
  };
}

async function balanceOf(base: string, key: string): Promise<number> {
  const r = await fetch(`${base}/v1/wallet/balance`, { headers: { authorization: `Bearer ${key}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { balance: number }).balance;
}

describe.each(['sqlite', 'redis'] as const)('operator controls across two gateways on %s', (store) => {
  const paidProcesses = paidProcessesPerTest();

  it('a key disabled on A is refused on B at once (leased slices too), balance exact; enable, refund + delete, owner delete', async () => {
    const rig = await paidProcesses(store);
    const env = { ADMIN_PASSWORD: 'operator-secret', RATE_LIMIT_REQUESTS_PER_MINUTE: '100000' };
    const a = `http://127.0.0.1:${(await rig.spawn(env)).port}`;
    const b = `http://127.0.0.1:${(await rig.spawn(env)).port}`;
    const key = await rig.createKey(a, 200);
    const sub = await fetch(`${a}/v1/wallet/create/subkey`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(sub.status).toBe(201);
    const child = ((await sub.json()) as { api_key: string }).api_key;
    const keyId = (
      (await (await fetch(`${a}/v1/wallet/`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        key_id: string;
      }
    ).key_id;
    const accountId = key.slice(3, 13);

    // Traffic on B until told to stop; each call remembers when it started.
    const calls: Array<{ startedAt: number; status: number; code?: string }> = [];
    let stop = false;
    const lane = async (k: string) => {
      while (!stop) {
        const startedAt = Date.now();
        const r = await chat(b, k);
        calls.push({ startedAt, status: r.status, ...(r.code ? { code: r.code } : {}) });
      }
    };
    const lanes = [lane(key), lane(key), lane(key), lane(child)];
    let patch: Awaited<ReturnType<typeof admin>>;
    let answeredAt: number;
    try {
      // B admits from a credit lease (held in the store under B's process id) before the operator acts.
      await rig.ps.withLedger((l) =>
        until(
          'a lease of the key on B',
          async () => (await l.otherLeases(accountId, 'the-test')).length > 0,
          30_000,
        ),
      );
      patch = await admin(a, 'PATCH', `/admin/api/keys/${keyId}`, { disabled: true });
      answeredAt = Date.now();
      // Keep calling for a while after the answer: every call B started after it is refused.
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      stop = true;
      await Promise.allSettled(lanes);
    }
    expect(patch.status).toBe(200);
    expect(patch.json.disabled).toBe(true);
    expect(patch.json.key_id).toBe(keyId);
    const after = calls.filter((c) => c.startedAt > answeredAt);
    expect(after.length).toBeGreaterThan(3);
    expect(after.every((c) => c.status === 401 && c.code === 'key_disabled')).toBe(true);
    const served = calls.filter((c) => c.status === 200).length;
    expect(served).toBeGreaterThan(0);
    // Every call B started is either served or refused, nothing else (no 5xx while the leases closed).
    expect(calls.every((c) => c.status === 200 || c.code === 'key_disabled')).toBe(true);
    // The owner's wallet endpoints are closed too; the balance is exactly 200 sats minus 1 sat per call served.
    const own = await fetch(`${b}/v1/wallet/balance`, { headers: { authorization: `Bearer ${key}` } });
    expect(own.status).toBe(401);
    expect(((await own.json()) as { error: { code: string } }).error.code).toBe('key_disabled');
    const info = await rig.ps.withLedger((l) => l.getKeyInfo({ apiKey: key }));
    expect(info!.account.balanceMsat).toBe(200_000 - 1000 * served);
    expect(info!.account.reservedMsat).toBe(0);
    expect(info!.key.disabled).toBe(true);
    const lookup = await admin(b, 'POST', '/admin/api/keys/lookup', { key_id: keyId });
    expect(lookup.json.key.disabled).toBe(true);
    expect(lookup.json.account.balance).toBe(200_000 - 1000 * served);

    // Enabled again on B: A serves the key and its child.
    expect((await admin(b, 'PATCH', `/admin/api/keys/${keyId}`, { disabled: false })).json.disabled).toBe(
      false,
    );
    expect((await chat(a, key)).status).toBe(200);
    expect((await chat(a, child)).status).toBe(200);
    const left = 200_000 - 1000 * (served + 2);
    expect(await balanceOf(a, key)).toBe(left);

    // The operator refunds and deletes it: the token carries every whole sat; the key and its child are gone.
    const del = await admin(a, 'DELETE', `/admin/api/keys/${keyId}?refund=true`);
    expect(del.status).toBe(200);
    expect(del.json.deleted).toBe(true);
    expect(del.json.refund.amount).toBe(left / 1000);
    expect(del.json.refund.balance).toBe(0);
    expect(del.json.left_msats).toBe(0);
    expect(del.json.refund.cashu_token).toMatch(/^cashu[AB]/);
    for (const k of [key, child]) {
      const r = await chat(b, k);
      expect(r.status).toBe(401);
      expect(r.code).toBe('invalid_api_key');
    }
    // The token is real money at the mint: it creates a new key worth exactly that.
    const again = await fetch(`${b}/v1/wallet/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cashu_token: del.json.refund.cashu_token }),
    });
    expect(again.status).toBe(201);
    expect(((await again.json()) as { balance: number }).balance).toBe(left);

    // The owner closes another key on B: its 50 sats minus one call come back, then it is gone everywhere.
    const owner = await rig.createKey(a, 50);
    expect((await chat(a, owner)).status).toBe(200);
    const closed = await fetch(`${b}/v1/wallet/`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${owner}` },
    });
    expect(closed.status).toBe(200);
    const cj = (await closed.json()) as { deleted: boolean; refund: { amount: number }; left_msats: number };
    expect(cj.deleted).toBe(true);
    expect(cj.refund.amount).toBe(49);
    expect(cj.left_msats).toBe(0);
    expect((await chat(a, owner)).code).toBe('invalid_api_key');
    // Audited: the operator's disable, enable and delete name the key in the node-wide log.
    // (B writes its records within its batch interval: polled.)
    const adminMethods = async () => {
      const audit = await admin(a, 'GET', `/admin/api/audit?key_id=${keyId}&limit=500`);
      return (audit.json.data as Array<{ kind: string; method: string }>)
        .filter((r) => r.kind === 'admin')
        .map((r) => r.method)
        .sort();
    };
    await until('the admin audit records', async () => (await adminMethods()).length >= 3, 5000);
    expect(await adminMethods()).toEqual(['DELETE', 'PATCH', 'PATCH']);
  }, 180_000);

  it('a price changed on A charges the next call on B the new price within 2 s; a session made on A works on B until logout', async () => {
    const rig = await paidProcesses(store);
    const env = { ADMIN_PASSWORD: 'operator-secret' };
    const gwA = await rig.spawn(env);
    const gwB = await rig.spawn(env);
    const a = `http://127.0.0.1:${gwA.port}`;
    const b = `http://127.0.0.1:${gwB.port}`;
    const key = await rig.createKey(a, 100);
    expect((await chat(b, key)).cost).toBe(1000);
    const before = (await admin(b, 'GET', '/admin/api/settings')).json.version as number;

    const patch = await admin(a, 'PATCH', '/admin/api/settings', { fixed_cost_per_request: 3 });
    expect(patch.status).toBe(200);
    const version = patch.json.version as number;
    expect(version).toBe(before + 1);
    const waited = await until(
      "B's settings version",
      async () => (await admin(b, 'GET', '/admin/api/settings')).json.version === version,
      2000,
    );
    expect(waited).toBeLessThanOrEqual(2000);
    expect((await admin(b, 'GET', '/admin/api/settings')).json.fixed_cost_per_request).toBe(3);
    const r = await chat(b, key);
    expect(r.status).toBe(200);
    expect(r.cost).toBe(3000);
    expect(await balanceOf(b, key)).toBe(100_000 - 1000 - 3000);
    // Each process logs the version it applied.
    expect(gwB.logs()).toContain('admin settings version applied');
    expect(gwB.logs()).toMatch(new RegExp(`"version":${version}[,}]`));

    // The console session: made on A (HttpOnly, SameSite=Strict, Path=/admin; no Secure over plain http).
    const login = await fetch(`${a}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: a },
      body: JSON.stringify({ password: 'operator-secret' }),
    });
    expect(login.status).toBe(200);
    const setCookie = login.headers.get('set-cookie')!;
    expect(setCookie).toMatch(
      /^admin_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/admin; Max-Age=43200$/,
    );
    expect(setCookie).not.toContain('operator-secret');
    const session = { cookie: setCookie.split(';')[0]! };
    expect((await admin(b, 'GET', '/admin/api/settings', undefined, session)).status).toBe(200);
    const out = await fetch(`${b}/admin/logout`, { method: 'POST', headers: session });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    const gone = await admin(a, 'GET', '/admin/api/settings', undefined, session);
    expect(gone.status).toBe(401);
    expect(gone.json.error.code).toBe('admin_auth_required');
  }, 180_000);
});
