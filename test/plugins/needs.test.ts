import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/log.js';
import type { Plugin } from '../../core/plugin.js';
import { startGateway } from '../../core/server.js';
import type { Services } from '../../core/service-types.js';
import { buildPlugins, PLUGINS } from '../../plugins/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';

/**
 * Declared needs (plugins/index.ts `grant`): every plugin — a built-in stage or a module from PIPELINE — is
 * handed the services it declared and no other (the object's keys are exactly those; the values are the
 * gateway's own services), and a declaration the gateway cannot meet stops the start with a message naming the
 * plugin and the service.
 */

/** Builds `name`'s built-in factory through the registry's path and returns what it was handed. */
async function handedTo(name: string, services: Services): Promise<Readonly<Record<string, unknown>>> {
  const stage = PLUGINS[name];
  if (stage === undefined) throw new Error(`no built-in stage ${name}`);
  let seen: Readonly<Record<string, unknown>> | undefined;
  const [plugin] = buildPlugins(
    [
      {
        factory: (options, granted) => {
          seen = granted;
          return stage.factory(options, granted);
        },
        needs: stage.needs,
        source: name,
      },
    ],
    services,
  );
  await (plugin as Plugin).close?.(0);
  if (seen === undefined) throw new Error(`${name}'s factory was not called`);
  return seen;
}

