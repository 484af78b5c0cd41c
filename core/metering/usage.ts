/**
 * The normalised usage record: what a call consumed, each physical token counted ONCE, in the dimensions
 * providers bill separately. Readers below turn every shape a provider reports into it:
 *
 * - OpenAI chat / completions / embeddings `usage` (`prompt_tokens` INCLUDES cached tokens, cache writes,
 *   audio and image tokens; `completion_tokens` INCLUDES reasoning, audio and both accepted and rejected
 *   prediction tokens — rejected ones are billed as output, so they simply stay in `output`);
 * - the Responses API's `usage` (`input_tokens` includes `input_tokens_details.cached_tokens`, `output_tokens`
 *   includes `output_tokens_details.reasoning_tokens`), with web search calls counted from the response's
 *   `web_search_call` output items and the `service_tier` it reports;
 * - Anthropic Messages `usage` (`input_tokens` EXCLUDES the cache; `cache_creation_input_tokens`,
 *   `cache_read_input_tokens`, `cache_creation.{ephemeral_5m,ephemeral_1h}_input_tokens`,
 *   `server_tool_use.web_search_requests`, `service_tier`); streamed, the input and cache counts arrive in
 *   `message_start` and the output total in the last `message_delta` (`mergeAnthropicUsage`).
 *
 * Fields are disjoint: `input` is only the uncached text input, `output` only the text output — reasoning
 * tokens are inside the provider's output count and are split out here so each token is priced once, at its
 * own rate. `inputTotal`/`outputTotal` give the provider's totals back (ledger records, rate limits).
 * A provider's detail that exceeds its total is believed over the total (never fewer tokens than reported).
 */

import type { Usage } from './types.js';

export type { Usage } from './types.js';

/** Which provider API a body or event comes from. */
export type UsageApi = 'openai' | 'responses' | 'anthropic';

export function emptyUsage(): Usage {
  return {
    input: 0,
    cacheRead: 0,
    cacheWrite: 0,
    cacheWrite1h: 0,
    inputAudio: 0,
    cacheReadAudio: 0,
    inputImage: 0,
    output: 0,
    reasoning: 0,
    outputAudio: 0,
    webSearch: 0,
    imageOutput: 0,
    codeInterpreter: 0,
    fileSearch: 0,
  };
}

/** A usage of plain prompt and completion tokens (estimates, flat calls). */
export function simpleUsage(input: number, output: number): Usage {
  const u = emptyUsage();
  u.input = input;
  u.output = output;
  return u;
}

/** Every input token, as a provider's input total counts them (for the ledger and rate limits). */
export function inputTotal(u: Usage): number {
  return (
    u.input + u.cacheRead + u.cacheWrite + u.cacheWrite1h + u.inputAudio + u.cacheReadAudio + u.inputImage
  );
}

/** Every output token, reasoning and audio included. */
export function outputTotal(u: Usage): number {
  return u.output + u.reasoning + u.outputAudio + u.imageOutput;
}

/**
 * Reasoning the provider left out: when `total` exceeds the input and output it itemised, the rest is output it
 * billed and did not name (some OpenAI-compatible providers report `completion_tokens` without reasoning).
 * Charged as reasoning (an output dimension) and named in `unreportedOutput` for the metric.
 */
function addUnreported(u: Usage, total: unknown, input: number, output: number): void {
  const t = count(total);
  if (t === undefined || t <= input + output) return;
  const gap = t - input - output;
  u.reasoning += gap;
  u.unreportedOutput = gap;
}

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** A count or 0. */
function n(v: unknown): number {
  return count(v) ?? 0;
}

function tier(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' && v.length <= 64 ? v : undefined;
}

/**
 * OpenAI chat / completions / embeddings `usage`; `serviceTier` is the body's top-level `service_tier`.
 * `undefined` when it has no `prompt_tokens`.
 */
export function usageFromOpenAi(usage: unknown, serviceTier?: unknown): Usage | undefined {
  const o = obj(usage);
  const prompt = count(o?.prompt_tokens);
  if (o === undefined || prompt === undefined) return undefined;
  const pd = obj(o.prompt_tokens_details);
  const cd = obj(o.completion_tokens_details);
  const u = emptyUsage();
  u.cacheRead = n(pd?.cached_tokens);
  u.cacheWrite = n(pd?.cache_write_tokens);
  u.inputAudio = n(pd?.audio_tokens);
  u.inputImage = n(pd?.image_tokens);
  u.input = Math.max(0, prompt - u.cacheRead - u.cacheWrite - u.inputAudio - u.inputImage);
  u.reasoning = n(cd?.reasoning_tokens);
  u.outputAudio = n(cd?.audio_tokens);
  // Accepted and rejected prediction tokens are inside completion_tokens and billed as output: they stay there.
  u.output = Math.max(0, n(o.completion_tokens) - u.reasoning - u.outputAudio);
  u.serviceTier = tier(serviceTier);
  addUnreported(u, o.total_tokens, inputTotal(u), outputTotal(u));
  // OpenRouter's web plugin and `:online` models report their searches like Anthropic does.
  u.webSearch = n(obj(o.server_tool_use)?.web_search_requests);
  return u;
}

