/**
 * What a relayed call used, read from its answer: the usage the provider reported (a whole body, or the stream
 * meter's count), or an estimate when it reported none. The settle stage (plugins/settle.ts) prices what this
 * returns; it decides nothing about money itself. docs/pricing.md, "A call that reached the provider is never
 * free", for the abandoned calls.
 */

import { isUnitEndpoint, type PricedEndpoint } from '../pricing/types.js';
import type { StreamMeter } from './stream-meter.js';
import { countPromptTokens, countTokens } from './tokens.js';
import { inputTotal, simpleUsage, type Usage, type UsageApi, usageOfBody } from './usage.js';
import { openAiUsageFromTail } from './usage-tail.js';

/** What a call used: a usage record (token endpoints) or units (unit endpoints); nothing for flat calls. */
export interface Metered {
  usage?: Usage;
  /** Unit endpoints: images returned, milliseconds of audio, characters of speech input. */
  units?: number;
  estimated: boolean;
  /** The client left and no usage came (abandoned calls): charged at least this, the reservation, for a model
   *  that reasons (its hidden reasoning is unknown). */
  atLeastMsat?: number;
}

/** A call whose client left while its answer was read on (the runner's drainAfterAbortMs). */
export interface AbandonedCall {
  /** The prompt tokens the reservation counted (its bound), when it counted them. */
  promptTokensBound: number | undefined;
  /** The model reasons (asked to, priced for internal reasoning, or a background response run on unseen). */
  reasons: boolean;
  /** The reservation's msats. */
  reservedMsat: number | undefined;
}

/** What the settle stage knows of a call's answer when it charges it. */
export interface AnsweredCall {
  endpoint: PricedEndpoint;
  model: string;
  /** The request body as parsed (the prompt of an estimate). */
  requestBody: unknown;
  /** Unit endpoints: the units reserved for. */
  reservedUnits: number | undefined;
  /** A provider answered (the relay attached its response). */
  relayed: boolean;
  /** The provider answered with an error status. */
  failed: boolean;
  /** The answer's first byte came. */
  started: boolean;
  /** The whole answer was read. */
  ended: boolean;
  /** The stream meter of a streamed answer. */
  stream: StreamMeter | undefined;
  /** The chunks of a non-stream JSON answer. */
  body: Buffer[] | undefined;
  /** Set when the client left and the answer was read on. */
  abandoned: AbandonedCall | undefined;
}

/** Request fields that ask a model to reason (OpenAI chat and Responses, OpenRouter, Anthropic). */
export function asksForReasoning(body: unknown): boolean {
  const b = body as Record<string, unknown> | null;
  if (b === null || typeof b !== 'object') return false;
  if (typeof b.reasoning_effort === 'string' && b.reasoning_effort !== 'none') return true;
  const r = b.reasoning as { effort?: unknown; enabled?: unknown; max_tokens?: unknown } | null | undefined;
  if (r !== null && typeof r === 'object' && r.enabled !== false && r.effort !== 'none') return true;
  const t = b.thinking as { type?: unknown } | null | undefined;
  return t !== null && typeof t === 'object' && t.type !== 'disabled';
}

/** The provider API whose usage shape an endpoint's answers carry. */
export function usageApi(endpoint: PricedEndpoint): UsageApi {
  return endpoint === 'responses' ? 'responses' : endpoint === 'messages' ? 'anthropic' : 'openai';
}

/** "12 prompt + 3 input_cache_read + 5 completion" — the dimensions a call used, for the ledger record. */
export function describeUsage(u: Usage): string {
  const parts: string[] = [];
  const add = (n: number, name: string) => {
    if (n > 0) parts.push(`${n} ${name}`);
  };
  add(u.input, 'prompt');
  add(u.cacheRead, 'cache read');
  add(u.cacheWrite, 'cache write');
  add(u.cacheWrite1h, 'cache write 1h');
  add(u.inputAudio, 'input audio');
  add(u.inputImage, 'input image');
  add(u.output, 'completion');
  add(u.reasoning, 'reasoning');
  add(u.outputAudio, 'output audio');
  const tokens = parts.length > 0 ? `${parts.join(' + ')} tokens` : '0 tokens';
  const calls = u.webSearch > 0 ? ` + ${u.webSearch} web search calls` : '';
  return `${tokens}${calls}${u.serviceTier !== undefined ? ` (${u.serviceTier} tier)` : ''}`;
}

