/**
 * A small reader of compiled tz files (TZif, RFC 8536) that shares nothing with `src/`: the tests'
 * independent source of UTC offsets, against which Pricepoint's days are checked. It reads the
 * 64-bit (version 2+) block's transitions and local time types, and evaluates the footer's POSIX TZ
 * string for instants after the last transition. Offsets are in seconds east of UTC.
 */
import { readFileSync } from 'node:fs';

/** A stretch of time with one UTC offset: `start <= t < end`, epoch milliseconds. */
export interface OffsetSegment {
  readonly start: number;
  readonly end: number;
  readonly utoffSeconds: number;
}

export interface ReferenceZone {
  /** Explicit transitions (epoch ms), ascending, and the offset in force from each. */
  readonly transitions: readonly number[];
  readonly offsetsFrom: readonly number[];
  /** The offset before the first transition (local time type 0). */
  readonly initialOffset: number;
  /** The footer TZ string, `''` when the file has none. */
  readonly footer: string;
  /** UTC offset in seconds at `epochMs`. */
  offsetAt(epochMs: number): number;
  /** The offsets in force over `[from, to)`, split at every change of offset. */
  segments(from: number, to: number): OffsetSegment[];
  /** The footer's offset at `epochMs`, as if no explicit transition existed (for self-checks). */
  footerOffsetAt(epochMs: number): number;
}

const HEADER_BYTES = 44;

interface Counts {
  isut: number;
  isstd: number;
  leap: number;
  time: number;
  type: number;
  char: number;
}

function countsAt(bytes: Buffer, at: number): Counts {
  if (bytes.toString('latin1', at, at + 4) !== 'TZif') throw new Error('not a TZif file');
  const n = (i: number) => bytes.readUInt32BE(at + 20 + 4 * i);
  return { isut: n(0), isstd: n(1), leap: n(2), time: n(3), type: n(4), char: n(5) };
}

/** Parses a TZif file of version 2 or later. */
export function parseTzif(bytes: Buffer): ReferenceZone {
  const version = bytes[4];
  if (version === 0 || version === undefined) throw new Error('TZif version 1 has no 64-bit block');
  const v1 = countsAt(bytes, 0);
  const v1Data = v1.time * 5 + v1.type * 6 + v1.char + v1.leap * 8 + v1.isstd + v1.isut;
  const at = HEADER_BYTES + v1Data;
  const c = countsAt(bytes, at);
  let p = at + HEADER_BYTES;
  const transitions: number[] = [];
  for (let i = 0; i < c.time; i++, p += 8) transitions.push(Number(bytes.readBigInt64BE(p)) * 1000);
  const typeIndex: number[] = [];
  for (let i = 0; i < c.time; i++, p += 1) typeIndex.push(bytes.readUInt8(p));
  const typeOffsets: number[] = [];
  for (let i = 0; i < c.type; i++, p += 6) typeOffsets.push(bytes.readInt32BE(p));
  p += c.char + c.leap * 12 + c.isstd + c.isut;
  if (bytes[p] !== 0x0a) throw new Error('TZif footer missing');
  const footerEnd = bytes.indexOf(0x0a, p + 1);
  const footer = bytes.toString('latin1', p + 1, footerEnd);
  const offsetsFrom = typeIndex.map((i) => must(typeOffsets[i], 'type index'));
  const rule = footer === '' ? undefined : parsePosixTz(footer);
  const initialOffset = must(typeOffsets[0], 'local time type 0');
  const last = transitions.length - 1;

  const footerOffsetAt = (t: number): number => {
    if (rule === undefined) throw new Error('no footer');
    return posixOffsetAt(rule, t);
  };
  const offsetAt = (t: number): number => {
    if (last < 0 || t < must(transitions[0], 'first')) {
      return last < 0 && rule !== undefined ? footerOffsetAt(t) : initialOffset;
    }
    if (t >= must(transitions[last], 'last') && rule !== undefined) return footerOffsetAt(t);
    let lo = 0;
    let hi = last;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (must(transitions[mid], 'mid') <= t) lo = mid;
      else hi = mid - 1;
    }
    return must(offsetsFrom[lo], 'offset');
  };
  const changesBetween = (from: number, to: number): number[] => {
    const changes = transitions.filter((t) => t > from && t < to);
    const afterTable = last < 0 ? from : Math.max(from, must(transitions[last], 'last'));
    if (rule?.dst !== undefined && afterTable < to) {
      const y0 = new Date(afterTable).getUTCFullYear() - 1;
      const y1 = new Date(to).getUTCFullYear() + 1;
      for (let y = y0; y <= y1; y++) {
        for (const { at: t } of yearTransitions(rule, y)) if (t > afterTable && t < to) changes.push(t);
      }
    }
    return changes.sort((a, b) => a - b);
  };
  const segments = (from: number, to: number): OffsetSegment[] => {
    const out: OffsetSegment[] = [];
    let start = from;
    for (const t of [...changesBetween(from, to), to]) {
      const utoffSeconds = offsetAt(start);
      const previous = out[out.length - 1];
      if (previous !== undefined && previous.utoffSeconds === utoffSeconds) {
        out[out.length - 1] = { ...previous, end: t };
      } else {
        out.push({ start, end: t, utoffSeconds });
      }
      start = t;
    }
    return out;
  };
  return { transitions, offsetsFrom, initialOffset, footer, offsetAt, segments, footerOffsetAt };
}

/** Reads and parses one file. */
export function readTzif(path: string): ReferenceZone {
  return parseTzif(readFileSync(path));
}

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`TZif: no ${what}`);
  return value;
}

// ---- the footer: a POSIX TZ string, with RFC 8536's extensions (hours -167 to 167) ----

