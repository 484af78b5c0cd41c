/**
 * `npx tsx scripts/console-screenshot.ts [--out docs/console.png]`: regenerates the README's screenshot of
 * the operator console from real data. Starts a dev mint, the mock upstream and a gateway on SQLite in a temp
 * dir (all loopback, the test harness), funds keys with real eCash, makes paid calls (a few refused ones for
 * the error line), runs a solvency check, then opens the console in Debian's chromium (playwright-core) and
 * saves the charts view. Needs `/usr/bin/chromium` (`apt-get install chromium`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { startPaidGateway } from '../test/support/paid-gateway.js';

const { values } = parseArgs({ options: { out: { type: 'string', default: 'docs/console.png' } } });
const PASSWORD = 'screenshot-admin';

const h = await startPaidGateway({
  store: 'sqlite',
  env: {
    ADMIN_PASSWORD: PASSWORD,
    NODE_NAME: 'Demo node',
    FIXED_PRICING: 'false',
    FIXED_COST_PER_REQUEST: '1',
    FIXED_PER_1K_INPUT_TOKENS: '2',
    FIXED_PER_1K_OUTPUT_TOKENS: '4',
  },
});
const userDataDir = await mkdtemp(join(tmpdir(), 'console-shot-'));
try {
  const keys = await Promise.all([h.fundKey(200), h.fundKey(120), h.fundKey(80)]);
  for (let i = 0; i < 36; i++) {
    const { apiKey } = keys[i % keys.length]!;
    await h.openai(apiKey).chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: `question ${i}: ${'why '.repeat(i * 3)}` }],
    });
  }
  for (let i = 0; i < 3; i++) {
    await fetch(`${h.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-not-a-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }),
    });
  }
  await fetch(`${h.gateway.url}/admin/api/actions/solvency-check`, {
    method: 'POST',
    headers: { cookie: `admin_password=${PASSWORD}`, 'content-type': 'application/json' },
    body: JSON.stringify({ confirm: true }),
  });

  const browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    await browser.addCookies([
      { name: 'admin_password', value: PASSWORD, url: `${h.gateway.url}/admin/`, sameSite: 'Strict' },
    ]);
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1100, height: 760 });
    await page.goto(`${h.gateway.url}/admin/#charts`);
    await page.locator('#chart-calls canvas').waitFor();
    await page.screenshot({ path: values.out!, fullPage: false });
    console.log(`wrote ${values.out}`);
  } finally {
    await browser.close();
  }
} finally {
  await h.close();
  await rm(userDataDir, { recursive: true, force: true });
}
