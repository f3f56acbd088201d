/**
 * Reading prices (docs/api.md): which series a caller may read, which calendar days a request
 * means for each of them, the intervals stored in those days, at the series' own or a coarser
 * resolution, and the catalogue with coverage. Knows nothing of HTTP.
 */
import { ApiError } from '../domain/errors/api-error.js';
import type { Tier } from '../domain/limits/tiers.js';
import type { EnergyUnit } from '../domain/money/exact.js';
import {
  addDays,
  type CalendarDate,
  dayBounds,
  daysBetween,
  formatInstant,
  localDate,
  RESOLUTIONS,
  type Resolution,
} from '../domain/time/days.js';
import { firstGridCut, type GridCut } from '../domain/time/grid-cut.js';
import type { DataTerms } from '../sources/source-terms.js';
import type { DayProvenance, PriceStore, Series } from '../stores/types.js';
import {
  checkConversion,
  convertDays,
  type FxPairs,
  type FxUsed,
  type Rate,
  ratesBetween,
  type Unconverted,
} from './price-conversion.js';
import { daySum, type Ranked, REFERENCE_DAYS, rankDaysAfter } from './ranking.js';
import { createReadCache, type ReadCacheOptions } from './read-cache.js';
import { readWeightOf } from './read-weight.js';
import { createReferenceSums } from './reference-sums.js';
import type { SeriesView } from './series-service.js';
import { nextTurn, readServedDays, type SeriesDay, servedPoint } from './served-days.js';
import { type TariffedPoint, type Tariffs, tariffConversion, tariffNamed, withTariff } from './tariffs.js';

export { INTERVALS_PER_UNIT, weightOf } from './read-weight.js';
export type { SeriesDay, ServedPrice } from './served-days.js';

/**
 * A day as answered: the served day, whether every interval of it is stored, and where it came from
 * (docs/sources.md, "Provenance and completeness").
 */
export interface AnsweredDay extends SeriesDay {
  /**
   * Every interval of the day is stored. Read in another zone (`tz`), every day of the series' own
   * zone that the day overlaps is complete. False for a day nothing recorded.
   */
  readonly complete: boolean;
  /** The source that wrote the day (the first such day read in another zone); `null` when unknown. */
  readonly source: string | null;
  /**
   * The licence and attribution of the upstream `source` fetched from (docs/sources.md "Terms of
   * each upstream"); `null` for imported data and days no source is recorded for.
   */
  readonly license: string | null;
  readonly attribution: string | null;
  /** Converted into another currency: the rate of the first interval; `null` when none had a rate. */
  readonly fx?: FxUsed | null;
  /** Converted, with intervals left out for want of a rate: how many, and why. */
  readonly unconverted?: Unconverted;
  /** With `tariff`: its name; each interval then has its total and parts (docs/tariffs.md). */
  readonly tariff?: string;
  readonly prices: readonly AnsweredPoint[];
}

/** An interval as answered: converted, with a tariff's parts and with rank and level when asked. */
export type AnsweredPoint = TariffedPoint & Partial<Ranked>;

export interface DayAnswer {
  readonly generatedAt: string;
  readonly series: readonly AnsweredDay[];
  /** Every day in the answer has ended in its zone, so only a correction could change it. */
  readonly settled: boolean;
  /**
   * The first local midnight after `generatedAt` in any zone the answer is read in: from then on the
   * same request can mean other days (today moves on) or fall outside the tier's history.
   */
  readonly changesAt: number;
  /** The FX series the converted prices were computed with: a change of one changes the answer. */
  readonly fxSymbols?: readonly string[];
}

export interface DayQuery {
  /** Upper-cased symbols in the order asked; `undefined` means every series the tier may read. */
  readonly symbols?: readonly string[];
  /** A zone whose calendar day is meant for every series; else each series' own zone. */
  readonly tz?: string;
  /** Serve means over intervals this long where a series is finer; coarser series are served as they are. */
  readonly resolution?: Resolution;
  /** Prices converted into this currency with the FX series configured for the pair. */
  readonly currency?: string;
  /** Energy prices per this unit. */
  readonly unit?: EnergyUnit;
  /** A tariff's name: each interval's total and parts, in the tariff's currency and unit. */
  readonly tariff?: string;
  /** Each interval's rank in its day and level against the days before (docs/tariffs.md). */
  readonly rank?: boolean;
}

