import { LRUCache } from 'lru-cache';

/**
 * An LRU cache bounded to `count` entries that allocates as it fills. lru-cache's `max` preallocates its index
 * arrays for every entry at construction: ≈ 13 ms of CPU and a few MB for 100,000 entries, paid at every start by
 * each such cache, most of which stay nearly empty for the process's life. Bounding the count by size instead
 * (each entry of size 1, `maxSize` = count) keeps the same bound and eviction order without the preallocation.
 */
export function lazyLru<K extends {}, V extends {}>(
  count: number,
  options: Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: count, sizeCalculation: () => 1 } as LRUCache.Options<
    K,
    V,
    unknown
  >);
}