/**
 * A Responses API response object (the JSON body, or the `response` of a `response.completed`,
 * `response.incomplete` or `response.failed` event). `undefined` when it carries no usage.
 */
export function usageFromResponse(response: unknown): Usage | undefined {
  const r = obj(response);
  const o = obj(r?.usage);
  const input = count(o?.input_tokens);
  if (r === undefined || o === undefined || input === undefined) return undefined;
  const id = obj(o.input_tokens_details);
  const od = obj(o.output_tokens_details);
  const u = emptyUsage();
  u.cacheRead = n(id?.cached_tokens);
  u.inputAudio = n(id?.audio_tokens);
  u.inputImage = n(id?.image_tokens);
  u.input = Math.max(0, input - u.cacheRead - u.inputAudio - u.inputImage);
  u.reasoning = n(od?.reasoning_tokens);
  u.outputAudio = n(od?.audio_tokens);
  u.output = Math.max(0, n(o.output_tokens) - u.reasoning - u.outputAudio);
  addUnreported(u, o.total_tokens, inputTotal(u), outputTotal(u));
  if (Array.isArray(r.output)) {
    const containers = new Set<string>();
    for (const item of r.output) {
      const it = obj(item);
      const type = it?.type;
      if (type === 'web_search_call') u.webSearch++;
      else if (type === 'file_search_call') u.fileSearch++;
      else if (type === 'code_interpreter_call') {
        // Billed per container: calls that share one are one charge; a call naming none is its own.
        const c = typeof it?.container_id === 'string' ? it.container_id : undefined;
        if (c === undefined) u.codeInterpreter++;
        else if (!containers.has(c)) {
          containers.add(c);
          u.codeInterpreter++;
        }
      }
    }
  }
  // The image_generation tool is billed outside `usage`: its image model's input (text and images, priced as
  // input here) and image output tokens.
  const gen = obj(obj(r.tool_usage)?.image_gen);
  if (gen !== undefined) {
    u.input += n(gen.input_tokens);
    u.imageOutput += n(gen.output_tokens);
  }
  u.serviceTier = tier(r.service_tier);
  return u;
}

/** Anthropic Messages `usage` (JSON body, or the merged stream counts). `undefined` without input_tokens. */
export function usageFromAnthropic(usage: unknown): Usage | undefined {
  const o = obj(usage);
  const input = count(o?.input_tokens);
  if (o === undefined || input === undefined) return undefined;
  const u = emptyUsage();
  u.input = input;
  u.cacheRead = n(o.cache_read_input_tokens);
  const created = n(o.cache_creation_input_tokens);
  const split = obj(o.cache_creation);
  u.cacheWrite1h = n(split?.ephemeral_1h_input_tokens);
  // 5-minute writes are the default lifetime: what the split does not name as 1-hour is priced as 5-minute.
  u.cacheWrite = Math.max(n(split?.ephemeral_5m_input_tokens), created - u.cacheWrite1h);
  // Anthropic counts thinking inside output_tokens and does not split it out: it is priced as output.
  u.output = n(o.output_tokens);
  u.webSearch = n(obj(o.server_tool_use)?.web_search_requests);
  u.serviceTier = tier(o.service_tier);
  return u;
}

/**
 * Streamed Anthropic usage: `message_start.message.usage` first, then each `message_delta.usage`, whose fields
 * replace the earlier ones (they are cumulative; the last delta carries the output total). Returns `into`.
 */
export function mergeAnthropicUsage(into: Obj, usage: unknown): Obj {
  const o = obj(usage);
  if (o === undefined) return into;
  for (const k in o) if (o[k] !== null && o[k] !== undefined) into[k] = o[k];
  return into;
}

/** The usage of a parsed, non-streamed body of `api`; `undefined` if it has none. */
export function usageOfBody(api: UsageApi, body: unknown): Usage | undefined {
  const o = obj(body);
  if (o === undefined) return undefined;
  switch (api) {
    case 'openai':
      return usageFromOpenAi(o.usage, o.service_tier);
    case 'responses':
      return usageFromResponse(o) ?? usageFromResponse(o.response);
    case 'anthropic':
      return usageFromAnthropic(o.usage);
  }
}

/** The usage of a non-streamed JSON response body (raw bytes or parsed); `undefined` if it has none. */
export function usageFromJson(api: UsageApi, body: Uint8Array | object): Usage | undefined {
  let parsed: unknown = body;
  if (body instanceof Uint8Array) {
    try {
      parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
    } catch {
      return undefined;
    }
  }
  return usageOfBody(api, parsed);
}
