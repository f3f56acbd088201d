/**
 * A reference for days.ts, for src/domain/time/days-zones.test.ts: every offset transition of every
 * IANA zone from 2020 to 2030.
 *
 * The reference shares nothing with the module's days nor with its table of offsets: it reads each
 * zone's file of the pinned tzdata/ as written (transitions and POSIX footer, tzif.ts's
 * offsetSecondsAt, uncached), finds the zone's transitions by probing every 48 hours and bisecting
 * to the second (the tz database has no two transitions closer than 28 days in this period: Fiji,
 * 2021), and from them knows the offset at every instant. That the TZif reading itself is right is
 * proven apart, by tz-reference.test.ts beside this file, which reads the same files with code of its own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  addDays,
  dayBounds,
  dayIntervals,
  formatInstant,
  intervalEnd,
  isOnGrid,
  localDate,
  RESOLUTIONS,
  type Resolution,
} from '../../src/domain/time/days.js';
import { SHIPPED_TZDIR } from '../../src/domain/time/tz-source.js';
import { offsetSecondsAt, parseTzif, type ZoneRules } from '../../src/domain/time/tzif.js';

const MINUTE = 60_000;
const QUARTER_HOUR = 15 * MINUTE;
const HOUR = 60 * MINUTE;
const ALL_RESOLUTIONS = Object.keys(RESOLUTIONS) as Resolution[];

const DAY = 86_400_000;
export const PERIOD_START = Date.UTC(2020, 0, 1);
export const PERIOD_END = Date.UTC(2031, 0, 1);
const PROBE_STEP = 48 * HOUR;

const referenceRules = new Map<string, ZoneRules>();

export function referenceOffset(epochMs: number, zone: string): number {
  let rules = referenceRules.get(zone);
  if (rules === undefined) {
    rules = parseTzif(readFileSync(join(SHIPPED_TZDIR, zone)));
    referenceRules.set(zone, rules);
  }
  return Math.round(offsetSecondsAt(rules, Math.floor(epochMs / 1000)) / 60) || 0;
}

/** The wall-clock reading at `epochMs` (to the second), as epoch milliseconds of the same reading in UTC. */
function wallReading(epochMs: number, zone: string): number {
  return Math.floor(epochMs / 1000) * 1000 + referenceOffset(epochMs, zone) * MINUTE;
}

export interface Transition {
  readonly zone: string;
  /** The first instant with the new offset. */
  readonly at: number;
  readonly before: number;
  readonly after: number;
}

/** A zone's offsets from two days before the period to two days after it. */
export interface Timeline {
  readonly zone: string;
  readonly initial: number;
  readonly transitions: readonly Transition[];
}

export function timeline(zone: string): Timeline {
  const transitions: Transition[] = [];
  let lo = PERIOD_START - 2 * DAY;
  const initial = referenceOffset(lo, zone);
  let offset = initial;
  while (lo < PERIOD_END + 2 * DAY) {
    const probe = Math.min(lo + PROBE_STEP, PERIOD_END + 2 * DAY);
    const next = referenceOffset(probe, zone);
    if (next !== offset) {
      let a = lo;
      let b = probe;
      while (b - a > 1000) {
        const mid = a + Math.floor((b - a) / 2000) * 1000;
        if (referenceOffset(mid, zone) === offset) a = mid;
        else b = mid;
      }
      transitions.push({ zone, at: b, before: offset, after: next });
      offset = next;
    }
    lo = probe;
  }
  return { zone, initial, transitions };
}

export function offsetAt(line: Timeline, epochMs: number): number {
  let offset = line.initial;
  for (const t of line.transitions) {
    if (t.at > epochMs) break;
    offset = t.after;
  }
  return offset;
}

const dayNumber = (reading: number): number => Math.floor(reading / DAY);
const minuteOfReading = (reading: number): number => Math.floor((reading % DAY) / MINUTE);
const secondOfReading = (reading: number): number => Math.floor((reading % MINUTE) / 1000);

