/**
 * What the README's rules make of a zone's days, computed from the independent TZif reader alone
 * (nothing from `src/`): a day runs from the first instant of its local date to the first instant of
 * the next one (midnight, or the end of a gap that skips it); an interval of resolution R starts at
 * the day's start and at every later instant of the day whose wall-clock reading is a whole multiple
 * of R since local midnight (docs/using-the-api.md "Reading prices", src/domain/time/days.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type OffsetSegment, type ReferenceZone, readTzif } from '../helpers/tzif-reference.js';

export const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
export const GRID_MINUTES = { PT15M: 15, PT30M: 30, PT1H: 60 } as const;
export type SubDailyResolution = keyof typeof GRID_MINUTES;

/** Every zone and link in a compiled tz folder (links followed), skipping files that are not TZif. */
export function tzifNames(dir: string): string[] {
  const names: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder)) {
      const path = join(folder, entry);
      const stat = statSync(path); // follows symbolic links
      if (stat.isDirectory()) walk(path);
      else if (readFileSync(path).subarray(0, 4).toString('latin1') === 'TZif')
        names.push(relative(dir, path));
    }
  };
  walk(dir);
  return names.sort();
}

/** The release a tz folder holds, from its `tzdata.zi` (`# version 2026f`). */
export function tzRelease(dir: string): string | undefined {
  const first = readFileSync(join(dir, 'tzdata.zi'), 'utf8').split('\n', 1)[0] ?? '';
  return /^# version (\S+)$/.exec(first)?.[1];
}

const utcMidnight = (date: string): number => Date.parse(`${date}T00:00:00Z`);
const dateOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const addDays = (date: string, days: number): string => dateOf(utcMidnight(date) + days * DAY_MS);

/** One zone's offsets over a span of years, and the days the README's rules make of them. */
export class ReferenceDays {
  readonly segments: readonly OffsetSegment[];

  constructor(
    readonly zone: ReferenceZone,
    from: number,
    to: number,
  ) {
    this.segments = zone.segments(from, to);
  }

  private segmentAt(t: number): OffsetSegment {
    const found = this.segments.find((s) => s.start <= t && t < s.end);
    if (found === undefined) throw new Error(`no offset known at ${new Date(t).toISOString()}`);
    return found;
  }

  offsetMinutes(t: number): number {
    const seconds = this.segmentAt(t).utoffSeconds;
    if (seconds % 60 !== 0) throw new Error(`offset ${seconds} s is not whole minutes`);
    return seconds / 60;
  }

  localDate(t: number): string {
    return dateOf(t + this.offsetMinutes(t) * MINUTE_MS);
  }

  /** RFC 3339 to the second with the offset in force, e.g. `2026-11-24T00:00:00-07:00`. */
  format(t: number): string {
    const offset = this.offsetMinutes(t);
    const wall = new Date(Math.floor(t / 1000) * 1000 + offset * MINUTE_MS).toISOString().slice(0, 19);
    const abs = Math.abs(offset);
    const hh = String(Math.floor(abs / 60)).padStart(2, '0');
    const mm = String(abs % 60).padStart(2, '0');
    return `${wall}${offset < 0 ? '-' : '+'}${hh}:${mm}`;
  }

  /** The first instant whose wall clock reads `date` 00:00 or later. */
  dayStart(date: string): number {
    const midnight = utcMidnight(date);
    for (const s of this.segments) {
      const first = Math.max(s.start, midnight - s.utoffSeconds * 1000);
      if (first < s.end) return first;
    }
    throw new Error(`${date} lies outside the reference window`);
  }

  /** The starts of a day's intervals at a resolution finer than a day. */
  intervalStarts(date: string, resolution: SubDailyResolution): number[] {
    const start = this.dayStart(date);
    const end = this.dayStart(addDays(date, 1));
    const step = GRID_MINUTES[resolution];
    const starts = [start];
    for (const s of this.segments) {
      if (s.end <= start || s.start >= end) continue;
      const offset = s.utoffSeconds / 60;
      const from = Math.ceil((Math.max(s.start, start + 1) / MINUTE_MS + offset) / step) * step - offset;
      const until = Math.min(s.end, end);
      for (let minute = from; minute * MINUTE_MS < until; minute += step) starts.push(minute * MINUTE_MS);
    }
    return starts;
  }

  /**
   * Local dates from `first` to `last` on which the offset changes (read before and after each
   * change), with `margin` days before and after each.
   */
  changeDates(first: string, last: string, margin = 0): Set<string> {
    const dates = new Set<string>();
    for (let i = 1; i < this.segments.length; i++) {
      const t = this.segments[i]?.start ?? 0;
      for (const date of [this.localDate(t - 1), this.localDate(t)]) {
        for (let k = -margin; k <= margin; k++) {
          const d = addDays(date, k);
          if (d >= first && d <= last) dates.add(d);
        }
      }
    }
    return dates;
  }

  /** The instants at which the offset changes, inside `[from, to)`. */
  changesBetween(from: number, to: number): number[] {
    return this.segments.slice(1).flatMap((s) => (s.start >= from && s.start < to ? [s.start] : []));
  }
}

/** A zone's reference days over 2020-2030, with margins for days that straddle the years' ends. */
export function referenceDays(dir: string, name: string): ReferenceDays {
  return new ReferenceDays(readTzif(join(dir, name)), Date.UTC(2019, 11, 20), Date.UTC(2031, 0, 10));
}
