import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/config.js';
import { Breaker } from '../../core/providers/provider.js';
import { Providers, parseProvidersFile, readProvidersFile } from '../../core/providers/providers.js';
import type { ProviderSpec } from '../../core/providers/types.js';
import { withTempDir } from '../support/temp-dir.js';

/** Routing policies, the breaker and the providers file's validation (no network: clients are never used). */

const DEFAULTS = { timeoutMs: 1000, maxConnections: 4 };
const spec = (name: string, o: Partial<ProviderSpec> = {}): ProviderSpec => ({
  name,
  baseUrl: `http://127.0.0.1:9/${name}`,
  models: '*',
  priority: 1,
  weight: 1,
  timeoutMs: 1000,
  maxConnections: 1,
  headers: {},
  pricing: {},
  ...o,
});
const BREAKER = { failures: 2, cooldownMs: 1000 };
const providers = (list: ProviderSpec[], policy: string, random?: () => number) =>
  new Providers(
    { providers: list, routing: {} },
    { policy, maxAttempts: 2, breaker: BREAKER, ...(random ? { random } : {}) },
  );

/** A small deterministic generator (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('routing policies', () => {
  it('priority: lower first, ties in file order; only providers serving the model', async () => {
    const p = providers(
      [spec('c', { priority: 3 }), spec('a', { priority: 1, models: ['m1'] }), spec('b', { priority: 2 })],
      'priority',
    );
    expect(p.order('m1').map((x) => x.name)).toEqual(['a', 'b', 'c']);
    expect(p.order('m2').map((x) => x.name)).toEqual(['b', 'c']);
    await p.close();
  });

  it('weighted: over 1,000 calls each provider is first in proportion to its weight (within 5 points)', async () => {
    const p = providers(
      [spec('a', { weight: 3 }), spec('b', { weight: 1 }), spec('c', { weight: 6 })],
      'weighted',
      seeded(7),
    );
    const first: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 1000; i++) {
      const order = p.order('m').map((x) => x.name);
      expect(new Set(order).size).toBe(3);
      first[order[0]!]!++;
    }
    expect(Math.abs(first.a! / 1000 - 0.3)).toBeLessThan(0.05);
    expect(Math.abs(first.b! / 1000 - 0.1)).toBeLessThan(0.05);
    expect(Math.abs(first.c! / 1000 - 0.6)).toBeLessThan(0.05);
    await p.close();
  });

  it('cheapest: by the provider\u2019s own price for the model; unpriced last; per-model routing overrides', async () => {
    const list = [
      spec('dear', { priority: 1, pricing: { m: { prompt: '0.00002', completion: '0.00004' } } }),
      spec('cheap', { priority: 2, pricing: { m: { prompt: '0.000001', completion: '0.000002' } } }),
      spec('unpriced', { priority: 0 }),
    ];
    const p = new Providers(
      { providers: list, routing: { m: 'cheapest' } },
      { policy: 'priority', maxAttempts: 2, breaker: BREAKER },
    );
    expect(p.order('m').map((x) => x.name)).toEqual(['cheap', 'dear', 'unpriced']);
    expect(p.order('other').map((x) => x.name)).toEqual(['unpriced', 'dear', 'cheap']);
    await p.close();
  });

  it('latency: unmeasured first, then by the moving average of time to head', async () => {
    const p = providers([spec('slow'), spec('fast'), spec('new')], 'latency');
    p.get('slow')!.recordTtfb(200);
    p.get('fast')!.recordTtfb(20);
    expect(p.order('m').map((x) => x.name)).toEqual(['new', 'fast', 'slow']);
    for (let i = 0; i < 20; i++) p.get('fast')!.recordTtfb(500);
    expect(p.order('m').map((x) => x.name)).toEqual(['new', 'slow', 'fast']);
    await p.close();
  });

  it('a policy registered by name (plugin kit) orders the providers; unknown names stop the start', async () => {
    const list = [spec('a', { priority: 1 }), spec('b', { priority: 2 }), spec('c', { priority: 3 })];
    const p = new Providers(
      { providers: list, routing: { m: 'reverse' } },
      { policy: 'priority', maxAttempts: 2, breaker: BREAKER },
    );
    expect(() => p.checkPolicies()).toThrow(
      /PROVIDERS_PATH: routing\["m"\] names an unknown routing policy "reverse" \(known: priority, weighted, cheapest, latency\)/,
    );
    const seen: Array<string | undefined> = [];
    p.registerPolicy({
      name: 'reverse',
      order(providers, model) {
        seen.push(model);
        return [...providers].reverse();
      },
    });
    p.checkPolicies();
    expect(p.order('m').map((x) => x.name)).toEqual(['c', 'b', 'a']);
    expect(p.order('other').map((x) => x.name)).toEqual(['a', 'b', 'c']);
    expect(seen).toEqual(['m']);
    expect(() => p.registerPolicy({ name: 'priority', order: (x) => x })).toThrow(/exists already/);
    expect(() => p.registerPolicy({ name: 'late', order: (x) => x })).toThrow(/too late/);
    expect(() => p.registerPolicy({ name: 'bad name', order: (x) => x })).toThrow(/a routing policy is/);
    const global = new Providers(
      { providers: list, routing: {} },
      { policy: 'nope', maxAttempts: 2, breaker: BREAKER },
    );
    expect(() => global.checkPolicies()).toThrow(/ROUTING_POLICY names an unknown routing policy "nope"/);
    await p.close();
    await global.close();
  });

  it('breakers do not change the order (the relay skips an open one when it gets to it)', async () => {
    const p = providers([spec('a', { priority: 1 }), spec('b', { priority: 2 })], 'priority');
    const now = Date.now();
    p.get('a')!.breaker.failure(now);
    p.get('a')!.breaker.failure(now);
    expect(p.get('a')!.breaker.acquire(now)).toBe(false);
    expect(p.order('m').map((x) => x.name)).toEqual(['a', 'b']);
    await p.close();
  });
});

describe('circuit breaker', () => {
  it('opens after N consecutive failures, lets one probe through after the cool-down, closes on success', () => {
    const b = new Breaker({ failures: 3, cooldownMs: 1000 });
    const t = 1_000_000;
    b.failure(t);
    b.failure(t);
    expect(b.status(t)).toBe('degraded');
    expect(b.allows(t)).toBe(true);
    b.success();
    expect(b.status(t)).toBe('active');
    for (let i = 0; i < 3; i++) b.failure(t);
    expect(b.status(t)).toBe('down');
    expect(b.acquire(t + 999)).toBe(false); // open: refused during the cool-down
    expect(b.allows(t + 1000)).toBe(true);
    expect(b.acquire(t + 1000)).toBe(true); // the one half-open probe
    expect(b.acquire(t + 1000)).toBe(false); // one probe at a time: the others skip it
    expect(b.allows(t + 1000)).toBe(false);
    expect(b.status(t + 1000)).toBe('degraded');
    b.failure(t + 1001); // the probe failed: open again at once
    expect(b.status(t + 1001)).toBe('down');
    expect(b.acquire(t + 1500)).toBe(false);
    expect(b.acquire(t + 2001)).toBe(true);
    b.abandon(); // the probe's client went away: no verdict, the next call may probe
    expect(b.status(t + 2001)).toBe('degraded');
    expect(b.acquire(t + 2001)).toBe(true);
    b.success();
    expect(b.status(t + 2001)).toBe('active');
    expect(b.acquire(t + 2001)).toBe(true);
    expect(b.acquire(t + 2001)).toBe(true); // closed: every call
  });
});

describe('providers file', () => {
  const parse = (doc: unknown, env: Record<string, string> = {}) =>
    parseProvidersFile(JSON.stringify(doc), env, DEFAULTS);

  it('reads every field, applies defaults, resolves api_key_env', () => {
    // Read as written.
    const kept = { models: ['m1', 'm2'], priority: 2, weight: 5 };
    const f = parse(
      {
        providers: [
          {
            name: 'a',
            base_url: 'https://api.example.com/v1/',
            api_key_env: 'KEY_A',
            ...kept,
            timeout_ms: 300,
            max_connections: 8,
            headers: { 'X-Org': 'o' },
            pricing: { m1: { prompt: '0.000001', completion: '0.000002' } },
          },
          { name: 'b', base_url: 'http://127.0.0.1:8001/v1', api_key: 'sk-b' },
        ],
        routing: { m1: 'cheapest' },
      },
      { KEY_A: 'sk-a' },
    );
    expect(f.providers[0]).toMatchObject({
      name: 'a',
      baseUrl: 'https://api.example.com/v1',
      apiKey: 'sk-a',
      ...kept,
      timeoutMs: 300,
      maxConnections: 8,
      headers: { 'x-org': 'o' },
    });
    expect(f.providers[1]).toMatchObject({
      models: '*',
      priority: 1,
      weight: 1,
      timeoutMs: 1000,
      maxConnections: 4,
      apiKey: 'sk-b',
    });
    expect(f.routing).toEqual({ m1: 'cheapest' });
  });

  it('refuses with a message naming the entry and the field', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['[]', /expected \{"providers"/],
      [{ providers: [] }, /at least one/],
      [{ providers: [{ name: 'a', base_url: 'ftp://x' }] }, /providers\[0\] \("a"\): "base_url"/],
      [
        { providers: [{ name: 'a', base_url: 'https://u:p@x.example/v1' }] },
        /\("a"\): "base_url" must not carry credentials/,
      ],
      [
        {
          providers: [
            { name: 'a', base_url: 'http://x/v1' },
            { name: 'a', base_url: 'http://y/v1' },
          ],
        },
        /providers\[1\] \("a"\): duplicate name/,
      ],
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1', api_key_env: 'NOPE' }] },
        /\("a"\): the variable NOPE/,
      ],
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1', weight: 0 }] },
        /\("a"\): "weight" must be an integer from 1/,
      ],
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1', colour: 'red' }] },
        /\("a"\): unknown field "colour"/,
      ],
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1', pricing: { m: { prompt: 1 } } }] },
        /pricing\["m"\]\.prompt must be a USD decimal string/,
      ],
      ...(
        [
          [{ flex: 0.5 }, 'a number (YAML would round it)'],
          [{ flex: '0' }, 'free'],
          [{ flex: '1e-999' }, 'an exponent the pricing service does not parse'],
          [{ flex: 'fast' }, 'not a number'],
        ] as const
      ).map(([tiers]): [object, RegExp] => [
        {
          providers: [
            { name: 'a', base_url: 'http://x/v1', pricing: { m: { prompt: '1', service_tiers: tiers } } },
          ],
        },
        /\("a"\): pricing\["m"\]\.service_tiers\["flex"\] must be a multiplier > 0 as a decimal string \(quoted in YAML, e\.g\. "0\.5"\)/,
      ]),
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1', pricing: { m: { service_tiers: ['flex'] } } }] },
        /pricing\["m"\]\.service_tiers must map tier names to multipliers/,
      ],
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1', pricing: { m: { prompt: '1', source: 5 } } }] },
        /pricing\["m"\]\.source must be a string/,
      ],
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1', pricing: { m: { image_sizes: {} } } }] },
        /pricing\["m"\]: unknown field "image_sizes"/,
      ],
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1', pricing: { m: { source: 'me' } } }] },
        /pricing\["m"\]\.has no price/,
      ],
      [
        { providers: [{ name: 'a', base_url: 'http://x/v1' }], routing: { m: 'not a name' } },
        /routing\["m"\] must be a routing policy name/,
      ],
      [{ providers: [{ base_url: 'http://x/v1' }] }, /providers\[0\]: "name"/],
    ];
    for (const [doc, re] of cases) {
      const text = typeof doc === 'string' ? doc : JSON.stringify(doc);
      let err: unknown;
      try {
        parseProvidersFile(text, {}, DEFAULTS);
      } catch (e) {
        err = e;
      }
      expect(err, text).toBeInstanceOf(ConfigError);
      expect((err as Error).message, text).toMatch(re);
    }
    expect(() => parseProvidersFile('{', {}, DEFAULTS)).toThrow(/not valid JSON/);
  });
});

describe("a provider's own prices", () => {
  it('every price book field is read at start, image included, and ratesFor lays them over the price book', () => {
    const f = parseProvidersFile(
      JSON.stringify({
        providers: [
          {
            name: 'a',
            base_url: 'http://x/v1',
            pricing: {
              m: {
                prompt: '0.000002',
                input_cache_read: '0.0000002',
                input_cache_write: '0.0000025',
                service_tiers: { flex: '0.5', priority: '2' },
                source: 'https://provider.example/pricing',
                updated_at: '2026-11-27',
              },
              img: { image: '0.02' },
            },
          },
        ],
      }),
      {},
      DEFAULTS,
    );
    const p = providers(f.providers, 'priority').list[0]!;
    const base = {
      promptUsdPerToken: '0.000001',
      completionUsdPerToken: '0.000004',
      requestUsd: '0.001',
      imageUsd: '0.04',
      imageSizes: { '1024x1024': { standard: '0.05' } },
      dimensions: { input_cache_read: '0.0000001', web_search: '0.01' },
    };
    expect(p.ratesFor('m', base)).toEqual({
      ...base,
      promptUsdPerToken: '0.000002',
      dimensions: { input_cache_read: '0.0000002', input_cache_write: '0.0000025', web_search: '0.01' },
      serviceTiers: { flex: '0.5', priority: '2' },
    });
    // The provider's own image price replaces the book's, its sizes included (they would override it).
    expect(p.ratesFor('img', base)).toMatchObject({
      imageUsd: '0.02',
      imageSizes: undefined,
      requestUsd: '0.001',
    });
    expect(p.ratesFor('other', base)).toBeUndefined();
  });
});

describe('providers file in YAML', () => {
  it('a .yaml or .yml file is read as YAML (same fields, same checks, messages naming the entry)', () => {
    withTempDir('gw-providers-yaml-', (dir) => {
      const good = join(dir, 'providers.yaml');
      writeFileSync(
        good,
        [
          '# two providers',
          'providers:',
          '  - name: a',
          '    base_url: https://api.example.com/v1',
          '    api_key_env: KEY_A',
          '    models: [m1, m2]',
          '    priority: 2',
          '    pricing:',
          '      m1: { prompt: "0.000001", completion: "0.000002" }',
          '  - name: b',
          '    base_url: http://127.0.0.1:8001/v1',
          '    models: "*"',
          'routing:',
          '  m1: cheapest',
          '',
        ].join('\n'),
      );
      const f = readProvidersFile(good, { KEY_A: 'sk-a' }, DEFAULTS);
      expect(f.providers.map((p) => [p.name, p.apiKey, p.models, p.priority])).toEqual([
        ['a', 'sk-a', ['m1', 'm2'], 2],
        ['b', undefined, '*', 1],
      ]);
      expect(f.providers[0]!.pricing).toEqual({ m1: { prompt: '0.000001', completion: '0.000002' } });
      expect(f.routing).toEqual({ m1: 'cheapest' });

      const bad = join(dir, 'providers.yml');
      writeFileSync(
        bad,
        'providers:\n  - name: a\n    base_url: http://x/v1\n    pricing: { m: { prompt: 0.1 } }\n',
      );
      expect(() => readProvidersFile(bad, {}, DEFAULTS)).toThrow(
        /PROVIDERS_PATH \(.*providers\.yml\): providers\[0\] \("a"\): pricing\["m"\]\.prompt must be a USD decimal string \(quoted in YAML/,
      );
      const broken = join(dir, 'broken.yaml');
      writeFileSync(broken, 'providers: [\n');
      expect(() => readProvidersFile(broken, {}, DEFAULTS)).toThrow(/broken\.yaml\): not valid YAML/);
      // A JSON file (any other extension) is still read as JSON only.
      const json = join(dir, 'providers.json');
      writeFileSync(json, 'providers:\n  - name: a\n');
      expect(() => readProvidersFile(json, {}, DEFAULTS)).toThrow(/not valid JSON/);
    });
  });
});
