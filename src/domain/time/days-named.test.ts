/**
 * Named days (test/time/named-days.ts): ordinary days and DST days of zones that make them odd, each
 * checked in every resolution.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NAMED_DAYS } from '../../../test/time/named-days.js';
import {
  dayBounds,
  dayIntervals,
  formatInstant,
  intervalEnd,
  isOnGrid,
  localDate,
  RESOLUTIONS,
  type Resolution,
} from './days.js';
import { SHIPPED_TZDIR } from './tz-source.js';
import { useTzSource } from './zone.js';

// Days are checked against the pinned tz release shipped in tzdata/, whatever the machine has.
useTzSource({ setting: SHIPPED_TZDIR, systemDir: SHIPPED_TZDIR });

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const ALL_RESOLUTIONS = Object.keys(RESOLUTIONS) as Resolution[];
const at = (iso: string): number => Date.parse(iso);

/** The formatted starts of a day's intervals. */
function starts(date: string, zone: string, resolution: Resolution): string[] {
  return dayIntervals(date, zone, resolution).map((span) => formatInstant(span.start, zone));
}

/** Asserts that `expected` appears in `list` as one unbroken run. */
function assertRun(list: string[], expected: string[]): void {
  const first = list.indexOf(expected[0] ?? '');
  assert.ok(first >= 0, `${expected[0]} is not in the list`);
  assert.deepEqual(list.slice(first, first + expected.length), expected);
}

