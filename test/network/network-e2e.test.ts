import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import * as nip19 from 'nostr-tools/nip19';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverNodes, providerEntry } from '../../core/network/discovery.js';
import { parseListing } from '../../core/network/listing.js';
import { parseProvidersFile } from '../../core/providers/providers.js';
import { call } from '../routes/http.js';
import { assertDocumented } from '../routes/response-schema.js';
import { freePort } from '../support/global-setup.js';
import { startTestRelay, type TestRelay } from '../support/nostr-relay.js';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';

const run = promisify(execFile);
const PASSWORD = 'network-admin-secret';

/** GET /admin/api/network (schema AdminNetwork), the fields these tests read. */
interface NetworkView {
  npub: string;
  key_source: string;
  listing: { id: string; tags: string[][] };
  mints: string[];
  last_published_at: string | null;
  relays: Array<{
    relay: string;
    ok: boolean;
    last_attempt_at: string | null;
    last_success_at: string | null;
    last_error: string | null;
    next_attempt_at: string | null;
    event_id: string | null;
  }>;
}

/**
 * The node on the network, end to end on both stores: a real gateway publishes its signed listing to a real
 * relay (on loopback), republishes it when a model's price changes (the relay then holds only the newer event),
 * reports a refusing relay with backoff in the console API and the metrics, keeps its key across a restart on
 * the same store, and `nodes:discover` finds and health-checks it.
 */
