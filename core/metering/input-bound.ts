import type { GatewayError } from '../errors.js';
import type { ImageTokenRule } from './image-bound.js';
import { type FileReference, promptTokensUpperBound } from './prompt-bound.js';

/** The operator's bounds of what a body makes the provider read beyond its own bytes (docs/pricing.md "The bound"). */
export interface InputBoundSettings {
  /** IMAGE_MAX_TOKENS: an image on a model whose image rule is not known. */
  imageMaxTokens: number;
  /** REFERENCE_MAX_TOKENS: each file referred to by id or URL; unset: refused. */
  referenceMaxTokens: number | undefined;
  /** STORED_CONTEXT_MAX_TOKENS: a conversation or a stored prompt; unset: refused. */
  storedContextMaxTokens: number | undefined;
  /** WEB_SEARCH_CONTENT_TOKENS: the results each web search call adds to the input. */
  webSearchContentTokens: number;
}

/** One request body to bound: a call's, or a batch input line's. */
export interface InputBoundRequest {
  body: unknown;
  rawBytes: number;
  model: string;
  endpoint: string;
  /** The model's image rule from models.json (`image_tokens`), if any. */
  imageRule: ImageTokenRule | undefined;
  /** A stored prompt or conversation the body refers to (`storedContext(...).unseen`). */
  unseen: string | undefined;
  /** Web search calls the request may make (their results are read as input). */
  webSearchCalls: number;
  /** The model's context window, if the catalogue knows it: no provider bills more input than that. */
  window: number | undefined;
  /** Files named by id whose size bounds their tokens (text uploaded through this gateway): id → tokens. */
  storedFiles?: ReadonlyMap<string, number> | undefined;
}

/**
 * Builds the refusal of a body whose input cannot be bounded, in its caller's words: `refersTo` completes
 * "… refers to <refersTo>"; `references` is the count of files by id or URL (0 for stored context).
 */
export type InputRefusal = (
  code: 'reference_not_bounded' | 'context_not_bounded',
  refersTo: string,
  references: number,
) => GatewayError;

/**
 * The input tokens bound of a token-metered body — the one rule for a call (plugins/reserve.ts) and a batch input
 * line (core/batches/batch-input.ts), so the two cannot drift: the body's bytes, each image by its model's image
 * rule, a stored prompt or conversation at STORED_CONTEXT_MAX_TOKENS, each text file by id this gateway stored at
 * its size (`storedFiles`), each other file by id or URL at REFERENCE_MAX_TOKENS, each web search call's results at WEB_SEARCH_CONTENT_TOKENS, and with a file carried
 * inline at least the model's whole window (its pages), else REFERENCE_MAX_TOKENS for them. Throws `refuse(...)`
 * when a setting it needs is unset. A continued response's context is added by the caller (it needs a store read).
 */
export function inputTokensBound(
  r: InputBoundRequest,
  settings: InputBoundSettings,
  refuse: InputRefusal,
): number {
  let tokens = 0;
  if (r.unseen !== undefined) {
    if (settings.storedContextMaxTokens === undefined) {
      throw refuse(
        'context_not_bounded',
        `${r.unseen === 'prompt' ? 'a stored prompt' : 'a conversation'}, whose tokens this node cannot bound (STORED_CONTEXT_MAX_TOKENS is unset)`,
        0,
      );
    }
    tokens += settings.storedContextMaxTokens;
  }
  const references: FileReference[] = [];
  const inlineFiles = { count: 0 };
  const imageModel = {
    model: r.model,
    endpoint: r.endpoint,
    book: r.imageRule,
    fallbackTokens: settings.imageMaxTokens,
  };
  tokens += promptTokensUpperBound(r.body, r.rawBytes, { imageModel, references, inlineFiles });
  let unbounded: FileReference[] = references;
  if (references.length > 0 && r.storedFiles !== undefined && r.storedFiles.size > 0) {
    const files = r.storedFiles;
    unbounded = [];
    for (const ref of references) {
      const known = ref.by === 'file_id' ? files.get(ref.ref) : undefined;
      if (known === undefined) unbounded.push(ref);
      else tokens += known;
    }
  }
  if (unbounded.length > 0) {
    if (settings.referenceMaxTokens === undefined) {
      throw refuse(
        'reference_not_bounded',
        `a file by ${unbounded[0]!.by === 'url' ? 'URL' : 'id'}, whose tokens this node cannot bound (REFERENCE_MAX_TOKENS is unset): send its content inline`,
        unbounded.length,
      );
    }
    tokens += unbounded.length * settings.referenceMaxTokens;
  }
  const searches = r.webSearchCalls * settings.webSearchContentTokens;
  if (inlineFiles.count === 0) return tokens + searches;
  // An inline file's pages render as images (a PDF: one per page), which its bytes do not bound (a page's
  // objects compress to a few bytes). The provider reads no more than the window, so a known window bounds the
  // request's own input; else each file's pages count REFERENCE_MAX_TOKENS, or the call is refused.
  if (r.window !== undefined && r.window > 0) return Math.max(tokens, r.window) + searches;
  if (settings.referenceMaxTokens === undefined) {
    throw refuse(
      'reference_not_bounded',
      `a file inline, whose pages (rendered as images) this node cannot count: the context length of model ${r.model} is unknown and REFERENCE_MAX_TOKENS is unset`,
      inlineFiles.count,
    );
  }
  return tokens + inlineFiles.count * settings.referenceMaxTokens + searches;
}