describe('days and their intervals, named cases', () => {
  for (const day of NAMED_DAYS) {
    test(`${day.zone} ${day.date} (${day.story}) lasts ${day.hours} hours from ${day.start} to ${day.end}`, () => {
      const { start, end } = dayBounds(day.date, day.zone);
      assert.equal(formatInstant(start, day.zone), day.start);
      assert.equal(formatInstant(end, day.zone), day.end);
      assert.equal((end - start) / HOUR, day.hours);
    });

    for (const resolution of ALL_RESOLUTIONS) {
      const count = day.counts[resolution];
      const minutes = RESOLUTIONS[resolution];
      const [early, late] = day.repeated ?? [];
      const repeats =
        early !== undefined && late !== undefined && Number(early.slice(14, 16)) % minutes === 0;
      const skips = day.skipped !== undefined && resolution !== 'P1D';
      const extra =
        repeats && resolution !== 'P1D' ? `, ${early?.slice(11, 16)} twice` : skips ? ', none skipped' : '';
      const noun = count === 1 ? 'interval' : 'intervals';
      test(`${day.zone} ${day.date} (${day.story}) has ${count} ${resolution} ${noun}${extra}`, () => {
        const spans = dayIntervals(day.date, day.zone, resolution);
        assert.equal(spans.length, count);
        const first = spans[0];
        const last = spans.at(-1);
        assert.ok(first !== undefined && last !== undefined);
        assert.equal(formatInstant(first.start, day.zone), day.start);
        assert.equal(formatInstant(last.end, day.zone), day.end);
        const lastStart = resolution === 'P1D' ? day.start : day.lastStart[resolution];
        assert.equal(formatInstant(last.start, day.zone), lastStart);
        for (const span of spans) assert.equal(intervalEnd(span.start, day.zone, resolution), span.end);
        const list = spans.map((span) => formatInstant(span.start, day.zone));
        const inGap = list.filter((text) => day.skipped?.test(text) === true);
        assert.deepEqual(inGap, []);
        if (repeats && resolution !== 'P1D') {
          const i = list.indexOf(early);
          assert.ok(i >= 0 && i < list.indexOf(late), `${early}, then ${late}`);
        }
      });
    }
  }

  test('Europe/Oslo 2026-10-25: the repeated hour appears twice, first at +02:00 and then at +01:00', () => {
    const zone = 'Europe/Oslo';
    const date = '2026-10-25';
    assertRun(starts(date, zone, 'PT1H'), [
      '2026-10-25T01:00:00+02:00',
      '2026-10-25T02:00:00+02:00',
      '2026-10-25T02:00:00+01:00',
      '2026-10-25T03:00:00+01:00',
    ]);
    assertRun(starts(date, zone, 'PT15M'), [
      '2026-10-25T02:45:00+02:00',
      '2026-10-25T02:00:00+01:00',
      '2026-10-25T02:15:00+01:00',
    ]);
    assertRun(starts(date, zone, 'PT30M'), ['2026-10-25T02:30:00+02:00', '2026-10-25T02:00:00+01:00']);
  });

  test('Europe/Oslo 2026-03-29: no interval starts in the skipped hour 02:00-03:00', () => {
    for (const resolution of ALL_RESOLUTIONS) {
      const list = starts('2026-03-29', 'Europe/Oslo', resolution);
      assert.ok(!list.some((s) => s.startsWith('2026-03-29T02:')), resolution);
    }
    assertRun(starts('2026-03-29', 'Europe/Oslo', 'PT15M'), [
      '2026-03-29T01:45:00+01:00',
      '2026-03-29T03:00:00+02:00',
    ]);
    assertRun(starts('2026-03-29', 'Europe/Oslo', 'PT1H'), [
      '2026-03-29T01:00:00+01:00',
      '2026-03-29T03:00:00+02:00',
    ]);
  });

  test('America/New_York 2026-11-01: 01:00 appears twice, first at -04:00 and then at -05:00', () => {
    assertRun(starts('2026-11-01', 'America/New_York', 'PT1H'), [
      '2026-11-01T00:00:00-04:00',
      '2026-11-01T01:00:00-04:00',
      '2026-11-01T01:00:00-05:00',
      '2026-11-01T02:00:00-05:00',
    ]);
    assertRun(starts('2026-11-01', 'America/New_York', 'PT15M'), [
      '2026-11-01T01:45:00-04:00',
      '2026-11-01T01:00:00-05:00',
    ]);
  });

  test('America/New_York 2026-03-08: no interval starts in the skipped hour 02:00-03:00', () => {
    for (const resolution of ALL_RESOLUTIONS) {
      const list = starts('2026-03-08', 'America/New_York', resolution);
      assert.ok(!list.some((s) => s.startsWith('2026-03-08T02:')), resolution);
    }
    assertRun(starts('2026-03-08', 'America/New_York', 'PT1H'), [
      '2026-03-08T01:00:00-05:00',
      '2026-03-08T03:00:00-04:00',
    ]);
  });

  test('America/Santiago 2026-09-06: midnight is skipped, the day before ends where this day starts at 01:00', () => {
    const day = dayBounds('2026-09-06', 'America/Santiago');
    assert.equal(dayBounds('2026-09-05', 'America/Santiago').end, day.start);
    assert.equal(localDate(day.start - 1, 'America/Santiago'), '2026-09-05');
    for (const resolution of ALL_RESOLUTIONS) {
      const list = starts('2026-09-06', 'America/Santiago', resolution);
      assert.ok(!list.some((s) => s.startsWith('2026-09-06T00:')), resolution);
    }
    assert.deepEqual(starts('2026-09-05', 'America/Santiago', 'PT1H').at(-1), '2026-09-05T23:00:00-04:00');
    assert.equal(isOnGrid(day.start, 'America/Santiago', 'P1D'), true);
  });

  test('America/Santiago 2026-04-04: 23:00 appears twice, first at -03:00 and then at -04:00', () => {
    assertRun(starts('2026-04-04', 'America/Santiago', 'PT1H'), [
      '2026-04-04T22:00:00-03:00',
      '2026-04-04T23:00:00-03:00',
      '2026-04-04T23:00:00-04:00',
    ]);
  });

  test('Australia/Lord_Howe 2026-10-04: the half hour 02:00-02:30 is skipped and the 01:00 hour lasts 90 minutes', () => {
    const zone = 'Australia/Lord_Howe';
    assertRun(starts('2026-10-04', zone, 'PT30M'), [
      '2026-10-04T01:30:00+10:30',
      '2026-10-04T02:30:00+11:00',
    ]);
    assertRun(starts('2026-10-04', zone, 'PT1H'), ['2026-10-04T01:00:00+10:30', '2026-10-04T03:00:00+11:00']);
    const hour = at('2026-10-04T01:00:00+10:30');
    assert.equal(intervalEnd(hour, zone, 'PT1H'), at('2026-10-04T03:00:00+11:00'));
    assert.equal(isOnGrid(at('2026-10-04T02:30:00+11:00'), zone, 'PT30M'), true);
    assert.equal(isOnGrid(at('2026-10-04T02:30:00+11:00'), zone, 'PT1H'), false);
  });

  test('Australia/Lord_Howe 2026-04-05: 01:30 appears twice and the 01:00 hour lasts 90 minutes', () => {
    const zone = 'Australia/Lord_Howe';
    assertRun(starts('2026-04-05', zone, 'PT30M'), [
      '2026-04-05T01:00:00+11:00',
      '2026-04-05T01:30:00+11:00',
      '2026-04-05T01:30:00+10:30',
      '2026-04-05T02:00:00+10:30',
    ]);
    assertRun(starts('2026-04-05', zone, 'PT1H'), ['2026-04-05T01:00:00+11:00', '2026-04-05T02:00:00+10:30']);
    assert.equal(intervalEnd(at('2026-04-05T01:00:00+11:00'), zone, 'PT1H'), at('2026-04-05T02:00:00+10:30'));
  });
});
