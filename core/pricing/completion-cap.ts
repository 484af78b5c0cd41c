import type { TokenEndpoint } from './types.js';

/** Completion tokens of a "minimal answer": what a balance must afford beside the prompt bound. */
export const MIN_COMPLETION_TOKENS = 16;

/** The completion cap of a call that sets none, on a model whose context length is unknown (chat, Responses). */
export const DEFAULT_MAX_COMPLETION_TOKENS = 4096;

/** The legacy completions API's own default `max_tokens` (OpenAI's API reference): what such a call gets. */
const LEGACY_COMPLETIONS_DEFAULT = 16;

/** The completion cap a token-metered call's bound prices, and whether the provider must be told it. */
export interface CompletionCap {
  cap: number;
  /**
   * True when nothing but the gateway bounds the output (the caller set no cap and the model's context length is
   * unknown): the cap is written into the forwarded body (`capField`), so the provider keeps to it.
   */
  told: boolean;
}

/**
 * The completion cap of a token-metered call (docs/pricing.md "The bound"):
 * - the caller's (the largest of its max-tokens fields): the provider keeps to it;
 * - none, the model's context length known: the whole window. The provider fits prompt and output into it, so
 *   whatever the real prompt (which may be far below its byte bound), the output cannot exceed the window;
 * - none, the window unknown: `defaultMax` (the legacy completions API: its own default, 16), told to the
 *   provider, since nothing else bounds what it may write.
 */
export function completionCap(
  endpoint: TokenEndpoint,
  callerMax: number | undefined,
  contextLength: number | undefined,
  defaultMax = DEFAULT_MAX_COMPLETION_TOKENS,
): CompletionCap {
  if (callerMax !== undefined) return { cap: callerMax, told: false };
  if (contextLength !== undefined && contextLength > 0) {
    return { cap: Math.max(contextLength, MIN_COMPLETION_TOKENS), told: false };
  }
  return { cap: endpoint === 'completions' ? LEGACY_COMPLETIONS_DEFAULT : defaultMax, told: true };
}

/**
 * The body field a cap is told in: `max_output_tokens` (Responses), `max_completion_tokens` (chat: OpenAI's
 * current field, the only one its reasoning models accept), `max_tokens` (legacy completions).
 */
export function capField(endpoint: TokenEndpoint): string {
  if (endpoint === 'responses') return 'max_output_tokens';
  return endpoint === 'chat' ? 'max_completion_tokens' : 'max_tokens';
}
