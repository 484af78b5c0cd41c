import * as nip19 from 'nostr-tools/nip19';
import { getPublicKey } from 'nostr-tools/pure';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamLostMsatsTotal, upstreamPaidMsatsTotal } from '../../core/metrics.js';
import { call } from '../routes/http.js';
import { assertDocumented } from '../routes/response-schema.js';
import { type DevMint, proofsMsat, startTestMint } from '../support/dev-mint.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { A_ENV as A_FLAT_ENV, B_MODEL_ENV } from './support/nodes.js';

/**
 * The Network view's API with real paid nodes (GET /admin/api/network, `paid_nodes`): gateway A resells two
 * real gateways on one dev mint with `"payment": "cashu"` — B, whose change comes back, and B2, which makes its
 * change at a mint A does not trust (a recorded loss) and then goes away (a failed call, its token back). A's
 * view shows per node what it paid and lost, equal to the counters /metrics exposes and to what left A's
 * wallet; a provider paid with its API key is not listed. The identity part: NODE_NPUB is shown as a display
 * value only while NOSTR_NSEC is unset. One store: the figures are process counters, the money path itself is
 * tested on both stores in pay-nodes.test.ts.
 */
const PASSWORD = 'network-view-pw';
const messages = [{ role: 'user' as const, content: 'Say something, please.' }];
/** B's price of this call (pay-nodes.test.ts works it out): 1,034 msat, charged in whole sats. */
const B_CHARGE = 2000;
const B_ENV = B_MODEL_ENV;
const A_ENV = { ...A_FLAT_ENV, ADMIN_PASSWORD: PASSWORD };

interface PaidNode {
  name: string;
  origin: string;
  payment: string;
  status: string;
  calls: { ok: number; error: number; status_5xx: number; status_429: number };
  paid_msats: number;
  lost_msats: number;
  lost_by_reason: Record<string, number>;
  change_retries: number;
}
interface NetworkView {
  npub: string;
  key_source: string;
  display_npub: string | null;
  mints: string[];
  paid_nodes: PaidNode[];
}

async function counter(c: typeof upstreamPaidMsatsTotal, labels: Record<string, string>): Promise<number> {
  return (await c.get()).values
    .filter((x) => Object.entries(labels).every(([k, v]) => (x.labels as Record<string, unknown>)[k] === v))
    .reduce((s, x) => s + x.value, 0);
}

async function view(g: PaidGateway): Promise<NetworkView> {
  const res = await call<NetworkView>(g.gateway.url, 'GET', '/admin/api/network', {
    headers: { cookie: `admin_password=${PASSWORD}` },
  });
  expect(res.status).toBe(200);
  assertDocumented('GET', '/admin/api/network', 200, res.body);
  return res.body;
}

