import { createHash } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dismissNextDialog,
  launchChromium,
  openAdminConsole,
  submitAdminLogin,
} from '../support/chromium.js';
import { ledgerOverriding, refusedWhile } from '../support/fakes.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { call } from './http.js';

/**
 * The Keys view's lifecycle actions and the console session in a real browser (Debian's chromium driven by
 * playwright-core): log in through the form (POST /admin/login, HttpOnly session cookie), look a key up,
 * disable it — the confirmation is asked first; dismissed, nothing changes — and the key's next paid call is
 * refused with 401 `key_disabled`, its balance untouched; enabled again, it is served. "Refund and delete"
 * hands out a token of the balance that redeems at the mint, and the key is then unknown (401
 * `invalid_api_key`); when the delete fails after the pay-out, the view says the token was handed out and the
 * key stays disabled, and deleting again pays nothing twice. "Log out" ends the session in the store and clears the cookie (the old cookie opens
 * nothing) and shows the login form; so does a session older than ADMIN_SESSION_HOURS.
 */
const PASSWORD = 'keys-browser-pw';
const SESSION_HOURS = 0.5;

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

let h: PaidGateway;
let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
/** How many of the next key deletes the store refuses (a store away at that step). */
let failDeletes = 0;

beforeAll(async () => {
  h = await startPaidGateway({
    store: 'sqlite',
    env: {
      ADMIN_PASSWORD: PASSWORD,
      ADMIN_SESSION_HOURS: String(SESSION_HOURS),
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '2',
    },
    money: {
      createLedger: ledgerOverriding((real) => ({
        deleteKey: refusedWhile(() => failDeletes > 0 && failDeletes-- > 0, real.deleteKey.bind(real)),
      })),
    },
  });
  ({ browser, close: closeBrowser } = await launchChromium('admin-browser-keys-'));
  // The gateway serves no favicon; chromium's own request for it is not the page's problem.
  await browser.route('**/favicon.ico', (route) => route.fulfill({ status: 204 }));
}, 120_000);

afterAll(async () => {
  await closeBrowser?.();
  await h?.close();
});

/** A fresh page logged in through the form (no session before): the page and its session cookie's value. */
async function logIn(): Promise<{ page: Page; errors: string[]; session: string }> {
  await browser.clearCookies();
  const { page, errors } = await openAdminConsole(browser, h.gateway.url, PASSWORD);
  const cookie = (await browser.cookies(`${h.gateway.url}/admin/`)).find((c) => c.name === 'admin_session');
  return { page, errors, session: cookie!.value };
}

/** The Keys view showing `keyId`. */
async function lookUp(page: Page, keyId: string): Promise<void> {
  await page.click('#nav-keys');
  await page.locator('#key-form').waitFor();
  await page.fill('#key-input', keyId);
  await page.click('#key-form button[type=submit]');
  await page.locator('#key-toggle').waitFor();
}

/** An admin API call with only this session cookie. */
const withSession = (session: string) =>
  call<Json>(h.gateway.url, 'GET', '/admin/api/settings', {
    headers: { cookie: `admin_session=${session}` },
  });

