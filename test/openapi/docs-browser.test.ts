import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOperations, serveDocs } from '../../core/openapi/index.js';
import { keepWithin, launchChromium } from '../support/chromium.js';

/**
 * The docs pages in a real browser (Debian's chromium driven by playwright-core): a tiny node:http server
 * answers with `serveDocs` only, and every request that would leave it is aborted and recorded, so the test
 * also proves the pages need no CDN.
 */

let server: Server;
let base: string;
let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
const leaked: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const r = serveDocs(req.url ?? '/');
    if (r === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(r.status, r.headers).end(r.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ({ browser, close: closeBrowser } = await launchChromium('docs-browser-', [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
  ]));
  await keepWithin(browser, base, leaked);
});

afterAll(async () => {
  await closeBrowser?.();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe('docs pages in chromium', () => {
  /** A new page at `path`, its page errors collected. */
  async function openAt(path: string) {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}${path}`);
    return { page, errors };
  }

  it('/docs renders every operation with Swagger UI', async () => {
    const { page, errors } = await openAt('/docs');
    const chat = page.locator('[data-path="/v1/chat/completions"]').first();
    await chat.waitFor({ state: 'visible', timeout: 30_000 });
    expect(await chat.textContent()).toContain('/v1/chat/completions');
    expect(await page.locator('.opblock-summary-path').count()).toBe(listOperations().length);
    await expect(page.getByText('Create a chat completion').first().isVisible()).resolves.toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('/redoc renders the operations with ReDoc', async () => {
    const { page, errors } = await openAt('/redoc');
    const path = page.getByText('/v1/chat/completions').first();
    await path.waitFor({ state: 'visible', timeout: 30_000 });
    await expect(page.getByRole('heading', { name: 'Create a chat completion' }).isVisible()).resolves.toBe(
      true,
    );
    await expect(
      page.getByRole('heading', { name: 'Withdraw part of the balance as an eCash token' }).isVisible(),
    ).resolves.toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('loaded nothing from outside the gateway', () => {
    expect(leaked).toEqual([]);
  });
});
