/**
 * Days of prices (DESIGN section 2): which series a caller may read, which calendar day "today"
 * is for each of them, and the intervals stored in that day. Knows nothing of HTTP.
 */
import { ApiError } from '../domain/errors/api-error.js';
import type { Tier } from '../domain/limits/tiers.js';
import {
  addDays,
  type CalendarDate,
  dayBounds,
  daysBetween,
  formatInstant,
  intervalEnd,
  localDate,
} from '../domain/time/days.js';
import type { PriceStore, Series } from '../stores/types.js';

/** One interval as served: RFC 3339 start and end in the day's zone, the price as ingested. */
export interface ServedPrice {
  readonly start: string;
  readonly end: string;
  readonly price: string;
}

export interface SeriesDay extends Series {
  readonly date: CalendarDate;
  readonly prices: readonly ServedPrice[];
}

export interface DayAnswer {
  readonly generatedAt: string;
  readonly series: readonly SeriesDay[];
}

export interface DayQuery {
  /** Upper-cased symbols in the order asked; `undefined` means every series the tier may read. */
  readonly symbols?: readonly string[];
  /** A zone whose calendar day is meant for every series; else each series' own zone. */
  readonly tz?: string;
}

export function createPriceService({ prices, clock }: { prices: PriceStore; clock: () => number }) {
  function readable(tier: Tier, series: Series): boolean {
    return tier.kinds === null || tier.kinds.includes(series.kind);
  }

  /** The series a query names, checked against the catalogue and the tier. */
  async function selectSeries(tier: Tier, symbols: readonly string[] | undefined): Promise<Series[]> {
    const all = await prices.listSeries();
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

  async function seriesDay(series: Series, date: CalendarDate, zone: string): Promise<SeriesDay> {
    const { start, end } = dayBounds(date, zone);
    const stored = await prices.pricesBetween(series.symbol, start, end);
    return {
      ...series,
      date,
      prices: stored.map((p) => ({
        start: formatInstant(p.start, zone),
        end: formatInstant(intervalEnd(p.start, series.timezone, series.resolution), zone),
        price: p.price,
      })),
    };
  }

  return {
    /**
     * The prices of the day `offsetDays` after today (0 = today) for every selected series.
     * @example await service.relativeDay(tier, { symbols: ['NO1'], tz: 'UTC' }, 0)
     */
    async relativeDay(tier: Tier, query: DayQuery, offsetDays: number): Promise<DayAnswer> {
      const now = clock();
      const selected = await selectSeries(tier, query.symbols);
      const wanted = selected.map((series) => {
        const zone = query.tz ?? series.timezone;
        const today = localDate(now, zone);
        return { series, zone, today, date: addDays(today, offsetDays) };
      });
      checkHistory(tier, wanted);
      const days = await Promise.all(wanted.map((w) => seriesDay(w.series, w.date, w.zone)));
      return { generatedAt: new Date(now).toISOString(), series: days };
    },
  };
}

export type PriceService = ReturnType<typeof createPriceService>;
