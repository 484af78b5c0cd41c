import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { ConfigError, loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/log.js';
import { startGateway } from '../../core/server.js';
import { resolvePipeline } from '../../plugins/index.js';
import {
  type PaidGateway,
  type PaidStore,
  paidGatewayPerSuite,
  startPaidGateway,
} from '../support/paid-gateway.js';

/**
 * The plugin kit: PIPELINE entries naming module files, their options from PIPELINE_CONFIG,
 * the two tested examples in examples/plugins/ — a pricing policy that changes what a call is charged (both
 * stores) and a routing policy that pins a call to a provider — and the start refusing a plugin that cannot load
 * or refuses its options, with a message naming it.
 */

const SURCHARGE = resolve('examples/plugins/model-surcharge.js');
const PIN = resolve('examples/plugins/pin-provider.js');
const ROUND_ROBIN = resolve('examples/plugins/round-robin.js');
const messages = [{ role: 'user' as const, content: 'hi' }];
const cost = (res: unknown) =>
  (res as Record<string, { msats: number; provider?: string } | undefined>)['x-node-cost'];
const DEFAULT = ['auth', 'rate-limit', 'reserve', 'relay', 'meter', 'settle', 'change-token'];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-plugin-kit-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Providers alpha, beta, gamma… at `urls`, in that order of priority (1, 2, 3…). */
const ranked = (urls: string[]) =>
  urls.map((url, i) => ({ name: ['alpha', 'beta', 'gamma'][i]!, base_url: url, priority: i + 1 }));

function writeJson(name: string, doc: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

describe.each<PaidStore>(['sqlite', 'redis'])('a pricing policy from a file path (%s)', (store) => {
  // A function: the files it names are written once the file's temp dir exists.
  const h = paidGatewayPerSuite(() => ({
    store,
    env: {
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '4',
      PIPELINE: ['auth', 'rate-limit', SURCHARGE, ...DEFAULT.slice(2)].join(','),
      PIPELINE_CONFIG: writeJson(`surcharge-${store}.json`, {
        [SURCHARGE]: { percent: { 'mock-gpt': 50, 'mock-mini': -100 }, fee_msat: 7 },
      }),
    },
  }));

  it('charges 4 sats × 1.5 + 7 msat for mock-gpt and only the 7 msat fee for mock-mini (−100 %)', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const res = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(cost(res)?.msats).toBe(6_007);
    expect(await h.available(apiKey)).toBe(balanceMsat - 6_007);
    const free = await h.openai(apiKey).chat.completions.create({ model: 'mock-mini', messages });
    expect(cost(free)?.msats).toBe(7);
    expect(await h.available(apiKey)).toBe(balanceMsat - 6_014);
  });

  it('the adjusted price is what admission checks: a key holding 5 sats is refused the 6,007 msat call', async () => {
    const { apiKey } = await h.fundKey(5);
    const r = await h.post(
      '/chat/completions',
      { model: 'mock-gpt', messages },
      { authorization: `Bearer ${apiKey}` },
    );
    expect(r.status).toBe(402);
    expect(await h.available(apiKey)).toBe(5_000);
  });
});

describe('a routing policy from a file path', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  beforeAll(async () => {
    a = await startMockUpstream();
    b = await startMockUpstream();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });
  const h = paidGatewayPerSuite(
    () => ({
      store: 'sqlite',
      env: {
        PROVIDERS_PATH: writeJson('providers.json', {
          providers: ranked([a.url, b.url]),
        }),
        PIPELINE: [...DEFAULT.slice(0, 3), PIN, ...DEFAULT.slice(3)].join(','),
        PIPELINE_CONFIG: writeJson('pin.json', { [PIN]: { allow: ['beta'], strict: true } }),
      },
    }),
    { auditEachTest: false },
  );

  it('x-provider pins the call to an allowed provider; strict means no failover; others route as usual', async () => {
    const { apiKey } = await h.fundKey(100);
    const pinned = await h
      .openai(apiKey, { 'x-provider': 'beta' })
      .chat.completions.create({ model: 'mock-gpt', messages });
    expect(cost(pinned)?.provider).toBe('beta');
    const usual = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(cost(usual)?.provider).toBe('alpha');
    const notAllowed = await h
      .openai(apiKey, { 'x-provider': 'alpha' })
      .chat.completions.create({ model: 'mock-gpt', messages });
    expect(cost(notAllowed)?.provider).toBe('alpha');
    // Strict: beta failing is not failed over to alpha.
    b.setBehaviour({ error: { status: 500, body: '{"error":{"message":"b down"}}' } });
    const before = a.stats.requests;
    const r = await fetch(`${h.baseURL}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'x-provider': 'beta',
      },
      body: JSON.stringify({ model: 'mock-gpt', messages }),
    });
    expect(r.status).toBe(502);
    expect(a.stats.requests).toBe(before);
    await h.auditOk();
  });
});

describe('a named routing policy registered by a plugin', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let c: MockUpstream;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([startMockUpstream(), startMockUpstream(), startMockUpstream()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), c?.close()]);
  });
  const h = paidGatewayPerSuite(
    () => ({
      store: 'sqlite',
      env: {
        PROVIDERS_PATH: writeJson('rr-providers.json', {
          providers: ranked([a.url, b.url, c.url]),
          // Only mock-gpt is routed by the plugin's policy; mock-mini keeps ROUTING_POLICY (priority).
          routing: { 'mock-gpt': 'turns' },
        }),
        FIXED_PRICING: 'true',
        FIXED_COST_PER_REQUEST: '1',
        PIPELINE: [...DEFAULT.slice(0, 3), ROUND_ROBIN, ...DEFAULT.slice(3)].join(','),
        PIPELINE_CONFIG: writeJson('rr.json', { [ROUND_ROBIN]: { name: 'turns' } }),
      },
    }),
    { auditEachTest: false },
  );

  it('the providers file names it for a model: calls go to each provider in turn; other models keep priority', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const served: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
      served.push(cost(res)?.provider ?? '');
    }
    expect(served).toEqual(['alpha', 'beta', 'gamma', 'alpha', 'beta', 'gamma']);
    const mini = await h.openai(apiKey).chat.completions.create({ model: 'mock-mini', messages });
    expect(cost(mini)?.provider).toBe('alpha');
    // Failover follows the policy's order: on gamma's turn gamma fails and alpha (next after it) serves.
    c.setBehaviour({ error: { status: 500, body: '{"error":{"message":"down"}}' } });
    const gammaAsked = c.stats.requests;
    const more: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
      more.push(cost(res)?.provider ?? '');
    }
    expect(more).toEqual(['alpha', 'beta', 'alpha']);
    expect(c.stats.requests).toBe(gammaAsked + 1);
    expect(await h.available(apiKey)).toBe(balanceMsat - 10 * 1000);
    await h.auditOk();
  });

  it('a start naming a policy nobody registered stops with a message naming it', async () => {
    let err: unknown;
    try {
      const g = await startGateway({
        config: loadConfig({
          HOST: '127.0.0.1',
          PORT: '0',
          LOG_LEVEL: 'silent',
          DATA_DIR: dir,
          ROUTING_POLICY: 'turns',
        }),
        log: createLogger('silent'),
      });
      await g.close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      /ROUTING_POLICY names an unknown routing policy "turns" \(known: priority, weighted, cheapest, latency\)/,
    );
  });
});

describe('plugins by a path relative to the working directory and by an installed package name', () => {
  let h: PaidGateway;
  let cwd: string;
  beforeAll(async () => {
    // An operator's directory: a plugin file of their own, and a plugin package installed in node_modules.
    cwd = mkdtempSync(join(tmpdir(), 'gw-plugin-cwd-'));
    mkdirSync(join(cwd, 'policies'));
    writeFileSync(
      join(cwd, 'policies', 'flat-fee.js'),
      `export default function flatFee(options = {}) {
  return {
    name: 'flat-fee',
    onRequest(ctx) {
      if (ctx.model === 'mock-gpt') ctx.adjustPrice({ addMsat: options.fee_msat });
    },
  };
}
`,
    );
    const pkg = join(cwd, 'node_modules', '@acme', 'gateway-plugin-x');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: '@acme/gateway-plugin-x', type: 'module', exports: './index.js' }),
    );
    writeFileSync(
      join(pkg, 'index.js'),
      `export const plugin = () => ({
  name: 'acme-double',
  onRequest(ctx) {
    if (ctx.model === 'mock-mini') ctx.adjustPrice({ multiplierPpm: 2_000_000 });
  },
});
`,
    );
    writeFileSync(join(cwd, 'pipeline.json'), JSON.stringify({ './policies/flat-fee.js': { fee_msat: 11 } }));
    const entries = await resolvePipeline(
      ['auth', 'rate-limit', './policies/flat-fee.js', '@acme/gateway-plugin-x', ...DEFAULT.slice(2)],
      { cwd, configPath: join(cwd, 'pipeline.json') },
    );
    h = await startPaidGateway({
      store: 'sqlite',
      pipeline: entries,
      env: { FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '4' },
    });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('both load and change what a call is charged: mock-gpt 4,000 + 11 msat, mock-mini 2 × 4,000 msat', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(100);
    const gpt = await h.openai(apiKey).chat.completions.create({ model: 'mock-gpt', messages });
    expect(cost(gpt)?.msats).toBe(4_011);
    const mini = await h.openai(apiKey).chat.completions.create({ model: 'mock-mini', messages });
    expect(cost(mini)?.msats).toBe(8_000);
    expect(await h.available(apiKey)).toBe(balanceMsat - 12_011);
    await h.auditOk();
  });

  it('a relative path resolves from the process working directory by default', async () => {
    const [entry] = await resolvePipeline(['./examples/plugins/model-surcharge.js']);
    expect(entry).toMatchObject({ source: './examples/plugins/model-surcharge.js' });
    expect(typeof (entry as { factory?: unknown }).factory).toBe('function');
    // The same relative path from another working directory is not found there.
    await expect(resolvePipeline(['./examples/plugins/model-surcharge.js'], { cwd })).rejects.toThrow(
      /plugin "\.\/examples\/plugins\/model-surcharge\.js" could not be loaded \(not found\)/,
    );
  });
});

describe('loading refusals name the plugin', () => {
  const start = (env: Record<string, string>) =>
    startGateway({
      config: loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: dir, ...env }),
      log: createLogger('silent'),
    });

  it('a missing file, a module with no factory, a factory refusing its options, a config naming no entry', async () => {
    const noFactory = join(dir, 'no-factory.js');
    writeFileSync(noFactory, 'export const x = 1;\n');
    const throwsOnImport = join(dir, 'throws-on-import.js');
    writeFileSync(
      throwsOnImport,
      'throw new Error("no licence file");\nexport default () => ({ name: "x" });\n',
    );
    const throwing = join(dir, 'throwing.js');
    writeFileSync(throwing, 'export default function () { throw new Error("needs a licence key"); }\n');
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { PIPELINE: `auth,${join(dir, 'missing.js')},relay` },
        /plugin ".*missing\.js" could not be loaded \(not found\)/,
      ],
      [{ PIPELINE: `auth,${noFactory},relay` }, /plugin ".*no-factory\.js" exports no plugin factory/],
      [
        { PIPELINE: `auth,${throwsOnImport},relay` },
        /plugin ".*throws-on-import\.js" could not be loaded \(no licence file\)/,
      ],
      [
        { PIPELINE: `auth,${throwing},relay` },
        /plugin ".*throwing\.js" refused to start: needs a licence key/,
      ],
      [
        {
          PIPELINE: `auth,${SURCHARGE},relay`,
          PIPELINE_CONFIG: writeJson('bad.json', { [SURCHARGE]: { colour: 1 } }),
        },
        /model-surcharge: unknown option "colour"/,
      ],
      [
        { PIPELINE: 'auth,relay', PIPELINE_CONFIG: writeJson('stray.json', { nope: {} }) },
        /PIPELINE_CONFIG names "nope", which is not in PIPELINE/,
      ],
      [
        { PIPELINE: 'auth,no-such-plugin-pkg,relay' },
        /plugin "no-such-plugin-pkg" could not be loaded \(not found\); built-in plugins: auth/,
      ],
    ];
    for (const [env, re] of cases) {
      let err: unknown;
      try {
        const g = await start(env);
        await g.close();
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect((err as Error).message, JSON.stringify(env)).toMatch(re);
    }
  });

  it('built-in stages take options from PIPELINE_CONFIG too (relay refuses unknown ones)', async () => {
    const file = writeJson('relay.json', { relay: { nope: true } });
    await expect(resolvePipeline(['relay'], { configPath: file })).resolves.toEqual([
      { plugin: 'relay', options: { nope: true } },
    ]);
  });
});
