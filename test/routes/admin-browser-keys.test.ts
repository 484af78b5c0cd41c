import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dismissNextDialog, launchChromium, pageProblems } from '../support/chromium.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { call } from './http.js';

/**
 * The Keys view's lifecycle actions in a real browser (Debian's chromium driven by playwright-core): log in
 * through the form (POST /admin/login, HttpOnly session cookie), look a key up, disable it — the confirmation
 * is asked first; dismissed, nothing changes — and the key's next paid call is refused with 401
 * `key_disabled`, its balance untouched; enabled again, it is served.
 */
const PASSWORD = 'keys-browser-pw';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

let h: PaidGateway;
let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;

beforeAll(async () => {
  h = await startPaidGateway({
    store: 'sqlite',
    env: { ADMIN_PASSWORD: PASSWORD, FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '2' },
  });
  ({ browser, close: closeBrowser } = await launchChromium('admin-browser-keys-'));
  // The gateway serves no favicon; chromium's own request for it is not the page's problem.
  await browser.route('**/favicon.ico', (route) => route.fulfill({ status: 204 }));
}, 120_000);

afterAll(async () => {
  await closeBrowser?.();
  await h?.close();
});

describe('the Keys view in chromium', () => {
  it('the Keys view disables a key after a confirmation; the key then gets 401 key_disabled; enable again', async () => {
    const { apiKey: victim, keyId } = await h.fundKey(10);
    const chat = () =>
      call<Json>(h.gateway.url, 'POST', '/v1/chat/completions', {
        auth: victim,
        body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
      });
    expect((await chat()).status).toBe(200);
    const page = await browser.newPage();
    const errors = pageProblems(page);
    // Logged in through the form: the session cookie is HttpOnly, the page's script sees no cookie.
    await page.goto(`${h.gateway.url}/admin/`);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.click('#login button[type=submit]')]);
    await page.locator('#dashboard').waitFor();
    const session = (await browser.cookies(`${h.gateway.url}/admin/`)).find(
      (c) => c.name === 'admin_session',
    );
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
    expect(await page.evaluate('document.cookie')).toBe('');
    await page.click('#nav-keys');
    await page.locator('#key-form').waitFor();
    await page.fill('#key-input', keyId);
    await page.click('#key-form button[type=submit]');
    await page.locator('#key-toggle').waitFor();
    expect(await page.locator('#key-state').textContent()).toBe('Enabled. ');
    expect(await page.locator('#key-toggle').textContent()).toBe('Disable');
    // Dismissed: nothing changes.
    const asked = dismissNextDialog(page);
    await page.click('#key-toggle');
    await expect.poll(() => page.locator('#key-action-result').textContent()).toBe(' Cancelled.');
    expect(asked[0]).toBe(
      `Disable key ${keyId} and every child of it? Calls are refused at once; the balance stays.`,
    );
    expect((await chat()).status).toBe(200);
    // Accepted: the key is disabled, the view shows it, the key's next call is refused.
    page.once('dialog', (d) => void d.accept());
    await page.click('#key-toggle');
    await expect.poll(() => page.locator('#key-state').textContent()).toBe('Disabled by the operator. ');
    expect(await page.locator('#key-toggle').textContent()).toBe('Enable');
    const refused = await chat();
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('key_disabled');
    // 10 sats, two calls of 2 sats: the balance is untouched by the disable.
    const lookup = await call<Json>(h.gateway.url, 'POST', '/admin/api/keys/lookup', {
      headers: { cookie: `admin_password=${PASSWORD}` },
      body: { key_id: keyId },
    });
    expect(lookup.body.account.balance).toBe(6_000);
    expect(lookup.body.key.disabled).toBe(true);
    // Enabled again from the view.
    page.once('dialog', (d) => void d.accept());
    await page.click('#key-toggle');
    await expect.poll(() => page.locator('#key-state').textContent()).toBe('Enabled. ');
    expect((await chat()).status).toBe(200);
    expect(errors).toEqual([]);
    await page.close();
    await h.auditOk();
  });
});
