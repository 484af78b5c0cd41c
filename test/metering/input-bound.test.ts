import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../core/errors.js';
import { type InputBoundRequest, inputTokensBound } from '../../core/metering/input-bound.js';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';

/** The input bound calls and batch lines share (core/metering/input-bound.ts): the parts a body's bytes miss. */
const settings = {
  imageMaxTokens: 3000,
  referenceMaxTokens: undefined,
  storedContextMaxTokens: undefined,
  webSearchContentTokens: 500,
};
const refuse = (code: 'reference_not_bounded' | 'context_not_bounded', refersTo: string, n: number) =>
  new GatewayError(code, { message: `The call refers to ${refersTo}`, details: { references: n } });

const pdf = `data:application/pdf;base64,${Buffer.from('<</Type /Page>>'.repeat(50)).toString('base64')}`;
const body = {
  model: 'm',
  messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: pdf } }] }],
};
const request = (over: Partial<InputBoundRequest> = {}): InputBoundRequest => ({
  body,
  rawBytes: JSON.stringify(body).length,
  model: 'm',
  endpoint: 'chat',
  imageRule: undefined,
  unseen: undefined,
  webSearchCalls: 0,
  window: undefined,
  ...over,
});
const bytesBound = promptTokensUpperBound(body, JSON.stringify(body).length, { references: [] });

describe('an inline file (its pages render as images the bytes do not bound)', () => {
  it('a known window bounds the request’s input: at least the whole window, web search results beside it', () => {
    expect(inputTokensBound(request({ window: 128_000 }), settings, refuse)).toBe(128_000);
    expect(inputTokensBound(request({ window: 128_000, webSearchCalls: 2 }), settings, refuse)).toBe(129_000);
    // A body already bounded above a small window keeps its own bound.
    expect(inputTokensBound(request({ window: 100 }), settings, refuse)).toBe(bytesBound);
  });

  it('no window: REFERENCE_MAX_TOKENS per inline file for its pages; neither: refused reference_not_bounded', () => {
    expect(
      inputTokensBound(request(), { ...settings, referenceMaxTokens: 20_000 }, refuse) - bytesBound,
    ).toBe(20_000);
    let err: unknown;
    try {
      inputTokensBound(request(), settings, refuse);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('reference_not_bounded');
    expect((err as GatewayError).message).toMatch(
      /^The call refers to a file inline, whose pages .* the context length of model m is unknown and REFERENCE_MAX_TOKENS is unset$/,
    );
  });

  it('a body without an inline file is its bytes’ bound whatever the window', () => {
    const text = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const r = request({ body: text, rawBytes: JSON.stringify(text).length });
    expect(inputTokensBound({ ...r, window: 128_000 }, settings, refuse)).toBe(
      promptTokensUpperBound(text, JSON.stringify(text).length),
    );
    expect(inputTokensBound(r, settings, refuse)).toBe(
      inputTokensBound({ ...r, window: 128_000 }, settings, refuse),
    );
  });
});
