import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ANTHROPIC_IMAGE_RULE,
  type ImageTokenRule,
  imageRuleFor,
  imageTokens,
  maxImageTokens,
  parseImageTokenRule,
} from '../../core/metering/image-bound.js';
import { imageSizeOfDataUrl } from '../../core/metering/image-size.js';
import { type FileReference, promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { dataUrl, gif, jpeg, png, webpExtended, webpLossless, webpLossy } from '../support/images.js';

const GPT_4O: ImageTokenRule = { formula: 'tiles', base: 85, tile: 170 };
const GPT_4O_MINI: ImageTokenRule = { formula: 'tiles', base: 2833, tile: 5667 };

describe('imageSizeOfDataUrl: the size from the header only', () => {
  const formats: [string, (w: number, h: number) => Buffer, string, number][] = [
    ['PNG', png, 'image/png', 2 ** 31 - 1],
    ['GIF', gif, 'image/gif', 65535],
    ['JPEG', jpeg, 'image/jpeg', 65535],
    [
      'JPEG progressive with EXIF',
      (w, h) => jpeg(w, h, { exifBytes: 60_000, progressive: true, fill: true }),
      'image/jpeg',
      65535,
    ],
    ['WebP lossy', webpLossy, 'image/webp', 16383],
    ['WebP lossless', webpLossless, 'image/webp', 16384],
    ['WebP extended', webpExtended, 'image/webp', 2 ** 24],
  ];
  for (const [name, make, mime, max] of formats) {
    it(`${name}: any size is read back`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max }), fc.integer({ min: 1, max }), (w, h) => {
          expect(imageSizeOfDataUrl(dataUrl(make(w, h), mime))).toEqual({ width: w, height: h });
        }),
        { numRuns: 200 },
      );
    });
  }

  it('bare base64 (Anthropic source.data) and base64url are read too', () => {
    expect(imageSizeOfDataUrl(png(640, 480).toString('base64'))).toEqual({ width: 640, height: 480 });
    expect(imageSizeOfDataUrl(`data:image/gif;base64,${gif(3, 4).toString('base64url')}`)).toEqual({
      width: 3,
      height: 4,
    });
  });

  it('anything else has no size: a URL, text that is not base64, an unknown header, a cut header, zero sizes', () => {
    expect(imageSizeOfDataUrl('https://example.com/a.png')).toBeUndefined();
    expect(imageSizeOfDataUrl(`data:image/png,${png(10, 10).toString('latin1')}`)).toBeUndefined();
    expect(imageSizeOfDataUrl('data:image/png;base64,!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!')).toBeUndefined();
    expect(imageSizeOfDataUrl(dataUrl(Buffer.from('BM not a bitmap we read')))).toBeUndefined();
    expect(imageSizeOfDataUrl(dataUrl(png(10, 10).subarray(0, 20)))).toBeUndefined();
    expect(imageSizeOfDataUrl(dataUrl(png(0, 10)))).toBeUndefined();
    // A JPEG whose scan starts before any frame header.
    const noFrame = Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 4, 0, 0, 0xff, 0xd9]);
    expect(imageSizeOfDataUrl(dataUrl(noFrame))).toBeUndefined();
    // A JPEG made of many tiny segments is walked a bounded number of times.
    const many = Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(4 * 10_000, 0)]);
    for (let i = 2; i < many.length; i += 4) many.set([0xff, 0xfe, 0, 2], i);
    expect(imageSizeOfDataUrl(dataUrl(many))).toBeUndefined();
  });
});

