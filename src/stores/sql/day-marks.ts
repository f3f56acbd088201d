/**
 * The local days an import writes into, noted point by point, so that each engine can record their
 * provenance and completeness in the transaction that writes the points (docs/sources.md,
 * "Provenance and completeness"). A day is the series' local date in the series' zone; it is
 * complete when every interval of its grid is stored: 92, 96 or 100 quarter hours, 23, 24 or 25
 * hours, as the clock changes make it (src/domain/time/days.ts).
 */
import {
  type CalendarDate,
  dayBounds,
  dayIntervals,
  localDate,
  RESOLUTIONS,
  type Resolution,
  type Span,
} from '../../domain/time/days.js';
import { offsetMinutes } from '../../domain/time/zone.js';

/** What the engines need of a series to place its points in days. */
export interface SeriesGrid {
  readonly id: number;
  readonly timezone: string;
  readonly resolution: Resolution;
}

/** One local day written into: its span, and how many intervals make it whole. */
export interface DayMark {
  readonly seriesId: number;
  readonly date: CalendarDate;
  readonly start: number;
  readonly end: number;
  readonly intervals: number;
}

const DAY_MS = 86_400_000;

/**
 * How many grid intervals a local day has.
 * @example intervalsOfDay('2026-10-25', 'Europe/Oslo', 'PT15M') // 100
 */
export function intervalsOfDay(
  date: CalendarDate,
  timezone: string,
  resolution: Resolution,
  span?: Span,
): number {
  if (resolution === 'P1D') return 1;
  const { start, end } = span ?? dayBounds(date, timezone);
  // Most days have no clock change: 24 hours at one offset, a whole number of intervals.
  if (end - start === DAY_MS && offsetMinutes(start, timezone) === offsetMinutes(end - 1, timezone)) {
    return RESOLUTIONS.P1D / RESOLUTIONS[resolution];
  }
  return dayIntervals(date, timezone, resolution).length;
}

/** The days seen so far, each once; cheap per point when points come in order. */
export class DayMarks {
  private readonly days = new Map<string, DayMark>();
  /** Per series, the day of its last point: the next point is mostly in it. */
  private readonly last = new Map<number, DayMark>();

  add(series: SeriesGrid, start: number): void {
    const last = this.last.get(series.id);
    if (last !== undefined && start >= last.start && start < last.end) return;
    const date = localDate(start, series.timezone);
    const key = `${series.id}|${date}`;
    let mark = this.days.get(key);
    if (mark === undefined) {
      const span = dayBounds(date, series.timezone);
      const intervals = intervalsOfDay(date, series.timezone, series.resolution, span);
      mark = { seriesId: series.id, date, start: span.start, end: span.end, intervals };
      this.days.set(key, mark);
    }
    this.last.set(series.id, mark);
  }

  list(): DayMark[] {
    return [...this.days.values()];
  }
}
