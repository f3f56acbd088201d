/**
 * The one shape of everything Pricepoint keeps because requests asked for it (store reads, built
 * answers, verified keys, negotiated codings, time zones): requests choose the keys, so every such
 * cache is bounded, in entries and, where entries differ much in size, in weight (bytes, points).
 * Past either bound the least recently used entries go first.
 *
 * It is `lru-cache` underneath, with its few sharp edges filed off in one place: a weight is counted
 * again whenever an entry is set (`lru-cache` skips that when the same value object is set again),
 * a weight is a positive integer whatever `weigh` answers, and an entry heavier than the whole
 * budget is refused with a `false` rather than silently. What an entry is worth (its freshness, its
 * change token, its tags) stays with the caller: it lives in the value.
 */
import { LRUCache } from 'lru-cache';

export interface BoundedCacheOptions<K, V> {
  /** Entries kept at most (at least 1). */
  readonly maxEntries: number;
  /** The weight kept at most, as `weigh` counts it; without it only entries are counted. */
  readonly maxWeight?: number;
  /** The weight of one entry, counted when it is set; required with `maxWeight`. */
  readonly weigh?: (value: V, key: K) => number;
}

export interface BoundedCache<K, V> {
  /** The value under `key`, which then counts as just used. */
  get(key: K): V | undefined;
  /** The value under `key`, leaving the order of use as it is. */
  peek(key: K): V | undefined;
  has(key: K): boolean;
  /**
   * Keeps `value` under `key` as the most recently used entry, pushing out the least recently used
   * ones past a bound. False when `value` alone is heavier than `maxWeight`: it is not kept, and
   * neither is an older value under `key`.
   */
  set(key: K, value: V): boolean;
  delete(key: K): boolean;
  /** Drops every entry `drop` answers true for; returns how many. */
  deleteWhere(drop: (value: V, key: K) => boolean): number;
  clear(): void;
  readonly size: number;
  /** The weight kept now (0 without `weigh`). */
  readonly weight: number;
}

/**
 * @example
 * const answers = boundedCache<string, Buffer>({ maxEntries: 8_192, maxWeight: 64 << 20, weigh: (b) => b.length })
 * answers.set('NO1|2026-11-22', body); answers.get('NO1|2026-11-22') // body
 */
export function boundedCache<K extends {}, V extends {}>(
  options: BoundedCacheOptions<K, V>,
): BoundedCache<K, V> {
  const { maxWeight, weigh } = options;
  if (maxWeight !== undefined && weigh === undefined) {
    throw new Error('boundedCache: maxWeight needs weigh, the weight of one entry');
  }
  if (maxWeight !== undefined && !(maxWeight >= 1)) {
    throw new Error(`boundedCache: maxWeight must be at least 1, not ${maxWeight}`);
  }
  // A weight without a bound is still counted (`weight`), under a bound no cache reaches.
  const budget = weigh === undefined ? undefined : (maxWeight ?? Number.MAX_SAFE_INTEGER);
  const entries = new LRUCache<K, V>({
    max: Math.max(1, Math.floor(options.maxEntries)),
    ...(budget !== undefined && { maxSize: budget }),
  });

  return {
    get: (key) => entries.get(key),
    peek: (key) => entries.peek(key),
    has: (key) => entries.has(key),
    set(key, value) {
      if (weigh === undefined || budget === undefined) {
        entries.set(key, value);
        return true;
      }
      // A positive integer, as lru-cache requires; set afresh so that it is always counted again.
      const size = Math.max(1, Math.ceil(weigh(value, key)));
      entries.delete(key);
      if (!(size <= budget)) return false;
      entries.set(key, value, { size });
      return true;
    },
    delete: (key) => entries.delete(key),
    deleteWhere(drop) {
      const dropped: K[] = [];
      for (const [key, value] of entries.entries()) if (drop(value, key)) dropped.push(key);
      for (const key of dropped) entries.delete(key);
      return dropped.length;
    },
    clear: () => entries.clear(),
    get size() {
      return entries.size;
    },
    get weight() {
      return entries.calculatedSize ?? 0;
    },
  };
}
