import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { ConfigError } from '../../core/config.js';
import { per1k, providerName } from '../../core/routes/public.js';
import { ModelCatalog, parseProviderList } from '../../core/upstream/model-catalog.js';
import { mapUpstreamError, UpstreamClient } from '../../core/upstream/upstream-client.js';
import { upstreamWithDirPerSuite } from '../support/upstream-dir.js';

describe('upstream client', () => {
  const client = new UpstreamClient({
    baseUrl: 'https://api.example.com/api/v1/',
    connections: 1,
    timeoutMs: 1000,
  });
  afterAll(() => client.close());

  it('maps gateway paths onto the base URL (which carries the version path)', () => {
    expect(client.targetPath('/v1/chat/completions')).toBe('/api/v1/chat/completions');
    expect(client.targetPath('/v1/audio/speech', 'a=1&api_key=sk-x&b=2')).toBe(
      '/api/v1/audio/speech?a=1&b=2',
    );
    expect(client.targetPath('/v1/models', 'limit=2')).toBe('/api/v1/models?limit=2');
  });

  it('strips hop-by-hop headers and caller credentials', () => {
    const keyed = new UpstreamClient({
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKey: 'up-key',
      connections: 1,
      timeoutMs: 1000,
    });
    const h = keyed.forwardHeaders({
      authorization: 'Bearer sk-caller',
      'x-cashu': 'cashuA...',
      cookie: 'admin_password=x',
      connection: 'keep-alive',
      'transfer-encoding': 'chunked',
      'x-forwarded-for': '1.2.3.4',
      'content-type': 'application/json',
      'openai-beta': 'assistants=v2',
      'accept-encoding': 'gzip',
    });
    expect(h).toEqual({
      'content-type': 'application/json',
      'openai-beta': 'assistants=v2',
      'accept-encoding': 'identity',
      authorization: 'Bearer up-key',
    });
    void keyed.close();
  });

  it('maps transport failures to the catalogue', () => {
    const e = (code: string) => Object.assign(new Error(code), { code });
    expect(mapUpstreamError(e('ECONNREFUSED'), 1000).code).toBe('upstream_error');
    expect(mapUpstreamError(e('ECONNRESET'), 1000).code).toBe('upstream_error');
    expect(mapUpstreamError(e('UND_ERR_HEADERS_TIMEOUT'), 1000).code).toBe('upstream_timeout');
    expect(mapUpstreamError(e('UND_ERR_BODY_TIMEOUT'), 1000).status).toBe(504);
    expect(mapUpstreamError(e('UND_ERR_CONNECT_TIMEOUT'), 1000).status).toBe(504);
  });
});

describe('model catalog', () => {
  const fx = upstreamWithDirPerSuite('gw-catalog-');

  function file(name: string, content: unknown): string {
    const p = join(fx.dir, name);
    writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
    return p;
  }

  it('loads the provider list and models.json, file entries overriding by id', async () => {
    const client = new UpstreamClient({ baseUrl: fx.up.url, connections: 1, timeoutMs: 2000 });
    const catalog = new ModelCatalog({
      fetchModels: () => client.getJson('/v1/models'),
      modelsPath: file('models.json', {
        models: [
          {
            id: 'mock-gpt',
            name: 'Mock GPT',
            pricing: { prompt: '0.000003', completion: '0.000006', request: '0.01' },
          },
          {
            id: 'extra',
            name: 'Extra',
            context_length: 1000,
            supports_vision: true,
            pricing: { prompt: '0', completion: '0.1', request: '0', image: '0.02' },
          },
        ],
      }),
      ownedBy: 'prov',
    });
    await catalog.start();
    catalog.stop();
    await client.close();
    expect(catalog.list().map((m) => m.id)).toEqual(['mock-gpt', 'mock-mini', 'extra']);
    expect(catalog.get('mock-gpt')).toMatchObject({
      name: 'Mock GPT',
      owned_by: 'mock',
      context_length: 8192,
    });
    expect(catalog.usdRates('mock-gpt')).toEqual({
      promptUsdPerToken: '0.000003',
      completionUsdPerToken: '0.000006',
      requestUsd: '0.01',
    });
    expect(catalog.get('extra')).toMatchObject({
      owned_by: 'prov',
      supports_vision: true,
      context_length: 1000,
    });
    expect(catalog.get('extra')?.pricing?.image).toBe('0.02');
    expect(catalog.usdRates('mock-mini')).toBeUndefined();
  });

  it('tolerates a failing provider and keeps the last good list', async () => {
    let fail = false;
    const catalog = new ModelCatalog({
      fetchModels: async () => {
        if (fail) throw new Error('down');
        return { data: [{ id: 'a' }] };
      },
    });
    expect(await catalog.refresh()).toBe(true);
    fail = true;
    expect(await catalog.refresh()).toBe(false);
    expect(catalog.list().map((m) => m.id)).toEqual(['a']);
  });

  it('stops the start on a broken models.json, naming the problem', () => {
    expect(() => new ModelCatalog({ modelsPath: file('bad.json', '{nope') })).toThrow(ConfigError);
    expect(() => new ModelCatalog({ modelsPath: file('no-array.json', { models: 1 }) })).toThrow(
      /"models" array/,
    );
    expect(
      () =>
        new ModelCatalog({
          modelsPath: file('bad-price.json', { models: [{ id: 'x', pricing: { prompt: 'cheap' } }] }),
        }),
    ).toThrow(/models\[0\]\.pricing/);
    expect(
      () =>
        new ModelCatalog({
          modelsPath: file('bad-image.json', {
            models: [{ id: 'x', image_tokens: { formula: 'tiles', base: 85 } }],
          }),
        }),
    ).toThrow(/models\[0\]\.image_tokens\.tile must be a positive integer/);
  });

  it('reads an image token rule from models.json (image_tokens)', () => {
    const catalog = new ModelCatalog({
      modelsPath: file('image.json', {
        models: [{ id: 'v', image_tokens: { formula: 'area', pixels_per_token: 750, max_tokens: 1600 } }],
      }),
    });
    expect(catalog.get('v')?.image_tokens).toEqual({ formula: 'area', pixelsPerToken: 750, maxTokens: 1600 });
  });

  it('renders per-1k prices without float noise and names providers from hosts', () => {
    expect(per1k('0.000002')).toBe(0.002);
    expect(per1k('0.0000003')).toBe(0.0003);
    expect(providerName('https://api.openai.com/v1')).toBe('openai');
    expect(providerName('https://openrouter.ai/api/v1')).toBe('openrouter');
    expect(providerName('http://127.0.0.1:11434/v1')).toBe('127.0.0.1');
    expect(providerName('http://ollama:11434/v1')).toBe('ollama');
  });
});

