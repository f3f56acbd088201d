/**
 * Whether coarser intervals, laid on the days of the zone a series is read in, are made of whole
 * intervals of the series' own grid (docs/using-the-api.md "Reading prices", `resolution`).
 *
 * A coarse mean takes the series' intervals that start inside the coarse interval. It is the exact
 * mean of what lies inside only when none of them runs past the coarse interval's end, that is when
 * every instant at which a coarse interval begins is also one at which a series interval begins. In
 * the series' own zone that always holds: a whole multiple of the coarser step since local midnight
 * is one of the finer step, and a day starts on every grid. Across zones it depends on the offsets:
 * Asia/Kolkata's half hours begin at :00 and :30 UTC and contain Europe/Oslo's or UTC's hours, but
 * Asia/Kathmandu's hours begin at :15 UTC, in the middle of one; Australia/Lord_Howe's days begin at
 * :30 UTC in its winter and on the hour in its summer.
 */
import { addDays, type CalendarDate, daysBetween, isOnGrid, RESOLUTIONS, type Resolution } from './days.js';
import { type OffsetTimeline, offsetTimeline } from './offset-timeline.js';

const MINUTE_MS = 60_000;
const QUARTER_HOUR_MS = 15 * MINUTE_MS;
const DAY_MS = 86_400_000;

/** A grid: intervals of `resolution` on the local days of `zone` (src/domain/time/days.ts). */
export interface Grid {
  readonly zone: string;
  readonly resolution: Resolution;
}

/** Where a coarse interval begins inside an interval of the finer grid. */
export interface GridCut {
  /** The local date, in the coarse grid's zone, of the day whose interval begins there. */
  readonly date: CalendarDate;
  /** The instant (epoch ms) at which the coarse interval begins. */
  readonly at: number;
}

/**
 * The first instant, over the local days `from` to `to` of `coarse.zone`, at which an interval of
 * the coarse grid begins (or the last one ends) inside an interval of the `fine` grid; `undefined`
 * when every coarse interval of those days is made of whole fine intervals.
 * @example firstGridCut({ zone: 'Asia/Kathmandu', resolution: 'PT1H' }, { zone: 'Asia/Kolkata', resolution: 'PT30M' }, '2026-11-24', '2026-11-24') // { date: '2026-11-24', at: 2026-11-23T18:15Z }
 */
export function firstGridCut(
  coarse: Grid,
  fine: Grid,
  from: CalendarDate,
  to: CalendarDate,
): GridCut | undefined {
  if (coarse.zone === fine.zone && RESOLUTIONS[coarse.resolution] >= RESOLUTIONS[fine.resolution]) {
    return undefined;
  }
  // Every instant of these local days lies within two days of their UTC dates (as in
  // src/services/served-days.ts), so both zones' offsets are found once for the whole span.
  const spanStart = Date.parse(`${from}T00:00:00Z`) - 2 * DAY_MS;
  const spanEnd = Date.parse(`${to}T00:00:00Z`) + 3 * DAY_MS;
  const local = offsetTimeline(coarse.zone, spanStart, spanEnd);
  const onFineGrid = fineGridTest(fine, offsetTimeline(fine.zone, spanStart, spanEnd));
  let date = from;
  let start = local.dayStart(date);
  for (let d = daysBetween(from, to); d >= 0; d--) {
    const next = addDays(date, 1);
    const end = local.dayStart(next);
    for (const interval of local.dayIntervals(date, { start, end }, coarse.resolution)) {
      if (!onFineGrid(interval.start)) return { date, at: interval.start };
    }
    if (d === 0 && !onFineGrid(end)) return { date: next, at: end };
    date = next;
    start = end;
  }
  return undefined;
}

/**
 * Whether an instant begins an interval of `fine`: `isOnGrid`, answered with arithmetic on the
 * timeline's offset where the instant is a whole step since local midnight (the usual case), and
 * by `isOnGrid` itself otherwise (a day that starts at a DST gap, or no grid instant at all).
 */
function fineGridTest(fine: Grid, timeline: OffsetTimeline): (at: number) => boolean {
  const step = RESOLUTIONS[fine.resolution] * MINUTE_MS;
  return (at) => {
    if (fine.resolution !== 'P1D' && at % QUARTER_HOUR_MS === 0) {
      // Local midnight is a whole number of days, and a day a whole number of steps.
      const wall = at + timeline.offsetAt(at) * MINUTE_MS;
      if (((wall % step) + step) % step === 0) return true;
    }
    return isOnGrid(at, fine.zone, fine.resolution);
  };
}
