/**
 * Reading prices (DESIGN section 2): which series a caller may read, which calendar days a request
 * means for each of them, the intervals stored in those days, at the series' own or a coarser
 * resolution, and the catalogue with coverage. Knows nothing of HTTP.
 */
import { ApiError } from '../domain/errors/api-error.js';
import type { Tier } from '../domain/limits/tiers.js';
import { aggregateIntervals } from '../domain/prices/aggregate.js';
import {
  addDays,
  type CalendarDate,
  dayBounds,
  dayIntervals,
  daysBetween,
  formatInstant,
  intervalEnd,
  localDate,
  RESOLUTIONS,
  type Resolution,
} from '../domain/time/days.js';
import type { PriceStore, Series, StoredPrice } from '../stores/types.js';
import { createReadCache, type ReadCacheOptions } from './read-cache.js';
import { coverageOf, type SeriesView } from './series-service.js';

/** One interval as served: RFC 3339 start and end in the day's zone, the price as ingested (or a mean). */
export interface ServedPrice {
  readonly start: string;
  readonly end: string;
  readonly price: string;
}

/** A series on one day; `resolution` is the one served, which a `resolution` query may coarsen. */
export interface SeriesDay extends Series {
  readonly date: CalendarDate;
  readonly prices: readonly ServedPrice[];
}

export interface DayAnswer {
  readonly generatedAt: string;
  readonly series: readonly SeriesDay[];
  /** Every day in the answer has ended in its zone, so only a correction could change it. */
  readonly settled: boolean;
  /**
   * The first local midnight after `generatedAt` in any zone the answer is read in: from then on the
   * same request can mean other days (today moves on) or fall outside the tier's history.
   */
  readonly changesAt: number;
}

export interface DayQuery {
  /** Upper-cased symbols in the order asked; `undefined` means every series the tier may read. */
  readonly symbols?: readonly string[];
  /** A zone whose calendar day is meant for every series; else each series' own zone. */
  readonly tz?: string;
  /** Serve means over intervals this long where a series is finer; coarser series are served as they are. */
  readonly resolution?: Resolution;
}

/** A day named relative to each series' today (`offset`) or by its date. */
export type DayName = { readonly offset: number } | { readonly date: CalendarDate };

/** At most this many days in one range (DESIGN section 2). */
export const MAX_RANGE_DAYS = 366;

/** The resolution a series is served at: the asked one where it is coarser than the series' own. */
export function servedResolution(own: Resolution, asked: Resolution | undefined): Resolution {
  return asked !== undefined && RESOLUTIONS[asked] > RESOLUTIONS[own] ? asked : own;
}

export interface PriceServiceDeps {
  readonly prices: PriceStore;
  readonly clock: () => number;
  /** Keeps days and the series list for a few seconds, and serves them while the store is away. */
  readonly cache?: Omit<ReadCacheOptions, 'maxEntries'>;
}

/** The tag of the series list in the read cache: every change of any series drops it. */
const ALL_SERIES = '*';

