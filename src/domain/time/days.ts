/**
 * Calendar days of a time zone and the interval grid inside them (docs/data-model.md).
 *
 * A day is the half-open span from one local midnight to the next. Where midnight itself is skipped
 * by a DST change (America/Santiago, America/Havana), the day starts at the first instant that has
 * the day's local date. Days are therefore as long as the clock changes make them: mostly 24 hours,
 * 23 or 25 on a DST change, and 21 to 27 where a zone moves by other amounts (docs/using-the-api.md "Reading prices").
 */
import { offsetMinutes } from './zone.js';

const MINUTE_MS = 60_000;
const QUARTER_HOUR_MS = 15 * MINUTE_MS;
const DAY_MS = 86_400_000;

/** Interval lengths a series may have, as ISO 8601 durations. */
export const RESOLUTIONS = { PT15M: 15, PT30M: 30, PT1H: 60, P1D: 1440 } as const;
export type Resolution = keyof typeof RESOLUTIONS;

export function isResolution(value: string): value is Resolution {
  return Object.hasOwn(RESOLUTIONS, value);
}

/** A calendar date `YYYY-MM-DD`. */
export type CalendarDate = string;

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Whether `value` is a real calendar date written `YYYY-MM-DD`.
 * @example isCalendarDate('2026-02-29') // false
 */
export function isCalendarDate(value: string): boolean {
  const match = DATE_PATTERN.exec(value);
  if (match === null) return false;
  const [, y, m, d] = match;
  const ms = Date.UTC(Number(y), Number(m) - 1, Number(d));
  return new Date(ms).toISOString().slice(0, 10) === value;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/**
 * For a value written `YYYY-MM-DD` whose day does not exist in its month, why: a client who asks for
 * 31 November learns that, rather than only the pattern it already followed.
 * @example missingDate('2026-11-31') // 'a day that does not exist: November 2026 has 30 days'
 */
export function missingDate(value: string): string | undefined {
  const match = DATE_PATTERN.exec(value);
  if (match === null) return undefined;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1 || isCalendarDate(value)) return undefined;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `a day that does not exist: ${MONTHS[month - 1]} ${year} has ${days} days`;
}

/** Midnight UTC of a calendar date, in epoch milliseconds. */
function utcMidnight(date: CalendarDate): number {
  const match = DATE_PATTERN.exec(date);
  if (match === null) throw new RangeError(`not a date: ${date}`);
  return Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
}

function dateOfUtcMs(ms: number): CalendarDate {
  return new Date(ms).toISOString().slice(0, 10);
}

/** @example addDays('2026-03-31', 1) // '2026-04-01' */
export function addDays(date: CalendarDate, days: number): CalendarDate {
  return dateOfUtcMs(utcMidnight(date) + days * DAY_MS);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: CalendarDate, to: CalendarDate): number {
  return Math.round((utcMidnight(to) - utcMidnight(from)) / DAY_MS);
}

/** Wall-clock time at `epochMs` in `timeZone`, as epoch milliseconds of the same reading in UTC. */
function wallClock(epochMs: number, timeZone: string): number {
  return epochMs + offsetMinutes(epochMs, timeZone) * MINUTE_MS;
}

/**
 * The local calendar date at an instant.
 * @example localDate(Date.parse('2026-11-21T23:30:00Z'), 'Europe/Oslo') // '2026-11-22'
 */
export function localDate(epochMs: number, timeZone: string): CalendarDate {
  return dateOfUtcMs(wallClock(epochMs, timeZone));
}

/** Minutes since local midnight of the local date at `epochMs` (a wall-clock reading). */
function localMinuteOfDay(epochMs: number, timeZone: string): number {
  const wall = wallClock(epochMs, timeZone);
  return Math.floor((((wall % DAY_MS) + DAY_MS) % DAY_MS) / MINUTE_MS);
}

