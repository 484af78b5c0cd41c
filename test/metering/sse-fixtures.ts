/** Realistic upstream SSE bodies (OpenAI chat with include_usage, and the responses API) for the meter tests. */

export const CONTENTS = ['Hel', 'lo, "wörld"', ' \n🙂 ', '東京\\', ' <|endoftext|> done.'];
export const USAGE = { prompt_tokens: 21, completion_tokens: 13, total_tokens: 34 };

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-4o-mini' };

export interface ChatStream {
  text: string;
  /** The same stream without the usage-only event. */
  withoutUsage: string;
  /** The [DONE] event. */
  done: string;
}

export function chatStream(eol = '\n'): ChatStream {
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}${eol}${eol}`;
  const head = [
    `: keep-alive${eol}${eol}`,
    ev({
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      usage: null,
    }),
    ...CONTENTS.map((c) =>
      ev({ ...base, choices: [{ index: 0, delta: { content: c }, finish_reason: null }], usage: null }),
    ),
    ev({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }),
  ].join('');
  const usage = ev({ ...base, choices: [], usage: USAGE });
  const done = `data: [DONE]${eol}${eol}`;
  return { text: head + usage + done, withoutUsage: head, done };
}

export function responsesStream(): string {
  const ev = (type: string, o: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
  return [
    ev('response.created', { response: { id: 'resp_1', status: 'in_progress', usage: null } }),
    ...CONTENTS.map((delta) => ev('response.output_text.delta', { item_id: 'msg_1', delta })),
    ev('response.output_text.done', { item_id: 'msg_1', text: CONTENTS.join('') }),
    ev('response.completed', {
      response: {
        id: 'resp_1',
        status: 'completed',
        output: [{ type: 'message', content: [{ type: 'output_text', text: CONTENTS.join('') }] }],
        usage: { input_tokens: 9, output_tokens: 7, total_tokens: 16 },
      },
    }),
  ].join('');
}