export function createPriceService({ prices, clock, cache }: PriceServiceDeps) {
  const cacheOptions = {
    freshMs: 0,
    staleMs: 0,
    now: () => performance.now(),
    ...(prices.changeToken && { token: () => (prices.changeToken as () => string)() }),
    ...cache,
  };
  const seriesCache = createReadCache<Series[]>({ ...cacheOptions, maxEntries: 1 });
  // Days as served (formatted, aggregated): a repeated request reuses the same objects, which the
  // renderer also caches by identity.
  const dayCache = createReadCache<SeriesDay[]>({ ...cacheOptions, maxEntries: 5_000 });

  function readable(tier: Tier, series: Series): boolean {
    return tier.kinds === null || tier.kinds.includes(series.kind);
  }

  /** The series a query names, checked against the catalogue and the tier. */
  async function selectSeries(tier: Tier, symbols: readonly string[] | undefined): Promise<Series[]> {
    const all = await seriesCache.read(ALL_SERIES, [ALL_SERIES], () => prices.listSeries());
    if (symbols === undefined) return all.filter((s) => readable(tier, s));
    const bySymbol = new Map(all.map((s) => [s.symbol, s]));
    const unknown = symbols.filter((s) => !bySymbol.has(s));
    if (unknown.length > 0) {
      throw new ApiError('unknown_series', `Unknown series: ${unknown.join(', ')}.`, {
        extra: { symbols: unknown },
      });
    }
    const chosen = symbols.map((s) => bySymbol.get(s) as Series);
    const refused = chosen.filter((s) => !readable(tier, s)).map((s) => s.symbol);
    if (refused.length > 0) {
      throw new ApiError('insufficient_scope', `Tier ${tier.name} may not read: ${refused.join(', ')}.`, {
        extra: { symbols: refused },
      });
    }
    return chosen;
  }

  /**
   * Refuses days further back than the tier's history (DESIGN section 4): a date more than
   * `historyDays` before today in the zone the day is read in. Future days are never refused.
   */
  function checkHistory(
    tier: Tier,
    wanted: readonly { series: Series; date: CalendarDate; today: CalendarDate }[],
  ) {
    const limit = tier.historyDays;
    if (limit === null) return;
    const refused = wanted.filter((w) => daysBetween(w.date, w.today) > limit);
    const first = refused[0];
    if (first === undefined) return;
    const earliest = addDays(first.today, -limit);
    throw new ApiError(
      'outside_tier_history',
      `Tier ${tier.name} reads at most ${limit} days back: ${first.date} is before ${earliest} for ${refused
        .map((w) => w.series.symbol)
        .join(', ')}.`,
      { extra: { symbols: refused.map((w) => w.series.symbol), historyDays: limit } },
    );
  }

  /** The points of one local day, at the served resolution, written in `zone`. */
  function servedDay(
    series: Series,
    served: Resolution,
    date: CalendarDate,
    zone: string,
    points: readonly StoredPrice[],
  ): ServedPrice[] {
    if (served === series.resolution) {
      return points.map((p) => ({
        start: formatInstant(p.start, zone),
        end: formatInstant(intervalEnd(p.start, series.timezone, series.resolution), zone),
        price: p.price,
      }));
    }
    return aggregateIntervals(points, dayIntervals(date, zone, served)).map((a) => ({
      start: formatInstant(a.start, zone),
      end: formatInstant(a.end, zone),
      price: a.price,
    }));
  }

  /** Consecutive days `from`..`to` of one series as served, cached until the series changes. */
  function seriesDays(
    series: Series,
    from: CalendarDate,
    to: CalendarDate,
    zone: string,
    asked: Resolution | undefined,
  ): Promise<SeriesDay[]> {
    const served = servedResolution(series.resolution, asked);
    // Long ranges are read as they come: a year of quarter hours per entry would crowd out the days.
    if (daysBetween(from, to) >= 7) return readSeriesDays(series, from, to, zone, served);
    return dayCache.read(`${series.symbol}|${from}|${to}|${zone}|${served}`, [series.symbol], () =>
      readSeriesDays(series, from, to, zone, served),
    );
  }

  /** Consecutive days of one series, read from the store at once and cut into local days. */
  async function readSeriesDays(
    series: Series,
    from: CalendarDate,
    to: CalendarDate,
    zone: string,
    served: Resolution,
  ): Promise<SeriesDay[]> {
    const start = dayBounds(from, zone).start;
    const end = dayBounds(to, zone).end;
    const stored = await prices.pricesBetween(series.symbol, start, end);
    const days: SeriesDay[] = [];
    let i = 0;
    for (let date = from; date <= to; date = addDays(date, 1)) {
      const { end } = dayBounds(date, zone);
      const first = i;
      while (i < stored.length && (stored[i] as StoredPrice).start < end) i++;
      const points = stored.slice(first, i);
      days.push({
        ...series,
        resolution: served,
        date,
        prices: servedDay(series, served, date, zone, points),
      });
    }
    return days;
  }

  /** Resolves a day name against one series' today. */
  function dayOf(name: DayName, today: CalendarDate): CalendarDate {
    return 'date' in name ? name.date : addDays(today, name.offset);
  }

  /** Every selected series over the days `from`..`to` (each resolved in the zone it is read in). */
  async function readDays(tier: Tier, query: DayQuery, from: DayName, to: DayName): Promise<DayAnswer> {
    const now = clock();
    const selected = await selectSeries(tier, query.symbols);
    const wanted = selected.map((series) => {
      const zone = query.tz ?? series.timezone;
      const today = localDate(now, zone);
      return { series, zone, today, date: dayOf(from, today), to: dayOf(to, today) };
    });
    for (const w of wanted) checkRange(w.date, w.to);
    checkHistory(tier, wanted);
    const days = await Promise.all(
      wanted.map((w) => seriesDays(w.series, w.date, w.to, w.zone, query.resolution)),
    );
    return {
      generatedAt: new Date(now).toISOString(),
      series: days.flat(),
      settled: wanted.every((w) => w.to < w.today),
      changesAt: nextMidnight(now, wanted),
    };
  }

  return {
    /** Drops what is cached of these series (and the series list), after a notice that they changed. */
    forget(symbols: readonly string[]): void {
      seriesCache.forget([ALL_SERIES]);
      dayCache.forget(symbols);
    },

    /**
     * One day of every selected series: `{ offset: 0 }` is today, `{ date: '2026-11-01' }` a date.
     * @example await service.day(tier, { symbols: ['NO1'], tz: 'UTC' }, { offset: 1 }) // tomorrow
     */
    day(tier: Tier, query: DayQuery, name: DayName): Promise<DayAnswer> {
      return readDays(tier, query, name, name);
    },

    /**
     * The days `from` to `to`, inclusive, at most 366: one entry per series and day, by series then date.
     * @example await service.range(tier, {}, { date: '2026-11-01' }, { offset: 0 })
     */
    range(tier: Tier, query: DayQuery, from: DayName, to: DayName): Promise<DayAnswer> {
      return readDays(tier, query, from, to);
    },

    /**
     * Per series, the interval that contains now or else the last one before now, within the tier's
     * history; a series with none has `prices: []` and today's date.
     */
    async latest(tier: Tier, query: DayQuery): Promise<DayAnswer> {
      const now = clock();
      const selected = await selectSeries(tier, query.symbols);
      const series = await Promise.all(
        selected.map(async (s): Promise<SeriesDay> => {
          const zone = query.tz ?? s.timezone;
          const today = localDate(now, zone);
          const served = servedResolution(s.resolution, query.resolution);
          const oldest =
            tier.historyDays === null
              ? Number.MIN_SAFE_INTEGER
              : dayBounds(addDays(today, -tier.historyDays), zone).start;
          const last = await prices.latestPrice(s.symbol, now, oldest);
          if (last === undefined) return { ...s, resolution: served, date: today, prices: [] };
          const date = localDate(last.start, zone);
          if (served === s.resolution) {
            return { ...s, date, prices: servedDay(s, served, date, zone, [last]) };
          }
          // The coarser interval holding the last point: the mean of every point of it.
          const [day] = await seriesDays(s, date, date, zone, served);
          const holding = (day?.prices ?? []).filter(
            (p) => Date.parse(p.start) <= last.start && last.start < Date.parse(p.end),
          );
          return { ...s, resolution: served, date, prices: holding };
        }),
      );
      return {
        generatedAt: new Date(now).toISOString(),
        series,
        settled: false,
        changesAt: nextMidnight(
          now,
          selected.map((s) => {
            const zone = query.tz ?? s.timezone;
            return { zone, today: localDate(now, zone) };
          }),
        ),
      };
    },

    /**
     * The catalogue: the selected series as they would be served, with the local dates of their first
     * and last price in the zone they are read in.
     * @example await service.catalogue(tier, { symbols: ['NO1'] })
     */
    async catalogue(tier: Tier, query: DayQuery): Promise<SeriesView[]> {
      const selected = await selectSeries(tier, query.symbols);
      return Promise.all(
        selected.map(async (s) => ({
          ...s,
          resolution: servedResolution(s.resolution, query.resolution),
          coverage: await coverageOf(prices, s, query.tz ?? s.timezone),
        })),
      );
    },
  };
}

/** The earliest end of today among `days` (each a zone and its today); a day from now when none. */
function nextMidnight(now: number, days: readonly { zone: string; today: CalendarDate }[]): number {
  let first = now + 86_400_000;
  for (const d of days) first = Math.min(first, dayBounds(d.today, d.zone).end);
  return first;
}

/** Refuses a range that runs backwards or spans more than `MAX_RANGE_DAYS` days. */
function checkRange(from: CalendarDate, to: CalendarDate): void {
  if (to < from) {
    throw new ApiError('invalid_parameter', `The parameter "to" (${to}) is before "from" (${from}).`, {
      extra: { parameter: 'to' },
    });
  }
  const days = daysBetween(from, to) + 1;
  if (days > MAX_RANGE_DAYS) {
    throw new ApiError(
      'invalid_parameter',
      `The range ${from} to ${to} spans ${days} days; at most ${MAX_RANGE_DAYS} are served at once.`,
      { extra: { parameter: 'to' } },
    );
  }
}

export type PriceService = ReturnType<typeof createPriceService>;
