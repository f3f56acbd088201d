/**
 * Pricepoint's days checked against tz rules it did not read itself: every zone and link of the
 * pinned release in tzdata/ (IANA 2026f), through the independent reader in
 * test/helpers/tzif-reference.ts, on every local date of 2020-2030 with a change of offset (and the
 * days around it) plus a sample of ordinary days: day start, length, the intervals at every
 * resolution, the local date and the offsets written in timestamps.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import {
  dayBounds,
  dayIntervals,
  formatInstant,
  intervalEnd,
  isOnGrid,
  localDate,
} from '../../src/domain/time/days.js';
import { isTimeZone, offsetMinutes } from '../../src/domain/time/zone.js';
import { REPO } from '../helpers/process.js';
import { readTzif } from '../helpers/tzif-reference.js';
import {
  addDays,
  GRID_MINUTES,
  MINUTE_MS,
  type ReferenceDays,
  referenceDays,
  type SubDailyResolution,
  tzifNames,
  tzRelease,
} from './reference-days.js';
import { usePinnedTzdata } from './use-pinned-tzdata.js';

const TZDATA = join(REPO, 'tzdata');
const HOUR_MS = 60 * MINUTE_MS;
const FIRST = '2020-01-01';
const LAST = '2030-12-31';
/** One ordinary day in this many is checked too, at a different phase in each zone. */
const ORDINARY_STRIDE = 181;
/** `Factory` is the tz database's placeholder for "no zone set up yet", not a place's rules. */
const NOT_PLACES = new Set(['Factory']);
const RESOLUTIONS = Object.keys(GRID_MINUTES) as SubDailyResolution[];
const at = (iso: string): number => Date.parse(iso);

/** Differences found, and how many there were in all (only the first are kept, for the message). */
class Findings {
  readonly shown: string[] = [];
  readonly zones = new Map<string, number>();
  count = 0;

  check(zone: string, date: string, what: string, got: unknown, want: unknown): boolean {
    if (got === want) return true;
    this.count++;
    this.zones.set(zone, (this.zones.get(zone) ?? 0) + 1);
    if (this.shown.length < 40) this.shown.push(`${zone} ${date} ${what}: got ${got}, want ${want}`);
    return false;
  }

  report(): string {
    const perZone = [...this.zones].map(([zone, n]) => `${zone} (${n})`).join(', ');
    return `${this.count} differences in ${this.zones.size} zones: ${perZone}\n${this.shown.join('\n')}`;
  }
}

const iso = (t: number) => new Date(t).toISOString();

/** Compares one local day of one zone with the reference; returns false at the first difference found. */
function checkDay(name: string, ref: ReferenceDays, date: string, findings: Findings, deep: boolean): void {
  const start = ref.dayStart(date);
  const end = ref.dayStart(addDays(date, 1));
  const bounds = dayBounds(date, name);
  if (!findings.check(name, date, 'day start', iso(bounds.start), iso(start))) return;
  if (!findings.check(name, date, 'hours', (bounds.end - bounds.start) / HOUR_MS, (end - start) / HOUR_MS))
    return;
  const daily = dayIntervals(date, name, 'P1D');
  findings.check(name, date, 'P1D intervals', daily.length, 1);
  for (const resolution of RESOLUTIONS) {
    const want = ref.intervalStarts(date, resolution);
    const got = dayIntervals(date, name, resolution);
    if (!findings.check(name, date, `${resolution} intervals`, got.length, want.length)) continue;
    for (let i = 0; i < want.length; i++) {
      const wantStart = want[i] ?? 0;
      const wantEnd = want[i + 1] ?? end;
      const span = got[i];
      if (!findings.check(name, date, `${resolution} interval ${i}`, iso(span?.start ?? 0), iso(wantStart)))
        break;
      if (!findings.check(name, date, `${resolution} interval ${i} end`, iso(span?.end ?? 0), iso(wantEnd)))
        break;
      if (
        deep &&
        !findings.check(
          name,
          date,
          `${resolution} intervalEnd ${i}`,
          iso(intervalEnd(wantStart, name, resolution)),
          iso(wantEnd),
        )
      )
        break;
    }
  }
  // Timestamps: every quarter-hour interval's start, and the day's last second.
  for (const t of [...ref.intervalStarts(date, 'PT15M'), end - 1000]) {
    if (!findings.check(name, date, 'timestamp', formatInstant(t, name), ref.format(t))) break;
  }
  findings.check(name, date, 'local date of the start', localDate(start, name), date);
  findings.check(
    name,
    date,
    'local date of the last instant',
    localDate(end - 1, name),
    ref.localDate(end - 1),
  );
  if (!deep) return;
  // On the day of a change, every quarter hour is on the PT1H grid exactly when the reference says so.
  const hourly = new Set(ref.intervalStarts(date, 'PT1H'));
  for (let t = Math.ceil(start / (15 * MINUTE_MS)) * 15 * MINUTE_MS; t < end; t += 15 * MINUTE_MS) {
    if (
      !findings.check(name, date, `on the PT1H grid at ${iso(t)}`, isOnGrid(t, name, 'PT1H'), hourly.has(t))
    )
      break;
  }
  findings.check(name, date, 'P1D grid at the day start', isOnGrid(start, name, 'P1D'), true);
}

