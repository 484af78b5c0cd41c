import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`), driven by playwright-core. */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

/**
 * Chromium on a throw-away profile (`dir`, a temp dir whose name starts with `name`), with the command-line
 * switches `args`; `close` closes it and removes the profile.
 */
export async function launchChromium(
  name: string,
  args = ARGS,
): Promise<{ browser: BrowserContext; dir: string; close(): Promise<void> }> {
  const userDataDir = await mkdtemp(join(tmpdir(), name));
  const browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args,
  });
  return {
    browser,
    dir: userDataDir,
    async close() {
      await browser.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Every request of `browser` that would leave `origin` is aborted and recorded in `leaked`. */
export async function keepWithin(browser: BrowserContext, origin: string, leaked: string[]): Promise<void> {
  await browser.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`)) return route.continue();
    leaked.push(url);
    return route.abort();
  });
}

/** Page errors, console errors and CSP violations of `page`, collected as they happen. */
export function pageProblems(page: Page): string[] {
  const out: string[] = [];
  page.on('pageerror', (e) => out.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text()))
      out.push(`${m.type()}: ${m.text()}`);
  });
  return out;
}

/** The next dialog `page` opens (a confirmation) is dismissed; its message lands in the answer. */
export function dismissNextDialog(page: Page): string[] {
  const messages: string[] = [];
  page.once('dialog', (d) => {
    messages.push(d.message());
    void d.dismiss();
  });
  return messages;
}

/** Logs in through the console's form on `page` (already at /admin/) and waits for the dashboard. */
export async function submitAdminLogin(page: Page, password: string): Promise<void> {
  await page.fill('#password', password);
  await Promise.all([page.waitForEvent('load'), page.click('#login button[type=submit]')]);
  await page.locator('#dashboard').waitFor();
}

/** A new page of `browser` at `origin`'s console, logged in through the form; its problems collected. */
export async function openAdminConsole(
  browser: BrowserContext,
  origin: string,
  password: string,
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors = pageProblems(page);
  await page.goto(`${origin}/admin/`);
  await submitAdminLogin(page, password);
  return { page, errors };
}
