import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { call } from './http.js';

/**
 * The admin console in a real browser (Debian's chromium driven by playwright-core): the login form sets
 * the `admin_password` cookie, the page reloads into the console; each view (overview, charts, solvency,
 * providers, settings form, operator actions) is opened and its numbers compared with the JSON API it is
 * drawn from, after real paid calls. Requests leaving the gateway are aborted and recorded: the page needs
 * nothing from elsewhere. Screenshots of every view (wide and narrow) go to the test's temp dir.
 */
const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'browser-admin-pw';

let h: PaidGateway;
let userDataDir: string;
let browser: BrowserContext;
const leaked: string[] = [];
let apiKey: string;

beforeAll(async () => {
  h = await startPaidGateway({
    store: 'sqlite',
    env: {
      ADMIN_PASSWORD: PASSWORD,
      NODE_NAME: 'Browser <node>',
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '2',
    },
  });
  // Some money in the wallet, so the dashboard has a balance line.
  const created = await call(h.gateway.url, 'POST', '/v1/wallet/create', {
    body: { cashu_token: await h.mintToken(21) },
  });
  expect(created.status).toBe(201);
  // Paid calls for the charts: 4 × 2 sats, and one refused (bad key) as an error.
  ({ apiKey } = await h.fundKey(50));
  for (let i = 0; i < 4; i++) {
    await h.openai(apiKey).chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'hi' }],
    });
  }
  const refused = await call(h.gateway.url, 'POST', '/v1/chat/completions', {
    auth: 'sk-not-a-key',
    body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
  });
  expect(refused.status).toBe(401);
  userDataDir = await mkdtemp(join(tmpdir(), 'admin-browser-'));
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  await browser.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(`${h.gateway.url}/`)) return route.continue();
    leaked.push(u);
    return route.abort();
  });
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
});

