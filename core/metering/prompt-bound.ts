import {
  type ImageTokenRule,
  imageRuleFor,
  imageTokens,
  inlineImageSize,
  maxImageTokens,
} from './image-bound.js';

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
 * - each image by its model's image rule (`imageRule`, core/metering/image-bound.ts): from its size, read from the
 *   header of an inline image (`data:` URL, Anthropic base64), and its `detail`; an image by URL or file id at
 *   the most the rule allows for that detail. Without a rule, a fixed `imageTokens` (default 3000) each;
 *   audio at 1 token per 64 base64 characters (≥ 10× OpenAI's ~10 tokens/s); inline files (PDF) at 4 tokens per
 *   base64 character (deflated text expands ≤ 4×) plus one image at the rule's most (a page rendered).
 * - files by id or URL (Responses `input_file`, chat `file`, Anthropic `document` url/file sources): the body does
 *   not carry them. With `references`, each is listed there and counted here as PER_ITEM_OVERHEAD only (the caller
 *   adds its bound or refuses the call); without, as before: 4 tokens per character of the reference plus one
 *   image.
 * A body that is not a JSON object falls back to its raw byte length plus BASE_OVERHEAD.
 */

export interface PromptBoundOptions {
  /** Bound per image part when no `imageRule` is given. Default 3000. */
  imageTokens?: number;
  /** The image token rule (the provider's formula): images bounded by size and detail. */
  imageRule?: ImageTokenRule;
  /**
   * Instead of `imageRule`: the model whose rule applies (`imageRuleFor`), chosen at the first image or file only
   * (a text-only call pays nothing for it).
   */
  imageModel?: { model: string; endpoint: string; book: ImageTokenRule | undefined; fallbackTokens: number };
  /** When given, receives every file the body refers to by id or URL (see above). */
  references?: FileReference[];
  /**
   * When given, counts the files the body carries inline (base64: a PDF), whose text is bounded here but whose
   * pages the provider also renders as images, which nothing here counts (core/metering/input-bound.ts bounds them).
   */
  inlineFiles?: { count: number };
}

/** A file the provider fetches and bills but the body does not carry. */
export interface FileReference {
  /** `file_id` (a file stored at the provider) or `url` (fetched by the provider). */
  by: 'file_id' | 'url';
  /** The id or URL, as the body gives it. */
  ref: string;
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
  // No closure here: one in this function made the text-only walk about twice as slow (measured).
  const rule = new RuleOf(opts);
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
      const media = mediaBound(o, rule, opts.references, opts.inlineFiles);
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

/** The walk's image rule, chosen at its first image or file (a text-only call never chooses one). */
class RuleOf {
  private chosen: ImageTokenRule | undefined;
  constructor(private readonly opts: PromptBoundOptions) {}

  get(): ImageTokenRule {
    if (this.chosen === undefined) {
      const { imageRule, imageModel } = this.opts;
      this.chosen =
        imageRule ??
        (imageModel !== undefined
          ? imageRuleFor(imageModel.model, imageModel.endpoint, imageModel.book, imageModel.fallbackTokens)
          : { formula: 'fixed', tokens: this.opts.imageTokens ?? 3000 });
    }
    return this.chosen;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const objOf = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** An image whose bytes are inline (`data:` URL or bare base64) or elsewhere (a URL, a file id: unknown size). */
function imageBound(rule: RuleOf, source: string | undefined, detail: unknown): number {
  const size = source !== undefined && !/^https?:/i.test(source) ? inlineImageSize(source) : undefined;
  return imageTokens(rule.get(), size, detail) + PER_ITEM_OVERHEAD;
}

/** An inline file (base64 text): 4 tokens per character, plus one image at the rule's most; counted in `inline`. */
function inlineFileBound(data: string, rule: RuleOf, inline?: { count: number }): number {
  if (inline !== undefined) inline.count++;
  return 4 * data.length + maxImageTokens(rule.get()) + PER_ITEM_OVERHEAD;
}

/** A file by id or URL: listed for the caller (its overhead here), or the old bound when nobody listens. */
function referenceBound(ref: FileReference, rule: RuleOf, references: FileReference[] | undefined): number {
  if (references === undefined) return inlineFileBound(ref.ref, rule);
  references.push(ref);
  return PER_ITEM_OVERHEAD;
}

/** Tokens of an image/audio/file content part, or undefined if `o` is not one. */
function mediaBound(
  o: Record<string, unknown>,
  rule: RuleOf,
  references: FileReference[] | undefined,
  inline: { count: number } | undefined,
): number | undefined {
  switch (o.type) {
    case 'image_url': {
      // Chat: {"image_url": {"url", "detail"}} (or the URL alone).
      const v = o.image_url;
      const part = objOf(v);
      return imageBound(rule, part !== undefined ? str(part.url) : str(v), part?.detail ?? o.detail);
    }
    case 'input_image':
      // Responses: {"image_url": "data:…" | "https://…"} or {"file_id"}, with "detail".
      return imageBound(rule, str(o.image_url), o.detail);
    case 'image': {
      // Anthropic: {"source": {"type": "base64", "data"} | {"type": "url", "url"} | {"type": "file", "file_id"}}.
      const source = objOf(o.source);
      return imageBound(rule, source?.type === 'base64' ? str(source.data) : undefined, undefined);
    }
    case 'input_audio': {
      const data = (o.input_audio as Record<string, unknown> | undefined)?.data;
      return Math.ceil((typeof data === 'string' ? data.length : 0) / 64) + PER_ITEM_OVERHEAD;
    }
    case 'file':
    case 'input_file': {
      const f = objOf(o.file) ?? o;
      const data = str(f.file_data);
      if (data !== undefined) return inlineFileBound(data, rule, inline);
      const id = str(f.file_id);
      if (id !== undefined) return referenceBound({ by: 'file_id', ref: id }, rule, references);
      const url = str(f.file_url);
      if (url !== undefined) return referenceBound({ by: 'url', ref: url }, rule, references);
      return inlineFileBound('', rule);
    }
    case 'document': {
      // Anthropic: base64 (PDF) inline; text and content blocks are walked as text; url and file by reference.
      const source = objOf(o.source);
      if (source?.type === 'base64') return inlineFileBound(str(source.data) ?? '', rule, inline);
      if (source?.type === 'url')
        return referenceBound({ by: 'url', ref: str(source.url) ?? '' }, rule, references);
      if (source?.type === 'file')
        return referenceBound({ by: 'file_id', ref: str(source.file_id) ?? '' }, rule, references);
      return undefined;
    }
    default:
      return undefined;
  }
}
