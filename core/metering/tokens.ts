/**
 * Token counting with gpt-tokenizer, for the one case the upstream gives no `usage` (a stream that ended
 * early, an upstream that does not report it). Such charges are marked estimated.
 *
 * Encoding choice: o200k_base (GPT-4o, 4.1, 5, o-series) is the default, also for non-OpenAI models: it is
 * the closest maintained byte-level BPE to today's large-vocabulary tokenizers (Llama 3, Qwen…), whose
 * counts it approximates. cl100k_base is used for the GPT-3.5 / GPT-4 (non-o) / text-embedding families
 * that were trained with it.
 *
 * The encodings are loaded lazily (synchronously, through the package's CommonJS build) on first use, so a
 * gateway whose upstream always reports usage never pays the ~10 MB of rank tables.
 */

import { createRequire } from 'node:module';

interface Encoder {
  countTokens(text: string, opts?: { disallowedSpecial?: Set<string> }): number;
}

const require = createRequire(import.meta.url);
const encoders = new Map<string, Encoder>();
/** Treat special-token text ("<|endoftext|>") in user content as plain text instead of throwing. */
const PLAIN = { disallowedSpecial: new Set<string>() };
/** BPE merging is quadratic on long runs without spaces (100k × "x" takes seconds): count in slices. The
 *  cut costs at most one extra token per slice, which only makes the estimate slightly higher. */
const SLICE = 1024;

export type EncodingName = 'o200k_base' | 'cl100k_base';

const CL100K = /(?:^|\/)(?:gpt-3\.5|gpt-4(?:-|$)|text-embedding-(?:3|ada))/i;

/** The encoding used for `model` (see the module comment). */
export function encodingFor(model: string): EncodingName {
  return CL100K.test(model) ? 'cl100k_base' : 'o200k_base';
}

function encoder(name: EncodingName): Encoder {
  let enc = encoders.get(name);
  if (!enc) {
    enc = require(`gpt-tokenizer/cjs/encoding/${name}`) as Encoder;
    encoders.set(name, enc);
  }
  return enc;
}

/** Number of tokens of `text` under the model's encoding (see `encodingFor`). */
export function countTokens(text: string, model: string): number {
  if (text.length === 0) return 0;
  const enc = encoder(encodingFor(model));
  if (text.length <= SLICE) return enc.countTokens(text, PLAIN);
  let total = 0;
  for (let i = 0; i < text.length; ) {
    let end = Math.min(i + SLICE, text.length);
    // Never cut a surrogate pair.
    if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end++;
    total += enc.countTokens(text.slice(i, end), PLAIN);
    i = end;
  }
  return total;
}

/** Per-message overhead of OpenAI's chat format (<|start|>role…<|end|>) and the reply priming. */
const MESSAGE_TOKENS = 3;
const REPLY_PRIMING_TOKENS = 3;
/** Typical cost of one image (OpenAI, 1024×1024 high detail) — an estimate, not a bound. */
const IMAGE_ESTIMATE_TOKENS = 765;

/**
 * Estimated prompt tokens of a request body (chat `messages`, completions `prompt`, embeddings or responses
 * `input` and `instructions`, `tools`). Used only when the upstream reported no usage.
 */
export function countPromptTokens(body: unknown, model: string): number {
  if (body === null || typeof body !== 'object') return 0;
  const b = body as Record<string, unknown>;
  const parts: string[] = [];
  let extra = 0;
  const collect = (v: unknown): void => {
    if (typeof v === 'string') parts.push(v);
    else if (typeof v === 'number')
      extra++; // a token id (embeddings input given as token arrays)
    else if (Array.isArray(v)) for (const x of v) collect(x);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const type = o.type;
      if (type === 'image_url' || type === 'input_image' || type === 'image') {
        extra += IMAGE_ESTIMATE_TOKENS;
        return;
      }
      for (const [k, x] of Object.entries(o)) if (k !== 'type') collect(x);
    }
  };
  if (Array.isArray(b.messages)) {
    extra += REPLY_PRIMING_TOKENS + MESSAGE_TOKENS * b.messages.length;
    collect(b.messages);
  }
  collect(b.prompt);
  collect(b.input);
  collect(b.instructions);
  if (b.tools !== undefined) parts.push(JSON.stringify(b.tools));
  return extra + countTokens(parts.join('\n'), model);
}
