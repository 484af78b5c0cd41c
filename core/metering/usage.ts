/**
 * Token usage as upstreams report it: chat/completions/embeddings `usage.prompt_tokens` /
 * `completion_tokens` / `total_tokens`, and the responses API's `usage.input_tokens` / `output_tokens`
 * (also inside a `response.completed` event's `response`).
 */

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** Normalises a `usage` object; `undefined` when it has no valid prompt/input token count. */
export function normalizeUsage(u: unknown): Usage | undefined {
  if (u === null || typeof u !== 'object') return undefined;
  const o = u as Record<string, unknown>;
  const promptTokens = count(o.prompt_tokens) ?? count(o.input_tokens);
  if (promptTokens === undefined) return undefined;
  const completionTokens = count(o.completion_tokens) ?? count(o.output_tokens) ?? 0;
  const totalTokens = count(o.total_tokens) ?? promptTokens + completionTokens;
  return { promptTokens, completionTokens, totalTokens };
}

/** The usage of a non-streamed JSON response body (raw bytes or parsed); `undefined` if it has none. */
export function usageFromJson(body: Uint8Array | object): Usage | undefined {
  let obj: unknown = body;
  if (body instanceof Uint8Array) {
    try {
      obj = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
    } catch {
      return undefined;
    }
  }
  if (obj === null || typeof obj !== 'object') return undefined;
  const o = obj as Record<string, unknown>;
  return (
    normalizeUsage(o.usage) ?? normalizeUsage((o.response as Record<string, unknown> | undefined)?.usage)
  );
}