/**
 * A catalogue entry: a series with its coverage, and the licence and attribution of the source that
 * wrote its last day (`null` for imported data, docs/decisions.md).
 */
export interface CatalogueEntry extends SeriesView {
  readonly license: string | null;
  readonly attribution: string | null;
}

/** A day named relative to each series' today (`offset`) or by its date. */
export type DayName = { readonly offset: number } | { readonly date: CalendarDate };

/** What a day or range request means, checked against the tier, before anything is read. */
export interface DayPlan {
  readonly now: number;
  readonly query: DayQuery;
  readonly wanted: readonly {
    readonly series: Series;
    readonly zone: string;
    readonly today: CalendarDate;
    readonly date: CalendarDate;
    readonly to: CalendarDate;
    /** With `rank`: the first day read as the reference of the levels (up to 7 days before `date`). */
    readonly reference?: CalendarDate;
  }[];
  /** Rate-limit units the request takes (docs/using-the-api.md "Rate limits"): see `weightOf`. */
  readonly weight: number;
}

/**
 * Intervals converted and priced in one turn of the event loop: with a tariff each costs a few
 * microseconds, so a turn takes a few milliseconds (bench/README.md, `npm run bench:heavy-reads`).
 */
const VALUED_PER_TURN = 500;

/** At most this many days in one range (docs/api.md). */
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
  /** The FX series that convert each pair (`fx:` in the config file). */
  readonly fx?: FxPairs;
  /** The tariffs by name (`tariffs:` in the config file). */
  readonly tariffs?: Tariffs;
  /** The licence and attribution of the data a source wrote, by the source's name (src/sources/source-terms.ts). */
  readonly terms?: (source: string | null) => DataTerms | undefined;
}

/** The tag of the series list in the read cache: every change of any series drops it. */
const ALL_SERIES = '*';

/** The read side of prices (docs/api.md): days, ranges, latest points and the catalogue, as served to a tier. */
export interface PriceService {
  /** Drops what is cached of these series (and the series list), after a notice that they changed. */
  forget(symbols: readonly string[]): void;
  /**
   * One day of every selected series: `{ offset: 0 }` is today, `{ date: '2026-11-01' }` a date.
   * @example await service.day(tier, { symbols: ['NO1'], tz: 'UTC' }, { offset: 1 }) // tomorrow
   */
  day(tier: Tier, query: DayQuery, name: DayName): Promise<DayAnswer>;
  /**
   * The days `from` to `to`, inclusive, at most 366: one entry per series and day, by series then date.
   * @example await service.range(tier, {}, { date: '2026-11-01' }, { offset: 0 })
   */
  range(tier: Tier, query: DayQuery, from: DayName, to: DayName): Promise<DayAnswer>;
  /**
   * The days a day or range request means and what they weigh (`plan.weight`, in rate-limit
   * units), checked but not yet read: a caller charges the weight, then reads the plan.
   * @example const plan = await service.plan(tier, {}, { offset: -365 }, { offset: 0 }); await pay(plan.weight); await service.read(plan)
   */
  plan(tier: Tier, query: DayQuery, from: DayName, to: DayName): Promise<DayPlan>;
  /** Reads the days of a plan from `plan`. */
  read(plan: DayPlan): Promise<DayAnswer>;
  /**
   * Per series, the interval that contains now or else the last one before now, within the tier's
   * history; a series with none has `prices: []` and today's date.
   */
  latest(tier: Tier, asked: DayQuery): Promise<DayAnswer>;
  /**
   * The catalogue: the selected series as they would be served, with the local dates of their first
   * and last price in the zone they are read in.
   * @example await service.catalogue(tier, { symbols: ['NO1'] })
   */
  catalogue(tier: Tier, query: DayQuery): Promise<CatalogueEntry[]>;
}

