import { encode as encodeCl } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as encodeO } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countTokens, encodingFor } from '../../core/metering/tokens.js';

describe('countTokens', () => {
  it('o200k by default, cl100k for the GPT-3.5/GPT-4 families', () => {
    expect(encodingFor('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingFor('meta-llama/llama-3.1-8b')).toBe('o200k_base');
    expect(encodingFor('gpt-4.1')).toBe('o200k_base');
    expect(encodingFor('gpt-4')).toBe('cl100k_base');
    expect(encodingFor('openai/gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingFor('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(encodingFor('text-embedding-3-small')).toBe('cl100k_base');
  });

  it('equals gpt-tokenizer on ordinary text; special-token text is plain text', () => {
    const t = 'Hello, wörld! 東京 🙂 <|endoftext|> code() => {x}\n'.repeat(10);
    const opts = { disallowedSpecial: new Set<string>() };
    expect(countTokens(t, 'gpt-4o')).toBe(encodeO(t, opts).length);
    expect(countTokens(t, 'gpt-4')).toBe(encodeCl(t, opts).length);
    expect(countTokens('', 'gpt-4o')).toBe(0);
  });

  it('long runs without spaces are counted in slices (no quadratic blow-up), a close estimate', () => {
    const run = 'x'.repeat(50_000);
    const n = countTokens(run, 'gpt-4o');
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThanOrEqual(run.length);
    const words = 'lorem ipsum dolor sit amet '.repeat(2000);
    const exact = encodeO(words).length;
    const sliced = countTokens(words, 'gpt-4o');
    expect(sliced).toBeGreaterThanOrEqual(exact);
    expect(sliced).toBeLessThanOrEqual(exact + Math.ceil(words.length / 1024) * 2);
  });
});
