import { expect } from 'vitest';
import type { PaidGateway } from './paid-gateway.js';
import { untilValue } from './until.js';

/**
 * What `credential` has available once it moved from `from` (a settle or refund landed after the answer):
 * waits on that change, never on a fixed sleep; throws after `ms` when it stays.
 */
export async function availableAfter(
  h: Pick<PaidGateway, 'available'>,
  credential: string,
  from: number,
  ms = 5_000,
): Promise<number> {
  return untilValue(
    'the balance moved',
    async () => (await h.available(credential))!,
    (left) => left !== from,
    ms,
    50,
  );
}

/**
 * A refund answer that emptied `credential`: 200, `sats` refunded and nothing left, its token redeeming for
 * exactly `sats` at the mint.
 */
export async function expectRefundedAll(
  h: Pick<PaidGateway, 'available' | 'redeem'>,
  res: Response,
  credential: string,
  sats: number,
): Promise<void> {
  expect(res.status).toBe(200);
  const body = (await res.json()) as { cashu_token: string; amount: number; balance: number };
  expect(body).toMatchObject({ amount: sats, balance: 0 });
  expect(await h.redeem(body.cashu_token)).toBe(sats);
  expect(await h.available(credential)).toBe(0);
}

/** `calls` chat calls to mock-gpt, one after another, with `apiKey` (the i-th says `content(i)`). */
export async function chatCalls(
  h: Pick<PaidGateway, 'openai'>,
  apiKey: string,
  calls: number,
  content: (i: number) => string = () => 'hi',
): Promise<void> {
  const client = h.openai(apiKey);
  for (let i = 0; i < calls; i++) {
    await client.chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: content(i) }],
    });
  }
}
