import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { precompiledOperations } from '../../core/openapi/validators.js';
import { type DevMint, startDevMint } from '../../scripts/mint/index.js';
import { freePort } from '../support/global-setup.js';
import { until } from '../support/until.js';

/**
 * What `npm start` runs: the tsc build in dist/ started with plain `node`, no tsx, no test helpers. Guards
 * that the build carries everything it loads at run time (Lua scripts, the OpenAPI document, docs assets)
 * and that an operator's first paid call works from it on both stores.
 */
const root = join(import.meta.dirname, '..', '..');

let mint: DevMint;
let upstream: MockUpstream;

beforeAll(async () => {
  // As `npm start` does: build only when the sources changed (the full test command has built already).
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-changed'], { cwd: root, stdio: 'pipe' });
  mint = await startDevMint({ port: 0 });
  upstream = await startMockUpstream({ port: 0 });
}, 120_000);

afterAll(async () => {
  await mint?.close();
  await upstream?.close();
});

async function startBuilt(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/core/main.js'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const answers = async () => {
    if (child.exitCode !== null) throw new Error(`gateway exited: ${stderr}`);
    return fetch(`${url}/v1/info`).then(
      (r) => r.ok,
      () => false,
    );
  };
  await until('the gateway answers', answers, 10_000, 50).catch((err: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${err.message}: ${stderr}`);
  });
  return { url, child };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return await exited;
}

describe.each(['sqlite', 'redis'] as const)('the built gateway (npm start) on %s', (store) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-start-'));
  const prefix = `start${randomBytes(5).toString('hex')}`;

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('carries the precompiled request validators (npm run gen): none is compiled when the build starts', () => {
    const built = createRequire(import.meta.url)(
      join(root, 'dist', 'core', 'openapi', 'generated', 'validators.cjs'),
    );
    expect(Object.keys(built).sort()).toEqual(precompiledOperations().sort());
    expect(typeof built['POST /v1/chat/completions']).toBe('function');
  });

  it('serves /v1/info, /openapi.json and /docs, creates a key from a token and charges a paid call', async () => {
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      CASHU_MINTS: mint.url,
      UPSTREAM_BASE_URL: upstream.url,
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '2',
    };
    if (store === 'redis')
      Object.assign(env, { REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: prefix });
    const { url, child } = await startBuilt(env);
    try {
      const info = await (await fetch(`${url}/v1/info`)).json();
      expect(info).toMatchObject({ version: expect.any(String), mints: [mint.url] });
      expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
      expect((await fetch(`${url}/docs`)).status).toBe(200);

      const token = await mint.mintTokens(50);
      const created = await fetch(`${url}/v1/wallet/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ cashu_token: token }),
      });
      expect(created.status).toBe(201);
      const { api_key: apiKey, balance } = (await created.json()) as { api_key: string; balance: number };
      expect(balance).toBe(50_000);

      const openai = new OpenAI({ apiKey, baseURL: `${url}/v1`, maxRetries: 0 });
      const done = await openai.chat.completions.create({
        model: 'mock-gpt',
        messages: [{ role: 'user', content: 'hello' }],
      });
      expect(done.choices[0]?.message.content).toBeTruthy();
      const after = (await (
        await fetch(`${url}/v1/wallet/balance`, { headers: { authorization: `Bearer ${apiKey}` } })
      ).json()) as { balance: number };
      expect(after.balance).toBe(48_000);
    } finally {
      expect(await stop(child)).toBe(0);
      if (store === 'redis') {
        const { Redis } = await import('ioredis');
        const r = new Redis(process.env.TEST_REDIS_URL!);
        const keys = await r.keys(`${prefix}:*`);
        if (keys.length > 0) await r.del(...keys);
        r.disconnect();
      }
    }
  });
});
