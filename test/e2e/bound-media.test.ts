import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import type { ImageTokenRule } from '../../core/metering/image-bound.js';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { dataUrl, png } from '../support/images.js';
import { type PaidGateway, type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';
import { BOOK_PRICES } from '../support/prices.js';

/**
 * Images, files and web search results in the bound (issue 34), end to end on both stores: the mock provider bills
 * them as a provider does (`billMedia`: an image by OpenAI's tile formula from its PNG header, 8 tiles when it
 * cannot see the size; `fileTokens` per file by URL; `searchContentTokens` per web search), and each call is
 * either refused before the provider sees it or charged exactly the provider's bill, with no overrun.
 *
 * Prices at BTC $100,000, fees 1 (1 micro-USD = 1 msat): prompt 1 msat, completion 2 msat per token, web search
 * 1,000 msat per call. `vision-mini` counts images as gpt-4o-mini does (models.json `image_tokens`: 2,833 + 5,667
 * per 512 px tile). The mock counts 1 prompt token for content given as parts, and answers 8 completion tokens.
 */
const MINI_RULE: ImageTokenRule = { formula: 'tiles', base: 2833, tile: 5667 };
const MODELS = {
  models: [
    {
      id: 'vision-mini',
      context_length: 128_000,
      image_tokens: { formula: 'tiles', base: 2833, tile: 5667 },
      pricing: { prompt: '0.000001', completion: '0.000002' },
    },
    { id: 'claude-mock', context_length: 100_000, pricing: { prompt: '0.000001', completion: '0.000002' } },
    {
      id: 'mock-gpt',
      context_length: 8192,
      pricing: { prompt: '0.000001', completion: '0.000002', web_search: '0.001' },
    },
  ],
};

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field
type Json = Record<string, any>;

const MEDIA = { billMedia: true, imageTiles: { base: 2833, tile: 5667 }, fileTokens: 1000 };

async function overrunMsats(h: PaidGateway): Promise<number> {
  const text = await (await fetch(`${h.gateway.url}/metrics`)).text();
  const m = /^gateway_overrun_msats_total (\d+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

function imageChat(url: string, detail?: 'low' | 'high'): Json {
  return {
    model: 'vision-mini',
    max_tokens: 10,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url, ...(detail ? { detail } : {}) } },
        ],
      },
    ],
  };
}

const bytes = (b: unknown) => Buffer.byteLength(JSON.stringify(b));

/** A Responses call on mock-gpt asking to summarise `file` (an `input_file` part's fields), 10 output tokens. */
function summarise(file: Json): Json {
  return {
    model: 'mock-gpt',
    max_output_tokens: 10,
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Summarise.' },
          { type: 'input_file', ...file },
        ],
      },
    ],
  };
}