/** The first instant whose local date is `date` or later. */
function dayStart(date: CalendarDate, timeZone: string): number {
  const midnight = utcMidnight(date);
  // The true start lies within [midnight - 14 h, midnight + 12 h]; the offsets a little before and
  // after that span are the only ones that can be in force at local midnight.
  const early = midnight - offsetMinutes(midnight - 18 * 3_600_000, timeZone) * MINUTE_MS;
  const late = midnight - offsetMinutes(midnight + 14 * 3_600_000, timeZone) * MINUTE_MS;
  const hits = [early, late].filter((t) => wallClock(t, timeZone) === midnight);
  if (hits.length > 0) return Math.min(...hits);
  // Midnight is skipped: the day starts at the transition, the first instant past the gap.
  let lo = Math.min(early, late);
  let hi = Math.max(early, late);
  while (hi - lo > QUARTER_HOUR_MS) {
    const mid = lo + Math.floor((hi - lo) / 2 / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
    if (wallClock(mid, timeZone) >= midnight) hi = mid;
    else lo = mid;
  }
  return wallClock(lo, timeZone) >= midnight ? lo : hi;
}

/** A half-open span of instants in epoch milliseconds. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * The instants a local calendar day spans.
 * @example dayBounds('2026-03-29', 'Europe/Oslo') // 23 hours: 2026-03-28T23:00Z to 2026-03-29T22:00Z
 */
export function dayBounds(date: CalendarDate, timeZone: string): Span {
  return { start: dayStart(date, timeZone), end: dayStart(addDays(date, 1), timeZone) };
}

/**
 * Whether an instant starts an interval of the grid: its local time is a whole multiple of the
 * resolution since local midnight, or for `P1D`, it is the start of its local day.
 */
export function isOnGrid(epochMs: number, timeZone: string, resolution: Resolution): boolean {
  if (epochMs % MINUTE_MS !== 0) return false;
  if (resolution === 'P1D') return dayStart(localDate(epochMs, timeZone), timeZone) === epochMs;
  if (epochMs % QUARTER_HOUR_MS !== 0) return false;
  const minute = localMinuteOfDay(epochMs, timeZone);
  if (minute % RESOLUTIONS[resolution] === 0) return true;
  // A day that starts at a DST gap starts on its grid by definition.
  return dayStart(localDate(epochMs, timeZone), timeZone) === epochMs;
}

/**
 * The end of the grid interval that starts at `start`: the next grid instant.
 * @example intervalEnd(Date.parse('2026-10-25T00:00:00Z'), 'Europe/Oslo', 'PT1H') // 01:00Z, the repeated 02:00+01:00
 */
export function intervalEnd(start: number, timeZone: string, resolution: Resolution): number {
  const date = localDate(start, timeZone);
  const dayEnd = dayStart(addDays(date, 1), timeZone);
  if (resolution === 'P1D') return dayEnd;
  const step = RESOLUTIONS[resolution] * MINUTE_MS;
  // Fast path: no transition inside the interval, and none at its end that moves the next reading off
  // the grid (Lord Howe's 30-minute shift turns 02:00 into 02:30, so a PT1H interval runs to 03:00).
  const candidate = start + step;
  if (
    candidate <= dayEnd &&
    offsetMinutes(start, timeZone) === offsetMinutes(candidate - 1, timeZone) &&
    (candidate === dayEnd || localMinuteOfDay(candidate, timeZone) % RESOLUTIONS[resolution] === 0)
  ) {
    return candidate;
  }
  for (let t = start + QUARTER_HOUR_MS; t < dayEnd; t += QUARTER_HOUR_MS) {
    if (localMinuteOfDay(t, timeZone) % RESOLUTIONS[resolution] === 0) return t;
  }
  return dayEnd;
}

/**
 * Every grid interval of a local day, in order. A `PT1H` day mostly has 23, 24 or 25 of them (21 to 27
 * in a few zones; an interval can be 90 minutes long where the clock moves by 30).
 * @example dayIntervals('2026-10-25', 'Europe/Oslo', 'PT1H').length // 25
 */
export function dayIntervals(date: CalendarDate, timeZone: string, resolution: Resolution): Span[] {
  const { start, end } = dayBounds(date, timeZone);
  if (resolution === 'P1D') return [{ start, end }];
  const minutes = RESOLUTIONS[resolution];
  const starts: number[] = [start];
  for (let t = start + QUARTER_HOUR_MS; t < end; t += QUARTER_HOUR_MS) {
    if (localMinuteOfDay(t, timeZone) % minutes === 0) starts.push(t);
  }
  return starts.map((s, i) => ({ start: s, end: starts[i + 1] ?? end }));
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** The number the two digits at `at` of `text` write, or NaN where one is no digit. */
function twoDigits(text: string, at: number): number {
  const a = text.charCodeAt(at) - 48;
  const b = text.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : Number.NaN;
}

/**
 * The epoch ms of an instant as `formatInstant` writes it (`2026-10-25T02:00:00+01:00`), what
 * `Date.parse` reads, with arithmetic: `Date.parse` reads any form, and cost more per interval than
 * a tariff's arithmetic. Any other text goes to `Date.parse`.
 * @example instantOf('2026-10-25T02:00:00+01:00') // Date.parse('2026-10-25T01:00:00Z')
 */
export function instantOf(text: string): number {
  const sign = text.charCodeAt(19);
  if (
    text.length !== 25 ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58 ||
    text.charCodeAt(22) !== 58 ||
    (sign !== 43 && sign !== 45)
  ) {
    return Date.parse(text);
  }
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  const offset = twoDigits(text, 20) * 60 + twoDigits(text, 23);
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  // Fields Date.UTC would roll over (February 30, hour 24), read as 19xx (year 99) or that are no
  // digits: Date.parse decides.
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days =
    month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  if (
    !(year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= days) ||
    !(hour <= 23 && minute <= 59 && second <= 59 && offset <= 1439)
  ) {
    return Date.parse(text);
  }
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  return local - (sign === 45 ? -offset : offset) * MINUTE_MS;
}

/**
 * An instant as RFC 3339 with the UTC offset in force at that instant in `timeZone`, to the second.
 * @example formatInstant(Date.parse('2026-10-25T01:00:00Z'), 'Europe/Oslo') // '2026-10-25T02:00:00+01:00'
 */
export function formatInstant(epochMs: number, timeZone: string): string {
  const offset = offsetMinutes(epochMs, timeZone);
  const wall = new Date(epochMs + offset * MINUTE_MS).toISOString().slice(0, 19);
  const abs = Math.abs(offset);
  return `${wall}${offset < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}
