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
