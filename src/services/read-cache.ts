/**
 * A small cache of store reads (docs/operating.md "Running several instances"): answers are fresh for a few
 * seconds (an hour on SQLite, whose writers all announce), dropped at once when a notice says their
 * series changed, and served stale while the database cannot be reached, so cached days outlive a
 * PostgreSQL outage.
 * Requests choose the keys, so the cache is bounded in entries and, given a `weigh`, in weight;
 * past either the least recently used entries go first (src/cache/bounded-cache.ts).
 *
 * Days are kept packed (./packed-days.ts): a few objects per entry, so that a full cache costs the
 * garbage collector little. The last few values read are also kept as they are, so a day asked for
 * again and again is handed out as the same objects (which the renderer caches by identity) and not
 * unpacked every time.
 */
import { boundedCache } from '../cache/bounded-cache.js';
import { areDays, type PackedDays, packDays, unpackDays } from './packed-days.js';

export interface ReadCacheOptions<T = unknown> {
  /** How long an entry is served without asking the store; 0 turns the cache off. */
  readonly freshMs: number;
  /** How long an entry may still be served when the store fails. */
  readonly staleMs: number;
  /** Entries kept at most. */
  readonly maxEntries: number;
  /** The weight kept at most, as `weigh` counts it (for example price points); default unbounded. */
  readonly maxWeight?: number;
  /** The weight of one value, at least 1; required with `maxWeight`. */
  readonly weigh?: (value: T) => number;
  /** Monotonic milliseconds (not the app clock: freshness is about real time passing). */
  readonly now: () => number;
  /** The store's change token (`PriceStore.changeToken`): an entry stored under another token is not fresh. */
  readonly token?: () => string;
}

interface Entry<T> {
  /** The value, or the days it is, packed. */
  readonly kept: { readonly value: T } | { readonly packed: PackedDays };
  readonly weight: number;
  readonly at: number;
  readonly token: string | undefined;
  readonly tags: readonly string[];
}

/** Values kept as they are, besides their packed entries: the most recently read ones. */
const LIVE_VALUES = 32;

/** Store reads kept by key and tagged with the symbols they depend on (see the top of this file). */
export interface ReadCache<T> {
  /**
   * The cached value of `key`, or `load()`'s, kept under `tags` (the symbols it depends on); a
   * failing `load` is answered from a stale entry while one may still be served.
   * @example await cache.read('NO1|2026-11-22|Europe/Oslo', ['NO1'], () => store.pricesBetween(...))
   */
  read(key: string, tags: readonly string[], load: () => Promise<T>): Promise<T>;
  /**
   * The value of `key` when `read` would serve it without loading (fresh, under the current
   * token), else `undefined`; counts as a use of the entry.
   */
  peek(key: string): T | undefined;
  /** Drops every entry that depends on one of `tags`. */
  forget(tags: readonly string[]): void;
  /** Entries kept now. */
  readonly size: number;
  /** The weight kept now, as `weigh` counts it (0 without one). */
  readonly weight: number;
}

export function createReadCache<T>(options: ReadCacheOptions<T>): ReadCache<T> {
  const { maxWeight, weigh } = options;
  const weighed = maxWeight !== undefined && weigh !== undefined;
  const entries = boundedCache<string, Entry<T>>({
    maxEntries: options.maxEntries,
    ...(weighed && { maxWeight, weigh: (entry: Entry<T>) => entry.weight }),
  });
  /** The unpacked value of an entry, while that entry is the one under its key. */
  const live = boundedCache<string, { readonly entry: Entry<T>; readonly value: T }>({
    maxEntries: LIVE_VALUES,
  });

  function served(key: string, entry: Entry<T>): T {
    if ('value' in entry.kept) return entry.kept.value;
    const hot = live.get(key);
    if (hot?.entry === entry) return hot.value;
    const value = unpackDays(entry.kept.packed) as T;
    live.set(key, { entry, value });
    return value;
  }

  function keep(key: string, value: T, at: number, token: string | undefined, tags: readonly string[]) {
    const entry: Entry<T> = {
      kept: areDays(value) ? { packed: packDays(value) } : { value },
      weight: weighed ? Math.max(1, Math.ceil((weigh as (value: T) => number)(value))) : 1,
      at,
      token,
      tags,
    };
    // A value heavier than the whole budget is served but not kept.
    if (entries.set(key, entry)) live.set(key, { entry, value });
    else live.delete(key);
  }

  return {
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
      if (hit !== undefined && now - hit.at < options.freshMs && hit.token === token) {
        return served(key, hit);
      }
      let value: T;
      try {
        value = await load();
      } catch (error) {
        if (hit !== undefined && now - hit.at < options.staleMs) return served(key, hit);
        throw error;
      }
      keep(key, value, now, token, tags);
      return value;
    },

    peek(key: string): T | undefined {
      if (options.freshMs <= 0) return undefined;
      const hit = entries.get(key);
      if (hit === undefined || options.now() - hit.at >= options.freshMs) return undefined;
      let token: string | undefined;
      try {
        token = options.token?.();
      } catch {
        return undefined;
      }
      return hit.token === token ? served(key, hit) : undefined;
    },

    forget(tags: readonly string[]): void {
      if (entries.size === 0) return;
      const wanted = new Set(tags);
      const dependent = (entry: Entry<T>) => entry.tags.some((t) => wanted.has(t));
      entries.deleteWhere(dependent);
      live.deleteWhere(({ entry }) => dependent(entry));
    },

    get size(): number {
      return entries.size;
    },

    get weight(): number {
      return entries.weight;
    },
  };
}
