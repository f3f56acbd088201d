/**
 * What a read of days weighs in rate-limit units (docs/using-the-api.md "Rate limits"): the intervals it reads and
 * writes, and what computing each interval answered costs besides. Known from the plan, before
 * anything is read, so that it is taken in one step.
 */
import { addDays, type CalendarDate, daysBetween, RESOLUTIONS } from '../domain/time/days.js';
import type { Series } from '../stores/types.js';

/** What a read asks to compute (a `DayQuery` of ./price-service.ts). */
interface Computed {
  readonly currency?: string;
  readonly unit?: string;
  readonly tariff?: string;
  readonly rank?: boolean;
}

/**
 * Intervals a rate-limit unit pays for: a request for days takes one unit per started 3,000
 * intervals it spans, counted on each series' own grid (96 a day at PT15M, 24 at PT1H, 1 at P1D)
 * whatever `resolution` it is served at, since reading and writing the stored points is the work.
 * A day of up to 31 quarter-hour series is one unit; a year of one is 12.
 */
export const INTERVALS_PER_UNIT = 3_000;

/**
 * What computing each interval answered costs besides reading and writing it, in intervals read
 * (docs/using-the-api.md "Rate limits"): a price converted into another currency or unit, under a tariff (fees and
 * VAT), ranked. Measured with bench:consumer-prices (bench/README.md): a converted, tariffed, ranked
 * interval costs about five plain ones.
 */
export const EXTRA_INTERVALS = { conversion: 1, tariff: 2, rank: 1 } as const;

function intervalsOf(w: { series: Series; date: CalendarDate; to: CalendarDate }): number {
  return (daysBetween(w.date, w.to) + 1) * (RESOLUTIONS.P1D / RESOLUTIONS[w.series.resolution]);
}

/** The weight of reading `wanted`: one unit per started `INTERVALS_PER_UNIT` intervals, at least one. */
export function weightOf(
  wanted: readonly { series: Series; date: CalendarDate; to: CalendarDate }[],
): number {
  let intervals = 0;
  for (const w of wanted) intervals += intervalsOf(w);
  return Math.max(1, Math.ceil(intervals / INTERVALS_PER_UNIT));
}

/** How many intervals read the computing of one interval of `series` costs besides (`EXTRA_INTERVALS`). */
function extraIntervals(series: Series, query: Computed): number {
  const unit = query.unit !== undefined && query.unit !== series.unit;
  const currency = query.currency !== undefined && query.currency !== series.currency;
  return (
    (unit || currency ? EXTRA_INTERVALS.conversion : 0) +
    (query.tariff === undefined ? 0 : EXTRA_INTERVALS.tariff) +
    (query.rank === true ? EXTRA_INTERVALS.rank : 0)
  );
}

/**
 * The weight of a read of days (docs/using-the-api.md "Rate limits"): every interval read (the days answered and,
 * with `rank`, the days before them) counts one, and every interval answered also counts what
 * computing it costs (`EXTRA_INTERVALS`); one unit per started `INTERVALS_PER_UNIT`, at least one.
 * @example readWeightOf([{ series: no1, date: '2026-10-23', to: '2026-11-22' }], { tariff: 'household', rank: true }) // 5: 2,976 × 5
 */
export function readWeightOf(
  wanted: readonly { series: Series; date: CalendarDate; to: CalendarDate; reference?: CalendarDate }[],
  query: Computed,
): number {
  let intervals = 0;
  for (const w of wanted) {
    const answered = intervalsOf(w);
    intervals += answered * (1 + extraIntervals(w.series, query));
    if (w.reference !== undefined && w.reference < w.date) {
      intervals += intervalsOf({ series: w.series, date: w.reference, to: addDays(w.date, -1) });
    }
  }
  return Math.max(1, Math.ceil(intervals / INTERVALS_PER_UNIT));
}
