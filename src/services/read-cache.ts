/**
 * A small cache of store reads for the scale-out engine (DESIGN section 7): answers are fresh for a
 * few seconds, dropped at once when a notice says their series changed, and served stale while the
 * database cannot be reached, so cached days outlive a PostgreSQL outage.
 */

export interface ReadCacheOptions {
  /** How long an entry is served without asking the store; 0 turns the cache off. */
  readonly freshMs: number;
  /** How long an entry may still be served when the store fails. */
  readonly staleMs: number;
  /** Entries kept at most; past it the oldest half is dropped. */
  readonly maxEntries: number;
  /** Monotonic milliseconds (not the app clock: freshness is about real time passing). */
  readonly now: () => number;
  /** The store's change token (`PriceStore.changeToken`): an entry stored under another token is not fresh. */
  readonly token?: () => string;
}

interface Entry<T> {
  readonly value: T;
  readonly at: number;
  readonly token: string | undefined;
  readonly tags: readonly string[];
}

export function createReadCache<T>(options: ReadCacheOptions) {
  const entries = new Map<string, Entry<T>>();

  function evict(): void {
    let drop = Math.ceil(entries.size / 2);
    // Maps iterate in insertion order, so the first entries are the oldest.
    for (const key of entries.keys()) {
      if (drop-- <= 0) break;
      entries.delete(key);
    }
  }

  return {
    /**
     * The cached value of `key`, or `load()`'s, kept under `tags` (the symbols it depends on).
     * @example await cache.read('NO1|2026-11-22|Europe/Oslo', ['NO1'], () => store.pricesBetween(...))
     */
    async read(key: string, tags: readonly string[], load: () => Promise<T>): Promise<T> {
      if (options.freshMs <= 0) return load();
      const hit = entries.get(key);
      const now = options.now();
      let token: string | undefined;
      try {
        token = options.token?.();
      } catch {
        token = undefined; // the store cannot say: load, and fall back to the entry if that fails too
      }
      if (hit !== undefined && now - hit.at < options.freshMs && hit.token === token) return hit.value;
      let value: T;
      try {
        value = await load();
      } catch (error) {
        if (hit !== undefined && now - hit.at < options.staleMs) return hit.value;
        throw error;
      }
      entries.delete(key); // re-inserted last: the map stays ordered by age
      entries.set(key, { value, at: now, token, tags });
      if (entries.size > options.maxEntries) evict();
      return value;
    },

    /** Drops every entry that depends on one of `tags`. */
    forget(tags: readonly string[]): void {
      if (entries.size === 0) return;
      const wanted = new Set(tags);
      for (const [key, entry] of entries) {
        if (entry.tags.some((t) => wanted.has(t))) entries.delete(key);
      }
    },

    get size(): number {
      return entries.size;
    },
  };
}

export type ReadCache<T> = ReturnType<typeof createReadCache<T>>;
