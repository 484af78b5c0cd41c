import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncModels } from '../../scripts/lib/models-sync.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { upstreamWithDirPerSuite } from '../support/upstream-dir.js';

/**
 * models.json as an operator lives with it: `npm run models:sync` fills it from the upstream's list (OpenAI
 * and OpenRouter formats) without touching the operator's prices; the running gateway re-reads it when it
 * changes (and keeps the last good one when an edit breaks it); /v1/models shows permission, root, parent.
 */
const fx = upstreamWithDirPerSuite('gw-models-file-');

/** OpenRouter's price fields as its /models lists them ("0" = not priced apart). */
const OPENROUTER_PRICING = {
  prompt: '0.000003',
  completion: '0.000004',
  request: '0',
  image: '0',
  web_search: '0.01',
  internal_reasoning: '0',
  input_cache_read: '0.0000003',
  input_cache_write: '0.00000375',
  input_audio: '0.000004',
};

describe('npm run models:sync', () => {
  it('adds the upstream models (OpenRouter prices included) and keeps every price the operator set', async () => {
    const path = join(fx.dir, 'sync.json');
    writeFileSync(
      path,
      JSON.stringify({
        models: [
          { id: 'mock-gpt', name: 'Mine', pricing: { prompt: '0.5', completion: '0.7', request: '0' } },
          { id: 'operator-only', pricing: { image: '0.04' } },
        ],
      }),
    );
    fx.up.setBehaviour({
      models: [
        { id: 'mock-gpt', pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 8192 },
        { id: 'or/new-model', name: 'New', pricing: OPENROUTER_PRICING },
        { id: 'plain-openai', object: 'model', created: 1, owned_by: 'x' },
      ],
    });
    const r = await syncModels({ baseUrl: fx.up.url, path });
    expect(r).toEqual({ added: ['or/new-model', 'plain-openai'], kept: 2, total: 4 });
    const models = (JSON.parse(readFileSync(path, 'utf8')) as { models: Record<string, unknown>[] }).models;
    const byId = Object.fromEntries(models.map((m) => [m.id, m]));
    // The operator's price and name win; the upstream only filled the missing context length.
    expect(byId['mock-gpt']).toMatchObject({
      name: 'Mine',
      context_length: 8192,
      pricing: { prompt: '0.5', completion: '0.7', request: '0' },
    });
    // The OpenRouter fields are carried over; its "0" for internal_reasoning means "billed as completion", so
    // it is left out (charged at the completion rate), never written as a free dimension.
    const { internal_reasoning: _, ...carried } = OPENROUTER_PRICING;
    expect(byId['or/new-model']).toEqual({ id: 'or/new-model', name: 'New', pricing: carried });
    expect(byId['plain-openai']).toEqual({ id: 'plain-openai', name: 'plain-openai' });
    expect(byId['operator-only']).toEqual({ id: 'operator-only', pricing: { image: '0.04' } });
  });
});

describe('models.json at run time', () => {
  let gw: TestGateway;
  let path: string;
  const file = (prompt: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      models: [
        {
          id: 'file-model',
          permission: [{ allow_view: true }],
          pricing: { prompt, completion: '0' },
          ...extra,
        },
      ],
    });
  beforeAll(async () => {
    fx.up.setBehaviour({ models: [{ id: 'mock-gpt' }] });
    path = join(fx.dir, 'live.json');
    writeFileSync(path, file('0.000001'));
    gw = await startTestGateway({
      engine: 'node',
      pipeline: ['relay'],
      upstreamUrl: fx.up.url,
      // The test polls /v1/models (per-IP limited, RATE_LIMIT_IP_PER_MINUTE) until a reload shows.
      env: {
        MODELS_PATH: path,
        RATE_LIMIT_IP_PER_MINUTE: '1000000',
        RATE_LIMIT_IP_PER_HOUR: '1000000',
        RATE_LIMIT_IP_PER_DAY: '1000000',
      },
    });
  });
  afterAll(async () => {
    await gw?.close(1000);
  });

  async function item(id: string): Promise<Record<string, unknown> | undefined> {
    const list = (await (await fetch(`${gw.baseURL}/models`)).json()) as { data: Record<string, unknown>[] };
    return list.data.find((m) => m.id === id);
  }

  it('lists permission (as given, [] when none), root and parent', async () => {
    expect(await item('file-model')).toMatchObject({
      permission: [{ allow_view: true }],
      root: 'file-model',
      parent: null,
    });
    expect(await item('mock-gpt')).toMatchObject({ permission: [], root: 'mock-gpt', parent: null });
  });

  it('re-reads the file when it changes, without a restart; a broken edit keeps the last good one', async () => {
    writeFileSync(path, file('0.000005', { supports_vision: false }));
    await until(
      'the new price from the models file',
      async () => ((await item('file-model'))?.pricing as { prompt?: number })?.prompt === 0.005,
      6000,
      100,
    );
    expect(await item('file-model')).toMatchObject({ supports_vision: false });
    writeFileSync(path, '{"models": [ { "id": ');
    // Also on demand (what SIGHUP calls): refused, the last good price book stays.
    expect(gw.services.catalog.reloadFile()).toBe(false);
    // A negative: the file watcher does NOT apply the broken edit either. Nothing marks "it would have by
    // now", so this gives the watcher a fixed while (it applied the good edit above well within that).
    await new Promise((r) => setTimeout(r, 1500));
    expect(((await item('file-model'))?.pricing as { prompt?: number })?.prompt).toBe(0.005);
    writeFileSync(path, file('0.000002'));
    expect(gw.services.catalog.reloadFile()).toBe(true);
    expect(((await item('file-model'))?.pricing as { prompt?: number })?.prompt).toBe(0.002);
  });
});