describe.each<PaidStore>(['sqlite', 'redis'])('images, files and search results bounded on %s', (store) => {
  const h = paidGatewayPerSuite(
    {
      store,
      modelsFile: MODELS,
      env: { ...BOOK_PRICES, REFERENCE_MAX_TOKENS: '1000', WEB_SEARCH_CONTENT_TOKENS: '500' },
      upstream: { usage: MEDIA },
    },
    { auditEachTest: true },
  );
  const post = (key: string, path: string, body: unknown) =>
    h.post(path, body, { authorization: `Bearer ${key}` });

  it('a 1024² high-detail image on a gpt-4o-mini-like model is reserved at its 25,501 tokens: 25 sats are refused, 30 charged 25,518 msat', async () => {
    const body = imageChat(dataUrl(png(1024, 1024, 20_000)), 'high');
    const withoutImage = {
      ...body,
      messages: [{ ...body.messages[0], content: [body.messages[0].content[0]] }],
    };
    const bound = promptTokensUpperBound(body, bytes(body), { imageRule: MINI_RULE });
    // The image: 2,833 + 4 tiles × 5,667 = 25,501 tokens (+16 per part), whatever its 20 kB of base64.
    expect(bound - promptTokensUpperBound(withoutImage, 0, { imageRule: MINI_RULE })).toBe(25_517);
    const overrun = await overrunMsats(h);

    // 25 sats: below the bound (it was about 3,100 msat with a fixed 3,000 per image: the provider's 25,518 msat
    // would have been charged 25,000 and the operator would have lost 518).
    const short = await h.fundKey(25);
    const requests = h.upstream.stats.requests;
    const refused = await post(short.apiKey, '/chat/completions', body);
    expect(refused.status).toBe(402);
    const err = ((await refused.json()) as Json).error;
    expect(err.code).toBe('payment_required');
    expect(err.details.required).toBe(bound + 10 * 2);
    expect(h.upstream.stats.requests).toBe(requests);
    expect(await h.available(short.apiKey)).toBe(short.balanceMsat);

    // 30 sats: served; the provider bills 1 + 25,501 prompt tokens and 8 completion tokens.
    const { apiKey, balanceMsat } = await h.fundKey(30);
    const res = await post(apiKey, '/chat/completions', body);
    expect(res.status).toBe(200);
    const json = (await res.json()) as Json;
    expect(json.usage.prompt_tokens).toBe(25_502);
    expect(json['x-node-cost'].msats).toBe(25_502 + 16);
    expect(await h.available(apiKey)).toBe(balanceMsat - 25_518);
    expect(await overrunMsats(h)).toBe(overrun);
  });

  it('an image by URL is bounded at the most its detail allows (8 tiles; low: the base) and charged the bill', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(60);
    const overrun = await overrunMsats(h);
    const high = imageChat('https://images.example/any.png', 'high');
    const bound = promptTokensUpperBound(high, 0, { imageRule: MINI_RULE });
    expect(
      bound -
        promptTokensUpperBound(imageChat('https://images.example/any.png', 'low'), 0, {
          imageRule: MINI_RULE,
        }),
    ).toBe(8 * 5667);
    // The provider fetched the largest image it takes: 2,833 + 8 × 5,667 = 48,169 tokens, + 1 + 8 × 2.
    const r1 = await post(apiKey, '/chat/completions', high);
    expect(r1.status).toBe(200);
    expect(((await r1.json()) as Json)['x-node-cost'].msats).toBe(48_186);
    const r2 = await post(apiKey, '/chat/completions', imageChat('https://images.example/any.png', 'low'));
    expect(r2.status).toBe(200);
    expect(((await r2.json()) as Json)['x-node-cost'].msats).toBe(2833 + 1 + 16);
    expect(await h.available(apiKey)).toBe(balanceMsat - 48_186 - 2850);
    expect(await overrunMsats(h)).toBe(overrun);
  });

  it('a file by URL is bounded at REFERENCE_MAX_TOKENS: 1 sat is refused, 2 sats charged the 1,017 msat bill', async () => {
    const body = summarise({ file_url: 'https://files.example/report.pdf' });
    const overrun = await overrunMsats(h);
    const short = await h.fundKey(1);
    const refused = await post(short.apiKey, '/responses', body);
    expect(refused.status).toBe(402);
    const err = ((await refused.json()) as Json).error;
    // The reference counts 16 in the body's bound, and REFERENCE_MAX_TOKENS beside it.
    expect(err.details.required).toBe(
      promptTokensUpperBound(body, bytes(body), { references: [] }) + 1000 + 20,
    );
    const { apiKey, balanceMsat } = await h.fundKey(2);
    const res = await post(apiKey, '/responses', body);
    expect(res.status).toBe(200);
    // 1 + 1,000 input tokens, 8 output tokens.
    expect(((await res.json()) as Json)['x-node-cost'].msats).toBe(1001 + 16);
    expect(await h.available(apiKey)).toBe(balanceMsat - 1017);
    expect(await overrunMsats(h)).toBe(overrun);
  });

  it("an inline PDF's pages are bounded by the model's window: 8 sats are refused, 9 charged the 7,382 msat bill of 5 page images", async () => {
    // Five page objects in 80 bytes: the provider renders each as an image (at most 1,445 tokens each by OpenAI's
    // default tiles), which the bytes do not bound. The window (8,192) does: the provider reads no more than that.
    h.upstream.setBehaviour({ usage: { billMedia: true, windowTokens: 8192 } });
    try {
      await inlinePdf();
    } finally {
      h.upstream.setBehaviour({ usage: MEDIA });
    }
  });

  async function inlinePdf(): Promise<void> {
    const pdf = Buffer.from('%PDF-1.4 '.concat('<</Type /Page>>'.repeat(5))).toString('base64');
    const body = summarise({ filename: 'a.pdf', file_data: `data:application/pdf;base64,${pdf}` });
    const overrun = await overrunMsats(h);
    const short = await h.fundKey(8);
    const refused = await post(short.apiKey, '/responses', body);
    expect(refused.status).toBe(402);
    // The whole window as input, 10 output tokens at 2 msat.
    expect(((await refused.json()) as Json).error.details.required).toBe(8192 + 20);
    const { apiKey, balanceMsat } = await h.fundKey(9);
    const res = await post(apiKey, '/responses', body);
    expect(res.status).toBe(200);
    // 1 text token + the data URL's 140 characters + 5 pages × 1,445, then 8 output tokens at 2 msat.
    const answer = (await res.json()) as Json;
    expect(answer.usage.input_tokens).toBe(1 + 140 + 5 * 1445);
    expect(answer['x-node-cost'].msats).toBe(7366 + 16);
    expect(await h.available(apiKey)).toBe(balanceMsat - 7382);
    expect(await overrunMsats(h)).toBe(overrun);
  }

  it('Anthropic image blocks by w × h / 750 (1092² = 1,590 tokens; a larger one at most 4,800) and a document by URL at REFERENCE_MAX_TOKENS', async () => {
    const { apiKey, balanceMsat } = await h.fundKey(20);
    const overrun = await overrunMsats(h);
    const message = (block: Json) => ({
      model: 'claude-mock',
      max_tokens: 10,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe.' }, block] }],
    });
    const image = (w: number, hgt: number) => ({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: png(w, hgt).toString('base64') },
    });
    const rule = { formula: 'area', pixelsPerToken: 750, maxTokens: 4800 } as const;
    const empty = promptTokensUpperBound(
      { ...message({}), messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe.' }] }] },
      0,
      { imageRule: rule },
    );
    expect(promptTokensUpperBound(message(image(1092, 1092)), 0, { imageRule: rule }) - empty).toBe(
      1590 + 16,
    );
    expect(promptTokensUpperBound(message(image(3000, 3000)), 0, { imageRule: rule }) - empty).toBe(
      4800 + 16,
    );
    const charges: number[] = [];
    for (const block of [
      image(1092, 1092),
      image(3000, 3000),
      { type: 'document', source: { type: 'url', url: 'https://files.example/a.pdf' } },
    ]) {
      const res = await post(apiKey, '/messages', message(block));
      expect(res.status).toBe(200);
      charges.push(Number(res.headers.get('x-node-cost')));
    }
    // 1 text token + 1,590 / 1,600 (the provider's resize) / 1,000 (the file), and 8 output tokens × 2.
    expect(charges).toEqual([1607, 1617, 1017]);
    expect(await h.available(apiKey)).toBe(balanceMsat - 1607 - 1617 - 1017);
    expect(await overrunMsats(h)).toBe(overrun);
  });

  it('web search results are in the bound: 2 searches × 500 tokens (WEB_SEARCH_CONTENT_TOKENS) beside their 2,000 msat', async () => {
    h.upstream.setBehaviour({ usage: { ...MEDIA, billMax: true, searchContentTokens: 500 } });
    try {
      const body = {
        model: 'mock-gpt',
        input: 'Find the news.',
        tools: [{ type: 'web_search' }],
        max_tool_calls: 2,
        max_output_tokens: 10,
      };
      const overrun = await overrunMsats(h);
      const short = await h.fundKey(3);
      const refused = await post(short.apiKey, '/responses', body);
      expect(refused.status).toBe(402);
      const err = ((await refused.json()) as Json).error;
      expect(err.details.required).toBe(
        promptTokensUpperBound(body, bytes(body)) + 2 * 500 + 10 * 2 + 2 * 1000,
      );
      const { apiKey, balanceMsat } = await h.fundKey(4);
      const res = await post(apiKey, '/responses', body);
      expect(res.status).toBe(200);
      const json = (await res.json()) as Json;
      // 4 + 1,000 input tokens (the text, the results), 8 output tokens, 2 searches.
      expect(json.usage.input_tokens).toBe(1004);
      expect(json['x-node-cost'].msats).toBe(1004 + 16 + 2000);
      expect(await h.available(apiKey)).toBe(balanceMsat - 3020);
      expect(await overrunMsats(h)).toBe(overrun);
    } finally {
      h.upstream.setBehaviour({ usage: MEDIA });
    }
  });
});

