import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BatchInputChecker,
  type BatchInputSummary,
  type CheckBatchInputOptions,
  withStoredContext,
} from '../../core/batches/batch-input.js';
import { atBatchPrice, priceBatchLine } from '../../core/batches/batch-price.js';
import { priceOutput } from '../../core/batches/settle-batch.js';
import type { BatchJob } from '../../core/batches/types.js';
import { loadConfig } from '../../core/config.js';
import { GatewayError } from '../../core/errors.js';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { createBtcPriceSource } from '../../core/pricing/btc-price.js';
import { createPricing } from '../../core/pricing/pricing.js';
import type { UsdRates } from '../../core/pricing/types.js';
import { ModelCatalog } from '../../core/upstream/model-catalog.js';
import { BOOK_PRICES as BOOK } from '../support/prices.js';

/**
 * The batch input check and the batch price, in fixed pricing (FIXED_COST_PER_REQUEST = 3 sats = 3,000 msat per
 * call): a line's bound and its answered price are both 3,000 × factor.
 */
const pricing = createPricing({
  config: loadConfig({ FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '3' }).pricing,
});
/** 1 msat per input and output token (7/13 sats per 1k would hide the differences in rounding). */
const tokenPricing = createPricing({
  config: loadConfig({
    FIXED_PRICING: 'false',
    FIXED_COST_PER_REQUEST: '0',
    FIXED_PER_1K_INPUT_TOKENS: '1',
    FIXED_PER_1K_OUTPUT_TOKENS: '1',
  }).pricing,
});
/**
 * Model pricing at BTC $100,000, fees 1 (1 micro-USD = 1 msat): 1 msat per prompt token, 2 per completion token,
 * and `dimensions` (USD per call of a hosted tool) for every model.
 */
function bookPricing(dimensions: UsdRates['dimensions']) {
  const config = loadConfig({ ...BOOK, FIXED_PRICING: 'false' }).pricing;
  const rates = (): UsdRates => ({
    promptUsdPerToken: '0.000001',
    completionUsdPerToken: '0.000002',
    requestUsd: '0',
    dimensions,
  });
  return createPricing({ config, rates, btc: createBtcPriceSource({ config }) });
}
const catalog = new ModelCatalog();
const opts = { pricing, catalog, maxLines: 3, maxLineBytes: 1024, factorOf: () => '0.5' };

/** Feeds `text` to a checker `chunkBytes` bytes at a time (a whole file in one chunk by default). */
function checkBatchInput(
  data: Buffer,
  o: CheckBatchInputOptions = opts,
  chunkBytes = data.length || 1,
): BatchInputSummary {
  const checker = new BatchInputChecker(o);
  for (let i = 0; i < data.length; i += chunkBytes) checker.push(data.subarray(i, i + chunkBytes));
  return checker.end();
}

const line = (i: number, over: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: `r${i}`,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
    ...over,
  });

function refusal(text: string, chunkBytes?: number): string {
  try {
    checkBatchInput(Buffer.from(text), opts, chunkBytes);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    return (err as GatewayError).message;
  }
  throw new Error('accepted');
}

