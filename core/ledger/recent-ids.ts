import { RenewingMap } from '../renewing-map.js';

/**
 * The last `capacity` distinct ids added, each with a slot number in [0, capacity) that stays its own while it is
 * held (so a caller can keep per-id numbers in typed arrays by slot: core/ledger/finished-calls.ts). Adding an id
 * when full forgets the oldest, as an LRU cache of ids written once each would; re-adding a held id changes
 * nothing. A ring of ids with one id → slot index (a RenewingMap: one set and one delete per add), so nothing is
 * allocated per id but the index's entry: ids kept for seconds at 1,000 a second must not each carry an object
 * into the old generation (docs/benchmarks.md, "Long-lived Maps churned per call").
 */
export class RecentIds {
  private readonly ids: Array<string | undefined>;
  private readonly index: RenewingMap<string, number>;
  private next = 0;

  constructor(readonly capacity: number) {
    this.ids = new Array<string | undefined>(capacity).fill(undefined);
    this.index = new RenewingMap(capacity);
  }

  get size(): number {
    return this.index.size;
  }

  has(id: string): boolean {
    return this.index.has(id);
  }

  slotOf(id: string): number | undefined {
    return this.index.get(id);
  }

  /** Adds `id` as the newest (when not held) and returns its slot. */
  add(id: string): number {
    const held = this.index.get(id);
    if (held !== undefined) return held;
    const slot = this.next;
    this.next = (slot + 1) % this.capacity;
    const old = this.ids[slot];
    if (old !== undefined) this.index.delete(old);
    this.ids[slot] = id;
    this.index.set(id, slot);
    return slot;
  }
}
