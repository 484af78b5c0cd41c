/**
 * A cheap, safe upper bound of a request's prompt tokens, for the reservation (no tokenizer on the hot path).
 *
 * Why it is safe: every byte-level BPE tokenizer (GPT's cl100k/o200k, Llama 3, Qwen, Mistral's tekken…)
 * and SentencePiece with byte fallback emits at least one UTF-8 byte per token, so a text never has more
 * tokens than bytes, and a concatenation never has more tokens than the sum of its parts' bytes. The
 * bound therefore counts:
 * - the UTF-8 bytes of every string, key and number anywhere in the body (what a chat template renders is
 *   drawn from these), except image/audio/file payloads;
 * - for `tools`, `functions`, `response_format`, `tool_choice` and the responses API's `text` (schemas a
 *   template may re-render with its own punctuation and spacing): twice the bytes of their JSON, plus
 *   TOOLS_OVERHEAD once for the template's tool instructions;
 * - PER_ITEM_OVERHEAD tokens per message / input item (role, special tokens: ChatML, Llama 3, Gemma and
 *   OpenAI use ≤ 7) and BASE_OVERHEAD per request (BOS, generation prompt, date headers some templates add);
 * - a fixed bound per image (`imageTokens`, default 3000: OpenAI's worst case is ~2,500 for gpt-4.1-mini
 *   patches; providers that tokenise images at native resolution can exceed it — configure it);
 *   audio at 1 token per 64 base64 characters (≥ 10× OpenAI's ~10 tokens/s); files (PDF) at 4 tokens per
 *   base64 character (deflated text expands ≤ 4×).
 * A body that is not a JSON object falls back to its raw byte length plus BASE_OVERHEAD.
 */

export interface PromptBoundOptions {
  /** Bound per image part. Default 3000. */
  imageTokens?: number;
}

const BASE_OVERHEAD = 64;
const PER_ITEM_OVERHEAD = 16;
const TOOLS_OVERHEAD = 512;
const STRUCTURED_KEYS = new Set(['tools', 'functions', 'response_format', 'tool_choice', 'text']);
const ITEM_LIST_KEYS = new Set(['messages', 'input']);

export function promptTokensUpperBound(
  body: unknown,
  rawBytes: number,
  opts: PromptBoundOptions = {},
): number {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return rawBytes + BASE_OVERHEAD;
  const imageTokens = opts.imageTokens ?? 3000;
  let total = BASE_OVERHEAD;
  // Iterative walk with a bounded stack: request bodies can nest deeply (tool schemas); no recursion limit.
  const stack: unknown[] = [];
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    total += Buffer.byteLength(key);
    if (STRUCTURED_KEYS.has(key) && value !== null && typeof value === 'object') {
      total += 2 * Buffer.byteLength(JSON.stringify(value)) + TOOLS_OVERHEAD;
      continue;
    }
    if (ITEM_LIST_KEYS.has(key) && Array.isArray(value)) total += PER_ITEM_OVERHEAD * value.length;
    stack.push(value);
  }
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += Buffer.byteLength(v);
    else if (typeof v === 'number' || typeof v === 'boolean') total += String(v).length;
    else if (Array.isArray(v)) for (const x of v) stack.push(x);
    else if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const media = mediaBound(o, imageTokens);
      if (media !== undefined) {
        total += media;
        continue;
      }
      for (const k in o) {
        total += Buffer.byteLength(k);
        stack.push(o[k]);
      }
    }
  }
  return total;
}

/** Tokens of an image/audio/file content part, or undefined if `o` is not one. */
function mediaBound(o: Record<string, unknown>, imageTokens: number): number | undefined {
  switch (o.type) {
    case 'image_url':
    case 'input_image':
    case 'image':
      return imageTokens + PER_ITEM_OVERHEAD;
    case 'input_audio': {
      const data = (o.input_audio as Record<string, unknown> | undefined)?.data;
      return Math.ceil((typeof data === 'string' ? data.length : 0) / 64) + PER_ITEM_OVERHEAD;
    }
    case 'file':
    case 'input_file': {
      const f = (o.file as Record<string, unknown> | undefined) ?? o;
      const data = f.file_data ?? f.file_url ?? f.file_id;
      return 4 * (typeof data === 'string' ? data.length : 0) + imageTokens + PER_ITEM_OVERHEAD;
    }
    default:
      return undefined;
  }
}