describe('the batch input check (BatchInputChecker)', () => {
  it('sums the lines’ bounds at the batch price (fixed: 3,000 × 0.5 per line), blank lines skipped', () => {
    const s = checkBatchInput(Buffer.from(`${line(0)}\n\n${line(1)}\n`), opts);
    expect(s).toEqual({
      url: '/v1/chat/completions',
      endpoint: 'chat',
      model: 'm',
      lines: 2,
      factor: '0.5',
      boundMsat: 3_000,
      btcUsd: undefined,
    });
  });

  it('a line bounds every choice it asks for and its largest max-tokens field (token pricing)', () => {
    // 1 msat per input and output token (7/13 sats per 1k would hide it in rounding): the bound is the prompt
    // bytes + the completion cap × n, at the batch price.
    const o = { ...opts, pricing: tokenPricing };
    const body = (extra: Record<string, unknown>) =>
      line(0, { body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra } });
    const one = checkBatchInput(Buffer.from(body({ max_tokens: 1000 })), o).boundMsat;
    const eight = checkBatchInput(Buffer.from(body({ max_tokens: 1000, n: 8 })), o).boundMsat;
    // (7 × 1,000 more output tokens + 2 prompt-bound tokens for `n` and `8`) × 0.5
    expect(eight - one).toBe(3501);
    const largest = checkBatchInput(Buffer.from(body({ max_tokens: 10, max_completion_tokens: 1000 })), o);
    expect(largest.boundMsat).toBeGreaterThan(one);
  });

  it('a line with no max-tokens field on a model whose window is unknown is refused, naming the line (token pricing)', () => {
    // A call like it is sent with the gateway's cap written in; a batch line goes to the provider as written, so
    // nothing would bound its output. The same line with a cap, or on a model with a context length, is accepted.
    const o = { ...opts, pricing: tokenPricing };
    const open = Buffer.from(
      `${line(0, { body: { model: 'm', max_tokens: 5, messages: [] } })}\n${line(1)}\n`,
    );
    let err: unknown;
    try {
      checkBatchInput(open, o);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).details).toEqual({ line: 2 });
    expect((err as GatewayError).message).toMatch(
      /^Batch input line 2: set body\.max_tokens .*context length of model m is unknown/,
    );
    const capped = line(0, { body: { model: 'm', max_completion_tokens: 50, messages: [] } });
    expect(checkBatchInput(Buffer.from(capped), o).lines).toBe(1);
    const dir = mkdtempSync(join(tmpdir(), 'batch-window-'));
    const modelsPath = join(dir, 'models.json');
    writeFileSync(modelsPath, JSON.stringify({ models: [{ id: 'm', context_length: 1000 }] }));
    try {
      const known = new ModelCatalog({ modelsPath });
      const s = checkBatchInput(Buffer.from(line(0)), { ...o, catalog: known });
      // The whole window (1,000) and the prompt bound at 1 msat per token, × 0.5.
      expect(s.boundMsat).toBeGreaterThan(500);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a line bounds its server-side tools as a call does, or is refused when nothing would bound their calls', () => {
    // Model pricing at BTC $100,000, fees 1: 1 msat per prompt token, 2 per completion token, a web search
    // 1,000 msat per call; the batch factor 0.5.
    const o = { ...opts, pricing: bookPricing({ web_search: '0.001' }), webSearchContentTokens: 100 };
    const responses = (extra: Record<string, unknown>) =>
      Buffer.from(
        line(0, { url: '/v1/responses', body: { model: 'm', max_output_tokens: 10, input: 'hi', ...extra } }),
      );
    const web = [{ type: 'web_search' }];
    const plain = checkBatchInput(responses({}), o).boundMsat;
    const two = checkBatchInput(responses({ tools: web, max_tool_calls: 2 }), o).boundMsat;
    // 2 calls × (1,000 msat + 100 result tokens at 1 msat), and what the declaration adds to the prompt bound (a
    // call's rule: core/metering/prompt-bound.ts), × 0.5.
    const body = { model: 'm', max_output_tokens: 10, input: 'hi' };
    const withTools = { ...body, tools: web, max_tool_calls: 2 };
    const declared =
      promptTokensUpperBound(withTools, JSON.stringify(withTools).length) -
      promptTokensUpperBound(body, JSON.stringify(body).length);
    expect(two - plain).toBe((declared + 2 * (1000 + 100)) / 2);
    // A call gets max_tool_calls written in; a line is forwarded as written, so it must carry its own.
    expect(() => checkBatchInput(responses({ tools: web }), o)).toThrow(
      /^Batch input line 1: declares server-side tools without max_tool_calls/,
    );
    // Chat web search is billed per call with no count in the answer: not served in batches.
    const chat = Buffer.from(
      line(0, { body: { model: 'm', max_tokens: 10, web_search_options: {}, messages: [] } }),
    );
    expect(() => checkBatchInput(chat, o)).toThrow(/^Batch input line 1: chat web search/);
    // A tool its model has no price for is refused naming the line, as a call is refused.
    expect(() =>
      checkBatchInput(responses({ tools: [{ type: 'code_interpreter' }], max_tool_calls: 1 }), o),
    ).toThrow(/^Batch input line 1: .*code_interpreter/);
  });

  it("a line's files are listed for the upload's ownership check wherever it names them (file_id, file_ids)", () => {
    const book = bookPricing({ code_interpreter: '0.03' });
    const body = {
      model: 'm',
      max_output_tokens: 10,
      input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-a' }] }],
      tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-b', ''] } }],
      max_tool_calls: 1,
    };
    const s = checkBatchInput(Buffer.from(line(0, { url: '/v1/responses', body })), {
      ...opts,
      pricing: book,
      referenceMaxTokens: 100,
    });
    expect(s.refs).toEqual([
      { line: 1, id: 'file-a', kind: 'file' },
      { line: 1, id: 'file-b', kind: 'file' },
    ]);
  });

  it('a line bounds files by id or URL, images, conversations and continued responses as a call does', () => {
    // 1 msat per token, batch factor 0.5: each setting's part of the bound shows as the difference between two
    // checks of the same bytes. Model `m` has no image rule: an image by URL counts IMAGE_MAX_TOKENS.
    const o = { ...opts, pricing: tokenPricing, maxLines: 10 };
    const chat = (content: unknown) =>
      Buffer.from(line(0, { body: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content }] } }));
    const responses = (extra: Record<string, unknown>) =>
      Buffer.from(
        line(0, { url: '/v1/responses', body: { model: 'm', max_output_tokens: 10, input: 'hi', ...extra } }),
      );
    const byId = chat([{ type: 'file', file: { file_id: 'file-abc' } }]);
    const byUrl = responses({
      input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/a.pdf' }] }],
    });
    const image = chat([{ type: 'image_url', image_url: { url: 'https://x/a.png' } }]);
    const conversation = responses({ conversation: 'conv_1' });
    const bound = (data: Buffer, over: Record<string, unknown>) =>
      checkBatchInput(data, { ...o, ...over }).boundMsat;
    const code = (data: Buffer, over: Record<string, unknown>) => {
      try {
        checkBatchInput(data, { ...o, ...over });
      } catch (err) {
        return [(err as GatewayError).code, (err as GatewayError).details];
      }
      return 'accepted';
    };
    expect(bound(byId, { referenceMaxTokens: 5000 }) - bound(byId, { referenceMaxTokens: 1000 })).toBe(2000);
    expect(bound(byUrl, { referenceMaxTokens: 5000 }) - bound(byUrl, { referenceMaxTokens: 1000 })).toBe(
      2000,
    );
    expect(code(byId, {})).toEqual(['reference_not_bounded', { line: 1 }]);
    expect(code(byUrl, {})).toEqual(['reference_not_bounded', { line: 1 }]);
    expect(bound(image, { imageMaxTokens: 700 }) - bound(image, { imageMaxTokens: 100 })).toBe(300);
    expect(
      bound(conversation, { storedContextMaxTokens: 9000 }) -
        bound(conversation, { storedContextMaxTokens: 1000 }),
    ).toBe(4000);
    expect(code(conversation, {})).toEqual(['context_not_bounded', { line: 1 }]);

    // A continued response: listed by the check, its context added at upload from what the response recorded.
    const continued = checkBatchInput(responses({ previous_response_id: 'resp_1' }), o);
    expect(continued.continued).toEqual([expect.objectContaining({ line: 1, responseId: 'resp_1' })]);
    const raised = withStoredContext(continued, tokenPricing, () => 3000, undefined);
    expect(raised.boundMsat - continued.boundMsat).toBe(1500);
    // Recorded without its tokens: STORED_CONTEXT_MAX_TOKENS, else refused naming the line.
    expect(
      withStoredContext(continued, tokenPricing, () => undefined, 2000).boundMsat - continued.boundMsat,
    ).toBe(1000);
    expect(() => withStoredContext(continued, tokenPricing, () => undefined, undefined)).toThrow(
      expect.objectContaining({ code: 'context_not_bounded', details: { line: 1 } }),
    );
  });

  it('names the line of every refusal', () => {
    expect(refusal(`${line(0)}\n${line(1)}\n${line(2)}\n${line(3)}`)).toBe(
      'Batch input line 4: more than 3 requests (BATCH_MAX_LINES)',
    );
    expect(refusal(`${line(0)}\n[1]`)).toBe('Batch input line 2: not an object');
    expect(refusal(line(0, { method: 'GET' }))).toBe('Batch input line 1: method must be POST');
    expect(refusal(line(0, { custom_id: 7 }))).toBe('Batch input line 1: custom_id must be a string');
    expect(refusal(`${line(0)}\n${line(1, { body: { model: 'other' } })}`)).toBe(
      'Batch input line 2: every line of a batch must use the same url and model as line 1',
    );
    expect(refusal(line(0, { body: { messages: [] } }))).toBe('Batch input line 1: body.model is required');
    expect(refusal('\n\n')).toBe('Batch input line 1: the file has no request');
  });

  it('gives the same summary and the same refusals whatever the chunks (lines split across them)', () => {
    const file = Buffer.from(`${line(0)}\r\n\n${line(1)}\n${line(2)}`);
    const whole = checkBatchInput(file);
    for (const size of [1, 2, 7, 64, 1000]) expect(checkBatchInput(file, opts, size)).toEqual(whole);
    expect(whole.lines).toBe(3);
    for (const size of [1, 5, 33]) {
      expect(refusal(`${line(0)}\n\n${line(1)}\n{"custom_id":`, size)).toBe(
        'Batch input line 4: not valid JSON',
      );
      expect(refusal(`${line(0)}\n${line(1)}\n${line(2)}\n${line(3)}\n`, size)).toBe(
        'Batch input line 4: more than 3 requests (BATCH_MAX_LINES)',
      );
    }
  });

  it('refuses a line longer than MAX_BODY_BYTES as soon as its bytes pass it, holding no more', () => {
    const long = line(1, { body: { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(1100) }] } });
    const message = 'Batch input line 2: longer than 1024 bytes (MAX_BODY_BYTES)';
    expect(refusal(`${line(0)}\n${long}\n`)).toBe(message);
    expect(refusal(`${line(0)}\n${long}`, 100)).toBe(message);
    // The refusal comes before the line ends: the checker never held more than the bound.
    const checker = new BatchInputChecker(opts);
    checker.push(Buffer.from(`${line(0)}\n`));
    expect(() => {
      for (let i = 0; i < 20; i++) checker.push(Buffer.alloc(100, 0x20));
    }).toThrow(message);
  });
});