describe('imageTokens: the providers published formulas, as an upper bound', () => {
  it("OpenAI's worked examples (gpt-4o: 85 + 170 per tile; gpt-4o-mini: 2833 + 5667)", () => {
    expect(imageTokens(GPT_4O, { width: 1024, height: 1024 }, 'high')).toBe(765);
    expect(imageTokens(GPT_4O, { width: 2048, height: 4096 }, 'auto')).toBe(1105);
    expect(imageTokens(GPT_4O, { width: 4096, height: 8192 }, 'low')).toBe(85);
    expect(imageTokens(GPT_4O_MINI, { width: 1024, height: 1024 }, undefined)).toBe(25_501);
    // Unknown size: the most 8 tiles can cost.
    expect(imageTokens(GPT_4O, undefined, 'high')).toBe(85 + 8 * 170);
    expect(imageTokens(GPT_4O, undefined, 'low')).toBe(85);
  });

  it('a small image is counted as if the provider scaled it up to 768 (the bound holds either way)', () => {
    expect(imageTokens(GPT_4O, { width: 512, height: 512 }, 'high')).toBe(85 + 4 * 170);
    expect(imageTokens(GPT_4O, { width: 100, height: 2048 }, 'high')).toBe(85 + 4 * 170);
  });

  it('tiles never exceed 8 and never fall below what the provider counts (down-scaling only)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 1, max: 20_000 }), (w, h) => {
        const t = imageTokens(GPT_4O, { width: w, height: h }, 'high');
        // The provider's count, scaling down only and rounding to the nearest pixel.
        let [x, y] = [w, h];
        const fit = Math.min(1, 2048 / Math.max(x, y));
        [x, y] = [Math.round(x * fit), Math.round(y * fit)];
        const s = Math.min(1, 768 / Math.min(x, y));
        [x, y] = [Math.round(x * s), Math.round(y * s)];
        const provider = 85 + 170 * Math.ceil(x / 512) * Math.ceil(y / 512);
        expect(t).toBeGreaterThanOrEqual(provider);
        expect(t).toBeLessThanOrEqual(85 + 8 * 170);
      }),
      { numRuns: 2000 },
    );
  });

  it('patches (gpt-4.1-mini: 32 px, at most 1536, × 1.62), area (Anthropic w×h/750, capped), fixed', () => {
    const mini: ImageTokenRule = { formula: 'patches', multiplier: 1.62, maxPatches: 1536 };
    expect(imageTokens(mini, { width: 1024, height: 1024 }, 'low')).toBe(Math.ceil(1024 * 1.62));
    expect(imageTokens(mini, { width: 1800, height: 2400 }, 'high')).toBe(Math.ceil(1536 * 1.62));
    expect(imageTokens(mini, undefined, 'high')).toBe(2489);
    expect(imageTokens(ANTHROPIC_IMAGE_RULE, { width: 1092, height: 1092 }, undefined)).toBe(1590);
    expect(imageTokens(ANTHROPIC_IMAGE_RULE, { width: 8000, height: 8000 }, undefined)).toBe(4800);
    expect(maxImageTokens({ formula: 'fixed', tokens: 3000 })).toBe(3000);
  });

  it('the rule of a model: the price book, then the built-in ids, then /v1/messages, then IMAGE_MAX_TOKENS', () => {
    const book: ImageTokenRule = { formula: 'fixed', tokens: 7 };
    expect(imageRuleFor('gpt-4o-mini', 'chat', book, 3000)).toBe(book);
    expect(imageRuleFor('openai/gpt-4o-mini-2024-07-18', 'chat', undefined, 3000)).toEqual(GPT_4O_MINI);
    expect(imageRuleFor('gpt-4o-2024-08-06', 'responses', undefined, 3000)).toEqual(GPT_4O);
    expect(imageRuleFor('anthropic/claude-sonnet-4', 'chat', undefined, 3000)).toBe(ANTHROPIC_IMAGE_RULE);
    expect(imageRuleFor('some-model', 'messages', undefined, 3000)).toBe(ANTHROPIC_IMAGE_RULE);
    expect(imageRuleFor('llava', 'chat', undefined, 3000)).toEqual({ formula: 'fixed', tokens: 3000 });
  });

  it('models.json image_tokens is parsed, or named wrong', () => {
    expect(parseImageTokenRule({ formula: 'tiles', base: 85, tile: 170 })).toEqual(GPT_4O);
    expect(parseImageTokenRule({ formula: 'patches', multiplier: '1.62', max_patches: 1536 })).toEqual({
      formula: 'patches',
      multiplier: 1.62,
      maxPatches: 1536,
    });
    expect(parseImageTokenRule({ formula: 'area', pixels_per_token: 750, max_tokens: 1600 })).toEqual({
      formula: 'area',
      pixelsPerToken: 750,
      maxTokens: 1600,
    });
    expect(parseImageTokenRule({ formula: 'fixed', tokens: 1 })).toEqual({ formula: 'fixed', tokens: 1 });
    expect(parseImageTokenRule({ formula: 'tiles', base: 85 })).toBe(
      'image_tokens.tile must be a positive integer',
    );
    expect(parseImageTokenRule({ formula: 'sqrt' })).toMatch(/formula must be/);
  });
});

