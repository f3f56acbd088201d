/**
 * Finds stored points that no longer start an interval of their series' grid: points written under
 * older time zone rules (a P1D point at what was midnight before America/Vancouver kept summer
 * time). Nothing is changed; `pricepoint check` lists them and the server warns at start (docs/operating.md
 * "The `pricepoint` command"). Each series is read in windows of a few thousand points, so memory
 * holds one window and the dates found, however many points are stored.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  type CalendarDate,
  dayBounds,
  formatInstant,
  isOnGrid,
  localDate,
  RESOLUTIONS,
} from '../domain/time/days.js';
import { offsetMinutes } from '../domain/time/zone.js';
import type { PriceStore, Series } from '../stores/types.js';

const DAY_MS = 86_400_000;
const QUARTER_HOUR_MS = 15 * 60_000;
/** Intervals read per query: one window of points is all a scan holds at once. */
const WINDOW_INTERVALS = 8192;

/** One local date of a series with points off the grid. */
export interface OffGridDate {
  readonly date: CalendarDate;
  readonly points: number;
  /** The first such point, written in the series' zone. */
  readonly first: string;
  /** Where the day starts under the rules in use. */
  readonly dayStart: string;
}

export interface OffGridSeries {
  readonly symbol: string;
  readonly timezone: string;
  readonly resolution: Series['resolution'];
  readonly points: number;
  readonly dates: OffGridDate[];
}

export interface GridCheckReport {
  readonly checkedSeries: number;
  readonly checkedPoints: number;
  readonly offGridPoints: number;
  /** Only the series with points off the grid, in symbol order. */
  readonly series: OffGridSeries[];
  /** False when `signal` stopped the scan before its end. */
  readonly complete: boolean;
}

/**
 * `isOnGrid` for one series, quick where it can be: on a UTC day whose offset is the same at its
 * start, middle and end, a point is on the grid when its local minute of the day is a multiple of
 * the resolution. Days with a change, and P1D series, ask `isOnGrid` itself.
 */
function gridTest(series: Series): (start: number) => boolean {
  const { timezone, resolution } = series;
  if (resolution === 'P1D') return (start) => isOnGrid(start, timezone, resolution);
  const minutes = RESOLUTIONS[resolution];
  let day = Number.NaN;
  let offset = 0;
  let steady = false;
  return (start) => {
    const today = Math.floor(start / DAY_MS);
    if (today !== day) {
      day = today;
      offset = offsetMinutes(day * DAY_MS, timezone);
      steady =
        offsetMinutes(day * DAY_MS + DAY_MS / 2, timezone) === offset &&
        offsetMinutes(day * DAY_MS + DAY_MS - 1, timezone) === offset;
    }
    if (!steady) return isOnGrid(start, timezone, resolution);
    if (start % QUARTER_HOUR_MS !== 0) return false;
    const local = (start - day * DAY_MS) / 60_000 + offset;
    return (((local % 1440) + 1440) % 1440) % minutes === 0;
  };
}

/** Scans one series; `undefined` when it has no points off the grid. */
async function scanSeries(
  prices: PriceStore,
  series: Series,
  counted: { points: number },
  signal: AbortSignal | undefined,
): Promise<OffGridSeries | undefined> {
  const coverage = await prices.coverage(series.symbol);
  if (coverage === undefined) return undefined;
  const onGrid = gridTest(series);
  const window = WINDOW_INTERVALS * RESOLUTIONS[series.resolution] * 60_000;
  const byDate = new Map<CalendarDate, { points: number; first: number }>();
  let points = 0;
  for (let from = coverage.first; from <= coverage.last; from += window) {
    if (signal?.aborted) break;
    const stored = await prices.pricesBetween(
      series.symbol,
      from,
      Math.min(from + window, coverage.last + 1),
    );
    counted.points += stored.length;
    for (const { start } of stored) {
      if (onGrid(start)) continue;
      points++;
      const date = localDate(start, series.timezone);
      const seen = byDate.get(date);
      if (seen === undefined) byDate.set(date, { points: 1, first: start });
      else seen.points++;
    }
    // Let a server answer requests between windows (SQLite reads block the event loop).
    await nextTurn();
  }
  if (points === 0) return undefined;
  const dates = [...byDate].map(([date, { points: n, first }]) => ({
    date,
    points: n,
    first: formatInstant(first, series.timezone),
    dayStart: formatInstant(dayBounds(date, series.timezone).start, series.timezone),
  }));
  dates.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  const { symbol, timezone, resolution } = series;
  return { symbol, timezone, resolution, points, dates };
}

/**
 * Every series' stored points checked against its grid under the time zone rules in use.
 * @example (await findOffGridPoints(stores.prices)).offGridPoints // 0 when nothing needs fixing
 */
export async function findOffGridPoints(prices: PriceStore, signal?: AbortSignal): Promise<GridCheckReport> {
  const all = await prices.listSeries();
  all.sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
  const counted = { points: 0 };
  const found: OffGridSeries[] = [];
  let checkedSeries = 0;
  for (const series of all) {
    if (signal?.aborted) break;
    const offGrid = await scanSeries(prices, series, counted, signal);
    if (!signal?.aborted) checkedSeries++;
    if (offGrid !== undefined) found.push(offGrid);
  }
  return {
    checkedSeries,
    checkedPoints: counted.points,
    offGridPoints: found.reduce((sum, s) => sum + s.points, 0),
    series: found,
    complete: checkedSeries === all.length,
  };
}

/** How long the scan at server start may run; past it the server says the check was cut short. */
const START_SCAN_MS = 60_000;

export interface StartLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

/**
 * The scan a server runs once after it listens: one warning when stored points lie off the grid,
 * naming `pricepoint check`. Bounded in time, stopped by `signal` (the server closing), and never
 * fatal: a store that fails is logged.
 */
export async function warnAboutOffGridPoints(
  prices: PriceStore,
  log: StartLog,
  signal: AbortSignal,
  budgetMs = START_SCAN_MS,
): Promise<void> {
  try {
    const report = await findOffGridPoints(prices, AbortSignal.any([signal, AbortSignal.timeout(budgetMs)]));
    if (report.offGridPoints > 0) {
      const series = report.series.map((s) => s.symbol);
      log.warn(
        { offGridPoints: report.offGridPoints, series: series.slice(0, 20), seriesCount: series.length },
        `${report.offGridPoints} stored points of ${series.length} series no longer lie on their grid ` +
          '(the time zone rules changed after they were written); run `pricepoint check` to list them ' +
          'and how to fix them. Nothing was changed.',
      );
    } else if (report.complete) {
      // Quiet unless asked: nothing to do, and request logs follow the start-up lines directly.
      log.debug(
        { checkedSeries: report.checkedSeries, checkedPoints: report.checkedPoints },
        'stored points checked: all lie on their grid',
      );
    } else if (!signal.aborted) {
      log.info(
        { checkedSeries: report.checkedSeries },
        `the check of stored points against their grid stopped after ${budgetMs / 1000} s; run \`pricepoint check\``,
      );
    }
  } catch (error) {
    if (!signal.aborted) log.warn({ err: error }, 'could not check stored points against their grid');
  }
}
