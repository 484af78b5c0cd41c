import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { launchChromium, openAdminConsole } from '../support/chromium.js';
import { startTestRelay, type TestRelay } from '../support/nostr-relay.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { call } from './http.js';

/**
 * The Network view in a real browser (Debian's chromium driven by playwright-core), logged in through the form:
 * the node's npub (copied to the clipboard by its button), where its key came from, the listing's public URLs
 * and mints; each relay's last publication — a real relay on loopback that accepts the listing and one that
 * refuses it with a hostile message —; "Publish now" asking the refusing relay again at once; and the node this
 * one pays with eCash (a second real gateway) with the msats it kept. Values an operator or a relay chose
 * (NODE_NAME, NODE_NPUB, a public URL, the relay's refusal) carry HTML and script: they show as text and never
 * run. Nothing is requested from outside the gateway; console errors and CSP violations fail the test; at a
 * phone's width the page never scrolls sideways.
 */
const PASSWORD = 'network-browser-pw';
const HOSTILE = {
  name: 'Net <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> node',
  npub: '<b id="pwned-npub">npub1</b>',
  url: 'https://node.example/?x=<img src=x onerror="window.__pwned=3">',
  refusal: 'blocked: <img src=x onerror="window.__pwned = 4"> go away',
};
/** B's price of one call (worked out in test/network/pay-nodes.test.ts). */
const B_CHARGE = 2000;

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

/** A relay that answers every EVENT with `OK false` and a hostile message (NIP-01 framing, nothing stored). */
async function startRefusingRelay(): Promise<{
  url: string;
  received: () => number;
  close(): Promise<void>;
}> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  let received = 0;
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as unknown[];
      if (msg[0] !== 'EVENT') return;
      received++;
      ws.send(JSON.stringify(['OK', (msg[1] as { id: string }).id, false, HOSTILE.refusal]));
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
    received: () => received,
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

let relay: TestRelay;
let refusing: Awaited<ReturnType<typeof startRefusingRelay>>;
let b: PaidGateway;
let a: PaidGateway;
let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
const leaked: string[] = [];

async function networkApi(): Promise<Json> {
  const r = await call<Json>(a.gateway.url, 'GET', '/admin/api/network', {
    headers: { cookie: `admin_password=${PASSWORD}` },
  });
  expect(r.status).toBe(200);
  return r.body;
}

beforeAll(async () => {
  relay = await startTestRelay();
  refusing = await startRefusingRelay();
  b = await startPaidGateway({
    store: 'sqlite',
    env: {
      FIXED_PRICING: 'false',
      FIXED_COST_PER_REQUEST: '1',
      BTC_USD_PRICE: '50000',
      EXCHANGE_FEE: '1.005',
      UPSTREAM_PROVIDER_FEE: '1.05',
    },
  });
  a = await startPaidGateway({
    store: 'sqlite',
    sharedMint: b.mint,
    env: {
      ADMIN_PASSWORD: PASSWORD,
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '5',
      NODE_NAME: HOSTILE.name,
      NODE_NPUB: HOSTILE.npub,
      NODE_PUBLIC_URLS: HOSTILE.url,
      NOSTR_RELAYS: `${relay.url},${refusing.url}`,
      // No background pass during the test: the relays hear from the node at start and on "Publish now" only.
      NOSTR_CHECK_MS: '3600000',
    },
    providersFile: () => ({ providers: [{ name: 'node-b', base_url: b.baseURL, payment: 'cashu' }] }),
  });
  // One call A pays B for.
  await a.wallet.receive(await a.mintToken(100));
  const { apiKey } = await a.fundKey(50);
  const r = await a.openai(apiKey).chat.completions.create({
    model: 'mock-gpt',
    messages: [{ role: 'user', content: 'Say something, please.' }],
    max_tokens: 5,
  });
  expect(r.choices).toHaveLength(1);
  // The publications at start are done (one accepted, one refused), and B's price is recorded.
  await until('both relays answered and B was paid', async () => {
    const v = await networkApi();
    return v.relays[0].ok === true && v.relays[1].ok === false && v.paid_nodes[0].paid_msats === B_CHARGE;
  });
  ({ browser, close: closeBrowser } = await launchChromium('admin-browser-network-'));
  await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: a.gateway.url });
  await browser.route('**/*', (route) => {
    const u = route.request().url();
    // The gateway serves no favicon; chromium's own request for it is not the page's problem.
    if (u === `${a.gateway.url}/favicon.ico`) return route.fulfill({ status: 204 });
    if (u.startsWith(`${a.gateway.url}/`)) return route.continue();
    leaked.push(u);
    return route.abort();
  });
}, 120_000);

afterAll(async () => {
  await closeBrowser?.();
  await a?.close();
  await b?.close();
  await relay?.close();
  await refusing?.close();
});

