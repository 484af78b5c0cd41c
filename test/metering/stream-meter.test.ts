import fc from 'fast-check';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { createStreamMeter, type StreamMeter } from '../../core/metering/stream-meter.js';
import { countPromptTokens } from '../../core/metering/tokens.js';
import { inputTotal, outputTotal, simpleUsage, type Usage } from '../../core/metering/usage.js';
import { CONTENTS, chatStream, responsesStream, USAGE } from './sse-fixtures.js';

const REQUEST = {
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello to the world, please.' }],
};

/** Feeds `bytes` cut at `cuts` and returns everything the client would receive. */
function run(meter: StreamMeter, bytes: Buffer, cuts: number[]): string {
  const out: Buffer[] = [];
  let prev = 0;
  for (const cut of [...cuts, bytes.length]) {
    const chunk = bytes.subarray(prev, cut);
    prev = cut;
    const r = meter.push(chunk);
    if (r === undefined) out.push(chunk);
    else if (r !== null) out.push(Buffer.from(r));
  }
  out.push(Buffer.from(meter.finalBytes()));
  return Buffer.concat(out).toString('utf8');
}

const plain = (text: string) => encode(text, { disallowedSpecial: new Set() }).length;
const total = (u: Usage | undefined) => (u === undefined ? undefined : inputTotal(u) + outputTotal(u));

describe('stream meter over realistic SSE', () => {
  const s = chatStream();
  const bytes = Buffer.from(s.text);

  it('split at every byte boundary: usage recorded, usage-only chunk dropped, [DONE] passed on whole', () => {
    for (let i = 0; i <= bytes.length; i++) {
      const meter = createStreamMeter({ clientWantsUsage: false, model: 'gpt-4o-mini', request: REQUEST });
      expect(run(meter, bytes, [i])).toBe(s.withoutUsage + s.done);
      expect(meter.usage).toEqual(simpleUsage(21, 13));
      expect(meter.doneSeen).toBe(true);
      expect(meter.result()).toEqual({ usage: meter.usage, estimated: false });
    }
  });

  it('any chunking (fast-check), LF and CRLF: the same output', () => {
    for (const eol of ['\n', '\r\n']) {
      const st = chatStream(eol);
      const b = Buffer.from(st.text);
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.integer({ min: 1, max: b.length - 1 }), { maxLength: 40 }),
          fc.boolean(),
          (cuts, wants) => {
            cuts.sort((x, y) => x - y);
            const meter = createStreamMeter({ clientWantsUsage: wants, model: 'gpt-4o-mini' });
            const expected = wants ? st.text : st.withoutUsage + st.done;
            expect(run(meter, b, cuts)).toBe(expected);
            expect(total(meter.usage)).toBe(USAGE.total_tokens);
          },
        ),
        { numRuns: 300 },
      );
    }
  });

  it('chunks that need no change pass through unchanged (undefined)', () => {
    const meter = createStreamMeter({ clientWantsUsage: true, model: 'gpt-4o-mini' });
    const events = s.text.split(/(?<=\n\n)/);
    const results = events.map((e) => meter.push(Buffer.from(e)));
    expect(results.every((r) => r === undefined)).toBe(true); // the [DONE] event too: the writer holds it
    expect(meter.doneSeen).toBe(true);
    expect(meter.finalBytes().length).toBe(0);
  });

  it('usage carried in a content chunk is kept even when the client did not ask', () => {
    const ev = `data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n`;
    const meter = createStreamMeter({ clientWantsUsage: false, model: 'm' });
    expect(meter.push(Buffer.from(ev))).toBeUndefined();
    expect(meter.usage).toEqual(simpleUsage(3, 1));
  });

  it('a stream cut before usage (client left, upstream died) → estimated counts of what was produced', () => {
    const events = s.text.split(/(?<=\n\n)/);
    for (let k = 0; k <= CONTENTS.length; k++) {
      // keep-alive, role chunk, then k content chunks, then a half event
      const prefix = events.slice(0, 2 + k).join('') + events[2 + k]!.slice(0, 30);
      const meter = createStreamMeter({ clientWantsUsage: false, model: 'gpt-4o-mini', request: REQUEST });
      run(meter, Buffer.from(prefix), [7, 100, 101]);
      const r = meter.result();
      expect(r.estimated).toBe(true);
      expect(r.usage.output).toBe(plain(CONTENTS.slice(0, k).join('')));
      expect(r.usage.input).toBe(countPromptTokens(REQUEST, 'gpt-4o-mini'));
      // 3 tokens per message + 3 of reply priming + the message text (role and content)
      expect(r.usage).toEqual(
        simpleUsage(plain('user\nSay hello to the world, please.') + 3 + 3, r.usage.output),
      );
      expect(meter.doneSeen).toBe(false);
    }
  });

  it('an unterminated last event is metered at the end (a usage-only one dropped)', () => {
    const meter = createStreamMeter({ clientWantsUsage: false, model: 'm' });
    const text = 'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}';
    expect(meter.push(Buffer.from(text))).toBeNull();
    expect(meter.finalBytes().length).toBe(0);
    expect(total(meter.usage)).toBe(7);
  });

  it('an unterminated last content event is passed on at the end, terminated with a blank line', () => {
    const meter = createStreamMeter({ clientWantsUsage: false, model: 'm' });
    const text = 'data: {"choices":[{"index":0,"delta":{"content":"hello"}}]}';
    expect(meter.push(Buffer.from(text))).toBeNull();
    expect(Buffer.from(meter.finalBytes()).toString()).toBe(`${text}\n\n`);
    expect(meter.result().usage.output).toBe(plain('hello'));
  });

  it('responses API: usage from response.completed, text from the deltas only', () => {
    const text = responsesStream();
    const meter = createStreamMeter({ clientWantsUsage: false, model: 'gpt-4o-mini', endpoint: 'responses' });
    expect(run(meter, Buffer.from(text), [50, 51, 400])).toBe(text);
    expect(meter.result()).toEqual({ usage: simpleUsage(9, 7), estimated: false });
    const cut = text.slice(0, text.indexOf('event: response.completed'));
    const early = createStreamMeter({ clientWantsUsage: false, model: 'gpt-4o-mini', endpoint: 'responses' });
    run(early, Buffer.from(cut), []);
    expect(early.result().usage.output).toBe(plain(CONTENTS.join('')));
  });
});