describe('mock upstream', () => {
  it('honours max_tokens unless told to ignore it, and counts tokens deterministically', async () => {
    const up = await startMockUpstream({ chunks: 10 });
    try {
      const call = async () =>
        (await fetch(`${up.url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'm',
            max_tokens: 3,
            messages: [{ role: 'user', content: '12345678' }],
          }),
        }).then((r) => r.json())) as { usage: { prompt_tokens: number; completion_tokens: number } };
      expect((await call()).usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3 });
      up.setBehaviour({ ignoreMaxTokens: true });
      expect((await call()).usage.completion_tokens).toBe(10);
    } finally {
      await up.close();
    }
  });
});

describe('the documented price book example', () => {
  it('docs/models.example.json loads, and its special prices reach the rates lookup', () => {
    const catalog = new ModelCatalog({ modelsPath: 'docs/models.example.json' });
    expect(catalog.usdRates('dall-e-3')).toMatchObject({
      imageUsd: '0.04',
      imageSizes: { '1024x1024': { standard: '0.04', hd: '0.08' } },
    });
    expect(catalog.usdRates('whisper-1')).toMatchObject({ audioMinuteUsd: '0.006', requestUsd: '0' });
    expect(catalog.usdRates('tts-1')?.speech1kCharsUsd).toBe('0.015');
    expect(catalog.usdRates('text-embedding-3-small')).toMatchObject({ promptUsdPerToken: '0.00000002' });
    expect(catalog.usdRates('text-embedding-3-small')?.completionUsdPerToken).toBeUndefined();
    // The usage dimensions and tiers of the price book.
    expect(catalog.usdRates('claude-sonnet-4-5')).toMatchObject({
      dimensions: {
        input_cache_read: '0.0000003',
        input_cache_write: '0.00000375',
        input_cache_write_1h: '0.000006',
        web_search: '0.01',
      },
    });
    expect(catalog.usdRates('gpt-4o-mini')?.serviceTiers).toEqual({ flex: '0.5', priority: '2' });
    expect(catalog.usdRates('gpt-4o-mini')?.dimensions).toMatchObject({ input_image: '0.00000015' });
    expect(catalog.get('gpt-4o-mini')?.pricing).toMatchObject({ source: 'https://openai.com/api/pricing' });
  });
});

describe('the context window of a listed model', () => {
  it('is read under each server’s name for it (OpenRouter, Groq, vLLM, Mistral); a bad one is left out', () => {
    const list = parseProviderList(
      {
        data: [
          { id: 'a', context_length: 1000 },
          { id: 'b', context_window: 2000 },
          { id: 'c', max_model_len: 3000 },
          { id: 'd', max_context_length: 4000 },
          { id: 'e', max_model_len: -1 },
          { id: 'f' },
        ],
      },
      'x',
      0,
    );
    expect([...list.values()].map((m) => m.context_length)).toEqual([
      1000,
      2000,
      3000,
      4000,
      undefined,
      undefined,
    ]);
  });
});
