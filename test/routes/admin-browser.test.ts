import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../core/events/signing.js';
import { Receiver } from '../events/support/receiver.js';
import { dismissNextDialog, keepWithin, launchChromium, pageProblems } from '../support/chromium.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { until } from '../support/until.js';
import { call } from './http.js';

/**
 * The admin console in a real browser (Debian's chromium driven by playwright-core): the login form posts to
 * POST /admin/login, which sets the HttpOnly session cookie, and the page reloads into the console; each view (overview, charts, solvency,
 * keys, audit log, webhook deliveries, providers, settings form, operator actions) is opened and its numbers
 * compared with the JSON API it is drawn from, after real paid calls and real webhook deliveries (one receiver
 * fails, one answers 200). The payout form is driven over the dev mint's fake Lightning. Requests leaving the
 * gateway are aborted and recorded: the page needs nothing from elsewhere; console errors and CSP violations
 * fail the test. Every view is checked at a phone's width (390×844): the page never scrolls sideways.
 * Screenshots of every view (wide and narrow) go to the test's temp dir.
 */
const PASSWORD = 'browser-admin-pw';

let h: PaidGateway;
let browser: BrowserContext;
/** The browser's profile: the screenshots go there too. */
let userDataDir: string;
let closeBrowser: (() => Promise<void>) | undefined;
const leaked: string[] = [];
let apiKey: string;
let watchedKeyId: string;
const rx = new Receiver();

