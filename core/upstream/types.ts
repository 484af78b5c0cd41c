import type { ImageTokenRule } from '../metering/types.js';
import type { UsdRates } from '../pricing/types.js';

/**
 * The model catalogue's types (model-catalog.ts is the implementation): what the plugin contract
 * (core/service-types.ts `Services.catalog`), the providers and the routes name without importing the
 * implementation, which parses price books and image rules.
 */

/**
 * A model's price book (decimal strings of USD). All optional but `request` (default "0"); a call that needs a
 * missing one is refused (`model_not_priced`), never priced at zero. See docs/pricing.md.
 */
export interface ModelPricing {
  /** USD per prompt token. */
  prompt?: string;
  /** USD per completion token. */
  completion?: string;
  /** USD per request. */
  request: string;
  /** USD per generated image (any size and quality). */
  image?: string;
  /** USD per image by size, then quality: `{"1024x1024": {"standard": "0.04", "hd": "0.08"}}`. */
  image_sizes?: Record<string, Record<string, string>>;
  /** USD per minute of input audio (transcriptions, translations), pro rata to the millisecond. */
  audio_minute?: string;
  /** USD per 1,000 characters of speech input. */
  speech_1k_chars?: string;
  /** Batch API price multiplier on the model's price (e.g. "0.5"); absent: BATCH_PRICE_FACTOR. */
  batch?: string;
  /** USD per token of the other usage dimensions (OpenRouter's names); an absent one is charged at its
   *  direction's base rate (`prompt` for input, `completion` for output, `request` for web search calls). */
  input_cache_read?: string;
  input_cache_write?: string;
  input_cache_write_1h?: string;
  internal_reasoning?: string;
  input_audio?: string;
  /** Cached audio input (the Realtime API's `cached_tokens_details.audio_tokens`). */
  input_audio_cache_read?: string;
  output_audio?: string;
  input_image?: string;
  /** USD per web search call. */
  web_search?: string;
  /** Hosted tools: USD per image output token of the `image_generation` tool, per `code_interpreter` container,
   *  per `file_search` call. A call declaring a tool its model has no price for is refused (`tool_not_priced`). */
  image_output?: string;
  code_interpreter?: string;
  file_search?: string;
  /** The most image output tokens one `image_generation` call can bill (the bound; default 6,240, gpt-image-1's
   *  largest high-quality image). A decimal string of a positive integer. */
  image_output_max_tokens?: string;
  /** Multiplier on the whole call's provider price by the service tier the provider reports. */
  service_tiers?: Record<string, string>;
  /** Where the prices came from (free text, e.g. "openrouter" or a URL) and when (ISO date). */
  source?: string;
  updated_at?: string;
}

export interface CatalogModel {
  id: string;
  name: string;
  /** Unix seconds. */
  created: number;
  owned_by: string;
  context_length?: number;
  pricing?: ModelPricing;
  supports_vision?: boolean;
  /** models.json `image_tokens`: how the provider counts an image's input tokens (core/metering/image-bound.ts). */
  image_tokens?: ImageTokenRule;
  /** The OpenAI model object's `permission` array, passed through as the file or provider gives it. */
  permission?: unknown[];
}

/** The model list as services expose it (`Services.catalog`; model-catalog.ts `ModelCatalog`). */
export interface ModelCatalog {
  /** Fetches the provider list once (failures tolerated) and schedules periodic refreshes. */
  start(): Promise<void>;
  /** Stops the refresh and retry timers and the models.json watch. */
  stop(): void;
  /** Re-reads models.json; a file that no longer parses keeps the last good price book. Whether it was taken. */
  reloadFile(): boolean;
  /** Reloads models.json when it changes (polled every `intervalMs`, default 1 s). */
  watch(intervalMs?: number): void;
  /** Re-fetches the provider list now; false (the last list kept, a retry scheduled) when that fails. */
  refresh(): Promise<boolean>;
  list(): CatalogModel[];
  get(id: string): CatalogModel | undefined;
  /** USD rates of a model as decimal strings, when its prices are known (one object per price book). */
  usdRates(id: string): UsdRates | undefined;
}