describe('the Network view with nodes paid as providers', () => {
  let own: DevMint;
  let b: PaidGateway;
  let b2: PaidGateway;
  let a: PaidGateway;
  const names = { b: 'view-node-b', b2: 'view-node-b2', keyed: 'view-keyed' };

  beforeAll(async () => {
    b = await startPaidGateway({ store: 'sqlite', env: B_ENV });
    // B2 accepts the shared mint but makes its change at its own primary mint, which A does not trust.
    own = await startTestMint();
    b2 = await startPaidGateway({
      store: 'sqlite',
      sharedMint: own,
      env: { ...B_ENV, CASHU_MINTS: `${own.url},${b.mint.url}` },
    });
    await b2.wallet.receive(await own.mintTokens(100, 'sat')); // B2's proofs at its primary, for change
    a = await startPaidGateway({
      store: 'sqlite',
      sharedMint: b.mint,
      env: { ...A_ENV, PROVIDER_MAX_ATTEMPTS: '3', NODE_NPUB: 'npub1display-only' },
      providersFile: (upstream) => ({
        providers: [
          { name: names.b2, base_url: b2.baseURL, payment: 'cashu', priority: 0 },
          { name: names.b, base_url: b.baseURL, payment: 'cashu', priority: 1 },
          // Paid with an API key: a provider, not a node this one pays.
          { name: names.keyed, base_url: upstream, api_key: 'sk-upstream', priority: 2 },
        ],
      }),
    });
    await a.wallet.receive(await a.mintToken(100)); // the operator surplus that pays the nodes
  }, 120_000);

  afterAll(async () => {
    await a?.close();
    await b2?.close();
    await b?.close();
    await own?.close();
  });

  it('lists each paid node with what it was paid and lost, as /metrics and A’s wallet say', async () => {
    const fresh = await view(a);
    expect(fresh.paid_nodes.map((n) => n.name)).toEqual([names.b2, names.b]);
    expect(fresh.paid_nodes[0]).toEqual({
      name: names.b2,
      origin: new URL(b2.gateway.url).origin,
      payment: 'cashu',
      status: 'active',
      calls: { ok: 0, error: 0, status_5xx: 0, status_429: 0 },
      paid_msats: 0,
      lost_msats: 0,
      lost_by_reason: {},
      change_retries: 0,
    });

    const { apiKey } = await a.fundKey(50);
    const chat = (maxTokens: number) =>
      fetch(`${a.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-gpt', messages, max_tokens: maxTokens }),
      });
    // 1. B2 serves the call; its change is at a mint A does not trust: lost.
    const before = await proofsMsat(a.wallet);
    expect((await chat(500)).status).toBe(200);
    await until('A recorded the unredeemable change', async () => {
      return (await counter(upstreamLostMsatsTotal, { provider: names.b2 })) > 0;
    });
    const afterB2 = await proofsMsat(a.wallet);
    // 2. B2 is gone: the call fails over to B (B2's token comes back whole), B keeps its price.
    await b2.gateway.close(0);
    expect((await chat(5)).status).toBe(200);
    await until('A paid B and took B2’s token back', async () => {
      return (
        (await counter(upstreamPaidMsatsTotal, { provider: names.b })) === B_CHARGE &&
        (await proofsMsat(a.wallet)) === afterB2 - B_CHARGE
      );
    });

    const v = await view(a);
    const [n2, n1] = v.paid_nodes;
    expect(v.paid_nodes).toHaveLength(2);
    // B2: one call answered (paid its price, its change lost), one call with no answer.
    expect(n2).toMatchObject({
      name: names.b2,
      calls: { ok: 1, error: 1, status_5xx: 0, status_429: 0 },
      paid_msats: await counter(upstreamPaidMsatsTotal, { provider: names.b2 }),
      lost_msats: await counter(upstreamLostMsatsTotal, { provider: names.b2 }),
      change_retries: 0,
    });
    expect(n2!.paid_msats).toBeGreaterThan(0);
    expect(Object.keys(n2!.lost_by_reason)).toEqual(['change_unredeemable']);
    expect(n2!.lost_by_reason.change_unredeemable).toBe(n2!.lost_msats);
    // What left A's wallet for B2's call is exactly what the view says B2 was paid plus what was lost.
    expect(before - afterB2).toBe(n2!.paid_msats + n2!.lost_msats);
    expect(n2!.status).not.toBe('active'); // its breaker counted the failure
    // B: one call, its exact price, nothing lost.
    expect(n1).toEqual({
      name: names.b,
      origin: new URL(b.gateway.url).origin,
      payment: 'cashu',
      status: 'active',
      calls: { ok: 1, error: 0, status_5xx: 0, status_429: 0 },
      paid_msats: B_CHARGE,
      lost_msats: 0,
      lost_by_reason: {},
      change_retries: 0,
    });
    // The Providers view counts the same calls.
    const providers = await call<{ providers: Array<{ name: string; calls: PaidNode['calls'] }> }>(
      a.gateway.url,
      'GET',
      '/admin/api/providers',
      { headers: { cookie: `admin_password=${PASSWORD}` } },
    );
    for (const n of v.paid_nodes) {
      expect(providers.body.providers.find((p) => p.name === n.name)?.calls).toEqual(n.calls);
    }
    await a.auditOk();
  });

  it('NODE_NPUB is shown as a display value only while NOSTR_NSEC is unset', async () => {
    const v = await view(a);
    expect(v.key_source).toBe('store');
    expect(v.display_npub).toBe('npub1display-only');
    expect(v.npub).not.toBe(v.display_npub);
    expect(v.mints).toEqual([b.mint.url]);
    const info = (await (await fetch(`${a.gateway.url}/v1/info`)).json()) as { npub: string };
    expect(info.npub).toBe('npub1display-only');

    // With NOSTR_NSEC the key's npub is what /v1/info shows, and nothing is display-only.
    const sk = Uint8Array.from(Buffer.from(`${'00'.repeat(31)}01`, 'hex'));
    const keyed = await startPaidGateway({
      store: 'sqlite',
      env: { ADMIN_PASSWORD: PASSWORD, NOSTR_NSEC: nip19.nsecEncode(sk), NODE_NPUB: 'npub1display-only' },
    });
    try {
      const k = await view(keyed);
      expect(k).toMatchObject({
        key_source: 'config',
        display_npub: null,
        npub: nip19.npubEncode(getPublicKey(sk)),
        paid_nodes: [],
      });
      const keyedInfo = (await (await fetch(`${keyed.gateway.url}/v1/info`)).json()) as { npub: string };
      expect(keyedInfo.npub).toBe(k.npub);
      expect(JSON.stringify(k)).not.toContain('nsec');
    } finally {
      await keyed.close();
    }
  });
});