describe.each<PaidStore>(['sqlite', 'redis'])(
  'each built-in stage is handed what it declared alone (%s)',
  (store) => {
    // A paid gateway with a wallet (the dev mint) and a store: every optional service but `nodes` is built.
    const h = paidGatewayPerSuite({ store });

    // What each stage declared (plugins/<stage>.ts `…Needs`), less `nodes`, which this gateway has not built.
    const expected: Record<string, string[]> = {
      auth: ['config', 'doors', 'ledger', 'limiter', 'log', 'wallet'],
      'rate-limit': [],
      reserve: ['catalog', 'config', 'ledger', 'limiter', 'log', 'objects', 'pricing', 'providers', 'wallet'],
      relay: ['providers'],
      owner: ['objects'],
      meter: [],
      settle: [
        'audit',
        'batchJobs',
        'btc',
        'catalog',
        'config',
        'ledger',
        'log',
        'network',
        'objects',
        'pricing',
        'providers',
      ],
      'change-token': ['ledger', 'log', 'wallet'],
    };

    it('the keys are exactly the declared services the gateway built, the values its own', async () => {
      const services = h.gateway.services;
      expect(services.nodes).toBeUndefined();
      expect(Object.keys(expected).sort()).toEqual(Object.keys(PLUGINS).sort());
      for (const [name, keys] of Object.entries(expected)) {
        const seen = await handedTo(name, services);
        expect(Object.keys(seen).sort(), name).toEqual(keys);
        for (const k of keys) expect(seen[k], `${name}.${k}`).toBe(services[k as keyof Services]);
        expect(Object.isFrozen(seen), name).toBe(true);
      }
    });

    it('a service a stage did not declare cannot be read from what it was handed', async () => {
      const relay = await handedTo('relay', h.gateway.services);
      expect(() => relay.ledger).toThrow(
        /plugin "relay" reads the service "ledger", which it did not declare/,
      );
      const meter = await handedTo('meter', h.gateway.services);
      expect(() => meter.config).toThrow(
        /plugin "meter" reads the service "config", which it did not declare/,
      );
      // An optional service the gateway has not built is absent, not refused.
      const reserve = await handedTo('reserve', h.gateway.services);
      expect('nodes' in reserve).toBe(false);
      expect(reserve.nodes).toBeUndefined();
    });

    it('the default pipeline, built from the declarations, charges a paid call', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(100);
      const res = await h.openai(apiKey).chat.completions.create({
        model: 'mock-gpt',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(res.choices[0]?.message.content).toBeTruthy();
      expect(await h.available(apiKey)).toBeLessThan(balanceMsat);
    });
  },
);

describe('a declaration the gateway cannot meet stops the start', () => {
  let dir: string;
  let gw: TestGateway;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-needs-'));
    // A relay-only gateway without CASHU_MINTS: no wallet, no doors.
    gw = await startTestGateway({ engine: 'node', pipeline: ['relay'] });
  });
  afterAll(async () => {
    await gw?.close(1000);
    rmSync(dir, { recursive: true, force: true });
  });

  function pluginFile(name: string, source: string): string {
    const file = join(dir, name);
    writeFileSync(file, source);
    return file;
  }

  const start = (env: Record<string, string>) =>
    startGateway({
      config: loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: dir, ...env }),
      log: createLogger('silent'),
    });

  async function refusal(pipeline: string): Promise<Error> {
    let err: unknown;
    try {
      const g = await start({ PIPELINE: pipeline });
      await g.close();
    } catch (e) {
      err = e;
    }
    expect(err, pipeline).toBeInstanceOf(ConfigError);
    return err as Error;
  }

  it('a built-in stage whose required service is missing names the stage and the service', () => {
    const services = { ...gw.services, ledger: undefined };
    expect(() => buildPlugins(['reserve'], services)).toThrow(ConfigError);
    expect(() => buildPlugins(['reserve'], services)).toThrow(
      /PIPELINE: plugin "reserve" needs the service "ledger", which this gateway has not built \(built: config, log,/,
    );
    expect(() => buildPlugins(['change-token'], services)).toThrow(
      /plugin "change-token" needs the service "ledger"/,
    );
  });

  it('a module plugin: an unknown service, a malformed declaration, a missing service, an undeclared read', async () => {
    const unknown = pluginFile(
      'unknown.js',
      `export const needs = { required: ['providers', 'ledgr'] };
export default () => ({ name: 'unknown' });
`,
    );
    expect((await refusal(`${unknown},relay`)).message).toMatch(
      /PIPELINE: plugin ".*unknown\.js" needs an unknown service "ledgr" \(services: config, log, upstream, providers,/,
    );
    const asList = pluginFile(
      'as-list.js',
      `export const needs = ['providers'];\nexport default () => ({ name: 'l' });\n`,
    );
    expect((await refusal(`${asList},relay`)).message).toMatch(
      /plugin ".*as-list\.js" exports needs that are not \{"required": \["<service>", …\]/,
    );
    const typo = pluginFile(
      'typo.js',
      `export const needs = { requires: ['providers'] };\nexport default () => ({ name: 't' });\n`,
    );
    expect((await refusal(`${typo},relay`)).message).toMatch(
      /plugin ".*typo\.js" declares needs with an unknown field "requires"/,
    );
    const wallet = pluginFile(
      'wallet.js',
      `export const needs = { required: ['providers', 'wallet'] };\nexport default () => ({ name: 'w' });\n`,
    );
    expect((await refusal(`${wallet},relay`)).message).toMatch(
      /plugin ".*wallet\.js" needs the service "wallet", which this gateway has not built/,
    );
    // No `needs` export: handed nothing; reading a service at start says which and that it was not declared.
    const undeclared = pluginFile(
      'undeclared.js',
      `export default (options, services) => ({ name: 'u', list: services.providers.list });\n`,
    );
    expect((await refusal(`${undeclared},relay`)).message).toMatch(
      /plugin ".*undeclared\.js" refused to start: plugin ".*undeclared\.js" reads the service "providers", which it did not declare/,
    );
  });

  it('a module plugin is handed what it declared: required, and optional ones when built', async () => {
    const echo = pluginFile(
      'echo.js',
      `export const needs = { required: ['providers', 'catalog'], optional: ['wallet', 'limiter'] };
export default (options, services) => ({
  name: 'echo',
  onRequest(ctx) {
    return ctx.respond(200, { keys: Object.keys(services).sort(), sameProviders: services.providers === globalThis.__needsProviders });
  },
});
`,
    );
    const g = await start({ PIPELINE: echo });
    try {
      (globalThis as { __needsProviders?: unknown }).__needsProviders = g.services.providers;
      const res = await fetch(`${g.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      // No wallet on this gateway (no CASHU_MINTS): the optional `wallet` is left out, `limiter` is there.
      expect(await res.json()).toEqual({ keys: ['catalog', 'limiter', 'providers'], sameProviders: true });
    } finally {
      delete (globalThis as { __needsProviders?: unknown }).__needsProviders;
      await g.close();
    }
  });
});
