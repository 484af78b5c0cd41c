import type { Usage } from '../metering/types.js';
import type { DimensionKey, ExtraDimensionKey } from './types.js';

// The keys are written out in ./types.ts (the types the pipeline may name without this module).
export type { DimensionKey, ExtraDimensionKey };

/**
 * The priced dimensions of a metered call, named as OpenRouter names its price fields (models.json, a
 * provider's `pricing`, /v1/models and the `x-node-cost` breakdown use the same names). Each maps to one
 * field of the normalised usage record (core/metering/usage.ts) and has a direction: a dimension without a
 * price is charged at its direction's base rate (`prompt` for input, `completion` for output, `request` per
 * call), never at zero.
 */
export const DIMENSIONS = [
  { key: 'prompt', field: 'input', direction: 'input' },
  { key: 'input_cache_read', field: 'cacheRead', direction: 'input' },
  { key: 'input_cache_write', field: 'cacheWrite', direction: 'input' },
  { key: 'input_cache_write_1h', field: 'cacheWrite1h', direction: 'input' },
  { key: 'input_audio', field: 'inputAudio', direction: 'input' },
  { key: 'input_audio_cache_read', field: 'cacheReadAudio', direction: 'input' },
  { key: 'input_image', field: 'inputImage', direction: 'input' },
  { key: 'completion', field: 'output', direction: 'output' },
  { key: 'internal_reasoning', field: 'reasoning', direction: 'output' },
  { key: 'output_audio', field: 'outputAudio', direction: 'output' },
  { key: 'web_search', field: 'webSearch', direction: 'call' },
  // Hosted tools (server-side, billed by the provider beside the tokens; docs/pricing.md "The bound"):
  // image output tokens of the Responses `image_generation` tool (`tool_usage.image_gen.output_tokens`),
  // `code_interpreter` containers and `file_search` calls.
  // `tool`: billed only when the call declares the tool, bounded per tool call (not at the dearest token price).
  { key: 'image_output', field: 'imageOutput', direction: 'output', tool: true },
  { key: 'code_interpreter', field: 'codeInterpreter', direction: 'call', tool: true },
  { key: 'file_search', field: 'fileSearch', direction: 'call', tool: true },
] as const satisfies readonly {
  key: DimensionKey;
  field: keyof Omit<Usage, 'serviceTier' | 'unreportedOutput'>;
  direction: 'input' | 'output' | 'call';
  tool?: true;
}[];

export const EXTRA_DIMENSION_KEYS: readonly ExtraDimensionKey[] = DIMENSIONS.map((d) => d.key).filter(
  (k): k is ExtraDimensionKey => k !== 'prompt' && k !== 'completion',
);

/** The count of dimension `i` (index into DIMENSIONS) in a usage record. */
export function dimensionCount(u: Usage, i: number): number {
  return u[DIMENSIONS[i]!.field];
}
