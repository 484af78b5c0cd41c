import { RecentIds } from './recent-ids.js';
import type { ReleaseResult, SettleResult } from './types.js';

export type Finished = Extract<SettleResult, { ok: true }> | Extract<ReleaseResult, { ok: true }>;

const SETTLED = 1;
const RELEASED = 2;

/**
 * The lease manager's memory of the last `capacity` calls it finished in memory, for idempotent repeats (a settle
 * or release of the same request id answers what the first one did, as a replay). The oldest is forgotten when a
 * new one comes, as an LRU of `capacity` entries written once each would.
 *
 * Kept as columns by slot (RecentIds: a ring of ids with one id → slot index; a kind byte and four numbers a call
 * in typed arrays), not as a result object per call in an LRU cache: at 1,000 calls a second each entry lives ≈
 * 10 s, so every one of those objects was promoted (V8 pretenured them) and died in the old generation, ≈ 160 B a
 * call with the cache's key map (docs/benchmarks.md, "Long-lived Maps churned per call"). The answer is rebuilt
 * on a repeat, which is rare.
 */
export class FinishedCalls {
  private readonly ids: RecentIds;
  private readonly kinds: Uint8Array;
  /** charged, released, overrun, balance: four per slot. */
  private readonly nums: Float64Array;

  constructor(capacity: number) {
    this.ids = new RecentIds(capacity);
    this.kinds = new Uint8Array(capacity);
    this.nums = new Float64Array(capacity * 4);
  }

  get size(): number {
    return this.ids.size;
  }

  has(requestId: string): boolean {
    return this.ids.has(requestId);
  }

  /** The first answer, rebuilt (`replay` as it was then: false). */
  get(requestId: string): Finished | undefined {
    const slot = this.ids.slotOf(requestId);
    if (slot === undefined) return undefined;
    const n = slot * 4;
    if (this.kinds[slot] === RELEASED) {
      return { ok: true, status: 'released', replay: false, releasedMsat: this.nums[n + 1]! };
    }
    return {
      ok: true,
      status: 'settled',
      replay: false,
      chargedMsat: this.nums[n]!,
      releasedMsat: this.nums[n + 1]!,
      overrunMsat: this.nums[n + 2]!,
      balanceMsat: this.nums[n + 3]!,
      transactionId: `lease:${requestId}`,
    };
  }

  /**
   * Remembers a call's first answer. A settle's transaction id must be `lease:<requestId>` (the only kind the
   * lease manager makes); an id already held is written again in place.
   */
  set(requestId: string, r: Finished): void {
    if (r.status === 'settled' && r.transactionId !== `lease:${requestId}`) {
      throw new Error(`finished-call memory: transaction id ${r.transactionId} is not the call's lease id`);
    }
    const slot = this.ids.add(requestId);
    const n = slot * 4;
    if (r.status === 'released') {
      this.kinds[slot] = RELEASED;
      this.nums[n] = 0;
      this.nums[n + 1] = r.releasedMsat;
      this.nums[n + 2] = 0;
      this.nums[n + 3] = 0;
      return;
    }
    this.kinds[slot] = SETTLED;
    this.nums[n] = r.chargedMsat;
    this.nums[n + 1] = r.releasedMsat;
    this.nums[n + 2] = r.overrunMsat;
    this.nums[n + 3] = r.balanceMsat;
  }
}
