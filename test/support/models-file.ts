/**
 * A models file (MODELS_PATH) for the mock provider: `mock-gpt` with `gptPricing`, then `others` (by default
 * `mock-mini` at 1 msat per prompt token and 2 per completion token), each with an 8,192-token context.
 */
export function mockModels(
  gptPricing: Record<string, unknown>,
  others: Array<{ id: string; pricing: Record<string, unknown> }> = [
    { id: 'mock-mini', pricing: { prompt: '0.000001', completion: '0.000002' } },
  ],
) {
  return {
    models: [{ id: 'mock-gpt', pricing: gptPricing }, ...others].map((m) => ({
      id: m.id,
      context_length: 8192,
      pricing: m.pricing,
    })),
  };
}
