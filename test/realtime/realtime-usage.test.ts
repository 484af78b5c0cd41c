import { describe, expect, it } from 'vitest';
import { emptyUsage } from '../../core/metering/usage.js';
import { responseUsage, transcriptionUsage } from '../../core/realtime/realtime-usage.js';

/** The Realtime usage shapes read into the one usage record: each token once, in the dimension it is billed. */
describe('responseUsage', () => {
  it('splits input by modality and cache, output by modality (cached counted inside each modality)', () => {
    expect(
      responseUsage({
        input_tokens: 60,
        output_tokens: 28,
        input_token_details: {
          text_tokens: 20,
          audio_tokens: 30,
          image_tokens: 10,
          cached_tokens: 19,
          cached_tokens_details: { text_tokens: 8, audio_tokens: 7, image_tokens: 4 },
        },
        output_token_details: { text_tokens: 8, audio_tokens: 20 },
      }),
    ).toEqual({
      ...emptyUsage(),
      input: 12,
      cacheRead: 12,
      inputAudio: 23,
      cacheReadAudio: 7,
      inputImage: 6,
      output: 8,
      outputAudio: 20,
    });
  });

  it('a cached count without its split is cached text; input the details leave unassigned is uncached text', () => {
    expect(
      responseUsage({
        input_tokens: 50,
        output_tokens: 5,
        input_token_details: { text_tokens: 20, audio_tokens: 10, cached_tokens: 6 },
      }),
    ).toEqual({ ...emptyUsage(), input: 14 + 20, cacheRead: 6, inputAudio: 10, output: 5 });
  });

  it('a detail above its total is believed over the total (never fewer tokens than reported)', () => {
    expect(
      responseUsage({
        input_tokens: 5,
        input_token_details: { text_tokens: 3, cached_tokens_details: { text_tokens: 9, audio_tokens: 4 } },
        output_tokens: 1,
        output_token_details: { audio_tokens: 6 },
      }),
    ).toEqual({ ...emptyUsage(), cacheRead: 9, cacheReadAudio: 4, outputAudio: 6 });
  });

  it('no usage: undefined (the session charges what arrived, estimated)', () => {
    expect(responseUsage(undefined)).toBeUndefined();
    expect(responseUsage('x')).toBeUndefined();
  });
});

describe('transcriptionUsage', () => {
  it('tokens: audio in, text in, text out', () => {
    expect(
      transcriptionUsage({
        type: 'tokens',
        input_tokens: 25,
        input_token_details: { audio_tokens: 20, text_tokens: 2 },
        output_tokens: 3,
      }),
    ).toEqual({ kind: 'tokens', usage: { ...emptyUsage(), inputAudio: 20, input: 5, output: 3 } });
  });

  it('duration: seconds to whole milliseconds, rounded up', () => {
    expect(transcriptionUsage({ type: 'duration', seconds: 1.2345 })).toEqual({ kind: 'duration', ms: 1235 });
    expect(transcriptionUsage({ type: 'duration', seconds: -1 })).toBeUndefined();
  });
});
