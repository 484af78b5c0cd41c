/**
 * A `Map` for long-lived tables that see a set and a delete per call (calls in flight, a lease's open calls):
 * after every `renewAfter` deletes (and at least as many as it holds entries) it moves its entries, in order, to
 * a new `Map`.
 *
 * Why: V8 rehashes a `Map`'s backing table when its free slots run out and allocates the new table in the
 * generation of the one it replaces. A `Map` whose table has reached the old generation (it outlived two
 * scavenges at a quiet moment, or a mark-compact moved it) therefore leaves every later table in the old
 * generation, where only a mark-compact frees it: 18–56 B of old garbage per insert at 5–1,000 entries
 * (`bench/profile/map-churn.ts`). A new `Map` starts young, and a table churned faster than scavenges come is
 * replaced before it can be promoted. Measured on the paid gateway at a paced 1,000 req/s
 * (`bench/profile/scavenges.sh`): the old generation's direct allocation ≈ 600 → ≈ 280 B a call with the lease
 * manager's and the event hook's per-call tables renewed (docs/benchmarks.md, "Long-lived Maps churned per
 * call"). Copying is amortised: at most one entry copied per delete.
 *
 * Only what the gateway's tables use: get, has, set, delete, size, and iteration in insertion order.
 */
export class RenewingMap<K, V> {
  private m = new Map<K, V>();
  private deletes = 0;

  constructor(private readonly renewAfter = 1024) {}

  get size(): number {
    return this.m.size;
  }

  get(key: K): V | undefined {
    return this.m.get(key);
  }

  has(key: K): boolean {
    return this.m.has(key);
  }

  set(key: K, value: V): this {
    this.m.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    if (!this.m.delete(key)) return false;
    this.deletes += 1;
    if (this.deletes >= this.renewAfter && this.deletes >= this.m.size) {
      this.m = new Map(this.m);
      this.deletes = 0;
    }
    return true;
  }

  /** The oldest key still held (insertion order), or undefined when empty. */
  firstKey(): K | undefined {
    return this.m.keys().next().value;
  }

  keys(): MapIterator<K> {
    return this.m.keys();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.m[Symbol.iterator]();
  }
}
