/**
 * Days of one series as served (docs/using-the-api.md "Reading prices"): the stored points of consecutive local days,
 * read in one query, each interval written RFC 3339 in the zone read in, at the series' own
 * resolution or as means over coarser intervals.
 */
import { aggregateIntervals } from '../domain/prices/aggregate.js';
import {
  addDays,
  type CalendarDate,
  daysBetween,
  formatInstant,
  intervalEnd,
  RESOLUTIONS,
  type Resolution,
  type Span,
} from '../domain/time/days.js';
import { type OffsetTimeline, offsetTimeline } from '../domain/time/offset-timeline.js';
import type { PriceStore, Series, StoredPrice } from '../stores/types.js';

const DAY_MS = 86_400_000;

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

/** One stored point as served at the series' own resolution, written in `zone` (for `latest`). */
export function servedPoint(series: Series, zone: string, p: StoredPrice): ServedPrice {
  return {
    start: formatInstant(p.start, zone),
    end: formatInstant(intervalEnd(p.start, series.timezone, series.resolution), zone),
    price: p.price,
  };
}

/**
 * Intervals written in one turn of the event loop: a long range is read and written this many at a
 * time, letting other requests in between, so a year of quarter hours (35,040 intervals, about
 * 30 ms of work) never holds everyone else up for more than a few milliseconds at once. A third of
 * what it was: with two series, a tariff and ranks, turns of a month of quarter hours held the
 * loop for 30 ms (bench/README.md, `npm run bench:heavy-reads`).
 */
export const INTERVALS_PER_TURN = 1_000;

/** Resolves in a later turn of the event loop, after the I/O that waits (`setImmediate`). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Consecutive days of one series, read from the store and cut into local days, a month of quarter
 * hours (`INTERVALS_PER_TURN`) per query and turn. The zones' offsets over the range are looked up
 * once (src/domain/time/offset-timeline.ts), so a year of quarter hours is written with
 * arithmetic, not with a zone lookup per instant.
 */
export async function readServedDays(
  prices: PriceStore,
  series: Series,
  from: CalendarDate,
  to: CalendarDate,
  zone: string,
  served: Resolution,
): Promise<SeriesDay[]> {
  const dates = datesFromTo(from, to);
  // Every instant of these local days, and the end of each interval in them, lies within two
  // days of their UTC dates (offsets are at most 14 hours, an interval at most 25).
  const spanStart = Date.parse(`${from}T00:00:00Z`) - 2 * DAY_MS;
  const spanEnd = Date.parse(`${to}T00:00:00Z`) + 3 * DAY_MS;
  const local = offsetTimeline(zone, spanStart, spanEnd);
  const own = series.timezone === zone ? local : offsetTimeline(series.timezone, spanStart, spanEnd);
  const starts = [...dates, addDays(to, 1)].map((date) => local.dayStart(date));
  const write = servedWriter(series, served, local, own);
  const perDay = RESOLUTIONS.P1D / RESOLUTIONS[series.resolution];
  const turnDays = Math.max(1, Math.floor(INTERVALS_PER_TURN / perDay));
  const days: SeriesDay[] = [];
  for (let first = 0; first < dates.length; first += turnDays) {
    if (first > 0) await nextTurn();
    const last = Math.min(first + turnDays, dates.length);
    const stored = await prices.pricesBetween(series.symbol, starts[first] as number, starts[last] as number);
    let i = 0;
    for (let d = first; d < last; d++) {
      const date = dates[d] as CalendarDate;
      const day = { start: starts[d] as number, end: starts[d + 1] as number };
      const begin = i;
      while (i < stored.length && (stored[i] as StoredPrice).start < day.end) i++;
      days.push({ ...series, resolution: served, date, prices: write(date, day, stored, begin, i) });
    }
  }
  return days;
}

/** The dates `from` to `to`, inclusive. */
function datesFromTo(from: CalendarDate, to: CalendarDate): CalendarDate[] {
  const first = Date.parse(`${from}T00:00:00Z`);
  const count = daysBetween(from, to) + 1;
  return Array.from({ length: count }, (_, i) => new Date(first + i * DAY_MS).toISOString().slice(0, 10));
}

/**
 * Writes the points `stored[first..end)` of one local day as served: each interval at the series'
 * own resolution, or the means over the coarser intervals of the day, in the zone read in.
 */
function servedWriter(series: Series, served: Resolution, local: OffsetTimeline, own: OffsetTimeline) {
  // The end of one interval is mostly the start of the next: its text is written once.
  let lastEnd = Number.NaN;
  let lastEndText = '';
  const textOf = (at: number) => (at === lastEnd ? lastEndText : local.formatInstant(at));
  return (
    date: CalendarDate,
    day: Span,
    stored: readonly StoredPrice[],
    first: number,
    end: number,
  ): ServedPrice[] => {
    const out: ServedPrice[] = [];
    if (served === series.resolution) {
      for (let i = first; i < end; i++) {
        const p = stored[i] as StoredPrice;
        const start = textOf(p.start);
        lastEnd = own.intervalEnd(p.start, series.resolution);
        lastEndText = local.formatInstant(lastEnd);
        out.push({ start, end: lastEndText, price: p.price });
      }
      return out;
    }
    const points = first === 0 && end === stored.length ? stored : stored.slice(first, end);
    for (const a of aggregateIntervals(points, local.dayIntervals(date, day, served))) {
      const start = textOf(a.start);
      lastEnd = a.end;
      lastEndText = local.formatInstant(a.end);
      out.push({ start, end: lastEndText, price: a.price });
    }
    return out;
  };
}
