/**
 * POSIX TZ strings, as the footer of a TZif file carries them (RFC 8536 section 3.3): the rule for
 * every instant after the file's last transition, such as `CET-1CEST,M3.5.0,M10.5.0/3`, `<-03>3` or
 * `<+1030>-10:30<+11>-11,M10.1.0,M4.1.0`. RFC 8536 extends POSIX: transition times may be negative or
 * past 24 hours (-167 to 167), and DST all year is written as a start on January 1 at 00:00 and an end
 * on day 365 at 25:00 plus the DST saving (`EST5EDT,0/0,J365/25`).
 *
 * Offsets here are seconds east of UTC (POSIX writes them west, so `CET-1` is +3600).
 */

/** A day of the year as POSIX writes it, and the local time of day (seconds) the change happens. */
type DayRule =
  | { readonly kind: 'julian'; readonly day: number; readonly time: number } // Jn: 1-365, no Feb 29
  | { readonly kind: 'zero-based'; readonly day: number; readonly time: number } // n: 0-365, with Feb 29
  | {
      readonly kind: 'month-week-day';
      readonly month: number;
      readonly week: number;
      readonly weekday: number;
      readonly time: number;
    };

export interface PosixTz {
  /** Standard time's offset, seconds east of UTC. */
  readonly stdOffset: number;
  /** Daylight saving time, when the zone has any. */
  readonly dst?: { readonly offset: number; readonly start: DayRule; readonly end: DayRule };
}

const DAY_S = 86_400;
/** glibc's default when a DST name comes without rules: the US rules since 2007. */
const DEFAULT_RULES = 'M3.2.0,M11.1.0';

/**
 * Parses a POSIX TZ string with RFC 8536's extensions; throws `SyntaxError` naming the string.
 * @example parsePosixTz('CET-1CEST,M3.5.0,M10.5.0/3') // { stdOffset: 3600, dst: { offset: 7200, ... } }
 */
export function parsePosixTz(text: string): PosixTz {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxError(`not a POSIX TZ string: "${text}"`);
  };
  const name = () => {
    if (text[at] === '<') {
      const close = text.indexOf('>', at);
      if (close < 0 || !/^[A-Za-z0-9+-]{3,}$/.test(text.slice(at + 1, close))) fail();
      at = close + 1;
      return;
    }
    const match = /^[A-Za-z]{3,}/.exec(text.slice(at));
    if (match === null) return fail();
    at += match[0].length;
  };
  /** `[+-]hh[:mm[:ss]]` in seconds, hours at most `maxHours`. */
  const clock = (maxHours: number): number => {
    const match = /^([+-])?(\d{1,3})(?::(\d{2}))?(?::(\d{2}))?/.exec(text.slice(at));
    if (match === null) return fail();
    const [whole, sign, h, m = '0', s = '0'] = match;
    if (Number(h) > maxHours || Number(m) > 59 || Number(s) > 59) fail();
    at += whole.length;
    return (sign === '-' ? -1 : 1) * (Number(h) * 3600 + Number(m) * 60 + Number(s));
  };
  const dayRule = (): DayRule => {
    const rest = text.slice(at);
    const monthWeekDay = /^M(\d{1,2})\.(\d)\.(\d)/.exec(rest);
    const julian = /^J(\d{1,3})/.exec(rest);
    const zeroBased = /^(\d{1,3})/.exec(rest);
    let rule: DayRule;
    if (monthWeekDay !== null) {
      const [month, week, weekday] = monthWeekDay.slice(1).map(Number) as [number, number, number];
      if (month < 1 || month > 12 || week < 1 || week > 5 || weekday > 6) fail();
      rule = { kind: 'month-week-day', month, week, weekday, time: 7200 };
      at += monthWeekDay[0].length;
    } else if (julian !== null) {
      rule = { kind: 'julian', day: Number(julian[1]), time: 7200 };
      if (rule.day < 1 || rule.day > 365) fail();
      at += julian[0].length;
    } else if (zeroBased !== null) {
      rule = { kind: 'zero-based', day: Number(zeroBased[1]), time: 7200 };
      if (rule.day > 365) fail();
      at += zeroBased[0].length;
    } else {
      return fail();
    }
    if (text[at] !== '/') return rule;
    at += 1;
    return { ...rule, time: clock(167) };
  };

  name();
  // POSIX counts west of UTC; `0 - 0` keeps UTC at 0, never -0 (which would be written -00:00).
  const stdOffset = 0 - clock(24);
  if (at === text.length) return { stdOffset };
  name();
  const offset = at < text.length && text[at] !== ',' ? 0 - clock(24) : stdOffset + 3600;
  if (at === text.length) {
    const { dst } = parsePosixTz(`UTC0DST,${DEFAULT_RULES}`);
    if (dst === undefined) return fail();
    return { stdOffset, dst: { ...dst, offset } };
  }
  if (text[at++] !== ',') fail();
  const start = dayRule();
  if (text[at++] !== ',') fail();
  const end = dayRule();
  if (at !== text.length) fail();
  return { stdOffset, dst: { offset, start, end } };
}