describe('admin dashboard in chromium', () => {
  it('a wrong password shows an error; the right one logs in and shows the dashboard', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${h.gateway.url}/admin/`);
    await page.locator('#login').waitFor();

    await page.fill('#password', 'not-the-password');
    await Promise.all([page.waitForEvent('load'), page.click('button[type=submit]')]);
    await page.locator('#login-error').waitFor();

    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.click('button[type=submit]')]);
    await page.locator('#dashboard').waitFor();
    // Escaped, not interpreted.
    expect(await page.locator('#dashboard').textContent()).toBe('Browser <node> — admin');
    expect(await page.locator('#audit-status').textContent()).toMatch(/^Ledger audit: OK over \d+ account/);
    const totals = await page.locator('#totals').textContent();
    expect(totals).toContain('balanceMsat');
    // 21 sats deposited by wallet/create + 50 by fundKey − 4 calls × 2 sats.
    expect(totals).toContain('63000');
    expect(await page.locator('#wallet').textContent()).toContain(h.mint.url);
    const settings = (await page.locator('#settings').textContent()) ?? '';
    expect(settings).toContain('[redacted]');
    expect(settings).not.toContain(PASSWORD);
    const cookies = await browser.cookies(`${h.gateway.url}/admin/`);
    expect(cookies.find((c) => c.name === 'admin_password')?.path).toBe('/admin');
    expect(errors).toEqual([]);
    expect(leaked).toEqual([]);
    await page.close();
    await h.auditOk();
  });

  it('each console view shows the numbers of its API, the settings form and the actions work', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${h.gateway.url}/admin/`);
    await page.locator('#dashboard').waitFor();
    await shot(page, 'overview');

    // Charts: the totals over the shown range equal the API's sums; uPlot drew into canvases.
    await page.click('#nav-charts');
    await page.locator('#charts.active').waitFor();
    for (const [granularity, points] of [
      ['minute', 60],
      ['day', 30],
    ] as const) {
      await page.selectOption('#granularity', granularity);
      const api = await adminApi('/admin/api/timeseries', { granularity, points });
      const sum = (f: string) => api.points.reduce((s: number, p: Json) => s + p[f], 0);
      expect([sum('calls'), sum('errors'), sum('charged_msats')]).toEqual([5, 1, 8_000]);
      await expect.poll(() => page.locator('#total-msats').textContent()).toBe('8,000');
      expect(await page.locator('#total-calls').textContent()).toBe('5');
      expect(await page.locator('#total-errors').textContent()).toBe('1');
      expect(await page.locator('#chart-msats canvas').count()).toBe(1);
      expect(await page.locator('#chart-calls canvas').count()).toBe(1);
      expect(await page.locator('#chart-calls').textContent()).toContain(
        `Calls and errors per ${granularity}`,
      );
    }
    await shot(page, 'charts');

    // Actions: a dismissed confirmation does nothing; an accepted one runs and shows the answer.
    await page.click('#nav-actions');
    page.once('dialog', (d) => void d.dismiss());
    await page.click('#action-solvency');
    await expect.poll(() => page.locator('#action-result').textContent()).toBe('Cancelled.');
    page.once('dialog', (d) => void d.accept());
    await page.click('#action-solvency');
    await expect.poll(() => page.locator('#action-result').textContent()).toContain('"solvent": true');
    const check = JSON.parse((await page.locator('#action-result').textContent()) ?? '{}') as Json;
    expect(check.user_balances_msat).toBe(await h.ledger.totalUserBalancesMsat());
    page.once('dialog', (d) => void d.accept());
    await page.click('#action-recovery');
    await expect.poll(() => page.locator('#action-result').textContent()).toContain('"deferred": 0');
    await shot(page, 'actions');

    // Solvency: the latest sample is the check just run, as the API has it.
    await page.click('#nav-solvency');
    const samples = (await adminApi('/admin/api/solvency', { limit: 1 })).samples as Json[];
    expect(samples.at(-1)).toMatchObject({
      proofs_msat: check.proofs_msat,
      user_balances_msat: check.user_balances_msat,
    });
    const latest = page.locator('#solvency-latest');
    await expect.poll(() => latest.textContent()).toContain('solvent');
    const fmt = (n: number) => n.toLocaleString('en-US');
    expect(await latest.textContent()).toContain(`proofs ${fmt(check.proofs_msat)} msats`);
    expect(await latest.textContent()).toContain(`owed to users ${fmt(check.user_balances_msat)} msats`);
    expect(await page.locator('#chart-solvency canvas').count()).toBe(1);
    await shot(page, 'solvency');

    // Keys: searched by key id (what audit records and logs show), the key's figures and history as the API
    // gives them for the key itself; the key is not shown.
    const lookup = await call<Json>(h.gateway.url, 'POST', '/admin/api/keys/lookup', {
      body: { api_key: apiKey },
      headers: { cookie: `admin_password=${PASSWORD}` },
    });
    expect(lookup.body.account.balance).toBe(42_000);
    await page.click('#nav-keys');
    await page.fill('#key-input', lookup.body.key.key_id);
    await page.click('#key-form button[type=submit]');
    await page.locator('#key-transactions').waitFor();
    expect(await page.locator('#key-result h3').first().textContent()).toContain(lookup.body.key.key_id);
    const figures = (await page.locator('#key-figures').textContent()) ?? '';
    expect(figures).toContain('42,000');
    expect(figures).toContain(`${fmt(lookup.body.key.total_spent)}`);
    expect(await page.locator('#key-transactions tr').count()).toBe(lookup.body.transactions.length + 1);
    expect(await page.locator('#key-audit tr').count()).toBe(lookup.body.audit.length + 1);
    expect(await page.locator('#key-result').textContent()).not.toContain(apiKey);
    // Alert settings and webhooks (none for this key).
    expect(await page.locator('#key-alerts tr').count()).toBe(2);
    await shot(page, 'keys');

    // Audit view, from /admin/api/audit: opens with the newest records; filtered by the key's id it shows
    // exactly the API's records for that key (its paid calls).
    await page.click('#nav-audit-log');
    await page.locator('#alog-table').waitFor();
    await page.fill('#alog-key', lookup.body.key.key_id);
    await page.click('#alog-form button[type=submit]');
    const audit = (await adminApi('/admin/api/audit', { key_id: lookup.body.key.key_id })).data as Json[];
    expect(audit.length).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#alog-table tr').count()).toBe(audit.length + 1);
    const auditText = (await page.locator('#alog-table').textContent()) ?? '';
    expect(auditText).toContain(audit[0]!.request_id);
    expect(auditText).toContain(lookup.body.key.key_id);
    expect(auditText).not.toContain(apiKey);
    await shot(page, 'audit');

    // Webhook deliveries, from /admin/api/webhooks/deliveries (none on this node: the empty state).
    const deliveries = await call<Json>(h.gateway.url, 'GET', '/admin/api/webhooks/deliveries', {
      headers: { cookie: `admin_password=${PASSWORD}` },
    });
    expect(deliveries.status).toBe(200);
    await page.click('#nav-webhooks');
    await expect
      .poll(() => page.locator('#deliveries-result').textContent())
      .toBe(deliveries.body.data.length === 0 ? 'No deliveries yet.' : expect.anything());
    expect(await page.locator('#webhooks [data-error]').count()).toBe(0);

    // Providers, from /v1/providers.
    await page.click('#nav-providers');
    const providers = (await call<Json>(h.gateway.url, 'GET', '/v1/providers')).body.providers as Json[];
    await page.locator('#providers-list').waitFor();
    expect(await page.locator('#providers-list tr').count()).toBe(providers.length + 1);
    const firstRow = (await page.locator('#providers-list tr').nth(1).textContent()) ?? '';
    expect(firstRow).toContain(providers[0]!.name);
    expect(firstRow).toContain(providers[0]!.status);
    await shot(page, 'providers');

    // Settings form: a valid change is saved and applied; an invalid one shows the API's error.
    await page.click('#nav-settings-view');
    await page.locator('#setting-node_name').waitFor();
    await page.fill('#setting-node_name', 'Renamed node');
    await page.click('#settings-form button[type=submit]');
    await expect.poll(() => page.locator('#settings-result').textContent()).toBe('Saved: node_name');
    expect((await adminApi('/admin/api/settings')).node_name).toBe('Renamed node');
    const fee = (await adminApi('/admin/api/settings')).exchange_fee;
    await page.fill('#setting-exchange_fee', '-1');
    await page.click('#settings-form button[type=submit]');
    await expect.poll(() => page.locator('#settings-result').textContent()).toMatch(/^400 validation_failed/);
    expect((await adminApi('/admin/api/settings')).exchange_fee).toBe(fee);
    await shot(page, 'settings');

    expect(errors).toEqual([]);
    expect(leaked).toEqual([]);
    await page.close();
    await h.auditOk();
  });

  it('a narrow (mobile) viewport stays usable: no sideways scrolling, charts fit', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 375, height: 740 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${h.gateway.url}/admin/#charts`);
    await page.locator('#chart-calls canvas').waitFor();
    for (const view of ['charts', 'overview', 'settings-view', 'actions']) {
      await page.click(`#nav-${view}`);
      await page.locator(`#${view}.active`).waitFor();
      // Evaluated in the page (a string: the test itself has no DOM types).
      const overflow = (await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      )) as number;
      expect(overflow, view).toBeLessThanOrEqual(0);
      expect(await page.locator(`#nav-${view}`).isVisible()).toBe(true);
      await shot(page, `narrow-${view}`);
    }
    await page.click('#nav-charts');
    // The view redraws its charts on opening (the canvas is replaced): poll until the new one is there.
    await expect
      .poll(
        async () => (await page.locator('#chart-calls canvas').boundingBox({ timeout: 1_000 }))?.width ?? 9e9,
      )
      .toBeLessThanOrEqual(375);
    expect(errors).toEqual([]);
    expect(leaked).toEqual([]);
    await page.close();
  });
});

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

async function adminApi(path: string, query: Record<string, string | number> = {}): Promise<Json> {
  const r = await call<Json>(h.gateway.url, 'GET', path, {
    query,
    headers: { cookie: `admin_password=${PASSWORD}` },
  });
  expect(r.status).toBe(200);
  return r.body;
}

/** Saves a screenshot under the test's temp dir and checks it was written. */
async function shot(page: Page, name: string): Promise<void> {
  const path = join(userDataDir, `console-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect((await stat(path)).size).toBeGreaterThan(5_000);
}