/** RFC 3339 of an instant, built from the reference offset. */
function referenceFormat(epochMs: number, offset: number): string {
  const abs = Math.abs(offset);
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${new Date(epochMs + offset * MINUTE).toISOString().slice(0, 19)}${offset < 0 ? '-' : '+'}${hhmm}`;
}

/** Checks one local day in every resolution against the reference; returns what is wrong. */
export function dayProblems(line: Timeline, date: string): string[] {
  const { zone } = line;
  const problems: string[] = [];
  const where = `${zone} ${date}`;
  const day = dayNumber(Date.parse(`${date}T00:00:00Z`));
  const reading = (t: number): number => t + offsetAt(line, t) * MINUTE;
  const show = (t: number): string => `${new Date(t).toISOString()} (${formatInstant(t, zone)})`;

  // The day's bounds, read straight from the zone's file: the first instant with the date, and the first after it.
  const { start, end } = dayBounds(date, zone);
  if (!(start < end)) return [`${where}: empty day ${start}..${end}`];
  if (dayNumber(wallReading(start, zone)) !== day) problems.push(`${where}: the day starts on another date`);
  if (dayNumber(wallReading(start - 1000, zone)) >= day) problems.push(`${where}: the day starts too late`);
  if (dayNumber(wallReading(end - 1000, zone)) !== day) problems.push(`${where}: the day ends too late`);
  if (dayNumber(wallReading(end, zone)) <= day) problems.push(`${where}: the day ends too early`);
  if (dayBounds(addDays(date, -1), zone).end !== start) {
    problems.push(`${where}: the day before ends elsewhere`);
  }
  const startsAtMidnight = reading(start) % DAY === 0;

  // Offsets are multiples of 15 minutes, so every grid instant is a whole UTC quarter hour.
  const quarters: number[] = [];
  for (let t = Math.ceil(start / QUARTER_HOUR) * QUARTER_HOUR; t < end; t += QUARTER_HOUR) quarters.push(t);
  const offsets = [...new Set(quarters.map((t) => offsetAt(line, t)))];
  const allStarts = new Set<number>();
  // intervalEnd and the negative isOnGrid checks cost the most; they run where the clock changes or
  // the day begins or ends (within two hours), and on every hour and day.
  const edges = [start, end, ...line.transitions.map((t) => t.at).filter((t) => t > start && t < end)];
  const nearEdge = (t: number): boolean => edges.some((e) => Math.abs(t - e) <= 2 * HOUR);

  for (const resolution of ALL_RESOLUTIONS) {
    const label = `${where} ${resolution}`;
    const minutes = RESOLUTIONS[resolution];
    const onGrid = (t: number): boolean =>
      resolution === 'P1D' ? t === start : reading(t) % (minutes * MINUTE) === 0;
    const expected = [start, ...quarters.filter((t) => t !== start && onGrid(t))];
    const spans = dayIntervals(date, zone, resolution);
    const actual = spans.map((s) => s.start);

    // (e) the count of quarter hours whose reading is on the grid, and where every shift of the day is
    // a multiple of the resolution and the day starts at midnight, simply the day's length over it
    if (spans.length !== expected.length) {
      problems.push(`${label}: ${spans.length} intervals, expected ${expected.length}`);
    }
    const wholeShifts = offsets.every((o) => (o - offsets[0]!) % minutes === 0);
    if (
      resolution !== 'P1D' &&
      wholeShifts &&
      startsAtMidnight &&
      (end - start) / (minutes * MINUTE) !== spans.length
    ) {
      problems.push(`${label}: ${spans.length} intervals in ${(end - start) / HOUR} hours`);
    }
    const differs = actual.findIndex((t, i) => t !== expected[i]);
    if (differs >= 0) {
      const [got, want] = [actual[differs] ?? Number.NaN, expected[differs] ?? Number.NaN];
      problems.push(`${label}: interval ${differs} starts at ${show(got)}, not ${show(want)}`);
    }

    // (a) contiguous and increasing from the day's start to its end, (b) unique starts
    if (spans[0]?.start !== start) problems.push(`${label}: the first start is not the day's start`);
    if (spans.at(-1)?.end !== end) problems.push(`${label}: the last end is not the day's end`);
    spans.forEach((span, i) => {
      if (!(span.start < span.end)) problems.push(`${label}: interval ${i} is empty`);
      const next = spans[i + 1];
      if (next !== undefined && next.start !== span.end) problems.push(`${label}: gap after interval ${i}`);
    });
    if (new Set(actual).size !== actual.length) problems.push(`${label}: repeated starts`);

    // (d) every start on the grid, by the module and by the reference reading
    for (const span of spans) {
      allStarts.add(span.start);
      const r = reading(span.start);
      if (!isOnGrid(span.start, zone, resolution)) {
        problems.push(`${label}: isOnGrid(${show(span.start)}) is false`);
      }
      if (secondOfReading(r) !== 0) problems.push(`${label}: ${show(span.start)} has seconds`);
      if ((span.start !== start || startsAtMidnight) && minuteOfReading(r) % minutes !== 0) {
        problems.push(`${label}: ${show(span.start)} is off the grid`);
      }
      const thorough = resolution === 'PT1H' || resolution === 'P1D' || nearEdge(span.start);
      if (thorough && intervalEnd(span.start, zone, resolution) !== span.end) {
        problems.push(`${label}: intervalEnd(${show(span.start)}) is not ${show(span.end)}`);
      }
    }
    // ... and no other quarter hour is (for P1D, those next to the day's start and end)
    const startSet = new Set(actual);
    const others = resolution === 'P1D' ? [quarters[1], quarters.at(-1)] : quarters.filter(nearEdge);
    for (const t of others) {
      if (t !== undefined && !startSet.has(t) && isOnGrid(t, zone, resolution)) {
        problems.push(`${label}: isOnGrid(${show(t)}) is true but no interval starts there`);
      }
    }
  }

  for (const t of allStarts) {
    // The reference's reading is the zone file's own where the clock changes.
    if (nearEdge(t) && reading(t) !== wallReading(t, zone)) {
      problems.push(`${where}: reference wrong at ${show(t)}`);
    }
    // (c) the start is on the day, (g) its RFC 3339 form has the reference offset and parses back
    if (localDate(t, zone) !== date || dayNumber(reading(t)) !== day) {
      problems.push(`${where}: ${show(t)} is not on the day`);
    }
    const text = formatInstant(t, zone);
    const want = referenceFormat(t, offsetAt(line, t));
    if (text !== want) problems.push(`${where}: formatted ${text}, expected ${want}`);
    if (Date.parse(text) !== t) problems.push(`${where}: ${text} does not parse back`);
  }
  return problems;
}
