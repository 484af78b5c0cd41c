import { emptyUsage, type Usage } from '../metering/usage.js';

/**
 * The Realtime API's usage shapes read into the one usage record (core/metering/usage.ts).
 *
 * `response.done` → `response.usage`: `input_tokens` counts every input token, cached ones included;
 * `input_token_details.{text,audio,image}_tokens` split it by modality (cached ones inside each);
 * `input_token_details.cached_tokens_details.{text,audio,image}_tokens` say which of them were read from the
 * cache. Cached text and image tokens are priced at `input_cache_read`, cached audio at
 * `input_audio_cache_read`; the uncached rest at `prompt`, `input_audio` and `input_image`. Output:
 * `output_token_details.{text,audio}_tokens` at `completion` and `output_audio`. A detail larger than its
 * total is believed over the total (never fewer tokens than reported), and tokens the details leave
 * unassigned are counted as text.
 */

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

function count(o: Obj | undefined, field: string): number {
  const v = o?.[field];
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/** The usage record of a `response.done` event's `response.usage` (undefined when it has none). */
export function responseUsage(usage: unknown): Usage | undefined {
  const u = obj(usage);
  if (u === undefined) return undefined;
  const inDetails = obj(u.input_token_details);
  const cached = obj(inDetails?.cached_tokens_details);
  const outDetails = obj(u.output_token_details);
  const r = emptyUsage();
  const cachedTotal = count(inDetails, 'cached_tokens');
  const cachedAudio = count(cached, 'audio_tokens');
  const cachedImage = count(cached, 'image_tokens');
  // A cached count without its split by modality: taken as text (never assumed to be the cheaper audio).
  const cachedText = cached === undefined ? cachedTotal : count(cached, 'text_tokens');
  // A cached count above its modality's count is believed over it.
  const text = Math.max(count(inDetails, 'text_tokens'), cachedText);
  const audio = Math.max(count(inDetails, 'audio_tokens'), cachedAudio);
  const image = Math.max(count(inDetails, 'image_tokens'), cachedImage);
  // Input tokens the details leave unassigned are counted as uncached text.
  const unassigned = Math.max(0, count(u, 'input_tokens') - text - audio - image);
  r.input = text - cachedText + unassigned;
  r.cacheRead = cachedText + cachedImage;
  r.inputAudio = audio - cachedAudio;
  r.cacheReadAudio = cachedAudio;
  r.inputImage = image - cachedImage;
  const outText = count(outDetails, 'text_tokens');
  const outAudio = count(outDetails, 'audio_tokens');
  r.output = outText + Math.max(0, count(u, 'output_tokens') - outText - outAudio);
  r.outputAudio = outAudio;
  return r;
}

/**
 * What a `conversation.item.input_audio_transcription.completed` event's `usage` bills: tokens (input audio
 * and text tokens, output text tokens) or seconds of audio.
 */
export type TranscriptionUsage = { kind: 'tokens'; usage: Usage } | { kind: 'duration'; ms: number };

export function transcriptionUsage(usage: unknown): TranscriptionUsage | undefined {
  const u = obj(usage);
  if (u === undefined) return undefined;
  if (u.type === 'duration') {
    const s = u.seconds;
    if (typeof s !== 'number' || !Number.isFinite(s) || s <= 0) return undefined;
    return { kind: 'duration', ms: Math.ceil(s * 1000) };
  }
  const details = obj(u.input_token_details);
  const r = emptyUsage();
  const audio = count(details, 'audio_tokens');
  const text = count(details, 'text_tokens');
  r.inputAudio = audio;
  r.input = text + Math.max(0, count(u, 'input_tokens') - audio - text);
  r.output = count(u, 'output_tokens');
  return { kind: 'tokens', usage: r };
}