describe('the batch price', () => {
  it('rounds each line up once: ceil(msat × factor)', () => {
    expect(atBatchPrice(26, '0.5')).toBe(13);
    expect(atBatchPrice(25, '0.5')).toBe(13);
    expect(atBatchPrice(26, '0.25')).toBe(7);
  });

  it('prices answered lines from their usage; error lines are free; a line without usage pays its bound share', () => {
    const job = {
      model: 'm',
      endpoint: 'chat',
      factor: '0.5',
      btcUsd: undefined,
      reservedMsat: 4_000,
      lines: 2,
    } as BatchJob;
    expect(priceBatchLine(pricing, { ...job, usage: { prompt_tokens: 5, completion_tokens: 1 } })).toEqual({
      msat: 1_500,
      promptTokens: 5,
      completionTokens: 1,
    });
    const ok = (usage: unknown) => JSON.stringify({ response: { status_code: 200, body: { usage } } });
    const output = [
      ok({ prompt_tokens: 5, completion_tokens: 1 }),
      JSON.stringify({ response: { status_code: 400, body: { error: {} } } }),
      ok(undefined),
    ].join('\n');
    expect(priceOutput(pricing, job, Buffer.from(output))).toEqual({
      answered: 2,
      lines: 2,
      costMsat: 1_500 + 2_000,
      promptTokens: 5,
      completionTokens: 1,
    });
  });
});
