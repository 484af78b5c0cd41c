import type { Logger } from './log.js';

/**
 * Retries an idempotent operation in the background with growing delays: used for ledger settlements
 * whose last in-request attempt failed (the store blipped after the answer was sent). Settle and release are
 * idempotent by request id, and a lease-expired reservation is still settled from what is available, so a
 * late retry charges the call exactly once instead of letting it go free. Bounded: at most `maxPending`
 * operations wait at once; the delays run out after about two minutes.
 */
export const RETRY_DELAYS_MS = [250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000];

export class BackgroundRetry {
  private pendingCount = 0;

  constructor(
    private readonly log: Pick<Logger, 'info' | 'error'>,
    private readonly what: string,
    private readonly maxPending = 10_000,
    private readonly delays: readonly number[] = RETRY_DELAYS_MS,
  ) {}

  get pending(): number {
    return this.pendingCount;
  }

  /** Schedules `op` (already failed once); `id` names it in logs (never a secret). */
  schedule(id: string, op: () => Promise<unknown>): void {
    if (this.pendingCount >= this.maxPending) {
      this.log.error({ id, pending: this.pendingCount }, `${this.what}: retry queue full; not retried`);
      return;
    }
    this.pendingCount++;
    this.attempt(id, op, 0);
  }

  private attempt(id: string, op: () => Promise<unknown>, n: number): void {
    const delay = this.delays[n];
    if (delay === undefined) {
      this.pendingCount--;
      this.log.error({ id, attempts: n + 1 }, `${this.what}: gave up after retries`);
      return;
    }
    const timer = setTimeout(() => {
      op().then(
        () => {
          this.pendingCount--;
          this.log.info({ id, attempts: n + 2 }, `${this.what}: applied on retry`);
        },
        () => this.attempt(id, op, n + 1),
      );
    }, delay);
    timer.unref();
  }
}