export function createPriceService({
  prices,
  clock,
  cache,
  fx = {},
  tariffs = {},
  terms = () => undefined,
}: PriceServiceDeps): PriceService {
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
  // Bounded in points as well: 5,000 week-long ranges of quarter hours would be 3 million points.
  const dayCache = createReadCache<AnsweredDay[]>({
    ...cacheOptions,
    maxEntries: 5_000,
    maxWeight: 250_000,
    weigh: (days) => days.reduce((points, day) => points + 1 + day.prices.length, 0),
  });

  // Days as answered under conversion, a tariff or ranks (`answeredDays`), bounded like the days.
  const answeredCache = createReadCache<AnsweredDay[]>({
    ...cacheOptions,
    maxEntries: 5_000,
    maxWeight: 250_000,
    weigh: (days) => days.reduce((points, day) => points + 1 + day.prices.length, 0),
  });
  // FX rates by series and span: a few hundred short lists.
  const rateCache = createReadCache<Rate[]>({ ...cacheOptions, maxEntries: 1_000 });

  // The days before a ranked day, summed once per series and day (./reference-sums.ts).
  const referenceSums = createReferenceSums(cacheOptions);

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
   * Refuses days further back than the tier's history (docs/keys-and-tiers.md): a date more than
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

  /** Consecutive days `from`..`to` of one series as served, cached until the series changes. */
  function seriesDays(
    series: Series,
    from: CalendarDate,
    to: CalendarDate,
    zone: string,
    asked: Resolution | undefined,
  ): Promise<AnsweredDay[]> {
    const served = servedResolution(series.resolution, asked);
    const read = async () => {
      const [days, recorded] = await Promise.all([
        readServedDays(prices, series, from, to, zone, served),
        recordedDays(prices, series, zone, from, to),
      ]);
      return withProvenance(series, zone, days, recorded, terms);
    };
    // Long ranges are read as they come: a year of quarter hours per entry would crowd out the days.
    if (daysBetween(from, to) >= 7) return read();
    return dayCache.read(`${series.symbol}|${from}|${to}|${zone}|${served}`, [series.symbol], read);
  }

  /** The FX series of a pair, from the catalogue as cached; it need not be readable by the caller. */
  async function fxSeries(symbol: string): Promise<Series | undefined> {
    const all = await seriesCache.read(ALL_SERIES, [ALL_SERIES], () => prices.listSeries());
    return all.find((s) => s.symbol === symbol);
  }

  /**
   * The FX rates that convert a span of days, kept like the days (tagged with the FX series): each
   * request for the same days in another zone spelling, resolution or tariff reads them once.
   */
  const readRates = (series: Series, from: number, to: number) =>
    rateCache.read(`${series.symbol}|${from}|${to}`, [series.symbol], () =>
      ratesBetween(prices, series, from, to),
    );

  /** Days of one series in the currency and unit asked (new objects; the cached days stay as stored). */
  function converted(days: AnsweredDay[], query: DayQuery): Promise<AnsweredDay[]> {
    return convertDays(readRates, days, query, fx, fxSeries);
  }

  /**
   * The query as read: with `tariff`, converted into the tariff's currency and unit (checked against
   * what else was asked and the series), and refused with `resolution=P1D`, whose one interval would
   * span fees of different hours.
   */
  function resolvedQuery(query: DayQuery, series: readonly Series[]): DayQuery {
    if (query.tariff === undefined) return query;
    const tariff = tariffNamed(tariffs, query.tariff);
    if (query.resolution === 'P1D') {
      throw new ApiError(
        'invalid_parameter',
        'The parameter "resolution" (P1D) cannot be read with "tariff": the fees of a day change by the hour. Ask PT1H or finer.',
        { extra: { parameter: 'resolution' } },
      );
    }
    return { ...query, ...tariffConversion(tariff, query, series, fx), tariff: tariff.name };
  }

  /**
   * Days of one series converted as `query` asks and, with `tariff`, priced under it: in turns of
   * `VALUED_PER_TURN` intervals, so that a long range lets other requests in between
   * (docs/decisions.md). Each interval's value depends on its own start only, so turns change nothing.
   */
  async function valuedDays(days: AnsweredDay[], query: DayQuery): Promise<AnsweredDay[]> {
    const tariff = query.tariff === undefined ? undefined : tariffNamed(tariffs, query.tariff);
    const value = async (part: AnsweredDay[]) => {
      const valued = await converted(part, query);
      return tariff === undefined ? valued : withTariff(valued, tariff);
    };
    const out: AnsweredDay[] = [];
    let part: AnsweredDay[] = [];
    let intervals = 0;
    for (const day of days) {
      if (intervals >= VALUED_PER_TURN) {
        out.push(...(await value(part)));
        await nextTurn();
        part = [];
        intervals = 0;
      }
      part.push(day);
      intervals += day.prices.length;
    }
    out.push(...(await value(part)));
    if (out.length > part.length) await nextTurn();
    return out;
  }

  /** What ranking compares of each interval: the total under a tariff, else the price as served. */
  function rankedValues(days: readonly AnsweredDay[], query: DayQuery): (string | undefined)[][] {
    const valued = query.tariff !== undefined;
    return days.map((d) => d.prices.map((p) => (valued ? p.total : p.price)));
  }

  /** The sums of the level's reference days of `w` (from `w.reference` to the day before `w.date`). */
  function referenceOf(w: DayPlan['wanted'][number], query: DayQuery) {
    if (w.reference === undefined || w.reference >= w.date) return Promise.resolve([]);
    const served = servedResolution(w.series.resolution, query.resolution);
    const fxSymbol =
      query.currency !== undefined && query.currency !== w.series.currency
        ? fx[w.series.currency]?.[query.currency]
        : undefined;
    const summed = {
      key: `${w.series.symbol}|${w.zone}|${served}|${query.currency ?? ''}|${query.unit ?? ''}|${query.tariff ?? ''}`,
      tags: fxSymbol === undefined ? [w.series.symbol] : [w.series.symbol, fxSymbol],
      sumsOf: async (from: CalendarDate, to: CalendarDate) => {
        const read = await seriesDays(w.series, from, to, w.zone, query.resolution);
        const days = await valuedDays(read, query);
        const values = rankedValues(days, query);
        return new Map(days.map((d, i) => [d.date, daySum(values[i] ?? [])]));
      },
    };
    return referenceSums.between(summed, w.reference, addDays(w.date, -1));
  }

  /**
   * Consecutive days of one series as answered: converted, under the tariff, ranked. With `rank`,
   * the levels are against the sums of the days from `reference` (./reference-sums.ts).
   */
  /**
   * Days as answered: converted, priced under a tariff and ranked as `query` asks. A few days so
   * answered are kept like the days they are made of (tagged with the series and its FX series), so
   * the same household's days asked again by another URL (another spelling of the zone, another
   * symbol order, CSV after JSON) are valued once; their JSON then comes from the renderer's cache.
   */
  function answeredDays(w: DayPlan['wanted'][number], query: DayQuery): Promise<AnsweredDay[]> {
    const plain = query.currency === undefined && query.unit === undefined && query.rank !== true;
    if (plain || daysBetween(w.date, w.to) >= 7) return valuedAndRanked(w, query);
    const served = servedResolution(w.series.resolution, query.resolution);
    const key = [w.series.symbol, w.date, w.to, w.zone, served, query.currency, query.unit, query.tariff]
      .concat(query.rank === true ? ['rank', w.reference] : [])
      .join('|');
    const tags = [w.series.symbol, ...(fxSymbolsOf([w.series], query, fx).fxSymbols ?? [])];
    return answeredCache.read(key, tags, () => valuedAndRanked(w, query));
  }

  async function valuedAndRanked(w: DayPlan['wanted'][number], query: DayQuery): Promise<AnsweredDay[]> {
    const [asked, before] = await Promise.all([
      seriesDays(w.series, w.date, w.to, w.zone, query.resolution),
      query.rank === true ? referenceOf(w, query) : [],
    ]);
    const days = await valuedDays(asked, query);
    if (query.rank !== true) return days;
    const ranks = rankDaysAfter(rankedValues(days, query), before);
    return days.map((d, i) => ({
      ...d,
      prices: d.prices.map((p, j) => {
        const r = ranks[i]?.[j];
        return r === undefined ? p : withRank(p, r);
      }),
    }));
  }

  /** Resolves a day name against one series' today. */
  function dayOf(name: DayName, today: CalendarDate): CalendarDate {
    return 'date' in name ? name.date : addDays(today, name.offset);
  }

  /**
   * Which days of which series a request means (each resolved in the zone it is read in), checked
   * against the catalogue, the tier and the range bounds, and what reading them weighs.
   */
  async function planDays(tier: Tier, asked: DayQuery, from: DayName, to: DayName): Promise<DayPlan> {
    const now = clock();
    const selected = await selectSeries(tier, asked.symbols);
    const query = resolvedQuery(asked, selected);
    const wanted = selected.map((series) => {
      const zone = query.tz ?? series.timezone;
      const today = localDate(now, zone);
      const date = dayOf(from, today);
      // The levels' reference: the days before, but none the tier may not read.
      const history = tier.historyDays === null ? undefined : addDays(today, -tier.historyDays);
      const reference = addDays(date, -REFERENCE_DAYS);
      return {
        series,
        zone,
        today,
        date,
        to: dayOf(to, today),
        ...(query.rank === true && {
          reference: history !== undefined && history > reference ? history : reference,
        }),
      };
    });
    for (const w of wanted) checkRange(w.date, w.to);
    checkHistory(tier, wanted);
    checkCoarseGrid(wanted, query);
    checkConversion(selected, query, fx);
    const weight = readWeightOf(wanted, query);
    return { now, query, wanted, weight };
  }

  /** The days of a plan, read and written as served. */
  async function readPlan({ now, query, wanted }: DayPlan): Promise<DayAnswer> {
    const days = await Promise.all(wanted.map((w) => answeredDays(w, query)));
    return {
      generatedAt: new Date(now).toISOString(),
      series: days.flat(),
      settled: wanted.every((w) => w.to < w.today),
      changesAt: nextMidnight(now, wanted),
      ...fxSymbolsOf(
        wanted.map((w) => w.series),
        query,
        fx,
      ),
    };
  }

  return {
    forget(symbols: readonly string[]): void {
      seriesCache.forget([ALL_SERIES]);
      dayCache.forget(symbols);
      answeredCache.forget(symbols);
      rateCache.forget(symbols);
      referenceSums.forget(symbols);
    },

    async day(tier: Tier, query: DayQuery, name: DayName): Promise<DayAnswer> {
      return readPlan(await planDays(tier, query, name, name));
    },

    async range(tier: Tier, query: DayQuery, from: DayName, to: DayName): Promise<DayAnswer> {
      return readPlan(await planDays(tier, query, from, to));
    },

    plan: planDays,
    read: readPlan,

    async latest(tier: Tier, asked: DayQuery): Promise<DayAnswer> {
      const now = clock();
      const selected = await selectSeries(tier, asked.symbols);
      if (asked.rank === true) {
        throw new ApiError(
          'invalid_parameter',
          'The parameter "include" (rank) ranks the intervals of whole days: ask /prices/today or a date.',
          { extra: { parameter: 'include' } },
        );
      }
      const query = resolvedQuery(asked, selected);
      checkConversion(selected, query, fx);
      const series = await Promise.all(
        selected.map(async (s): Promise<AnsweredDay> => {
          const zone = query.tz ?? s.timezone;
          const today = localDate(now, zone);
          const served = servedResolution(s.resolution, query.resolution);
          const oldest =
            tier.historyDays === null
              ? Number.MIN_SAFE_INTEGER
              : dayBounds(addDays(today, -tier.historyDays), zone).start;
          const last = await prices.latestPrice(s.symbol, now, oldest);
          if (last === undefined) {
            return { ...s, resolution: served, date: today, ...NO_PROVENANCE, prices: [] };
          }
          const date = localDate(last.start, zone);
          checkCoarseGrid([{ series: s, zone, date, to: date }], query);
          if (served === s.resolution) {
            const point = { ...s, date, prices: [servedPoint(s, zone, last)] };
            const recorded = await recordedDays(prices, s, zone, date, date);
            const [day] = withProvenance(s, zone, [point], recorded, terms);
            return day as AnsweredDay;
          }
          // The coarser interval holding the last point: the mean of every point of it.
          const [day] = await seriesDays(s, date, date, zone, served);
          const holding = (day?.prices ?? []).filter(
            (p) => Date.parse(p.start) <= last.start && last.start < Date.parse(p.end),
          );
          return {
            ...s,
            resolution: served,
            date,
            complete: day?.complete ?? false,
            source: day?.source ?? null,
            license: day?.license ?? null,
            attribution: day?.attribution ?? null,
            prices: holding,
          };
        }),
      );
      const tariff = query.tariff === undefined ? undefined : tariffNamed(tariffs, query.tariff);
      const answered = (await Promise.all(series.map((day) => converted([day], query)))).flat();
      return {
        generatedAt: new Date(now).toISOString(),
        series: tariff === undefined ? answered : withTariff(answered, tariff),
        ...fxSymbolsOf(selected, query, fx),
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

    async catalogue(tier: Tier, query: DayQuery): Promise<CatalogueEntry[]> {
      const selected = await selectSeries(tier, query.symbols);
      return Promise.all(
        selected.map(async (s) => {
          const span = await prices.coverage(s.symbol);
          const zone = query.tz ?? s.timezone;
          const coverage = span && { first: localDate(span.first, zone), last: localDate(span.last, zone) };
          // The terms of the source that wrote the last day, in the series' own zone (docs/decisions.md).
          const last = span && localDate(span.last, s.timezone);
          const recorded = last
            ? (await recordedDays(prices, s, s.timezone, last, last)).get(last)
            : undefined;
          const found = terms(recorded?.source ?? null);
          return {
            ...s,
            resolution: servedResolution(s.resolution, query.resolution),
            coverage: coverage ?? null,
            license: found?.license ?? null,
            attribution: found?.attribution ?? null,
          };
        }),
      );
    },
  };
}

/**
 * `p` with its rank and level. Written out: spreading `p` cost more than ranking it
 * (bench/README.md, "What a household's answer costs").
 */
function withRank(p: AnsweredPoint, { rank, level }: Ranked): AnsweredPoint {
  const { start, end, price, fx, spot, fees, vat, total } = p;
  if (spot === undefined || fees === undefined || vat === undefined || total === undefined) {
    return fx === undefined ? { start, end, price, rank, level } : { start, end, price, fx, rank, level };
  }
  return fx === undefined
    ? { start, end, price, spot, fees, vat, total, rank, level }
    : { start, end, price, fx, spot, fees, vat, total, rank, level };
}

/** The series' own dates that a day read in `zone` overlaps (one, or two across a zone's midnight). */
function ownDates(series: Series, zone: string, date: CalendarDate): [CalendarDate, CalendarDate] {
  if (zone === series.timezone) return [date, date];
  const { start, end } = dayBounds(date, zone);
  return [localDate(start, series.timezone), localDate(end - 1, series.timezone)];
}

/**
 * What the store recorded of the days of the series' own zone that the days `from`..`to` read in
 * `zone` overlap: one query, which runs beside the read of the points (on PostgreSQL on a second
 * pooled connection, so a day read waits for the slower of the two and not for both).
 */
async function recordedDays(
  prices: PriceStore,
  series: Series,
  zone: string,
  from: CalendarDate,
  to: CalendarDate,
): Promise<Map<CalendarDate, DayProvenance>> {
  const recorded = new Map<CalendarDate, DayProvenance>();
  if (prices.dayProvenance === undefined) return recorded;
  const days = await prices.dayProvenance(
    series.symbol,
    ownDates(series, zone, from)[0],
    ownDates(series, zone, to)[1],
  );
  for (const day of days) recorded.set(day.date, day);
  return recorded;
}

/** What a day nothing is recorded of answers for its provenance and terms. */
const NO_PROVENANCE = { complete: false, source: null, license: null, attribution: null } as const;

/**
 * `days` (consecutive, of one series, read in `zone`) with what `recordedDays` found of them, and
 * the terms of the source that wrote each.
 */
function withProvenance(
  series: Series,
  zone: string,
  days: readonly SeriesDay[],
  recorded: ReadonlyMap<CalendarDate, DayProvenance>,
  terms: (source: string | null) => DataTerms | undefined,
): AnsweredDay[] {
  return days.map((day) => {
    const [from, to] = ownDates(series, zone, day.date);
    let complete = true;
    let source: string | null = null;
    for (let date = from; date <= to; date = addDays(date, 1)) {
      const found = recorded.get(date);
      complete &&= found?.complete === true;
      source ??= found?.source ?? null;
    }
    const found = terms(source);
    return {
      ...day,
      complete,
      source,
      license: found?.license ?? null,
      attribution: found?.attribution ?? null,
    };
  });
}

/** `{ fxSymbols }`: the FX series converting `series` into the currency asked, when any. */
function fxSymbolsOf(series: readonly Series[], query: DayQuery, fx: FxPairs): { fxSymbols?: string[] } {
  const currency = query.currency;
  if (currency === undefined) return {};
  const symbols = new Set<string>();
  for (const s of series) {
    const symbol = fx[s.currency]?.[currency];
    if (symbol !== undefined && s.currency !== currency) symbols.add(symbol);
  }
  return symbols.size === 0 ? {} : { fxSymbols: [...symbols] };
}

/** The earliest end of today among `days` (each a zone and its today); a day from now when none. */
function nextMidnight(now: number, days: readonly { zone: string; today: CalendarDate }[]): number {
  let first = now + 86_400_000;
  for (const d of days) first = Math.min(first, dayBounds(d.today, d.zone).end);
  return first;
}

/**
 * Refuses a `resolution` whose intervals, in the zone the days are read in, would cut an interval of
 * a series in two on any of the days asked (src/domain/time/grid-cut.ts): a mean must be of whole
 * intervals (docs/using-the-api.md "Reading prices"). Series that share a grid and days are checked once.
 */
function checkCoarseGrid(
  wanted: readonly { series: Series; zone: string; date: CalendarDate; to: CalendarDate }[],
  query: DayQuery,
): void {
  const asked = query.resolution;
  if (asked === undefined) return;
  const cuts = new Map<string, GridCut | undefined>();
  const refused: { symbol: string; cut: GridCut; zone: string; series: Series }[] = [];
  for (const w of wanted) {
    const own = w.series.resolution;
    if (servedResolution(own, asked) === own) continue;
    const key = `${w.zone}|${w.series.timezone}|${own}|${w.date}|${w.to}`;
    if (!cuts.has(key)) {
      const coarse = { zone: w.zone, resolution: asked };
      cuts.set(key, firstGridCut(coarse, { zone: w.series.timezone, resolution: own }, w.date, w.to));
    }
    const cut = cuts.get(key);
    if (cut !== undefined) refused.push({ symbol: w.series.symbol, cut, zone: w.zone, series: w.series });
  }
  const first = refused[0];
  if (first === undefined) return;
  const { series, zone, cut } = first;
  throw new ApiError(
    'invalid_parameter',
    `The parameter "resolution" (${asked}) would cut intervals of ${refused.map((r) => r.symbol).join(', ')} in two: read in ${zone}, a ${asked} interval begins at ${formatInstant(cut.at, zone)}, inside a ${series.resolution} interval of ${series.symbol} (${series.timezone}), so its mean would not be of whole intervals. Read in each series' own zone (without "tz"), or without "resolution".`,
    { extra: { parameter: 'resolution', symbols: refused.map((r) => r.symbol) } },
  );
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
