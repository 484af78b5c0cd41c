import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { call } from './http.js';

/**
 * The admin dashboard in a real browser (Debian's chromium driven by playwright-core): the login form sets
 * the `admin_password` cookie, the page reloads into the dashboard (node info, ledger totals, the
 * operator's wallet per mint, settings). Requests leaving the gateway are aborted and recorded: the page
 * needs nothing from elsewhere.
 */
const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'browser-admin-pw';

let h: PaidGateway;
let userDataDir: string;
let browser: BrowserContext;
const leaked: string[] = [];

beforeAll(async () => {
  h = await startPaidGateway({
    store: 'sqlite',
    env: { ADMIN_PASSWORD: PASSWORD, NODE_NAME: 'Browser <node>' },
  });
  // Some money in the wallet, so the dashboard has a balance line.
  const created = await call(h.gateway.url, 'POST', '/v1/wallet/create', {
    body: { cashu_token: await h.mintToken(21) },
  });
  expect(created.status).toBe(201);
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
    expect(totals).toContain('21000');
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
});
