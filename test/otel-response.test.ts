import { describe, expect, it } from 'vitest';
import { type AnswerApi, AnswerReader, answerApiOf } from '../core/otel-response.js';

/**
 * `gen_ai.response.id` and `gen_ai.response.finish_reasons` read from the provider's bytes (core/otel-response.ts):
 * JSON answers parsed once at the end, streams read line by line whatever the chunking (a multi-byte character
 * or an event split across chunks), only the events that carry them parsed.
 */

/** Feeds `text` in chunks of `size` bytes (splitting lines and multi-byte characters). */
function read(api: AnswerApi, sse: boolean, text: string, size = 7) {
  const r = new AnswerReader(api, sse);
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) r.push(bytes.subarray(i, i + size));
  return r.result();
}

describe('the answer id and finish reasons', () => {
  it('knows which paths answer with them', () => {
    expect(answerApiOf('/v1/chat/completions')).toBe('chat');
    expect(answerApiOf('/v1/completions')).toBe('completions');
    expect(answerApiOf('/v1/responses')).toBe('responses');
    expect(answerApiOf('/v1/messages')).toBe('messages');
    expect(answerApiOf('/v1/embeddings')).toBeUndefined();
  });

  it('a chat completion with two choices, in choice order', () => {
    const body = {
      id: 'chatcmpl-42',
      choices: [
        { index: 1, message: { content: 'héllo' }, finish_reason: 'length' },
        { index: 0, message: { content: 'ok' }, finish_reason: 'tool_calls' },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 2 },
    };
    expect(read('chat', false, JSON.stringify(body))).toEqual({
      id: 'chatcmpl-42',
      finishReasons: ['tool_calls', 'length'],
    });
  });

  it('a chat stream split anywhere, with spaces after the colons', () => {
    const ev = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
    const text =
      ev({ id: 'chatcmpl-7', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }) +
      ev({
        id: 'chatcmpl-7',
        choices: [{ index: 0, delta: { content: 'naïve "quoted" ✓' }, finish_reason: null }],
      }) +
      'data: {"id": "chatcmpl-7", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n' +
      ev({ id: 'chatcmpl-7', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }) +
      'data: [DONE]\n\n';
    for (const size of [1, 3, 7, 64, 10_000]) {
      expect(read('chat', true, text, size)).toEqual({ id: 'chatcmpl-7', finishReasons: ['stop'] });
    }
  });

  it('a Responses answer: its status, or the reason it is incomplete; nothing while it still runs', () => {
    expect(read('responses', false, JSON.stringify({ id: 'resp_1', status: 'completed' }))).toEqual({
      id: 'resp_1',
      finishReasons: ['completed'],
    });
    expect(
      read(
        'responses',
        false,
        JSON.stringify({
          id: 'resp_2',
          status: 'incomplete',
          incomplete_details: { reason: 'max_output_tokens' },
        }),
      ),
    ).toEqual({ id: 'resp_2', finishReasons: ['max_output_tokens'] });
    expect(read('responses', false, JSON.stringify({ id: 'resp_3', status: 'queued' }))).toEqual({
      id: 'resp_3',
    });
    const ev = (type: string, response: object) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, response })}\n\n`;
    const stream =
      ev('response.created', { id: 'resp_4', status: 'in_progress' }) +
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"x"}\n\n' +
      ev('response.completed', { id: 'resp_4', status: 'completed', output: [{ type: 'message' }] });
    expect(read('responses', true, stream, 5)).toEqual({ id: 'resp_4', finishReasons: ['completed'] });
  });

  it('an Anthropic message and its stream', () => {
    expect(read('messages', false, JSON.stringify({ id: 'msg_1', stop_reason: 'end_turn' }))).toEqual({
      id: 'msg_1',
      finishReasons: ['end_turn'],
    });
    const ev = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
    const stream =
      ev('message_start', { message: { id: 'msg_2', stop_reason: null } }) +
      ev('content_block_delta', { delta: { type: 'text_delta', text: 'hi' } }) +
      ev('message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 5 } }) +
      ev('message_stop', {});
    expect(read('messages', true, stream, 4)).toEqual({ id: 'msg_2', finishReasons: ['max_tokens'] });
  });

  it('an answer that is not JSON, or a stream that ends mid-event, says only what it carried', () => {
    expect(read('chat', false, '<html>bad gateway</html>')).toEqual({});
    expect(
      read('chat', true, 'data: {"id":"chatcmpl-9","choices":[{"index":0,"finish_reason":"stop"}]}'),
    ).toEqual({ id: 'chatcmpl-9', finishReasons: ['stop'] });
  });
});
