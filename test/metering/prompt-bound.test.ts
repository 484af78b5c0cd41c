import fc from 'fast-check';
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

/** Real token counts of a chat under both OpenAI encodings, with the chat format's special tokens. */
function realCounts(messages: Msg[]): number[] {
  return [
    o200k.encodeChat(messages, 'gpt-4o', PLAIN).length,
    cl100k.encodeChat(messages, 'gpt-4', PLAIN).length,
    // Plain concatenation with ChatML-like markup, for tokenizers with other templates.
    o200k.encode(messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join(''), PLAIN)
      .length,
  ];
}

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: fc.constantFrom(' ', 'a', '1', '\n', 'é', '🙂', '東', '<|', '|>'), maxLength: 400 }),
);
const messages = fc.array(
  fc.record({
    role: fc.constantFrom('system' as const, 'user' as const, 'assistant' as const),
    content: text,
  }),
  { minLength: 1, maxLength: 8 },
);

describe('promptTokensUpperBound', () => {
  it('is ≥ the real gpt-tokenizer count (o200k, cl100k) for any chat (fast-check)', () => {
    fc.assert(
      fc.property(messages, (msgs) => {
        const body = { model: 'gpt-4o', messages: msgs, stream: true };
        const bound = promptTokensUpperBound(body, Buffer.byteLength(JSON.stringify(body)));
        for (const real of realCounts(msgs)) expect(bound).toBeGreaterThanOrEqual(real);
      }),
      { numRuns: 300 },
    );
  });

  it('bounds completions prompts, embeddings inputs (strings and token arrays) and responses input', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 5 }), (inputs) => {
        const real = inputs.reduce((a, t) => a + o200k.encode(t, PLAIN).length, 0);
        expect(promptTokensUpperBound({ model: 'm', prompt: inputs }, 0)).toBeGreaterThanOrEqual(real);
        expect(promptTokensUpperBound({ model: 'm', input: inputs }, 0)).toBeGreaterThanOrEqual(real);
        const items = inputs.map((t) => ({ role: 'user', content: [{ type: 'input_text', text: t }] }));
        expect(
          promptTokensUpperBound({ model: 'm', instructions: 'Be brief.', input: items }, 0),
        ).toBeGreaterThanOrEqual(real + o200k.encode('Be brief.').length);
      }),
      { numRuns: 200 },
    );
    const ids = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]];
    expect(promptTokensUpperBound({ model: 'm', input: ids }, 0)).toBeGreaterThanOrEqual(12);
  });

  it('images cost a fixed bound, not their base64 size; tools count their schema', () => {
    const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(1_000_000)}` } };
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it?' }, image] }],
    };
    const bound = promptTokensUpperBound(body, 1_000_100);
    expect(bound).toBeGreaterThanOrEqual(3000);
    expect(bound).toBeLessThan(4000);
    expect(promptTokensUpperBound(body, 0, { imageTokens: 10_000 })).toBeGreaterThanOrEqual(10_000);
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ];
    const withTools = { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools };
    const schemaTokens = o200k.encode(JSON.stringify(tools, null, 2)).length;
    expect(promptTokensUpperBound(withTools, 0)).toBeGreaterThanOrEqual(schemaTokens + 512);
  });

  it('a body that is not an object falls back to its raw size', () => {
    expect(promptTokensUpperBound([1, 2], 1234)).toBe(1234 + 64);
    expect(promptTokensUpperBound(null, 10)).toBe(74);
  });
});
