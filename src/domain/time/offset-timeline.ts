/**
 * The offsets of one zone over a span of instants, found once, so that the tens of thousands of
 * instants of a long range are written and cut into intervals with arithmetic instead of a zone
 * lookup each (what that cost: bench/README.md, `npm run bench:range`).
 *
 * The transitions are found by probing every 12 hours and bisecting to the millisecond with
 * `offsetMinutes`, so the timeline answers exactly what `offsetMinutes` answers, unless a zone
 * changed its offset and back within 12 hours (the tz database has no such pair: no two transitions
 * of any zone are closer than 28 days from 2020 to 2030, which days-zones.test.ts checks). Anything near a
 * transition goes through the exact functions of days.ts; the timeline serves only instants it has
 * proven to lie between transitions.
 */
import {
  type CalendarDate,
  dayBounds,
  dayIntervals,
  intervalEnd,
  RESOLUTIONS,
  type Resolution,
  type Span,
} from './days.js';
import { offsetMinutes } from './zone.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const PROBE_MS = 12 * HOUR_MS;

export interface OffsetTimeline {
  readonly timeZone: string;
  /** The offset in minutes at `epochMs`, as `offsetMinutes` answers it. */
  offsetAt(epochMs: number): number;
  /** The same text as `formatInstant(epochMs, timeZone)`. */
  formatInstant(epochMs: number): string;
  /** The same as `dayBounds(date, timeZone).start`. */
  dayStart(date: CalendarDate): number;
  /** The same as `intervalEnd(start, timeZone, resolution)`. */
  intervalEnd(start: number, resolution: Resolution): number;
  /** The same as `dayIntervals(date, timeZone, resolution)` for the day `[start, end)` of `date`. */
  dayIntervals(date: CalendarDate, day: Span, resolution: Resolution): Span[];
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** `HH:MM:00` of every minute of a day. */
const MINUTES = Array.from({ length: 1440 }, (_, m) => `${pad2(Math.floor(m / 60))}:${pad2(m % 60)}:00`);

function offsetSuffix(offset: number): string {
  const abs = Math.abs(offset);
  return `${offset < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}

/**
 * The offsets of `timeZone` from `from` to `to` (epoch ms); instants outside are answered exactly,
 * just without the shortcut.
 * @example offsetTimeline('Europe/Oslo', Date.UTC(2025, 0, 1), Date.UTC(2026, 0, 2)).formatInstant(Date.UTC(2025, 6, 1))
 */
export function offsetTimeline(timeZone: string, from: number, to: number): OffsetTimeline {
  // changes[i] is the first instant of offsets[i + 1]; offsets[0] holds from `from` on.
  const changes: number[] = [];
  const offsets: number[] = [offsetMinutes(from, timeZone)];
  let at = from;
  let offset = offsets[0] as number;
  while (at < to) {
    const probe = Math.min(at + PROBE_MS, to);
    const next = offsetMinutes(probe, timeZone);
    if (next === offset) {
      at = probe;
      continue;
    }
    // Bisect to the first millisecond with another offset, then go on from there: a second
    // transition before the probe is found the same way.
    let lo = at;
    let hi = probe;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (offsetMinutes(mid, timeZone) === offset) lo = mid;
      else hi = mid;
    }
    offset = offsetMinutes(hi, timeZone);
    changes.push(hi);
    offsets.push(offset);
    at = hi;
  }

  /** Index into `offsets` of the offset at `epochMs` (inside the span). */
  function segment(epochMs: number): number {
    let lo = 0;
    let hi = changes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((changes[mid] as number) <= epochMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  const inside = (epochMs: number) => epochMs >= from && epochMs <= to;

  function offsetAt(epochMs: number): number {
    return inside(epochMs) ? (offsets[segment(epochMs)] as number) : offsetMinutes(epochMs, timeZone);
  }

  /** Whether no transition lies in `(a, b]`, both inside the span. */
  function steady(a: number, b: number): boolean {
    return inside(a) && inside(b) && segment(a) === segment(b);
  }

  // Consecutive instants mostly share their local date and offset: each is written once.
  let lastDay = Number.NaN;
  let lastDate = '';
  const suffixes = new Map<number, string>();

  function formatInstant(epochMs: number): string {
    const offset = offsetAt(epochMs);
    const wall = epochMs + offset * MINUTE_MS;
    const day = Math.floor(wall / DAY_MS);
    if (day !== lastDay) {
      lastDay = day;
      lastDate = new Date(day * DAY_MS).toISOString().slice(0, 11);
    }
    let suffix = suffixes.get(offset);
    if (suffix === undefined) {
      suffix = offsetSuffix(offset);
      suffixes.set(offset, suffix);
    }
    const ms = wall - day * DAY_MS;
    const minute = MINUTES[Math.floor(ms / MINUTE_MS)] as string;
    const second = Math.floor((ms % MINUTE_MS) / 1000);
    const time = second === 0 ? minute : `${minute.slice(0, 6)}${pad2(second)}`;
    // One flat string: a template would leave a chain of joined pieces per instant, all alive until
    // the answer is written, for every garbage collection to copy (bench/README.md, `npm run bench:range`).
    return [lastDate, time, suffix].join('');
  }

  /** Milliseconds since local midnight at `epochMs`, for an offset known to hold there. */
  function msOfLocalDay(epochMs: number, offset: number): number {
    const wall = epochMs + offset * MINUTE_MS;
    return wall - Math.floor(wall / DAY_MS) * DAY_MS;
  }

  return {
    timeZone,
    offsetAt,
    formatInstant,

    dayStart(date: CalendarDate): number {
      const midnight = Date.parse(`${date}T00:00:00Z`);
      // The start lies within [midnight - 14 h, midnight + 12 h]: with one offset over all of it,
      // it is midnight on that offset's clock.
      const early = midnight - 15 * HOUR_MS;
      if (steady(early, midnight + 15 * HOUR_MS)) return midnight - offsetAt(early) * MINUTE_MS;
      return dayBounds(date, timeZone).start;
    },

    intervalEnd(start: number, resolution: Resolution): number {
      if (resolution !== 'P1D') {
        const step = RESOLUTIONS[resolution] * MINUTE_MS;
        // No transition up to the end, and a start on the local grid: the next grid instant is one
        // step on, and never past the day's end (local midnight is on every grid).
        if (steady(start, start + step) && msOfLocalDay(start, offsetAt(start)) % step === 0) {
          return start + step;
        }
      }
      return intervalEnd(start, timeZone, resolution);
    },

    dayIntervals(date: CalendarDate, day: Span, resolution: Resolution): Span[] {
      if (resolution === 'P1D') return [{ start: day.start, end: day.end }];
      const offset = offsetAt(day.start);
      // Offsets that are not whole quarter hours (local mean time before 1980 in a few zones) put
      // the grid off the UTC quarter hours that days.ts steps through: left to it.
      if (!steady(day.start, day.end) || offset % 15 !== 0) return dayIntervals(date, timeZone, resolution);
      const step = RESOLUTIONS[resolution] * MINUTE_MS;
      // A day that starts in a DST gap starts on its grid by definition; the rest follow local time.
      const intoStep = msOfLocalDay(day.start, offset) % step;
      const spans: Span[] = [];
      let start = day.start;
      for (let next = day.start - intoStep + step; next < day.end; next += step) {
        spans.push({ start, end: next });
        start = next;
      }
      spans.push({ start, end: day.end });
      return spans;
    },
  };
}