describe('days against the pinned IANA release, read by an independent TZif reader', () => {
  before(() => usePinnedTzdata(TZDATA));

  test('the pinned data in tzdata/ is IANA 2026f, with every zone and link as a TZif file', () => {
    assert.equal(tzRelease(TZDATA), '2026f');
    const names = tzifNames(TZDATA);
    assert.ok(names.length >= 590, `${names.length} zones and links`);
    for (const name of ['America/Vancouver', 'Canada/Pacific', 'US/Pacific', 'Asia/Kathmandu', 'Etc/GMT+5']) {
      assert.ok(names.includes(name), name);
    }
    assert.ok(!names.some((name) => /\.(tab|zi|md)$/.test(name)));
  });

  test("the reader's footer rule agrees with each file's own transitions over the table's last four years", () => {
    let checked = 0;
    for (const name of tzifNames(TZDATA)) {
      const zone = readTzif(join(TZDATA, name));
      if (zone.footer === '' || zone.transitions.length === 0) continue;
      const last = zone.transitions[zone.transitions.length - 1] ?? 0;
      // Only tables the compiler extended to 2037 with the footer's own rule can be compared (Gaza's
      // and Hebron's list Ramadan changes to 2086, which the footer does not describe).
      if (last < Date.UTC(2037, 0, 1) || last >= Date.UTC(2038, 0, 1)) continue;
      const from = last - 4 * 365 * 86_400_000;
      zone.transitions.forEach((t, i) => {
        if (t < from) return;
        assert.equal(zone.footerOffsetAt(t), zone.offsetsFrom[i], `${name} at ${iso(t)} (${zone.footer})`);
        if ((zone.transitions[i - 1] ?? Number.NEGATIVE_INFINITY) >= from) {
          assert.equal(zone.footerOffsetAt(t - 1000), zone.offsetsFrom[i - 1], `${name} before ${iso(t)}`);
        }
        checked++;
      });
    }
    assert.ok(checked > 1000, `${checked} transitions checked`);
  });

  test('America/Vancouver stays on -07:00: 2026-11-01 has 24 hours, 2026-11-24 starts at 07:00Z', () => {
    const ref = referenceDays(TZDATA, 'America/Vancouver');
    assert.equal(ref.dayStart('2026-11-02') - ref.dayStart('2026-11-01'), 24 * HOUR_MS);
    assert.equal(iso(ref.dayStart('2026-11-24')), '2026-11-24T07:00:00.000Z');

    const fallDay = dayBounds('2026-11-01', 'America/Vancouver');
    assert.equal((fallDay.end - fallDay.start) / HOUR_MS, 24);
    assert.equal(dayIntervals('2026-11-01', 'America/Vancouver', 'PT1H').length, 24);
    assert.equal(iso(dayBounds('2026-11-24', 'America/Vancouver').start), '2026-11-24T07:00:00.000Z');
    assert.equal(formatInstant(at('2026-11-24T07:00:00Z'), 'America/Vancouver'), '2026-11-24T00:00:00-07:00');
    assert.equal(offsetMinutes(at('2027-01-15T12:00:00Z'), 'Canada/Pacific'), -7 * 60);
    assert.ok(isOnGrid(at('2026-11-24T07:00:00Z'), 'America/Vancouver', 'P1D'));
  });

  test('where midnight is skipped (America/Havana 2026-03-08, "Mar Su>=8 0s"), the day starts at 01:00-04:00', () => {
    const ref = referenceDays(TZDATA, 'America/Havana');
    const day = dayBounds('2026-03-08', 'America/Havana');
    assert.equal(iso(day.start), '2026-03-08T05:00:00.000Z');
    assert.equal(day.start, ref.dayStart('2026-03-08'));
    assert.equal(formatInstant(day.start, 'America/Havana'), '2026-03-08T01:00:00-04:00');
    assert.equal((day.end - day.start) / HOUR_MS, 23);
    assert.equal(dayIntervals('2026-03-08', 'America/Havana', 'PT1H').length, 23);
  });

  test('Antarctica/Casey: 00:01 changes keep the grid (2020-10-04 has 21 hours), and 2021-03-13 has 27', () => {
    // tzdata.zi: "8 - %z 2020 O 4 0:1": at 00:01+08:00 (16:01Z) the clock jumps to 03:01+11:00.
    const short = dayBounds('2020-10-04', 'Antarctica/Casey');
    assert.equal(iso(short.start), '2020-10-03T16:00:00.000Z');
    assert.equal((short.end - short.start) / HOUR_MS, 21);
    const quarters = dayIntervals('2020-10-04', 'Antarctica/Casey', 'PT15M');
    assert.equal(quarters.length, 21 * 4);
    // The first quarter hour holds one minute at +08:00 and 14 at +11:00; the next starts on the grid.
    assert.deepEqual(
      quarters.slice(0, 2).map((s) => formatInstant(s.start, 'Antarctica/Casey')),
      ['2020-10-04T00:00:00+08:00', '2020-10-04T03:15:00+11:00'],
    );
    const hours = dayIntervals('2020-10-04', 'Antarctica/Casey', 'PT1H');
    assert.equal(hours.length, 21);
    assert.equal(formatInstant(hours[1]?.start ?? 0, 'Antarctica/Casey'), '2020-10-04T04:00:00+11:00');
    // "11 - %z 2021 Mar 14": at 00:00+11:00 on the 14th (13:00Z) the clock goes back to 21:00+08:00.
    const long = dayBounds('2021-03-13', 'Antarctica/Casey');
    assert.equal((long.end - long.start) / HOUR_MS, 27);
    assert.equal(dayIntervals('2021-03-13', 'Antarctica/Casey', 'PT1H').length, 27);
  });

  test('Australia/Lord_Howe: 23.5-hour and 24.5-hour days, each with one 90-minute PT1H interval', () => {
    for (const [date, hours, count] of [
      ['2026-04-05', 24.5, 24],
      ['2026-10-04', 23.5, 23],
    ] as const) {
      const day = dayBounds(date, 'Australia/Lord_Howe');
      assert.equal((day.end - day.start) / HOUR_MS, hours, date);
      const lengths = dayIntervals(date, 'Australia/Lord_Howe', 'PT1H').map(
        (s) => (s.end - s.start) / MINUTE_MS,
      );
      assert.equal(lengths.length, count, date);
      assert.deepEqual(
        lengths.filter((m) => m !== 60),
        [90],
        date,
      );
    }
  });

  test('every zone and link, every day of 2020-2030 with a change and a sample of others, agrees with the reference', () => {
    const findings = new Findings();
    let days = 0;
    const names = tzifNames(TZDATA).filter((name) => !NOT_PLACES.has(name));
    names.forEach((name, index) => {
      if (!findings.check(name, '-', 'known as a zone', isTimeZone(name), true)) return;
      const ref = referenceDays(TZDATA, name);
      const changed = ref.changeDates(FIRST, LAST);
      const around = ref.changeDates(FIRST, LAST, 1);
      // Dates where the code under test changes offset and the reference does not (a fall-back the
      // rules no longer have): its offset at every noon UTC, and where it starts or stops differing.
      let differed = false;
      for (let t = at('2020-01-01T12:00:00Z'); t < at('2031-01-01T00:00:00Z'); t += 24 * HOUR_MS) {
        const differs = offsetMinutes(t, name) !== ref.offsetMinutes(t);
        if (differs !== differed) {
          for (const date of [ref.localDate(t - 24 * HOUR_MS), ref.localDate(t)]) {
            for (const d of [addDays(date, -1), date, addDays(date, 1)]) {
              if (d < FIRST || d > LAST) continue;
              changed.add(d);
              around.add(d);
            }
          }
          findings.check(name, iso(t), 'offset at noon UTC', offsetMinutes(t, name), ref.offsetMinutes(t));
        }
        differed = differs;
      }
      const ordinary = new Set<string>();
      for (
        let d = addDays(FIRST, (index * 13) % ORDINARY_STRIDE);
        d <= LAST;
        d = addDays(d, ORDINARY_STRIDE)
      ) {
        if (!around.has(d)) ordinary.add(d);
      }
      for (const date of around) checkDay(name, ref, date, findings, changed.has(date));
      for (const date of ordinary) checkDay(name, ref, date, findings, false);
      // The offsets on both sides of every change, to the second.
      for (const t of ref.changesBetween(Date.UTC(2020, 0, 1), Date.UTC(2031, 0, 1))) {
        for (const instant of [t - 1000, t]) {
          findings.check(
            name,
            iso(instant),
            'offset',
            offsetMinutes(instant, name),
            ref.offsetMinutes(instant),
          );
        }
      }
      days += around.size + ordinary.size;
    });
    assert.ok(days > 20_000, `${days} zone-days checked`);
    assert.equal(findings.count, 0, findings.report());
  });
});
