import { describe, expect, it } from 'vitest';
import { createStreamMeter } from '../../core/metering/stream-meter.js';
import { emptyUsage, inputTotal, outputTotal, type Usage, usageFromJson } from '../../core/metering/usage.js';

/**
 * The normalised usage record read from every shape a provider reports, with literal fixtures as the
 * providers document them: each physical token counted once, in its own dimension.
 */
const u = (fields: Partial<Usage>): Usage => ({ ...emptyUsage(), ...fields });

/** Feeds an SSE body to a meter in `pieces` chunks and returns its result. */
function meter(endpoint: 'chat' | 'responses' | 'messages', text: string, pieces = 3) {
  const m = createStreamMeter({ clientWantsUsage: true, model: 'm', endpoint });
  const b = Buffer.from(text);
  const step = Math.ceil(b.length / pieces);
  for (let i = 0; i < b.length; i += step) m.push(b.subarray(i, i + step));
  m.finalBytes();
  return m.result();
}

describe('OpenAI chat usage', () => {
  it('cached tokens and cache writes are inside prompt_tokens; reasoning and predictions inside completion_tokens', () => {
    const body = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      service_tier: 'flex',
      choices: [],
      usage: {
        prompt_tokens: 1000,
        completion_tokens: 300,
        total_tokens: 1300,
        prompt_tokens_details: {
          cached_tokens: 800,
          cache_write_tokens: 100,
          audio_tokens: 20,
          image_tokens: 30,
        },
        completion_tokens_details: {
          reasoning_tokens: 120,
          audio_tokens: 10,
          accepted_prediction_tokens: 40,
          rejected_prediction_tokens: 25,
        },
      },
    };
    const got = usageFromJson('openai', Buffer.from(JSON.stringify(body)))!;
    expect(got).toEqual(
      u({
        input: 50,
        cacheRead: 800,
        cacheWrite: 100,
        inputAudio: 20,
        inputImage: 30,
        // 300 − 120 reasoning − 10 audio: accepted (40) and rejected (25) prediction tokens stay billed as output
        output: 170,
        reasoning: 120,
        outputAudio: 10,
        serviceTier: 'flex',
      }),
    );
    expect(inputTotal(got)).toBe(1000);
    expect(outputTotal(got)).toBe(300);
  });

  it('plain usage, embeddings without completion, and what is not usage', () => {
    expect(
      usageFromJson('openai', { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }),
    ).toEqual(u({ input: 10, output: 5 }));
    expect(usageFromJson('openai', { object: 'list', usage: { prompt_tokens: 8, total_tokens: 8 } })).toEqual(
      u({ input: 8 }),
    );
    expect(usageFromJson('openai', { choices: [] })).toBeUndefined();
    expect(usageFromJson('openai', { usage: null })).toBeUndefined();
    expect(usageFromJson('openai', { usage: { prompt_tokens: -1 } })).toBeUndefined();
    expect(usageFromJson('openai', { usage: { prompt_tokens: '3' } })).toBeUndefined();
    expect(usageFromJson('openai', Buffer.from('not json'))).toBeUndefined();
  });

  it('details larger than the total are believed (never fewer tokens than reported)', () => {
    const got = usageFromJson('openai', {
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 12 },
        completion_tokens_details: { reasoning_tokens: 9 },
      },
    })!;
    expect(got).toEqual(u({ input: 0, cacheRead: 12, output: 0, reasoning: 9 }));
  });

  it('streamed: the usage chunk (service_tier beside it)', () => {
    const text =
      'data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n' +
      'data: {"id":"c","service_tier":"priority","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":50,' +
      '"prompt_tokens_details":{"cached_tokens":600},"completion_tokens_details":{"reasoning_tokens":20}}}\n\n' +
      'data: [DONE]\n\n';
    expect(meter('chat', text)).toEqual({
      usage: u({ input: 300, cacheRead: 600, output: 30, reasoning: 20, serviceTier: 'priority' }),
      estimated: false,
    });
  });
});

describe('Responses usage', () => {
  const response = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    service_tier: 'default',
    output: [
      { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'web_search_call', id: 'ws_2', status: 'completed' },
      { type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: 'hi' }] },
    ],
    usage: {
      input_tokens: 2000,
      input_tokens_details: { cached_tokens: 1500 },
      output_tokens: 400,
      output_tokens_details: { reasoning_tokens: 250 },
      total_tokens: 2400,
    },
  };
  const expected = u({
    input: 500,
    cacheRead: 1500,
    output: 150,
    reasoning: 250,
    webSearch: 2,
    serviceTier: 'default',
  });

  it('JSON: cached input inside input_tokens, reasoning inside output_tokens, web_search_call items counted', () => {
    expect(usageFromJson('responses', response)).toEqual(expected);
  });

  it.each(['response.completed', 'response.incomplete', 'response.failed'])(
    'streamed: usage from the terminal %s event, not from response.created',
    (terminal) => {
      const ev = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
      const text =
        ev('response.created', { response: { ...response, status: 'in_progress', usage: null } }) +
        ev('response.output_text.delta', { delta: 'hi' }) +
        ev(terminal, { response });
      expect(meter('responses', text)).toEqual({ usage: expected, estimated: false });
    },
  );
});

describe('Anthropic usage', () => {
  it('JSON: input_tokens excludes the cache; 5-minute and 1-hour writes apart; web search requests; tier', () => {
    const body = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello' }],
      usage: {
        input_tokens: 50,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 1200,
        cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
        output_tokens: 80,
        server_tool_use: { web_search_requests: 3 },
        service_tier: 'priority',
      },
    };
    const got = usageFromJson('anthropic', body)!;
    expect(got).toEqual(
      u({
        input: 50,
        cacheRead: 1200,
        cacheWrite: 100,
        cacheWrite1h: 200,
        output: 80,
        webSearch: 3,
        serviceTier: 'priority',
      }),
    );
    expect(inputTotal(got)).toBe(1550);
  });

  it('JSON without the 5m/1h split: every cache write is a 5-minute write (the default lifetime)', () => {
    expect(
      usageFromJson('anthropic', {
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 40,
          cache_read_input_tokens: 0,
          output_tokens: 5,
        },
      }),
    ).toEqual(u({ input: 10, cacheWrite: 40, output: 5 }));
  });

  const start = {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      usage: {
        input_tokens: 25,
        cache_creation_input_tokens: 500,
        cache_read_input_tokens: 2000,
        cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 300 },
        output_tokens: 1,
      },
    },
  };
  const ev = (o: { type: string }) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
  const stream = [
    ev(start),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } as {
      type: string;
    }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello there' } } as {
      type: string;
    }),
    ev({ type: 'content_block_stop', index: 0 } as { type: string }),
    ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 42 } } as {
      type: string;
    }),
    ev({ type: 'message_stop' }),
  ].join('');

  it('streamed: input and cache counts from message_start, the output total from the last message_delta', () => {
    expect(meter('messages', stream, 5)).toEqual({
      usage: u({ input: 25, cacheRead: 2000, cacheWrite: 200, cacheWrite1h: 300, output: 42 }),
      estimated: false,
    });
  });

  it('streamed and cut before message_delta: the provider counts so far, output counted from the text', () => {
    const cut = stream.slice(0, stream.indexOf('event: message_delta'));
    const r = meter('messages', cut, 2);
    expect(r.estimated).toBe(true);
    // "Hello there" is 2 tokens (o200k); more than the 1 output token message_start reported
    expect(r.usage).toEqual(u({ input: 25, cacheRead: 2000, cacheWrite: 200, cacheWrite1h: 300, output: 2 }));
  });
});
