/**
 * The metering types the pipeline and pricing may name without reaching the meters themselves (the import
 * rule `pipeline-reaches-no-money-implementation`, .dependency-cruiser.cjs). The readers that fill a `Usage`
 * from a provider's report are in usage.ts; what each field means for the price is in docs/pricing.md.
 */

/**
 * The normalised usage record: what a call consumed, each physical token counted ONCE, in the dimensions
 * providers bill separately (usage.ts explains how each provider's report maps onto it).
 */
export interface Usage {
  /** Input tokens neither read from nor written to a cache, not audio or image: priced at `prompt`. */
  input: number;
  /** Input tokens read from the prompt cache (`input_cache_read`). */
  cacheRead: number;
  /** Input tokens written to the cache with the default (5-minute) lifetime (`input_cache_write`). */
  cacheWrite: number;
  /** Input tokens written to the cache with a 1-hour lifetime (Anthropic; `input_cache_write_1h`). */
  cacheWrite1h: number;
  /** Audio input tokens (`input_audio`). */
  inputAudio: number;
  /** Audio input tokens read from the prompt cache (`input_audio_cache_read`; the Realtime API's cached audio). */
  cacheReadAudio: number;
  /** Image input tokens (`input_image`). */
  inputImage: number;
  /** Text output tokens, not reasoning, not audio (`completion`). */
  output: number;
  /** Reasoning ("thinking") tokens, which providers count inside output (`internal_reasoning`). */
  reasoning: number;
  /** Audio output tokens (`output_audio`). */
  outputAudio: number;
  /** Server-side web search calls (`web_search`, priced per call). */
  webSearch: number;
  /** Image output tokens of the Responses `image_generation` tool (`tool_usage.image_gen.output_tokens`). */
  imageOutput: number;
  /** Code interpreter containers the provider ran (`code_interpreter_call` items, distinct containers). */
  codeInterpreter: number;
  /** File search calls (`file_search_call` output items). */
  fileSearch: number;
  /**
   * Output tokens the provider counted in `total_tokens` but in neither prompt nor completion (reasoning some
   * OpenAI-compatible providers leave out): already added to `reasoning`, named here for the metric.
   */
  unreportedOutput?: number | undefined;
  /** The service tier the provider says it used (`flex`, `priority`, …), when it says. */
  serviceTier?: string | undefined;
}

/**
 * How many input tokens a provider may bill for one image in the prompt: an UPPER bound, from the image's size when
 * its header is inline (a `data:` URL, Anthropic base64) and from the most the formula allows otherwise (a remote
 * URL, a file id). docs/pricing.md "Images in the prompt"; image-bound.ts computes it.
 *
 * - `tiles` (OpenAI GPT-4o, GPT-4.1, o1/o3…): `detail: "low"` costs `base`; otherwise the image is scaled to fit
 *   2048×2048, then its shortest side to 768, and costs `base + tile × ⌈w/512⌉ × ⌈h/512⌉`. Scaled dimensions are
 *   rounded up, and a small image is also counted as if it were scaled UP to 768 (whichever has more tiles), so
 *   the bound holds whichever way the provider rounds or scales. At most 8 tiles (768 × 2048).
 * - `patches` (OpenAI GPT-4.1-mini/nano, o4-mini): `⌈w/32⌉ × ⌈h/32⌉` patches, at most `maxPatches`, × `multiplier`
 *   (every detail: low is not cheaper there).
 * - `area` (Anthropic): `⌈w × h / pixelsPerToken⌉`, at most `maxTokens` (what its resize keeps).
 * - `fixed`: `tokens` for every image (a model whose formula is not known).
 */
export type ImageTokenRule =
  | { formula: 'tiles'; base: number; tile: number }
  | { formula: 'patches'; multiplier: number; maxPatches: number }
  | { formula: 'area'; pixelsPerToken: number; maxTokens: number }
  | { formula: 'fixed'; tokens: number };