describe.each<PaidStore>(['sqlite', 'redis'])(
  'files by id or URL without REFERENCE_MAX_TOKENS on %s',
  (store) => {
    const h = paidGatewayPerSuite(
      {
        store,
        modelsFile: MODELS,
        env: { ...BOOK_PRICES, FILES_OTHER_PURPOSES: 'true' },
        upstream: { usage: MEDIA },
      },
      {
        auditEachTest: true,
      },
    );

    it('a text file this gateway stored for the key is bounded by its size: 3 sats are refused, 4 charged the bill; a PDF, or another key’s file, is refused', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(4);
      const client = h.openai(apiKey);
      const text = 'line of notes\n'.repeat(210); // 2,940 bytes: at most 2,940 tokens
      const notes = await client.files.create({
        file: await toFile(Buffer.from(text), 'notes.txt'),
        purpose: 'user_data',
      });
      const pdf = await client.files.create({
        file: await toFile(Buffer.from(`%PDF-1.4\n${'<</Type /Page>>'.repeat(3)}`), 'a.txt'),
        purpose: 'user_data',
      });
      const chat = (fileId: string) => ({
        model: 'mock-gpt',
        max_tokens: 5,
        messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: fileId } }] }],
      });
      const body = chat(notes.id);
      // The provider reads it as at most its 2,940 bytes.
      h.upstream.setBehaviour({ usage: { ...MEDIA, fileTokens: 2940 } });
      try {
        const short = await h.fundKey(3);
        const other = h.openai(short.apiKey);
        const mine = await other.files.create({
          file: await toFile(Buffer.from(text), 'notes.txt'),
          purpose: 'user_data',
        });
        const refused = await h.post('/chat/completions', chat(mine.id), {
          authorization: `Bearer ${short.apiKey}`,
        });
        expect(refused.status).toBe(402);
        const required = promptTokensUpperBound(body, bytes(body), { references: [] }) + 2940 + 10;
        expect(((await refused.json()) as Json).error.details.required).toBe(required);
        const res = await h.post('/chat/completions', body, { authorization: `Bearer ${apiKey}` });
        expect(res.status).toBe(200);
        const answer = (await res.json()) as Json;
        // 1 + 2,940 input tokens, 5 output tokens at 2 msat.
        expect(answer.usage).toMatchObject({ prompt_tokens: 2941, completion_tokens: 5 });
        expect(answer['x-node-cost'].msats).toBe(2951);
        expect(await h.available(apiKey)).toBe(balanceMsat - 2951);
        // A PDF (whatever its name) and another key's text file have no size that bounds them here.
        for (const id of [pdf.id, mine.id]) {
          const r = await h.post('/chat/completions', chat(id), { authorization: `Bearer ${apiKey}` });
          expect(r.status, id).toBe(400);
          expect(((await r.json()) as Json).error.code).toBe('reference_not_bounded');
        }
        expect(await h.available(apiKey)).toBe(balanceMsat - 2951);
      } finally {
        h.upstream.setBehaviour({ usage: MEDIA });
      }
    });

    it('are refused before the provider (400 reference_not_bounded); nothing moves', async () => {
      const { apiKey, balanceMsat } = await h.fundKey(50);
      const requests = h.upstream.stats.requests;
      const bodies: [string, Json][] = [
        [
          '/responses',
          {
            model: 'mock-gpt',
            input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://f.example/a.pdf' }] }],
          },
        ],
        [
          '/chat/completions',
          {
            model: 'mock-gpt',
            max_tokens: 5,
            messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }],
          },
        ],
      ];
      for (const [path, body] of bodies) {
        const res = await h.post(path, body, { authorization: `Bearer ${apiKey}` });
        expect(res.status, path).toBe(400);
        const err = ((await res.json()) as Json).error;
        expect(err.code).toBe('reference_not_bounded');
        expect(err.message).toContain('REFERENCE_MAX_TOKENS');
      }
      expect(h.upstream.stats.requests).toBe(requests);
      expect(await h.available(apiKey)).toBe(balanceMsat);
      // An image by URL needs no setting: its model's rule bounds it.
      const res = await h.post('/chat/completions', imageChat('https://images.example/a.png', 'low'), {
        authorization: `Bearer ${apiKey}`,
      });
      expect(res.status).toBe(200);
    });
  },
);
