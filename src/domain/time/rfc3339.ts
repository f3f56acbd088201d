/**
 * Strict RFC 3339 timestamps as import files carry them: `YYYY-MM-DDTHH:MM:SS`, optional fraction,
 * then `Z` or an offset `±HH:MM`. Read by hand, with the date's days counted in integers, rather than
 * with a regular expression and `Date.parse`, because an import reads millions of them.
 */

function digit(text: string, at: number): number {
  const c = text.charCodeAt(at) - 48;
  return c >= 0 && c <= 9 ? c : Number.NaN;
}

function two(text: string, at: number): number {
  return digit(text, at) * 10 + digit(text, at + 1);
}

const DAY_MS = 86_400_000;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (the civil-from-days
 * arithmetic of Howard Hinnant's "chrono-Compatible Low-Level Date Algorithms", run backwards).
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * Epoch ms of midnight UTC of `YYYY-MM-DD` at the start of `text`, or NaN when it is no real date.
 * Years before 0100 are refused, as they were while `Date.UTC` read the date (it takes 0 to 99 for
 * 1900 to 1999): no price is that old.
 */
function dateMs(text: string): number {
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return Number.NaN;
  const year = two(text, 0) * 100 + two(text, 2);
  const month = two(text, 5);
  const day = two(text, 8);
  if (!(year >= 100 && month >= 1 && month <= 12 && day >= 1)) return Number.NaN; // NaN fails too
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  if (day > days) return Number.NaN;
  return daysFromCivil(year, month, day) * DAY_MS;
}

/**
 * Epoch milliseconds of an RFC 3339 timestamp with seconds and `Z` or an offset, or `undefined`.
 * @example parseRfc3339('2026-10-25T02:00:00+01:00') // Date.UTC(2026, 9, 25, 1)
 * @example parseRfc3339('2026-10-25 02:00') // undefined
 */
export function parseRfc3339(text: string): number | undefined {
  if (text.length < 20) return undefined;
  const t = text.charCodeAt(10);
  if ((t !== 84 && t !== 116) || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return undefined;
  const date = dateMs(text);
  const hour = two(text, 11);
  const minute = two(text, 14);
  const second = two(text, 17);
  if (!(hour <= 23 && minute <= 59 && second <= 59)) return undefined; // NaN fails too
  let at = 19;
  let fraction = 0;
  if (text.charCodeAt(at) === 46) {
    at++;
    let scale = 100;
    const from = at;
    while (at < text.length) {
      const d = digit(text, at);
      if (Number.isNaN(d)) break;
      fraction += d * scale;
      scale /= 10;
      at++;
    }
    if (at === from) return undefined;
    fraction = Math.floor(fraction);
  }
  let offset = 0;
  const zone = text.charCodeAt(at);
  if (zone === 90 || zone === 122) {
    if (at + 1 !== text.length) return undefined;
  } else if (zone === 43 || zone === 45) {
    if (at + 6 !== text.length || text.charCodeAt(at + 3) !== 58) return undefined;
    const hours = two(text, at + 1);
    const minutes = two(text, at + 4);
    if (!(hours <= 23 && minutes <= 59)) return undefined;
    offset = (zone === 45 ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  } else {
    return undefined;
  }
  if (Number.isNaN(date)) return undefined;
  return date + ((hour * 60 + minute) * 60 + second) * 1000 + fraction - offset;
}