/** How the ledger record names the units of each unit endpoint. */
export const UNIT_NAMES = { images: 'images', audio: 'ms of audio', speech: 'characters' } as const;

/** Images an image answer carries (`data.length`), or undefined when the body is not such an answer. */
export function imagesReturned(raw: Buffer): number | undefined {
  try {
    const data = (JSON.parse(raw.toString('utf8')) as { data?: unknown } | null)?.data;
    return Array.isArray(data) ? data.length : undefined;
  } catch {
    return undefined;
  }
}

/** Strings a model produced in a non-stream body (for the estimate when it carries no usage): chat and
 *  completions `choices`, Responses `output[].content[].text`, Anthropic `content[].text` / `thinking`. */
export function producedText(body: unknown): string {
  const out: string[] = [];
  const b = body as { choices?: unknown; output?: unknown; content?: unknown } | null;
  if (Array.isArray(b?.choices)) {
    for (const c of b.choices) {
      const m = (c as { message?: { content?: unknown }; text?: unknown }) ?? {};
      if (typeof m.message?.content === 'string') out.push(m.message.content);
      if (typeof m.text === 'string') out.push(m.text);
    }
  }
  const blocks = (items: unknown) => {
    if (!Array.isArray(items)) return;
    for (const it of items) {
      const o = (it ?? {}) as { text?: unknown; thinking?: unknown; content?: unknown };
      if (typeof o.text === 'string') out.push(o.text);
      if (typeof o.thinking === 'string') out.push(o.thinking);
      blocks(o.content);
    }
  };
  blocks(b?.output);
  blocks(b?.content);
  return out.join('\n');
}

/**
 * A call the client left whose usage never came within the drain (docs/pricing.md, "A call that reached the
 * provider is never free"): the prompt at its bound (what the reservation counted) plus the output seen; a
 * model that reasons its whole reservation, its hidden reasoning being unknown.
 */
export function abandonedUsage(call: AnsweredCall, a: AbandonedCall, seen: Usage): Metered {
  const bound = a.promptTokensBound ?? countPromptTokens(call.requestBody, call.model);
  const usage = { ...seen, input: seen.input + Math.max(0, bound - inputTotal(seen)) };
  return {
    usage,
    estimated: true,
    ...(a.reasons && a.reservedMsat !== undefined ? { atLeastMsat: a.reservedMsat } : {}),
  };
}

/** A whole non-stream answer: the usage it reports, or the estimate from the prompt and the text produced. */
export function usageOfAnswer(call: AnsweredCall, raw: Buffer): Metered {
  if (usageApi(call.endpoint) === 'openai') {
    const fromTail = openAiUsageFromTail(raw);
    if (fromTail !== null) return { usage: fromTail, estimated: false };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const usage = usageOfBody(usageApi(call.endpoint), parsed);
  if (usage) return { usage, estimated: false };
  return {
    usage: simpleUsage(
      countPromptTokens(call.requestBody, call.model),
      countTokens(producedText(parsed), call.model),
    ),
    estimated: true,
  };
}

/** What the call used, or undefined when nothing is to be charged. */
export function meteredUsage(call: AnsweredCall): Metered | undefined {
  if (!call.relayed || call.failed) return undefined;
  const abandoned = call.abandoned;
  // Failed or abandoned before the upstream's first byte.
  if (!call.started && !call.ended && abandoned === undefined) return undefined;
  if (isUnitEndpoint(call.endpoint)) {
    const reserved = call.reservedUnits ?? 0;
    // Images: what came back (data.length); a body that says nothing pays what was asked for.
    const returned =
      call.endpoint === 'images' && call.body && call.ended
        ? imagesReturned(Buffer.concat(call.body))
        : undefined;
    return { units: returned ?? reserved, estimated: false };
  }
  if (call.endpoint === 'other' || call.endpoint === 'free') return { estimated: false };
  if (call.stream) {
    const r = call.stream.result();
    return r.estimated && abandoned !== undefined ? abandonedUsage(call, abandoned, r.usage) : r;
  }
  if (call.body && call.ended) return usageOfAnswer(call, Buffer.concat(call.body));
  if (abandoned !== undefined) return abandonedUsage(call, abandoned, simpleUsage(0, 0));
  // Failed after the upstream started answering: the prompt was processed.
  return { usage: simpleUsage(countPromptTokens(call.requestBody, call.model), 0), estimated: true };
}
