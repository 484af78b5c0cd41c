import { emptyUsage, type Usage } from '../metering/usage.js';
import type { CostResult, Pricing, UsdRates } from '../pricing/types.js';

/**
 * Prices one Realtime session: each response from its usage, each input-audio transcription at its
 * transcription model's price book entry (tokens, or `audio_minute` for a duration), and the upper bound of the
 * next response the session's reservation must cover. All at the BTC price the session opened with, so a
 * session is never refused mid-way by a price outage and its charges match what it reserved.
 */

const INPUT_FIELDS = ['input', 'cacheRead', 'inputAudio', 'cacheReadAudio', 'inputImage'] as const;
const OUTPUT_FIELDS = ['output', 'outputAudio'] as const;

export class RealtimePricer {
  constructor(
    private readonly pricing: Pricing,
    readonly model: string,
    private readonly btcUsd: string | undefined,
    /** Charges rounded up to whole units of the eCash token paying the session (1000 for sat), else 1. */
    private readonly step: number,
    /** The serving provider's rates for the session's model, when it has its own (else the price book's). */
    private readonly rates?: UsdRates | undefined,
  ) {}

  private whole(msat: number): number {
    return this.step <= 1 ? msat : Math.ceil(msat / this.step) * this.step;
  }

  responseCost(usage: Usage): CostResult {
    return this.charged(
      this.pricing.cost({ model: this.model, endpoint: 'chat', usage, btcUsd: this.btcUsd }),
    );
  }

  /** A transcription's cost at its own model's price (throws model_not_priced when the book has none). */
  transcriptionCost(model: string, t: { kind: 'tokens'; usage: Usage } | { kind: 'duration'; ms: number }) {
    const c =
      t.kind === 'tokens'
        ? this.pricing.cost({ model, endpoint: 'chat', usage: t.usage, btcUsd: this.btcUsd })
        : this.pricing.cost({ model, endpoint: 'audio', units: t.ms, btcUsd: this.btcUsd });
    return this.charged(c);
  }

  private charged(c: CostResult): CostResult {
    const msat = this.whole(c.msat);
    if (msat === c.msat) return c;
    const rounding = msat - c.msat;
    const dimensions = { ...c.breakdown.dimensions, fees: (c.breakdown.dimensions.fees ?? 0) + rounding };
    return {
      ...c,
      msat,
      breakdown: {
        ...c.breakdown,
        feesMsat: c.breakdown.feesMsat + rounding,
        dimensions,
        unitRoundingMsat: rounding,
      },
    };
  }

  /**
   * An upper bound of a response with at most `inputTokens` of input and `outputTokens` of output: every input
   * token at the dearest input dimension and every output token at the dearest output dimension the model
   * has (a price book may price cached or audio tokens above text ones).
   */
  responseBound(inputTokens: number, outputTokens: number): number {
    return this.whole(this.dearest(this.model, inputTokens, outputTokens));
  }

  /** An upper bound of transcribing `audioTokens` tokens / `audioMs` of audio with `model`. */
  transcriptionBound(model: string, audioTokens: number, audioMs: number): number {
    let max = 0;
    let priced = false;
    try {
      max = this.dearest(model, audioTokens, audioTokens);
      priced = true;
    } catch {
      // Priced per minute only (whisper-1): the duration price below.
    }
    try {
      max = Math.max(
        max,
        this.pricing.cost({ model, endpoint: 'audio', units: audioMs, btcUsd: this.btcUsd }).msat,
      );
    } catch (err) {
      if (!priced) throw err;
    }
    return this.whole(max);
  }

  private dearest(model: string, inputTokens: number, outputTokens: number): number {
    let max = 0;
    for (const i of INPUT_FIELDS) {
      for (const o of OUTPUT_FIELDS) {
        const u = emptyUsage();
        u[i] = inputTokens;
        u[o] = outputTokens;
        const rates = model === this.model ? this.rates : undefined;
        const msat = this.pricing.cost({
          model,
          endpoint: 'chat',
          usage: u,
          btcUsd: this.btcUsd,
          rates,
        }).msat;
        if (msat > max) max = msat;
      }
    }
    return max;
  }
}