describe('promptTokensUpperBound with an image rule and references', () => {
  const body = (parts: unknown[]) => ({ model: 'm', messages: [{ role: 'user', content: parts }] });
  const bound = (b: unknown, refs?: FileReference[]) =>
    promptTokensUpperBound(b, 0, { imageRule: GPT_4O_MINI, ...(refs ? { references: refs } : {}) });
  const empty = bound(body([]));

  it('an inline image by its size and detail; a remote or unreadable one at the most for its detail', () => {
    const big = dataUrl(jpeg(1024, 1024, { exifBytes: 2000 }), 'image/jpeg');
    const small = dataUrl(png(200, 100));
    expect(bound(body([{ type: 'image_url', image_url: { url: big, detail: 'high' } }])) - empty).toBe(
      25_501 + 16,
    );
    expect(bound(body([{ type: 'image_url', image_url: { url: big, detail: 'low' } }])) - empty).toBe(
      2833 + 16,
    );
    // 200 × 100: counted as scaled up to 1536 × 768 (3 × 2 tiles).
    expect(bound(body([{ type: 'image_url', image_url: { url: small } }])) - empty).toBe(
      2833 + 6 * 5667 + 16,
    );
    expect(
      bound(body([{ type: 'image_url', image_url: { url: 'https://example.com/x.png', detail: 'high' } }])) -
        empty,
    ).toBe(2833 + 8 * 5667 + 16);
    expect(bound(body([{ type: 'image_url', image_url: 'https://example.com/x.png' }])) - empty).toBe(
      2833 + 8 * 5667 + 16,
    );
    // Responses input_image by URL, data URL or file id; Anthropic image blocks.
    const responses = (parts: unknown[]) => bound({ model: 'm', input: [{ role: 'user', content: parts }] });
    const r0 = responses([]);
    expect(responses([{ type: 'input_image', image_url: big, detail: 'high' }]) - r0).toBe(25_501 + 16);
    expect(responses([{ type: 'input_image', file_id: 'file-1', detail: 'low' }]) - r0).toBe(2833 + 16);
    const anthropic = promptTokensUpperBound(
      body([
        {
          type: 'image',
          source: { type: 'base64', media_type: 'image/png', data: png(1092, 1092).toString('base64') },
        },
      ]),
      0,
      { imageRule: ANTHROPIC_IMAGE_RULE },
    );
    expect(anthropic - promptTokensUpperBound(body([]), 0, { imageRule: ANTHROPIC_IMAGE_RULE })).toBe(
      1590 + 16,
    );
  });

  it('the base64 text of an inline image is never counted as text', () => {
    const huge = dataUrl(Buffer.concat([png(64, 64), Buffer.alloc(300_000, 1)]));
    expect(bound(body([{ type: 'image_url', image_url: { url: huge } }])) - empty).toBe(2833 + 4 * 5667 + 16);
  });

  it('files by id or URL are listed for the caller, each counted 16 here; inline files by their bytes', () => {
    const refs: FileReference[] = [];
    const b = body([
      { type: 'file', file: { file_id: 'file-abc' } },
      { type: 'input_file', file_url: 'https://example.com/a.pdf' },
      { type: 'document', source: { type: 'url', url: 'https://example.com/b.pdf' } },
      { type: 'document', source: { type: 'file', file_id: 'file_011' } },
    ]);
    expect(bound(b, refs) - empty).toBe(4 * 16);
    // Listed in the walk's order (a stack: last part first).
    expect(refs.reverse()).toEqual([
      { by: 'file_id', ref: 'file-abc' },
      { by: 'url', ref: 'https://example.com/a.pdf' },
      { by: 'url', ref: 'https://example.com/b.pdf' },
      { by: 'file_id', ref: 'file_011' },
    ]);
    // Without a listener: the old bound (4 per character and one image at the rule's most).
    expect(bound(body([{ type: 'file', file: { file_id: 'file-abc' } }])) - empty).toBe(
      4 * 8 + 2833 + 8 * 5667 + 16,
    );
    const pdf = Buffer.alloc(300, 7).toString('base64');
    expect(
      bound(body([{ type: 'input_file', file_data: `data:application/pdf;base64,${pdf}` }]), []) - empty,
    ).toBe(4 * (pdf.length + 28) + 2833 + 8 * 5667 + 16);
  });
});
