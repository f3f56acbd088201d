/**
 * The span and buckets of a usage history read (docs/usage-history.md "Reading usage"): `from` and
 * `to` as dates (whole days, `to` included), `yesterday`/`today`/`tomorrow`, or RFC 3339 instants
 * (`to` excluded); hours (`PT1H`) or days (`P1D`) of a zone, UTC by default. Usage is kept per UTC
 * hour, so a day must begin on a whole UTC hour in the zone asked for.
 */
import {
  addDays,
  type CalendarDate,
  dayBounds,
  daysBetween,
  isCalendarDate,
  localDate,
  missingDate,
  type Span,
} from '../time/days.js';
import { parseTimestamp } from '../time/timestamp.js';
import { timeZoneId } from '../time/zone.js';

export const GRANULARITIES = ['PT1H', 'P1D'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Buckets one read answers at most: 31 days of hours, 400 days. */
export const MAX_BUCKETS: Readonly<Record<Granularity, number>> = { PT1H: 744, P1D: 400 };

export const HOUR_MS = 3_600_000;

export interface UsageRangeInput {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly granularity?: Granularity | undefined;
  readonly tz?: string | undefined;
}

export interface UsageRange {
  readonly granularity: Granularity;
  /** The canonical IANA zone the buckets are written in (and, for `P1D`, cut in). */
  readonly timeZone: string;
  /** Back to back, in order. */
  readonly buckets: readonly Span[];
}

/** Which input is wrong and why, for each surface to phrase: `parameter "from"` or `--from`. */
export interface UsageRangeProblem {
  readonly parameter: 'from' | 'to' | 'tz' | 'granularity';
  readonly reason: string;
}

const NAMED: Readonly<Record<string, number>> = { yesterday: -1, today: 0, tomorrow: 1 };
const WRITTEN = 'a date (YYYY-MM-DD), yesterday, today, tomorrow or an RFC 3339 timestamp';

type Point = { readonly day: CalendarDate } | { readonly instant: number };

function pointOf(text: string, zone: string, now: number): Point | string {
  const named = NAMED[text.toLowerCase()];
  if (named !== undefined) return { day: addDays(localDate(now, zone), named) };
  if (isCalendarDate(text)) return { day: text };
  const missing = missingDate(text);
  if (missing !== undefined) return `must be ${WRITTEN}; ${text} is ${missing}`;
  const instant = /[Tt]/.test(text) ? parseTimestamp(text) : undefined;
  return instant === undefined ? `must be ${WRITTEN}` : { instant };
}

/**
 * The buckets `input` asks for at `now`, or what is wrong with it. Without `to`: through the
 * current hour or day; without `from`: the 24 hours or 31 days before that end.
 * @example usageRange({ from: '2026-11-01', to: '2026-11-30', granularity: 'P1D' }, Date.now()) // 30 days
 */
export function usageRange(input: UsageRangeInput, now: number): UsageRange | UsageRangeProblem {
  const granularity = input.granularity ?? 'PT1H';
  const timeZone = input.tz === undefined ? 'UTC' : timeZoneId(input.tz);
  if (timeZone === undefined)
    return { parameter: 'tz', reason: 'must be an IANA time zone such as Europe/Oslo' };
  const bounds = (day: CalendarDate) => dayBounds(day, timeZone);
  const hourOf = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

  let to: number;
  if (input.to === undefined) {
    to = granularity === 'PT1H' ? hourOf(now) + HOUR_MS : bounds(localDate(now, timeZone)).end;
  } else {
    const point = pointOf(input.to, timeZone, now);
    if (typeof point === 'string') return { parameter: 'to', reason: point };
    to = 'day' in point ? bounds(point.day).end : point.instant;
  }
  let from: number;
  if (input.from === undefined) {
    from =
      granularity === 'PT1H'
        ? hourOf(to - 1) - 23 * HOUR_MS
        : bounds(addDays(localDate(to - 1, timeZone), -30)).start;
  } else {
    const point = pointOf(input.from, timeZone, now);
    if (typeof point === 'string') return { parameter: 'from', reason: point };
    from = 'day' in point ? bounds(point.day).start : point.instant;
  }
  if (from >= to) return { parameter: 'to', reason: 'must come after from' };

  const most = MAX_BUCKETS[granularity];
  if (granularity === 'PT1H') {
    const start = hourOf(from);
    const count = Math.ceil((to - start) / HOUR_MS);
    if (count > most) return tooLong(count, 'hours', granularity);
    const buckets = Array.from({ length: count }, (_, n) => ({
      start: start + n * HOUR_MS,
      end: start + (n + 1) * HOUR_MS,
    }));
    return { granularity, timeZone, buckets };
  }
  const first = localDate(from, timeZone);
  const count = daysBetween(first, localDate(to - 1, timeZone)) + 1;
  if (count > most) return tooLong(count, 'days', granularity);
  const buckets = Array.from({ length: count }, (_, n) => bounds(addDays(first, n)));
  if (buckets.some((b) => b.start % HOUR_MS !== 0)) {
    return {
      parameter: 'tz',
      reason: `cuts days that begin within a UTC hour (${timeZone}); usage is kept per UTC hour, so P1D takes a zone whose days begin on a whole hour, such as UTC or Europe/Oslo`,
    };
  }
  return { granularity, timeZone, buckets };
}

function tooLong(count: number, unit: string, granularity: Granularity): UsageRangeProblem {
  const most = MAX_BUCKETS[granularity];
  const hint =
    granularity === 'PT1H' ? ' (31 days): ask granularity P1D or a shorter range' : ': ask a shorter range';
  return {
    parameter: 'from',
    reason: `spans ${count} ${unit}; granularity ${granularity} answers at most ${most} ${unit}${hint}`,
  };
}

/** Whether `value` is a usage range problem rather than a range. */
export function isRangeProblem(value: UsageRange | UsageRangeProblem): value is UsageRangeProblem {
  return 'parameter' in value;
}