describe.each<PaidStore>(['sqlite', 'redis'])('the node on the network (%s)', (store) => {
  let relay: TestRelay;
  let refusing: TestRelay;
  let h: PaidGateway;
  let dir: string;
  let port: number;
  let storeEnv: Record<string, string>;
  const prefix = `tnet${randomBytes(5).toString('hex')}`;

  const models = (prompt: string) =>
    JSON.stringify({ models: [{ id: 'mock-gpt', pricing: { prompt, completion: '0.000002' } }] });

  const start = () =>
    startPaidGateway({
      store,
      env: {
        ...storeEnv,
        PORT: String(port),
        MODELS_PATH: join(dir, 'models.json'),
        NOSTR_RELAYS: `${relay.url},${refusing.url}`,
        NODE_PUBLIC_URLS: `http://127.0.0.1:${port}`,
        NOSTR_CHECK_MS: '100',
        NODE_NAME: 'Network test node',
        ADMIN_PASSWORD: PASSWORD,
      },
    });

  beforeAll(async () => {
    relay = await startTestRelay();
    refusing = await startTestRelay();
    refusing.refuse = true;
    dir = mkdtempSync(join(tmpdir(), 'gw-net-'));
    writeFileSync(join(dir, 'models.json'), models('0.000001'));
    port = await freePort();
    // The store outlives one gateway: the restart test opens a second one on it.
    storeEnv =
      store === 'redis'
        ? { REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: prefix }
        : { DATA_DIR: join(dir, 'data') };
    h = await start();
  });

  afterAll(async () => {
    await h?.close();
    await relay?.close();
    await refusing?.close();
    rmSync(dir, { recursive: true, force: true });
    if (store === 'redis') {
      const r = new Redis(process.env.TEST_REDIS_URL!);
      const keys = await r.keys(`${prefix}*`);
      if (keys.length > 0) await r.del(...keys);
      r.disconnect();
    }
  });

  const info = async () => (await (await fetch(`${h.gateway.url}/v1/info`)).json()) as { npub: string };
  const networkView = async () => {
    const res = await call<NetworkView>(h.gateway.url, 'GET', '/admin/api/network', {
      headers: { cookie: `admin_password=${PASSWORD}` },
    });
    expect(res.status).toBe(200);
    return res.body;
  };
  const ours = () => relay.events().filter((e) => e.kind === 38421);

  it('publishes a signed kind-38421 listing whose key is /v1/info.npub', async () => {
    await expect.poll(() => ours().length, { timeout: 10_000 }).toBe(1);
    const ev = ours()[0]!;
    const listing = parseListing(ev);
    expect(listing).toBeDefined();
    expect(listing).toMatchObject({
      pubkey: ev.pubkey,
      nodeId: ev.pubkey.slice(0, 12),
      urls: [h.gateway.url],
      mints: [h.mint.url],
      version: '0.1.0',
      name: 'Network test node',
      about: 'OpenAI-compatible gateway paid with Cashu eCash',
    });
    expect(ev.tags.map((t) => t[0])).toEqual(['d', 'u', 'mint', 'version']);
    const { npub } = await info();
    expect(nip19.decode(npub)).toEqual({ type: 'npub', data: ev.pubkey });
  });

  it('shows each relay in the console API and the metrics: accepted, and refused with a backoff', async () => {
    await expect.poll(() => refusing.received, { timeout: 10_000 }).toBeGreaterThan(0);
    const view = () => networkView();
    // The accepting relay holds the current listing (a republish may be in flight when first asked).
    const settled = async () => {
      const v = await view();
      return v.relays[0]?.ok === true && ours().some((e) => e.id === v.listing.id) ? v : undefined;
    };
    await expect.poll(settled, { timeout: 15_000 }).toBeDefined();
    const body = (await settled()) ?? (await view());
    expect(body.key_source).toBe('store');
    expect(body.npub).toBe((await info()).npub);
    const [a, b] = body.relays;
    expect(a).toMatchObject({ relay: relay.url, ok: true, last_error: null, next_attempt_at: null });
    expect(b).toMatchObject({ relay: refusing.url, ok: false });
    expect(b!.last_error).toContain('blocked: test relay refuses');
    expect(Date.parse(b!.next_attempt_at!)).toBeGreaterThan(Date.now());
    // A refused relay waits for its backoff (listing-publisher.test.ts checks its 5 s doubling exactly).
    expect(b!.next_attempt_at).not.toBeNull();
    const metrics = await (await fetch(`${h.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(
      new RegExp(`gateway_nostr_publish_total\\{relay="${relay.url}",result="ok"\\} [1-9]`),
    );
    expect(metrics).toMatch(
      new RegExp(`gateway_nostr_publish_total\\{relay="${refusing.url}",result="error"\\} [1-9]`),
    );
    // The secret key appears nowhere in the answer (only the public key).
    expect(JSON.stringify(body)).not.toContain('nsec');
    // The identity the console shows: what the listing announces, and no paid node (no providers file).
    assertDocumented('GET', '/admin/api/network', 200, body);
    expect(body).toMatchObject({
      display_npub: null,
      name: 'Network test node',
      public_urls: [h.gateway.url],
      mints: [h.mint.url],
      last_published_at: a!.last_success_at,
      paid_nodes: [],
    });
    expect(body.listing.tags.filter((t) => t[0] === 'mint').map((t) => t[1])).toEqual(body.mints);
  });

  it('Publish now (POST /admin/api/network/publish) sends to every relay at once, the one in backoff too', async () => {
    // The refusing relay waits out a backoff with at least 2 s left (else its next retry, 8 s or more, is awaited).
    let before = await networkView();
    await expect
      .poll(
        async () => {
          before = await networkView();
          return Date.parse(before.relays[1]!.next_attempt_at!) - Date.now();
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThanOrEqual(2000);
    const waiting = before.relays[1]!;
    expect(waiting.ok).toBe(false);
    const received = refusing.received;
    const accepted = relay.received;
    const admin = { cookie: `admin_password=${PASSWORD}` };
    // The state change needs the confirmation, the admin cookie, and (from a browser) this origin.
    expect(
      (await call(h.gateway.url, 'POST', '/admin/api/network/publish', { headers: admin, body: {} })).status,
    ).toBe(400);
    const anonymous = await call(h.gateway.url, 'POST', '/admin/api/network/publish', {
      body: { confirm: true },
    });
    expect(anonymous.status).toBe(401);
    const foreign = await call(h.gateway.url, 'POST', '/admin/api/network/publish', {
      headers: { ...admin, origin: 'https://elsewhere.example' },
      body: { confirm: true },
    });
    expect(foreign.status).toBe(403);
    expect(refusing.received).toBe(received);
    const res = await call<NetworkView>(h.gateway.url, 'POST', '/admin/api/network/publish', {
      headers: admin,
      body: { confirm: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    assertDocumented('POST', '/admin/api/network/publish', 200, res.body);
    // The refusing relay was asked again before its backoff ran out, and refused again; the accepting one
    // answered for the listing it holds (at least once: a change check every NOSTR_CHECK_MS may publish too).
    expect(refusing.received).toBe(received + 1);
    expect(relay.received).toBeGreaterThanOrEqual(accepted + 1);
    const [a, b] = res.body.relays;
    expect(a).toMatchObject({ ok: true, event_id: res.body.listing.id, last_error: null });
    expect(Date.parse(a!.last_success_at!)).toBeGreaterThanOrEqual(
      Date.parse(before.relays[0]!.last_success_at!),
    );
    expect(b).toMatchObject({ ok: false, last_error: 'blocked: test relay refuses' });
    expect(Date.parse(b!.last_attempt_at!)).toBeGreaterThan(Date.parse(waiting.last_attempt_at!));
    expect(Date.parse(b!.last_attempt_at!)).toBeLessThan(Date.parse(waiting.next_attempt_at!));
    expect(Date.parse(b!.next_attempt_at!)).toBeGreaterThan(Date.parse(b!.last_attempt_at!));
    expect(res.body.last_published_at).toBe(a!.last_success_at);
    expect(ours().map((e) => e.id)).toContain(res.body.listing.id);
  });

  it('republishes when a price changes: the relay holds only the newer event', async () => {
    const before = ours()[0]!;
    writeFileSync(join(dir, 'models.json'), models('0.000003'));
    expect(h.gateway.services.catalog.reloadFile()).toBe(true);
    await expect.poll(() => ours()[0]?.id, { timeout: 10_000 }).not.toBe(before.id);
    expect(ours()).toHaveLength(1);
    expect(ours()[0]!.created_at).toBeGreaterThan(before.created_at);
    expect(parseListing(ours()[0])?.nodeId).toBe(parseListing(before)?.nodeId);
  });

  it('nodes:discover finds the node, health-checks it and prints its table and providers entry', {
    timeout: 120_000,
  }, async () => {
    const env = { ...process.env, CASHU_MINTS: h.mint.url, NOSTR_RELAYS: '' };
    const script = ['tsx', 'scripts/nodes-discover.ts', '--relays', relay.url, '--timeout-ms', '10000'];
    const table = await run('npx', script, { env });
    const row = table.stdout.split('\n').find((l) => l.includes('mock-gpt'));
    expect(row).toBeDefined();
    expect(row).toContain(h.gateway.url);
    expect(row).toContain(h.mint.url);
    expect(row!.trim().endsWith('ok')).toBe(true);
    const entries = await run('npx', [...script, '--providers'], { env });
    const file = JSON.parse(entries.stdout) as { providers: Array<Record<string, unknown>> };
    expect(file.providers).toHaveLength(1);
    expect(file.providers[0]).toMatchObject({
      base_url: `${h.gateway.url}/v1`,
      payment: 'cashu',
      models: expect.arrayContaining(['mock-gpt', 'mock-mini']),
    });
    // The printed file is a valid providers file as it stands (no key to fill in).
    expect(
      parseProvidersFile(entries.stdout, {}, { timeoutMs: 1000, maxConnections: 1 }).providers[0]!.payment,
    ).toBe('cashu');
    // A node that accepts none of our mints is not usable, and says why.
    const other = await discoverNodes({
      relays: [relay.url],
      trustedMints: ['http://127.0.0.1:1'],
      timeoutMs: 10_000,
    });
    expect(other.nodes).toHaveLength(1);
    expect(other.nodes[0]).toMatchObject({ usable: false, reason: 'accepts none of our trusted mints' });
    expect(providerEntry(other.nodes[0]!).base_url).toBe(`${h.gateway.url}/v1`);
  });

  it('keeps its key across a restart on the same store', { timeout: 60_000 }, async () => {
    const { npub } = await info();
    await h.close();
    h = await start();
    expect((await info()).npub).toBe(npub);
  });
});
