/**
 * `npx tsx scripts/console-screenshot.ts [--out docs/console.png] [--solvency-out docs/console-solvency.png]`:
 * regenerates the README's screenshots of the operator console: a dev mint, the mock upstream and a gateway on
 * SQLite in a temp dir (all loopback, the test harness).
 *
 * 1. writes two days of history, before the gateway starts, into the store it then opens, through the
 *    console's own store API (`AdminStats.addCounts` / `addSample`, what the gateway's counting and sampling
 *    call): calls, errors and charged msats per minute following a day/night curve, and a solvency sample every
 *    5 minutes — deposits, spending and operator payouts ending near the real figures of step 2. A fixed seed:
 *    every run draws the same shapes (only the dates move with the clock);
 * 2. starts the gateway and makes real paid calls with real eCash (and a few refused ones), and runs a real solvency check;
 * 3. opens the console in Debian's chromium (playwright-core) and saves the charts view (per hour, full page)
 *    and the solvency view.
 *
 * Needs `/usr/bin/chromium` (`apt-get install chromium`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { createLogger } from '../core/log.js';
import { AdminStats } from '../core/stats/admin-stats.js';
import { SPAN_MS } from '../core/stats/stats-store.js';
import { openStore } from '../core/store/connection.js';
import { startPaidGateway } from '../test/support/paid-gateway.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'docs/console.png' },
    'solvency-out': { type: 'string', default: 'docs/console-solvency.png' },
  },
});
const PASSWORD = 'screenshot-admin';
const HISTORY_MINUTES = 48 * 60;
const SAMPLE_EVERY = 5;

/** mulberry32: a small seeded PRNG, so every run draws the same history. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Calls, errors and charged msats of each history minute (oldest first): busy days, quiet nights. */
function drawMinutes(random: () => number) {
  return Array.from({ length: HISTORY_MINUTES }, (_, i) => {
    const hourOfDay = ((i / 60) % 24) + 0;
    const busy = 0.5 + 0.5 * Math.sin(((hourOfDay - 8) / 24) * 2 * Math.PI);
    const calls = Math.max(0, Math.round(busy * 7 + (random() - 0.5) * 4));
    const errors = calls > 0 && random() < 0.06 ? 1 + Math.floor(random() * 2) : 0;
    let chargedMsat = 0;
    for (let c = 0; c < calls - errors; c++) chargedMsat += 300 + Math.floor(random() * 900);
    return { calls, errors, chargedMsat };
  });
}

// Planned end of the history: what the real deposits below bring (3 keys: 2,000 + 1,500 + 1,000 sats) and
// roughly what the real calls charge; the real solvency check then adds the node's exact figures.
const DEPOSITS_MSAT = [2_000, 1_500, 1_000].map((sats) => sats * 1000);
const END_PROOFS = DEPOSITS_MSAT.reduce((s, d) => s + d, 0);
const END_OWED = END_PROOFS - 40_000;

// 1. The history, written before the gateway starts into the store it will open (so its first periodic
//    solvency sample finds a recent one and is skipped), through the console's own store API.
const dataDir = await mkdtemp(join(tmpdir(), 'console-shot-data-'));
const userDataDir = await mkdtemp(join(tmpdir(), 'console-shot-'));
{
  const store = openStore({ dataDir });
  const history = new AdminStats(store, createLogger('silent'));
  const random = seeded(17);
  const minutes = drawMinutes(random);
  const endMinute = Math.floor(Date.now() / SPAN_MS.minute) * SPAN_MS.minute - SPAN_MS.minute;
  const firstMinute = endMinute - (HISTORY_MINUTES - 1) * SPAN_MS.minute;
  minutes.forEach((c, i) => {
    history.addCounts(firstMinute + i * SPAN_MS.minute, c);
  });
  // Solvency: users deposit in lumps and spend what the minutes charged; the operator pays out most of the
  // margin as it grows. Walked forward from a start chosen so the walk ends at the planned figures.
  const charged = minutes.reduce((s, c) => s + c.chargedMsat, 0);
  const deposits = minutes.map(() => (random() < 1 / 240 ? 400_000 + Math.floor(random() * 600_000) : 0));
  const deposited = deposits.reduce((s, d) => s + d, 0);
  const paidOut = Math.max(0, charged - (END_PROOFS - END_OWED));
  let owed = END_OWED - deposited + charged;
  let proofs = END_PROOFS - deposited + paidOut;
  for (let i = 0; i < HISTORY_MINUTES; i++) {
    owed += deposits[i]! - minutes[i]!.chargedMsat;
    proofs += deposits[i]! - (minutes[i]!.chargedMsat * paidOut) / Math.max(1, charged);
    if (i % SAMPLE_EVERY === 0 || i === HISTORY_MINUTES - 1) {
      await history.addSample({
        t: firstMinute + i * SPAN_MS.minute,
        proofsMsat: Math.round(proofs),
        userBalancesMsat: owed,
      });
    }
  }
  await history.close();
  await store.close();
}

const h = await startPaidGateway({
  store: 'sqlite',
  env: {
    DATA_DIR: dataDir,
    ADMIN_PASSWORD: PASSWORD,
    NODE_NAME: 'Demo node',
    FIXED_PRICING: 'false',
    FIXED_COST_PER_REQUEST: '1',
    FIXED_PER_1K_INPUT_TOKENS: '2',
    FIXED_PER_1K_OUTPUT_TOKENS: '4',
  },
});
try {
  // 2. Real money, real calls (and refused ones), a real solvency check.
  const keys = await Promise.all(DEPOSITS_MSAT.map((m) => h.fundKey(m / 1000)));
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

  // 3. The screenshots.
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
    await page.setViewportSize({ width: 1100, height: 800 });
    await page.goto(`${h.gateway.url}/admin/#charts`);
    await page.locator('#chart-calls canvas').waitFor();
    await page.selectOption('#granularity', 'hour');
    await page.locator('#chart-calls').getByText('Calls and errors per hour').waitFor();
    await page.screenshot({ path: values.out!, fullPage: true });
    console.log(`wrote ${values.out}`);
    await page.click('#nav-solvency');
    await page.locator('#chart-solvency canvas').waitFor();
    await page.screenshot({ path: values['solvency-out']!, fullPage: true });
    console.log(`wrote ${values['solvency-out']}`);
  } finally {
    await browser.close();
  }
} finally {
  await h.close();
  await rm(userDataDir, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
}