/** A table's cells, row by row (header row included), as text. */
async function tableRows(page: Page, selector: string): Promise<string[][]> {
  return (await page.evaluate(
    `[...document.querySelectorAll('${selector} tr')].map((tr) => [...tr.children].map((c) => c.textContent))`,
  )) as string[][];
}

/** Nothing of the hostile values became markup or ran. */
async function inert(page: Page): Promise<void> {
  expect(await page.evaluate('window.__pwned')).toBeUndefined();
  expect(await page.locator('#network img, #network script, #network b').count()).toBe(0);
}

describe('the Network view in chromium', () => {
  it('shows the identity, each relay’s result and the paid node; copies the npub; Publish now; hostile values stay text', async () => {
    const api = await networkApi();
    const { page, errors } = await openAdminConsole(browser, a.gateway.url, PASSWORD);
    await page.click('#nav-network');
    await page.locator('#network.active #network-relay-list').waitFor();

    // Identity: the key's npub (and NODE_NPUB only as the display value /v1/info shows), as text.
    expect(await page.locator('#network-npub').textContent()).toBe(api.npub);
    const identity = Object.fromEntries(
      (await tableRows(page, '#network-identity-table')).map(([k, v]) => [k, v]),
    );
    expect(identity).toMatchObject({
      'public key (hex)': api.pubkey,
      key: 'made once by this node, kept in the money store',
      'shown in /v1/info': `${HOSTILE.npub} (NODE_NPUB: a display value only; this node cannot sign with it)`,
      'node id (d tag)': api.node_id,
      name: HOSTILE.name,
      'public URLs': HOSTILE.url,
      'trusted mints announced': b.mint.url,
      'listing event': api.listing.id,
      'last published': api.last_published_at.replace(/\.\d{3}Z$/, 'Z'),
    });
    await page.click('#network-copy');
    await expect.poll(() => page.locator('#network-copy-result').textContent()).toBe(' Copied.');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(api.npub);

    // Relays: the accepting one holds the current listing; the refusing one failed, with its message as text.
    const relayRows = await tableRows(page, '#network-relay-list');
    expect(relayRows[0]).toEqual([
      'relay',
      'result',
      'last attempt',
      'last success',
      'error',
      'next retry',
      'event accepted',
    ]);
    expect(relayRows[1]!.slice(0, 2)).toEqual([relay.url, 'ok']);
    expect(relayRows[1]![4]).toBe('—');
    expect(relayRows[1]![6]).toBe('current');
    expect(relayRows[2]!.slice(0, 2)).toEqual([refusing.url, 'failed']);
    expect(relayRows[2]![4]).toBe(HOSTILE.refusal);
    expect(relayRows[2]![5]).toBe(api.relays[1].next_attempt_at.replace(/\.\d{3}Z$/, 'Z'));
    expect(await page.locator('#network-relay-list tr.bad').count()).toBe(1);

    // The node paid with eCash: one call answered, B's price kept, nothing lost.
    expect(await tableRows(page, '#network-paid-list')).toEqual([
      [
        'name',
        'node',
        'payment',
        'status',
        'calls answered',
        'calls failed',
        'paid msats',
        'lost msats',
        'losses by reason',
        'change retried',
      ],
      ['node-b', new URL(b.gateway.url).origin, 'cashu', 'active', '1', '0', '2,000', '0', '—', '0'],
    ]);
    await inert(page);

    // Publish now: the refusing relay is asked again at once (its backoff notwithstanding) and refuses again.
    const asked = refusing.received();
    const accepted = relay.received;
    await page.click('#network-publish');
    await expect
      .poll(() => page.locator('#network-publish-result').textContent())
      .toBe('Sent to 2 relay(s): 1 accepted, 1 failed.');
    expect(refusing.received()).toBe(asked + 1);
    expect(relay.received).toBe(accepted + 1);
    const after = await networkApi();
    expect(Date.parse(after.relays[1].last_attempt_at)).toBeGreaterThan(
      Date.parse(api.relays[1].last_attempt_at),
    );
    const again = await tableRows(page, '#network-relay-list');
    expect(again[2]![2]).toBe(after.relays[1].last_attempt_at.replace(/\.\d{3}Z$/, 'Z'));
    expect(again[2]![4]).toBe(HOSTILE.refusal);
    await inert(page);

    // At a phone's width the view never scrolls the page sideways; its tables scroll in their own box.
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = (await page.evaluate(
      'Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - document.documentElement.clientWidth',
    )) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    const outside = (await page.evaluate(
      `[...document.querySelectorAll('#network table, #network .scroll')]
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
        .map((e) => e.id || e.className || e.tagName)`,
    )) as string[];
    expect(outside).toEqual([]);

    expect(errors).toEqual([]);
    expect(leaked).toEqual([]);
    await page.close();
    await a.auditOk();
  });
});