/** When in a year a rule switches: a day of that year and a local time in seconds. */
type DateRule =
  | { kind: 'julian-no-leap'; day: number; time: number }
  | { kind: 'zero-based'; day: number; time: number }
  | { kind: 'month-week-day'; month: number; week: number; weekday: number; time: number };

export interface PosixTz {
  /** Standard offset, seconds east of UTC. */
  readonly std: number;
  readonly dst?: { readonly offset: number; readonly start: DateRule; readonly end: DateRule };
}

/**
 * Parses a POSIX TZ string such as `PST8PDT,M3.2.0,M11.1.0` or `<+1030>-10:30<+11>-11,M10.1.0,M4.1.0`.
 * @example parsePosixTz('MST7').std // -25200
 */
export function parsePosixTz(text: string): PosixTz {
  let i = 0;
  const name = () => {
    if (text[i] === '<') {
      const close = text.indexOf('>', i);
      if (close < 0) throw new Error(`TZ string ${text}: unclosed <`);
      i = close + 1;
      return;
    }
    const start = i;
    while (i < text.length && /[A-Za-z]/.test(text[i] ?? '')) i++;
    if (i - start < 3) throw new Error(`TZ string ${text}: bad name at ${start}`);
  };
  /** `[+-]hh[:mm[:ss]]` as seconds. */
  const clock = () => {
    let sign = 1;
    if (text[i] === '+' || text[i] === '-') {
      sign = text[i] === '-' ? -1 : 1;
      i++;
    }
    const match = /^(\d{1,3})(?::(\d{2}))?(?::(\d{2}))?/.exec(text.slice(i));
    if (match === null) throw new Error(`TZ string ${text}: bad time at ${i}`);
    i += match[0].length;
    return sign * (Number(match[1]) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0));
  };
  const dateRule = (): DateRule => {
    let rule: DateRule;
    const rest = text.slice(i);
    const mwd = /^M(\d{1,2})\.(\d)\.(\d)/.exec(rest);
    const julian = /^J(\d{1,3})/.exec(rest);
    const zero = /^(\d{1,3})/.exec(rest);
    if (mwd !== null) {
      i += mwd[0].length;
      const [month, week, weekday] = [Number(mwd[1]), Number(mwd[2]), Number(mwd[3])];
      rule = { kind: 'month-week-day', month, week, weekday, time: 7200 };
    } else if (julian !== null) {
      i += julian[0].length;
      rule = { kind: 'julian-no-leap', day: Number(julian[1]), time: 7200 };
    } else if (zero !== null) {
      i += zero[0].length;
      rule = { kind: 'zero-based', day: Number(zero[1]), time: 7200 };
    } else {
      throw new Error(`TZ string ${text}: bad rule at ${i}`);
    }
    if (text[i] === '/') {
      i++;
      rule = { ...rule, time: clock() };
    }
    return rule;
  };
  name();
  const std = 0 - clock() || 0; // POSIX counts west of UTC as positive (and no -0 for GMT0)
  if (i === text.length) return { std };
  name();
  const dstOffset = i < text.length && text[i] !== ',' ? 0 - clock() || 0 : std + 3600;
  let start: DateRule = { kind: 'month-week-day', month: 3, week: 2, weekday: 0, time: 7200 };
  let end: DateRule = { kind: 'month-week-day', month: 11, week: 1, weekday: 0, time: 7200 };
  if (text[i] === ',') {
    i++;
    start = dateRule();
    if (text[i] !== ',') throw new Error(`TZ string ${text}: no end rule`);
    i++;
    end = dateRule();
  }
  if (i !== text.length) throw new Error(`TZ string ${text}: trailing text at ${i}`);
  return { std, dst: { offset: dstOffset, start, end } };
}

const DAY_MS = 86_400_000;

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Local midnight (as epoch ms of the same reading in UTC) of the day a rule names in `year`. */
function ruleDay(rule: DateRule, year: number): number {
  const jan1 = Date.UTC(year, 0, 1);
  switch (rule.kind) {
    case 'julian-no-leap': // J1..J365, February 29th never counted
      return jan1 + (rule.day - 1 + (isLeap(year) && rule.day >= 60 ? 1 : 0)) * DAY_MS;
    case 'zero-based':
      return jan1 + rule.day * DAY_MS;
    case 'month-week-day': {
      const first = Date.UTC(year, rule.month - 1, 1);
      const daysInMonth = new Date(Date.UTC(year, rule.month, 0)).getUTCDate();
      let day = 1 + ((rule.weekday - new Date(first).getUTCDay() + 7) % 7) + (rule.week - 1) * 7;
      while (day > daysInMonth) day -= 7;
      return first + (day - 1) * DAY_MS;
    }
  }
}

/** The two switches of `year`: to summer time (read in standard time) and back (read in summer time). */
function yearTransitions(rule: PosixTz, year: number): { at: number; offset: number }[] {
  const dst = rule.dst;
  if (dst === undefined) return [];
  return [
    { at: ruleDay(dst.start, year) + (dst.start.time - rule.std) * 1000, offset: dst.offset },
    { at: ruleDay(dst.end, year) + (dst.end.time - dst.offset) * 1000, offset: rule.std },
  ];
}

/** The offset a TZ string gives at `epochMs`: the last switch at or before it, over three years. */
export function posixOffsetAt(rule: PosixTz, epochMs: number): number {
  if (rule.dst === undefined) return rule.std;
  const year = new Date(epochMs).getUTCFullYear();
  const switches = [year - 1, year, year + 1].flatMap((y) => yearTransitions(rule, y));
  switches.sort((a, b) => a.at - b.at);
  let offset = rule.std;
  for (const s of switches) if (s.at <= epochMs) offset = s.offset;
  return offset;
}
