import type { Logger } from './log.js';

/**
 * Retries an idempotent operation in the background with growing delays: used for ledger settlements
 * whose last in-request attempt failed (the store blipped after the answer was sent). Settle and release are
 * idempotent by request id, and an expired reservation is still settled from what is available, so a
 * late retry charges the call exactly once instead of letting it go free. Bounded: at most `maxPending`
 * operations wait at once; the delays run out after about two minutes.
 */
export const RETRY_DELAYS_MS = [250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000];

interface Pending {
  id: string;
  op: () => Promise<unknown>;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class BackgroundRetry {
  private pendingCount = 0;
  private readonly waiting = new Set<Pending>();

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
    this.attempt({ id, op, timer: undefined }, 0);
  }

  private attempt(p: Pending, n: number): void {
    const delay = this.delays[n];
    if (delay === undefined) {
      this.pendingCount--;
      this.waiting.delete(p);
      this.log.error({ id: p.id, attempts: n + 1 }, `${this.what}: gave up after retries`);
      return;
    }
    this.waiting.add(p);
    p.timer = setTimeout(() => {
      p.timer = undefined;
      p.op().then(
        () => {
          this.pendingCount--;
          this.waiting.delete(p);
          this.log.info({ id: p.id, attempts: n + 2 }, `${this.what}: applied on retry`);
        },
        () => this.attempt(p, n + 1),
      );
    }, delay);
    p.timer.unref();
  }

  /**
   * Shutdown: tries every waiting operation now, and again every `everyMs` until it succeeds or `timeoutMs`
   * passed. Resolves with how many are still not applied (each logged: the store never saw them).
   */
  async drain(timeoutMs: number, everyMs = 250): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    const jobs = [...this.waiting].map(async (p) => {
      if (p.timer) clearTimeout(p.timer);
      this.waiting.delete(p);
      for (;;) {
        try {
          await p.op();
          this.pendingCount--;
          this.log.info({ id: p.id }, `${this.what}: applied while shutting down`);
          return true;
        } catch {
          if (Date.now() + everyMs > deadline) {
            this.pendingCount--;
            this.log.error({ id: p.id }, `${this.what}: not applied before shutdown`);
            return false;
          }
          await new Promise((r) => setTimeout(r, everyMs));
        }
      }
    });
    const done = await Promise.all(jobs);
    return done.filter((ok) => !ok).length;
  }
}