/** Days from 1970-01-01 to the first of `month` (1-12) of `year`. */
function daysToMonth(year: number, month: number): number {
  return Date.UTC(year, month - 1, 1) / (DAY_S * 1000);
}

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Seconds from the epoch to local midnight of the rule's day in `year`, counted as if UTC. */
function ruleDay(rule: DayRule, year: number): number {
  const jan1 = daysToMonth(year, 1);
  switch (rule.kind) {
    case 'julian':
      // Day 60 is March 1 whether or not the year has a February 29.
      return (jan1 + rule.day - 1 + (isLeapYear(year) && rule.day >= 60 ? 1 : 0)) * DAY_S;
    case 'zero-based':
      return (jan1 + rule.day) * DAY_S;
    case 'month-week-day': {
      const first = daysToMonth(year, rule.month);
      const firstWeekday = (((first + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday
      let day = first + ((rule.weekday - firstWeekday + 7) % 7) + (rule.week - 1) * 7;
      // Week 5 means the last such weekday of the month.
      if (day >= daysToMonth(year + (rule.month === 12 ? 1 : 0), (rule.month % 12) + 1)) day -= 7;
      return day * DAY_S;
    }
  }
}

/**
 * The changes of offset the rule makes in `year`: DST starts at a local time in standard time and ends
 * at a local time in DST, so each is moved to UTC by the offset in force before it.
 */
export function posixTransitions(tz: PosixTz, year: number): { at: number; offset: number }[] {
  const { dst } = tz;
  if (dst === undefined) return [];
  const start = ruleDay(dst.start, year) + dst.start.time - tz.stdOffset;
  const end = ruleDay(dst.end, year) + dst.end.time - dst.offset;
  return [
    { at: start, offset: dst.offset },
    { at: end, offset: tz.stdOffset },
  ];
}

/**
 * The offset (seconds east of UTC) the rule gives at `epochSeconds`.
 * @example posixOffsetAt(parsePosixTz('CET-1CEST,M3.5.0,M10.5.0/3'), Date.UTC(2026, 6, 1) / 1000) // 7200
 */
export function posixOffsetAt(tz: PosixTz, epochSeconds: number): number {
  if (tz.dst === undefined) return tz.stdOffset;
  const year = new Date(epochSeconds * 1000).getUTCFullYear();
  // The changes of the years around it, in order; at one instant an end sorts before a start, so DST
  // all year (an end at the very instant of the next start) stays DST.
  const changes = [year - 1, year, year + 1]
    .flatMap((y) => posixTransitions(tz, y))
    .sort((a, b) => a.at - b.at || (a.offset === tz.stdOffset ? -1 : 1));
  let offset = tz.stdOffset;
  for (const change of changes) {
    if (change.at > epochSeconds) break;
    offset = change.offset;
  }
  return offset;
}
