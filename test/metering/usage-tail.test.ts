import { describe, expect, it } from 'vitest';
import { usageOfBody } from '../../core/metering/usage.js';
import { openAiUsageFromTail, TAIL_BYTES } from '../../core/metering/usage-tail.js';

/**
 * Usage read from a body's tail (core/metering/usage-tail.ts) is exact or declines: whenever it answers, the
 * answer equals what parsing the whole body gives; where it cannot be sure it answers null (the caller parses).
 */
const full = (text: string) => usageOfBody('openai', JSON.parse(text));
const tail = (text: string) => openAiUsageFromTail(Buffer.from(text));

const usage = {
  prompt_tokens: 120,
  completion_tokens: 40,
  total_tokens: 160,
  prompt_tokens_details: { cached_tokens: 100, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 12, audio_tokens: 0 },
};
const choice = (content: string) => ({
  index: 0,
  message: { role: 'assistant', content },
  finish_reason: 'stop',
});

describe('usage from the body tail', () => {
  it.each([
    [
      'OpenAI order: usage after choices, tier after usage',
      { id: 'c', choices: [choice('hi')], usage, service_tier: 'default' },
    ],
    ['tier before usage', { service_tier: 'flex', choices: [choice('hi')], usage }],
    [
      'pretty-printed with spaces and newlines',
      JSON.stringify({ choices: [choice('x')], usage, service_tier: 'priority' }, null, 2),
    ],
    ['content quoting a usage key', { choices: [choice('say "usage": {"prompt_tokens": 9}')], usage }],
    [
      'content with escaped quotes and backslashes',
      { choices: [choice('a \\" b \\\\" "usage" } ] {')], usage },
    ],
    [
      'a nested usage before the top-level one',
      { x: { usage: { prompt_tokens: 1 } }, choices: [choice('a')], usage },
    ],
    ['unicode content', { choices: [choice('héllo ☃ 🚀 "q"')], usage, system_fingerprint: 'fp' }],
  ])('%s: equals the whole parse', (_name, body) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const got = tail(text);
    expect(got).not.toBeNull();
    expect(got).toEqual(full(text));
    expect(got?.cacheRead).toBe(100);
    expect(got?.reasoning).toBe(12);
  });

  it('reads the service tier wherever it is in the tail', () => {
    expect(tail(JSON.stringify({ usage, service_tier: 'flex' }))?.serviceTier).toBe('flex');
    expect(tail(JSON.stringify({ service_tier: 'priority', usage }))?.serviceTier).toBe('priority');
  });

  it.each([
    [
      'a usage nested after the top-level one (the last one is not top-level)',
      { usage, choices: [{ ...choice('a'), usage: { prompt_tokens: 1 } }] },
    ],
    ['no usage at all', { choices: [choice('hello')] }],
    ['usage present but without prompt_tokens', { choices: [choice('x')], usage: { completion_tokens: 3 } }],
    ['usage before a body longer than the tail', { usage, choices: [choice('z'.repeat(TAIL_BYTES + 10))] }],
    [
      'a tier before a body longer than the tail',
      { service_tier: 'flex', choices: [choice('z'.repeat(TAIL_BYTES + 10))], usage },
    ],
  ])('declines (null) when it cannot be sure: %s', (_name, body) => {
    expect(tail(JSON.stringify(body))).toBeNull();
  });

  it.each([
    '',
    '[]',
    'not json',
    '{"usage": {"prompt_tokens": 1}',
    '{"usage": {"prompt_tokens": 1}}]',
    '{"usage": "x"}',
  ])('declines a body that is not an object with a readable usage: %j', (text) => {
    expect(tail(text)).toBeNull();
  });

  it('a usage long before the end but within the tail is still read', () => {
    const text = JSON.stringify({ usage, choices: [choice('y'.repeat(TAIL_BYTES - 2000))] });
    expect(tail(text)).toEqual(full(text));
  });

  it('random bodies (seeded): every answer equals the whole parse', () => {
    // mulberry32: a small seeded generator, so a failure replays.
    let seed = 0x2f6e2b1;
    const rnd = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n) | 0;
    };
    const pieces = [
      'a',
      ' ',
      '"',
      '\\',
      '{',
      '}',
      '[',
      ']',
      ':',
      ',',
      'usage',
      '"usage":',
      'service_tier',
      'é',
      '\n',
    ];
    const text = () => Array.from({ length: rnd(40) }, () => pieces[rnd(pieces.length)]).join('');
    const value = (depth: number): unknown => {
      const k = rnd(depth > 2 ? 3 : 5);
      if (k === 0) return text();
      if (k === 1) return rnd(1000);
      if (k === 2) return null;
      if (k === 3) return Array.from({ length: rnd(3) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: rnd(4) }, () => [rnd(4) === 0 ? 'usage' : text(), value(depth + 1)]),
      );
    };
    let answered = 0;
    for (let i = 0; i < 2000; i++) {
      const fields: [string, unknown][] = [
        ['choices', [choice(text())]],
        ['extra', value(0)],
      ];
      if (rnd(4) !== 0)
        fields.splice(rnd(3), 0, ['usage', rnd(5) === 0 ? value(1) : { ...usage, prompt_tokens: rnd(500) }]);
      if (rnd(2) === 0) fields.splice(rnd(4), 0, ['service_tier', rnd(3) === 0 ? value(1) : 'flex']);
      const body = JSON.stringify(Object.fromEntries(fields), null, rnd(2) === 0 ? 1 : undefined);
      const got = tail(body);
      if (got === null) continue;
      answered++;
      expect(got, body).toEqual(full(body));
    }
    // Most bodies with a readable top-level usage are answered from the tail.
    expect(answered).toBeGreaterThan(600);
  });
});
