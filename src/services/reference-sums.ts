/**
 * The days before a ranked day, as the levels need them (docs/tariffs.md, "Rank and level"): per
 * series and local day, the sum and count of its values as answered (converted, under the tariff),
 * kept in a read cache of their own. A level's 7 days before are then read, converted and priced
 * once per series and day, not again for every request that ranks a day after them.
 *
 * An entry depends on everything that changes its values: the series, the zone its days are read
 * in, the resolution served, the currency, unit and tariff, and so it is keyed by all of them and
 * tagged with the series and the FX series that converts it. It goes like a cached day: when a
 * notice says one of its tags changed, when the store's change token moves, or after
 * `PRICEPOINT_READ_CACHE_MS`.
 */
import { addDays, type CalendarDate } from '../domain/time/days.js';
import type { DaySum } from './ranking.js';
import { createReadCache, type ReadCacheOptions } from './read-cache.js';

/** A day the store holds nothing for, or whose intervals have no value. */
const NOTHING: DaySum = { sum: 0n, count: 0, scale: 0 };

/** Days summed at most: a few megabytes even with the longest keys. */
const MAX_ENTRIES = 20_000;

/** What one series' days are summed as: every part of it that changes a value. */
export interface SummedSeries {
  /** The series, the zone, the resolution served, the currency, unit and tariff: one text. */
  readonly key: string;
  /** The series and the FX series its values are converted with. */
  readonly tags: readonly string[];
  /** The sums of the days `from`..`to` (each day read in full), by date; a day left out has none. */
  readonly sumsOf: (from: CalendarDate, to: CalendarDate) => Promise<ReadonlyMap<CalendarDate, DaySum>>;
}

/** The sums of the days before a ranked day, per series and day, kept like cached days. */
export interface ReferenceSums {
  /**
   * The sums of the days `from`..`to` of `series`, oldest first: those kept from the cache, the
   * others read together in one span (from the first to the last day missing).
   * @example await sums.between(summed, '2026-11-15', '2026-11-21') // seven DaySums
   */
  between(series: SummedSeries, from: CalendarDate, to: CalendarDate): Promise<DaySum[]>;
  /** Drops the sums of every series (or FX series) named. */
  forget(symbols: readonly string[]): void;
  /** Days kept now. */
  readonly size: number;
}

export function createReferenceSums(options: Omit<ReadCacheOptions<DaySum>, 'maxEntries'>): ReferenceSums {
  const cache = createReadCache<DaySum>({ ...options, maxEntries: MAX_ENTRIES });

  return {
    async between(series: SummedSeries, from: CalendarDate, to: CalendarDate): Promise<DaySum[]> {
      const dates: CalendarDate[] = [];
      for (let date = from; date <= to; date = addDays(date, 1)) dates.push(date);
      const keyOf = (date: CalendarDate) => `${series.key}|${date}`;
      const missing = dates.filter((date) => cache.peek(keyOf(date)) === undefined);
      const first = missing[0];
      const last = missing.at(-1);
      let read: ReadonlyMap<CalendarDate, DaySum> | undefined;
      let failure: unknown;
      if (first !== undefined && last !== undefined) {
        try {
          read = await series.sumsOf(first, last);
        } catch (error) {
          failure = error; // each day's read then serves what it kept, while it may (`staleMs`)
        }
      }
      return Promise.all(
        dates.map((date) =>
          cache.read(keyOf(date), series.tags, async () => {
            if (read === undefined && failure !== undefined) throw failure;
            // A day that went between `peek` and now (a notice) is read on its own.
            const inSpan = read !== undefined && first !== undefined && last !== undefined;
            const sums = inSpan && date >= first && date <= last ? read : await series.sumsOf(date, date);
            return sums?.get(date) ?? NOTHING;
          }),
        ),
      );
    },

    forget(symbols: readonly string[]): void {
      cache.forget(symbols);
    },

    get size(): number {
      return cache.size;
    },
  };
}