beforeAll(async () => {
  await rx.start();
  rx.plan.set('/fails', [500]);
  h = await startPaidGateway({
    store: 'sqlite',
    env: {
      ADMIN_PASSWORD: PASSWORD,
      NODE_NAME: 'Browser <node>',
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '2',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_MAX_ATTEMPTS: '2',
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
  // Real webhook deliveries: a key with two webhooks on balance.low (one receiver always fails, one answers
  // 200) and a threshold its one paid call (2 sats) crosses: two failed attempts and one delivered.
  const watched = await h.fundKey(20);
  watchedKeyId = watched.keyId;
  for (const path of ['/fails', '/ok']) {
    const hook = await call(h.gateway.url, 'POST', '/v1/webhooks', {
      auth: watched.apiKey,
      body: { url: `${rx.url}${path}`, events: ['balance.low'], secret: newWebhookSecret() },
    });
    expect(hook.status).toBe(201);
  }
  const alerts = await call(h.gateway.url, 'POST', '/v1/wallet/alerts', {
    auth: watched.apiKey,
    body: { low_balance_threshold: 19_000 },
  });
  expect(alerts.status).toBe(200);
  await h.openai(watched.apiKey).chat.completions.create({
    model: 'mock-gpt',
    messages: [{ role: 'user', content: 'hi' }],
  });
  await until('the deliveries in the admin list', async () => {
    const d = await adminApi('/admin/api/webhooks/deliveries', { limit: 10 });
    return d.data.length >= 3;
  });
  ({ browser, dir: userDataDir, close: closeBrowser } = await launchChromium('admin-browser-'));
  await keepWithin(browser, h.gateway.url, leaked);
});

afterAll(async () => {
  await closeBrowser?.();
  await h?.close();
  rx.close();
});

describe('admin dashboard in chromium', () => {
  it('a wrong password shows an error; the right one logs in; the overview shows the API figures', async () => {
    const page = await browser.newPage();
    const errors = pageProblems(page);
    await page.goto(`${h.gateway.url}/admin/`);
    await page.locator('#login').waitFor();

    await page.fill('#password', 'not-the-password');
    await page.click('button[type=submit]');
    await page.locator('#login-error').waitFor();
    expect(await page.locator('#login-error').textContent()).toBe('Wrong admin password.');
    // Chromium logs the refused login's 401 as a failed resource: expected, not a page problem.
    errors.splice(0, errors.length, ...errors.filter((e) => !/status of 401/.test(e)));

    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.click('button[type=submit]')]);
    await page.locator('#dashboard').waitFor();
    // Escaped, not interpreted.
    expect(await page.locator('#dashboard').textContent()).toBe('Browser <node> — admin');
    // The overview's figures are those of GET /admin/api/overview, row by row.
    const overview = await adminApi('/admin/api/overview');
    expect(await page.locator('#audit-status').textContent()).toBe(
      `Ledger audit: OK over ${overview.audit.accounts} account(s).`,
    );
    const totals = await tableRows(page, '#totals');
    expect(Object.fromEntries(totals)).toEqual(
      Object.fromEntries(
        Object.entries(overview.audit.totals as Record<string, number>).map(([k, v]) => [k, String(v)]),
      ),
    );
    // The gateway's share of the paid calls so far, as the API computes it from gateway_overhead_seconds.
    expect(overview.overhead.calls).toBeGreaterThanOrEqual(5);
    expect(overview.overhead.p50_ms).toBeGreaterThan(0);
    expect(overview.overhead.p99_ms).toBeGreaterThanOrEqual(overview.overhead.p50_ms);
    expect(await tableRows(page, '#overhead')).toEqual([
      ['calls', String(overview.overhead.calls)],
      ['p50 ms', String(overview.overhead.p50_ms)],
      ['p99 ms', String(overview.overhead.p99_ms)],
    ]);
    // 21 sats deposited by wallet/create + 50 + 20 by fundKey − 5 calls × 2 sats.
    expect(overview.audit.totals.balanceMsat).toBe(81_000);
    const wallet = await tableRows(page, '#wallet');
    expect(wallet.slice(1)).toEqual(
      (overview.wallet as Json[]).map((w) => [
        w.mint,
        w.unit,
        String(w.amount),
        String(w.reserved),
        String(w.proofs),
      ]),
    );
    expect(wallet[1]![0]).toBe(h.mint.url);
    const settings = (await page.locator('#settings').textContent()) ?? '';
    expect(settings).toContain('[redacted]');
    expect(settings).not.toContain(PASSWORD);
    // A session cookie the page's script cannot read; no password in any cookie.
    const cookies = await browser.cookies(`${h.gateway.url}/admin/`);
    const session = cookies.find((c) => c.name === 'admin_session');
    expect(session).toMatchObject({ path: '/admin', httpOnly: true, sameSite: 'Strict', secure: false });
    expect(cookies.some((c) => c.value.includes(PASSWORD))).toBe(false);
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(errors).toEqual([]);

    // The listener does catch a CSP violation: an injected inline script is refused and reported.
    await page.evaluate(
      "const s = document.createElement('script'); s.textContent = 'window.x = 1'; document.head.appendChild(s)",
    );
    await expect.poll(() => errors.some((e) => /Content Security Policy/.test(e))).toBe(true);
    expect(await page.evaluate('window.x')).toBeUndefined();
    expect(leaked).toEqual([]);
    await page.close();
    await h.auditOk();
  });

  it('each console view shows the numbers of its API; deliveries, settings form and actions work', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    const errors = pageProblems(page);
    await page.goto(`${h.gateway.url}/admin/`);
    await page.locator('#dashboard').waitFor();
    await shot(page, 'overview');

    // Charts: the totals over the shown range equal the API's sums; uPlot drew into canvases.
    await page.click('#nav-charts');
    await page.locator('#charts.active').waitFor();
    for (const [granularity, points] of [
      ['minute', 60],
      ['hour', 48],
      ['day', 30],
    ] as const) {
      await page.selectOption('#granularity', granularity);
      const api = await adminApi('/admin/api/timeseries', { granularity, points });
      const sum = (f: string) => api.points.reduce((s: number, p: Json) => s + p[f], 0);
      // 4 + 1 paid calls × 2 sats, and the refused one.
      expect([sum('calls'), sum('errors'), sum('charged_msats')]).toEqual([6, 1, 10_000]);
      await expect.poll(() => page.locator('#total-msats').textContent()).toBe('10,000');
      expect(await page.locator('#total-calls').textContent()).toBe('6');
      expect(await page.locator('#total-errors').textContent()).toBe('1');
      expect(await page.locator('#chart-msats canvas').count()).toBe(1);
      expect(await page.locator('#chart-calls canvas').count()).toBe(1);
      await expect
        .poll(() => page.locator('#chart-calls').textContent())
        .toContain(`Calls and errors per ${granularity}`);
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

    // Payout over the dev mint's fake Lightning. Surplus: proofs 91,000 − owed 81,000 = 10,000 msats.
    const held = async () => (await h.wallet.balances()).reduce((s, l) => s + l.amountMsat, 0);
    expect(await held()).toBe(91_000);
    // More than the surplus: refused before any dialog, nothing paid.
    await page.fill('#payout-invoice', h.mint.invoice(10_001));
    await page.click('#payout-form button[type=submit]');
    await expect
      .poll(() => page.locator('#action-result').textContent())
      .toBe(
        'Refused: the invoice asks for 10,001 msats (10.001 sats); operator surplus 10,000 msats = proofs held 91,000 − user balances 81,000.',
      );
    // Within it: the dialog names the amount and the surplus; dismissed → nothing paid, accepted → paid.
    await page.fill('#payout-invoice', h.mint.invoice(3_000));
    const dialogs = dismissNextDialog(page);
    await page.click('#payout-form button[type=submit]');
    await expect.poll(() => page.locator('#action-result').textContent()).toBe('Cancelled.');
    expect(dialogs[0]).toBe(
      "Pay 3,000 msats (3 sats); operator surplus 10,000 msats = proofs held 91,000 − user balances 81,000?\nThe mint's Lightning fee comes on top.",
    );
    expect(await held()).toBe(91_000);
    page.once('dialog', (d) => void d.accept());
    await page.click('#payout-form button[type=submit]');
    await expect.poll(() => page.locator('#action-result').textContent()).toContain('"amount_msat": 3000');
    const payout = JSON.parse((await page.locator('#action-result').textContent()) ?? '{}') as Json;
    expect(payout.mint).toBe(h.mint.url);
    expect(await held()).toBe(88_000 - payout.fee_msat);
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

    // Webhook deliveries, from /admin/api/webhooks/deliveries: the real attempts (two failed, one delivered);
    // "failed only" keeps the failed ones, the key filter one key's.
    const deliveries = (await adminApi('/admin/api/webhooks/deliveries')).data as Json[];
    expect(deliveries.map((d) => [d.key_id, d.status])).toEqual([
      [watchedKeyId, expect.any(Number)],
      [watchedKeyId, expect.any(Number)],
      [watchedKeyId, expect.any(Number)],
    ]);
    expect(deliveries.map((d) => d.status).sort()).toEqual([200, 500, 500]);
    await page.click('#nav-webhooks');
    await page.locator('#deliveries-list').waitFor();
    expect(await tableRows(page, '#deliveries-list')).toEqual([
      ['when', 'key', 'webhook', 'receiver', 'attempt', 'status', 'error'],
      ...deliveries.map((d) => [
        new Date(d.at).toISOString().replace('.000Z', 'Z'),
        d.key_id,
        d.webhook_id,
        new URL(rx.url).origin,
        String(d.attempt),
        String(d.status),
        d.error ?? '',
      ]),
    ]);
    await page.check('#deliveries-failed');
    const failed = (await adminApi('/admin/api/webhooks/deliveries', { failed: 'true' })).data as Json[];
    expect(failed.map((d) => [d.status, d.error])).toEqual([
      [500, 'HTTP 500'],
      [500, 'HTTP 500'],
    ]);
    await expect.poll(() => page.locator('#deliveries-list tr').count()).toBe(failed.length + 1);
    expect((await tableRows(page, '#deliveries-list')).slice(1).map((r) => r[5])).toEqual(['500', '500']);
    expect(await page.locator('#deliveries-list tr.bad').count()).toBe(2);
    await page.uncheck('#deliveries-failed');
    await page.fill('#deliveries-key', lookup.body.key.key_id);
    await page.click('#deliveries-form button[type=submit]');
    await expect.poll(() => page.locator('#deliveries-result').textContent()).toBe('No deliveries yet.');
    await page.fill('#deliveries-key', watchedKeyId);
    await page.click('#deliveries-form button[type=submit]');
    await expect.poll(() => page.locator('#deliveries-list tr').count()).toBe(deliveries.length + 1);
    expect(await page.locator('#deliveries-more').isHidden()).toBe(true);
    await shot(page, 'webhooks');

    // Providers, from /admin/api/providers.
    await page.click('#nav-providers');
    const providers = (await adminApi('/admin/api/providers')).providers as Json[];
    await page.locator('#providers-list').waitFor();
    const providerRows = await tableRows(page, '#providers-list');
    expect(providerRows).toHaveLength(providers.length + 1);
    const p0 = providers[0]!;
    expect(providerRows[1]!.slice(0, 6)).toEqual([
      p0.name,
      p0.host,
      p0.status,
      p0.breaker.state,
      String(p0.priority),
      String(p0.weight),
    ]);
    expect(providerRows[1]![8]).toBe(fmt(p0.calls.ok));
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

    // The one console error is chromium's report of that refused PATCH (400); nothing else.
    expect(errors).toEqual([expect.stringMatching(/status of 400/)]);
    expect(leaked).toEqual([]);
    await page.close();
    await h.auditOk();
  });

  it('at a phone width (390×844) every view stays usable: no sideways page scroll, tables scroll in place', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    const errors = pageProblems(page);
    await page.goto(`${h.gateway.url}/admin/#charts`);
    await page.locator('#chart-calls canvas').waitFor();
    // The views with wide tables get their data first.
    await page.click('#nav-keys');
    await page.fill('#key-input', watchedKeyId);
    await page.click('#key-form button[type=submit]');
    await page.locator('#key-transactions').waitFor();
    for (const [view, ready] of [
      ['overview', '#totals'],
      ['charts', '#chart-calls canvas'],
      ['solvency', '#chart-solvency canvas'],
      ['keys', '#key-transactions'],
      ['audit-log', '#alog-table'],
      ['webhooks', '#deliveries-list'],
      ['providers', '#providers-list'],
      ['settings-view', '#setting-node_name'],
      ['actions', '#payout-form'],
    ] as const) {
      await page.click(`#nav-${view}`);
      await page.locator(`#${view}.active`).waitFor();
      await page.locator(`#${view} ${ready}`).first().waitFor();
      // Evaluated in the page (strings: the test itself has no DOM types).
      const overflow = (await page.evaluate(
        'Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - document.documentElement.clientWidth',
      )) as number;
      expect(overflow, view).toBeLessThanOrEqual(0);
      // Every table, form and chart of the view ends inside the screen (a wide table scrolls in its own box).
      const outside = (await page.evaluate(
        `[...document.querySelectorAll('#${view} table, #${view} form, #${view} .chart, #${view} .scroll')]
          .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
          .map((e) => e.id || e.className || e.tagName)`,
      )) as string[];
      expect(outside, view).toEqual([]);
      expect(await page.locator(`#nav-${view}`).isVisible()).toBe(true);
      if (view === 'webhooks' || view === 'audit-log') {
        // Those tables are wider than the phone: they scroll sideways inside their own box.
        const id = view === 'webhooks' ? 'deliveries-list' : 'alog-table';
        const scrolls = (await page.evaluate(
          `(() => { const t = document.getElementById('${id}'); const b = t.parentElement; return t.scrollWidth > t.clientWidth || b.scrollWidth > b.clientWidth; })()`,
        )) as boolean;
        expect(scrolls, id).toBe(true);
      }
      await shot(page, `narrow-${view}`);
    }
    await page.click('#nav-charts');
    // The view redraws its charts on opening (the canvas is replaced): poll until the new one is there.
    await expect
      .poll(
        async () => (await page.locator('#chart-calls canvas').boundingBox({ timeout: 1_000 }))?.width ?? 9e9,
      )
      .toBeLessThanOrEqual(390);
    expect(errors).toEqual([]);
    expect(leaked).toEqual([]);
    await page.close();
  });
});

/** A table's cells, row by row (header row included), as text. */
async function tableRows(page: Page, selector: string): Promise<string[][]> {
  return (await page.evaluate(
    `[...document.querySelectorAll('${selector} tr')].map((tr) => [...tr.children].map((c) => c.textContent))`,
  )) as string[][];
}

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