const chatWith = (key: string) =>
  call<Json>(h.gateway.url, 'POST', '/v1/chat/completions', {
    auth: key,
    body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] },
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
    // Logged in through the form: the session cookie is HttpOnly, the page's script sees no cookie.
    const { page, errors } = await openAdminConsole(browser, h.gateway.url, PASSWORD);
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
  it('"Refund and delete" asks first, hands out a token of the balance that redeems, and the key is then unknown', async () => {
    const { apiKey, keyId } = await h.fundKey(10);
    expect((await chatWith(apiKey)).status).toBe(200);
    const { page, errors } = await logIn();
    await lookUp(page, keyId);
    expect(await page.locator('#key-delete').textContent()).toBe('Refund and delete');
    // Dismissed: nothing changes.
    const asked = dismissNextDialog(page);
    await page.click('#key-delete');
    await expect.poll(() => page.locator('#key-action-result').textContent()).toBe(' Cancelled.');
    // 10 sats less one call of 2 sats.
    expect(asked[0]).toBe(
      `Pay the balance of ${keyId} (8,000 msats) out as a token and delete the key and its children?`,
    );
    expect((await chatWith(apiKey)).status).toBe(200);
    // Accepted: the rest (6 sats) comes back as a token shown in the view.
    page.once('dialog', (d) => void d.accept());
    await page.click('#key-delete');
    await expect
      .poll(() => page.locator('#key-action-result').textContent())
      .toMatch(/^ Deleted\. Refund token \(6 sats\): cashu[AB]\S+$/);
    expect(await page.locator('#key-action-result').getAttribute('class')).toBe('ok');
    const shown = (await page.locator('#key-action-result').textContent())!;
    const token = shown.slice(shown.indexOf('cashu'));
    expect(await h.redeem(token)).toBe(6);
    const gone = await chatWith(apiKey);
    expect(gone.status).toBe(401);
    expect(gone.body.error.code).toBe('invalid_api_key');
    const lookup = await call<Json>(h.gateway.url, 'POST', '/admin/api/keys/lookup', {
      headers: { cookie: `admin_password=${PASSWORD}` },
      body: { key_id: keyId },
    });
    expect(lookup.status).toBe(404);
    expect(errors).toEqual([]);
    await page.close();
    await h.auditOk();
  });

  it('a delete that fails after the pay-out: the view shows the token and that the key stays disabled; the retry pays nothing', async () => {
    const { apiKey, keyId } = await h.fundKey(5);
    const { page, errors } = await logIn();
    await lookUp(page, keyId);
    failDeletes = 1;
    page.once('dialog', (d) => void d.accept());
    await page.click('#key-delete');
    await expect
      .poll(() => page.locator('#key-action-result').textContent())
      .toMatch(
        /^ Not deleted: the key could not be deleted and stays disabled; try again\. Refund token \(5 sats\): cashu[AB]\S+$/,
      );
    expect(await page.locator('#key-action-result').getAttribute('class')).toBe('bad');
    const shown = (await page.locator('#key-action-result').textContent())!;
    expect(await h.redeem(shown.slice(shown.indexOf('cashu')))).toBe(5);
    const disabled = await chatWith(apiKey);
    expect(disabled.status).toBe(401);
    expect(disabled.body.error.code).toBe('key_disabled');
    expect(await h.available(apiKey)).toBe(0);
    // Again: the delete goes through and nothing more is paid.
    page.once('dialog', (d) => void d.accept());
    await page.click('#key-delete');
    await expect.poll(() => page.locator('#key-action-result').textContent()).toBe(' Deleted. No refund.');
    expect((await chatWith(apiKey)).body.error.code).toBe('invalid_api_key');
    expect(errors).toEqual([]);
    await page.close();
    await h.auditOk();
  });

  it('"Log out" ends the session: the cookie is cleared, the old cookie opens nothing, the login form is shown', async () => {
    const { page, errors, session } = await logIn();
    expect((await withSession(session)).status).toBe(200);
    await Promise.all([page.waitForEvent('load'), page.click('#logout')]);
    await page.locator('#login').waitFor();
    expect(await page.locator('#dashboard').count()).toBe(0);
    expect(
      (await browser.cookies(`${h.gateway.url}/admin/`)).filter((c) => c.name === 'admin_session'),
    ).toEqual([]);
    // Ended in the store, not only forgotten by the browser.
    const refused = await withSession(session);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('admin_auth_required');
    // Logging in again works.
    await submitAdminLogin(page, PASSWORD);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a session older than ADMIN_SESSION_HOURS is refused with 401 and the console goes back to the login form', async () => {
    const before = Date.now();
    const { page, session } = await logIn();
    const after = Date.now();
    const store = h.gateway.services.store!;
    if (store.kind !== 'sqlite') throw new Error('this suite runs on SQLite');
    const hash = createHash('sha256').update(session, 'utf8').digest('hex');
    const row = () =>
      store.db.prepare('SELECT expires_at FROM admin_sessions WHERE id_hash = ?').get(hash) as
        | { expires_at: number }
        | undefined;
    // The store keeps the session for exactly ADMIN_SESSION_HOURS from the login.
    const ttl = SESSION_HOURS * 3_600_000;
    expect(row()!.expires_at).toBeGreaterThanOrEqual(before + ttl);
    expect(row()!.expires_at).toBeLessThanOrEqual(after + ttl);
    expect((await withSession(session)).status).toBe(200);
    // ADMIN_SESSION_HOURS have passed for it: its stored expiry is now behind the clock.
    store.db.prepare('UPDATE admin_sessions SET expires_at = ? WHERE id_hash = ?').run(Date.now() - 1, hash);
    const refused = await withSession(session);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('admin_auth_required');
    // The console's next API call (a key look-up) answers 401: it shows the login form.
    await page.click('#nav-keys');
    await page.fill('#key-input', '0123456789abcdef');
    await Promise.all([page.waitForEvent('load'), page.click('#key-form button[type=submit]')]);
    await page.locator('#login').waitFor();
    expect(await page.locator('#dashboard').count()).toBe(0);
    await page.close();
  });
});
