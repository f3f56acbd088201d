/**
 * The offset timeline is a shortcut: every answer must be the one days.ts gives for the same
 * instant, day or interval, in every zone, also on the days clocks change.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  addDays,
  dayBounds,
  dayIntervals,
  daysBetween,
  formatInstant,
  intervalEnd,
  RESOLUTIONS,
  type Resolution,
} from './days.js';
import { offsetTimeline } from './offset-timeline.js';
import { offsetMinutes } from './zone.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const QUARTER_HOUR = 900_000;
const ALL_RESOLUTIONS = Object.keys(RESOLUTIONS) as Resolution[];
const utc = (date: string) => Date.parse(`${date}T00:00:00Z`);

/** A timeline over the local days `from`..`to`, with the margin the price service gives it. */
const timelineOver = (zone: string, from: string, to: string) =>
  offsetTimeline(zone, utc(from) - 2 * DAY, utc(to) + 3 * DAY);

/** Checks every day of `from`..`to` and every interval in it against days.ts. */
function assertDaysAgree(zone: string, from: string, to: string, resolutions = ALL_RESOLUTIONS): void {
  const line = timelineOver(zone, from, to);
  for (let date = from; date <= to; date = addDays(date, 1)) {
    const day = dayBounds(date, zone);
    assert.equal(line.dayStart(date), day.start, `${zone} ${date} start`);
    for (const res of resolutions) {
      const spans = dayIntervals(date, zone, res);
      assert.deepEqual(line.dayIntervals(date, day, res), spans, `${zone} ${date} ${res}`);
      for (const { start } of spans) {
        assert.equal(line.intervalEnd(start, res), intervalEnd(start, zone, res), `${zone} ${res} end`);
      }
    }
    for (let t = day.start; t < day.end; t += QUARTER_HOUR) {
      assert.equal(line.formatInstant(t), formatInstant(t, zone));
    }
  }
}

describe('offset timeline', () => {
  test('every zone: the day starts of 2026 and the time every nine hours read as days.ts reads them', () => {
    for (const zone of [...Intl.supportedValuesOf('timeZone'), 'UTC']) {
      const line = timelineOver(zone, '2026-01-01', '2026-12-31');
      let changes = 0;
      for (let t = utc('2026-01-01'); t < utc('2027-01-01'); t += 9 * HOUR) {
        assert.equal(line.offsetAt(t), offsetMinutes(t, zone), `${zone} ${t}`);
        assert.equal(line.formatInstant(t), formatInstant(t, zone));
        if (line.offsetAt(t) !== line.offsetAt(t + 9 * HOUR)) changes++;
      }
      // Zones without a change in the year are checked on a few days, the others on every day.
      const step = changes === 0 ? 61 : 1;
      for (let date = '2026-01-01'; date <= '2026-12-31'; date = addDays(date, step)) {
        assert.equal(line.dayStart(date), dayBounds(date, zone).start, `${zone} ${date}`);
      }
    }
  });

  test('the days around clock changes: repeated and skipped hours, skipped midnights, half-hour and odd-minute shifts', () => {
    const cases: [zone: string, from: string, to: string][] = [
      ['Europe/Oslo', '2026-03-27', '2026-03-31'],
      ['Europe/Oslo', '2026-10-23', '2026-10-27'],
      ['America/New_York', '2026-03-07', '2026-03-09'],
      ['America/New_York', '2026-10-31', '2026-11-02'],
      ['America/Santiago', '2026-04-03', '2026-04-05'],
      ['America/Santiago', '2026-09-04', '2026-09-07'],
      ['Australia/Lord_Howe', '2026-04-04', '2026-04-06'],
      ['Australia/Lord_Howe', '2026-10-03', '2026-10-05'],
      ['Pacific/Chatham', '2026-04-04', '2026-04-06'],
      ['Antarctica/Casey', '2020-10-03', '2020-10-05'], // switched at 00:01 local time
      ['Pacific/Apia', '2011-12-28', '2012-01-01'], // 30 December 2011 does not exist there
      ['Asia/Kolkata', '2026-06-01', '2026-06-02'],
      ['Asia/Kathmandu', '2026-06-01', '2026-06-02'],
    ];
    for (const [zone, from, to] of cases) assertDaysAgree(zone, from, to);
  });

  test('random zones, days and resolutions from 1970 to 2100 (fast-check)', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: 0, max: daysBetween('1970-01-01', '2100-12-31') }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(...ALL_RESOLUTIONS),
        (zone, n, length, res) => {
          const from = addDays('1970-01-01', n);
          assertDaysAgree(zone, from, addDays(from, length), [res]);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('instants outside its span are answered exactly, just without the shortcut', () => {
    const line = timelineOver('Europe/Oslo', '2026-07-01', '2026-07-02');
    const winter = Date.parse('2026-01-15T12:34:56Z');
    assert.equal(line.offsetAt(winter), 60);
    assert.equal(line.formatInstant(winter), '2026-01-15T13:34:56+01:00');
  });
});
