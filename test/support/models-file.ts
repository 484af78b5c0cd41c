import {
  type PaidGateway,
  type PaidGatewayOptions,
  type PaidStore,
  paidGatewayPerSuite,
} from './paid-gateway.js';
import { BOOK_PRICES } from './prices.js';

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

/**
 * A paid gateway per describe block with `models` as its models file, priced at the book's prices (BOOK_PRICES),
 * 1,000 calls a minute per IP, and `env` on top.
 */
export function bookPricedGatewayPerSuite(
  store: PaidStore,
  models: PaidGatewayOptions['modelsFile'],
  env: Record<string, string> = {},
): PaidGateway {
  return paidGatewayPerSuite({
    store,
    modelsFile: models,
    env: { ...BOOK_PRICES, RATE_LIMIT_IP_PER_MINUTE: '1000', ...env },
  });
}
