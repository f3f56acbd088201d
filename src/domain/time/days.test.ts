/**
 * Days and their intervals (days.ts): calendar dates, instants on the wall clock, the grid and the
 * end of an interval. The named DST days are in days-named.test.ts, every zone in days-zones.test.ts.
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
  instantOf,
  intervalEnd,
  isCalendarDate,
  isOnGrid,
  isResolution,
  localDate,
  missingDate,
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

describe('calendar dates', () => {
  test('isCalendarDate accepts real dates, including 29 February of leap years', () => {
    for (const date of ['2026-01-01', '2026-12-31', '2024-02-29', '2000-02-29', '2026-04-30', '9999-12-31']) {
      assert.equal(isCalendarDate(date), true, date);
    }
  });

  test('isCalendarDate refuses dates that do not exist and other spellings', () => {
    const impossible = ['2026-02-29', '1900-02-29', '2100-02-29', '2026-04-31', '2026-13-01', '2026-00-10'];
    const misspelt = [
      '2026-01-00',
      '2026-1-01',
      '26-01-01',
      '2026/01/01',
      '2026-01-01T00:00',
      ' 2026-01-01',
      '',
    ];
    for (const date of [...impossible, ...misspelt, '2026-01-01\n', '２０２６-01-01']) {
      assert.equal(isCalendarDate(date), false, JSON.stringify(date));
    }
  });

  test("missingDate names a day past its month's end, and nothing else", () => {
    assert.equal(missingDate('2026-11-31'), 'a day that does not exist: November 2026 has 30 days');
    assert.equal(missingDate('2100-02-29'), 'a day that does not exist: February 2100 has 28 days');
    for (const other of ['2024-02-29', '2026-13-01', '2026-01-00', '2026-1-31', 'today']) {
      assert.equal(missingDate(other), undefined, other);
    }
  });

  test('addDays crosses month, year and leap-day boundaries in both directions', () => {
    assert.equal(addDays('2026-03-31', 1), '2026-04-01');
    assert.equal(addDays('2026-12-31', 1), '2027-01-01');
    assert.equal(addDays('2024-02-28', 1), '2024-02-29');
    assert.equal(addDays('2026-02-28', 1), '2026-03-01');
    assert.equal(addDays('2026-01-01', -1), '2025-12-31');
    assert.equal(addDays('2026-03-29', 0), '2026-03-29');
    assert.equal(addDays('2026-01-01', 365), '2027-01-01');
  });

  test('daysBetween counts whole days, negative when the second date is earlier', () => {
    assert.equal(daysBetween('2026-03-28', '2026-03-30'), 2);
    assert.equal(daysBetween('2026-03-30', '2026-03-28'), -2);
    assert.equal(daysBetween('2026-11-22', '2026-11-22'), 0);
    assert.equal(daysBetween('2024-01-01', '2025-01-01'), 366);
    assert.equal(daysBetween('2026-01-01', '2027-01-01'), 365);
  });

  test('isResolution knows the four resolutions and nothing else', () => {
    for (const r of ALL_RESOLUTIONS) assert.equal(isResolution(r), true);
    for (const r of ['PT5M', 'pt15m', 'P1W', 'toString', '']) assert.equal(isResolution(r), false, r);
  });
});

describe('localDate and formatInstant', () => {
  test('localDate is the calendar date on the wall clock of the zone', () => {
    assert.equal(localDate(at('2026-11-21T23:30:00Z'), 'Europe/Oslo'), '2026-11-22');
    assert.equal(localDate(at('2026-11-22T22:59:59Z'), 'Europe/Oslo'), '2026-11-22');
    assert.equal(localDate(at('2026-11-22T23:00:00Z'), 'Europe/Oslo'), '2026-11-23');
    assert.equal(localDate(at('2026-11-22T03:30:00Z'), 'America/New_York'), '2026-11-21');
    assert.equal(localDate(at('2026-11-22T14:59:59Z'), 'Asia/Tokyo'), '2026-11-22');
    assert.equal(localDate(at('2026-11-22T15:00:00Z'), 'Asia/Tokyo'), '2026-11-23');
  });

  test('localDate of the repeated hour after midnight-crossing clocks-back stays on the earlier date', () => {
    // Santiago goes from 24:00-03:00 back to 23:00-04:00: 23:00-24:00 on 4 April happens twice.
    assert.equal(localDate(at('2026-04-05T02:59:59Z'), 'America/Santiago'), '2026-04-04');
    assert.equal(localDate(at('2026-04-05T03:00:00Z'), 'America/Santiago'), '2026-04-04');
    assert.equal(localDate(at('2026-04-05T04:00:00Z'), 'America/Santiago'), '2026-04-05');
  });

  test('formatInstant writes RFC 3339 with the offset in force, so the repeated hour stays apart', () => {
    assert.equal(formatInstant(at('2026-10-25T00:00:00Z'), 'Europe/Oslo'), '2026-10-25T02:00:00+02:00');
    assert.equal(formatInstant(at('2026-10-25T01:00:00Z'), 'Europe/Oslo'), '2026-10-25T02:00:00+01:00');
    assert.equal(formatInstant(at('2026-11-22T10:15:03Z'), 'America/New_York'), '2026-11-22T05:15:03-05:00');
    assert.equal(formatInstant(at('2026-11-22T10:15:03Z'), 'UTC'), '2026-11-22T10:15:03+00:00');
  });

  test('formatInstant writes offsets that are not whole hours, east and west', () => {
    assert.equal(formatInstant(at('2026-01-15T12:00:00Z'), 'Asia/Kolkata'), '2026-01-15T17:30:00+05:30');
    assert.equal(formatInstant(at('2026-01-15T12:00:00Z'), 'Asia/Kathmandu'), '2026-01-15T17:45:00+05:45');
    assert.equal(formatInstant(at('2026-01-15T12:00:00Z'), 'America/St_Johns'), '2026-01-15T08:30:00-03:30');
    assert.equal(formatInstant(at('2026-01-15T12:00:00Z'), 'Pacific/Chatham'), '2026-01-16T01:45:00+13:45');
    assert.equal(formatInstant(at('2026-01-15T12:00:00Z'), 'Pacific/Marquesas'), '2026-01-15T02:30:00-09:30');
  });

  test('formatInstant drops milliseconds and its output parses back to the instant', () => {
    assert.equal(formatInstant(at('2026-11-22T10:15:03.999Z'), 'Europe/Oslo'), '2026-11-22T11:15:03+01:00');
    for (const zone of ['Europe/Oslo', 'America/New_York', 'Asia/Kathmandu', 'America/St_Johns']) {
      const t = at('2026-10-25T01:00:00Z');
      assert.equal(Date.parse(formatInstant(t, zone)), t, zone);
    }
  });
});

describe('dayBounds', () => {
  test('refuses a date that is not written YYYY-MM-DD', () => {
    assert.throws(() => dayBounds('2026-3-29', 'Europe/Oslo'), RangeError);
    assert.throws(() => dayIntervals('today', 'Europe/Oslo', 'PT1H'), RangeError);
  });
});

describe('isOnGrid', () => {
  const zone = 'Europe/Oslo';

  test('a start lies on the grid when its local minutes fit the resolution and its seconds are zero', () => {
    assert.equal(isOnGrid(at('2026-11-22T00:15:00+01:00'), zone, 'PT15M'), true);
    assert.equal(isOnGrid(at('2026-11-22T00:15:00+01:00'), zone, 'PT30M'), false);
    assert.equal(isOnGrid(at('2026-11-22T00:30:00+01:00'), zone, 'PT30M'), true);
    assert.equal(isOnGrid(at('2026-11-22T00:30:00+01:00'), zone, 'PT1H'), false);
    assert.equal(isOnGrid(at('2026-11-22T13:00:00+01:00'), zone, 'PT1H'), true);
    assert.equal(isOnGrid(at('2026-11-22T00:10:00+01:00'), zone, 'PT15M'), false);
    assert.equal(isOnGrid(at('2026-11-22T00:15:30+01:00'), zone, 'PT15M'), false);
    assert.equal(isOnGrid(at('2026-11-22T00:15:00.001+01:00'), zone, 'PT15M'), false);
  });

  test('a P1D start is only the start of a local day', () => {
    assert.equal(isOnGrid(at('2026-11-22T00:00:00+01:00'), zone, 'P1D'), true);
    assert.equal(isOnGrid(at('2026-11-22T00:00:00Z'), zone, 'P1D'), false);
    assert.equal(isOnGrid(at('2026-11-22T01:00:00+01:00'), zone, 'P1D'), false);
  });

  test('the grid follows local time in zones with offsets that are not whole hours', () => {
    assert.equal(isOnGrid(at('2026-11-22T10:30:00Z'), 'Asia/Kolkata', 'PT1H'), true); // 16:00+05:30
    assert.equal(isOnGrid(at('2026-11-22T10:00:00Z'), 'Asia/Kolkata', 'PT1H'), false);
    assert.equal(isOnGrid(at('2026-11-22T10:15:00Z'), 'Asia/Kathmandu', 'PT1H'), true); // 16:00+05:45
    assert.equal(isOnGrid(at('2026-11-22T10:15:00Z'), 'Asia/Kathmandu', 'PT30M'), true);
    assert.equal(isOnGrid(at('2026-11-22T10:00:00Z'), 'Asia/Kathmandu', 'PT30M'), false);
  });

  test('both copies of a repeated hour lie on the grid', () => {
    assert.equal(isOnGrid(at('2026-10-25T02:00:00+02:00'), zone, 'PT1H'), true);
    assert.equal(isOnGrid(at('2026-10-25T02:00:00+01:00'), zone, 'PT1H'), true);
  });
});

describe('intervalEnd', () => {
  const zone = 'Europe/Oslo';

  test('an interval on an ordinary day ends one resolution later', () => {
    const start = at('2026-11-22T10:00:00+01:00');
    assert.equal(intervalEnd(start, zone, 'PT15M'), start + 15 * MINUTE);
    assert.equal(intervalEnd(start, zone, 'PT30M'), start + 30 * MINUTE);
    assert.equal(intervalEnd(start, zone, 'PT1H'), start + HOUR);
    assert.equal(intervalEnd(at('2026-11-22T00:00:00+01:00'), zone, 'P1D'), at('2026-11-23T00:00:00+01:00'));
  });

  test('the last interval of a day ends at the next local midnight', () => {
    assert.equal(
      intervalEnd(at('2026-11-22T23:45:00+01:00'), zone, 'PT15M'),
      at('2026-11-23T00:00:00+01:00'),
    );
    assert.equal(intervalEnd(at('2026-03-29T23:00:00+02:00'), zone, 'PT1H'), at('2026-03-30T00:00:00+02:00'));
  });

  test('across clocks forward, an hour from 01:00 ends at 03:00 after one real hour', () => {
    const start = at('2026-03-29T01:00:00+01:00');
    assert.equal(intervalEnd(start, zone, 'PT1H'), at('2026-03-29T03:00:00+02:00'));
    assert.equal(intervalEnd(start, zone, 'PT1H') - start, HOUR);
    assert.equal(
      intervalEnd(at('2026-03-29T01:45:00+01:00'), zone, 'PT15M'),
      at('2026-03-29T03:00:00+02:00'),
    );
  });

  test('across clocks back, the first 02:00 ends at the second 02:00', () => {
    assert.equal(intervalEnd(at('2026-10-25T02:00:00+02:00'), zone, 'PT1H'), at('2026-10-25T02:00:00+01:00'));
    assert.equal(
      intervalEnd(at('2026-10-25T02:45:00+02:00'), zone, 'PT15M'),
      at('2026-10-25T02:00:00+01:00'),
    );
  });

  test('a P1D interval of a DST day is 23 or 25 hours long', () => {
    const spring = at('2026-03-29T00:00:00+01:00');
    const autumn = at('2026-10-25T00:00:00+02:00');
    assert.equal(intervalEnd(spring, zone, 'P1D') - spring, 23 * HOUR);
    assert.equal(intervalEnd(autumn, zone, 'P1D') - autumn, 25 * HOUR);
  });

  test('the last hour before a skipped midnight runs to the next day start (Santiago 2026-09-05)', () => {
    const start = at('2026-09-05T23:00:00-04:00');
    assert.equal(intervalEnd(start, 'America/Santiago', 'PT1H'), at('2026-09-06T01:00:00-03:00'));
  });
});

describe('instantOf', () => {
  test('reads what formatInstant writes, in any zone, as Date.parse does', () => {
    const zones = ['Europe/Oslo', 'America/St_Johns', 'Asia/Kathmandu', 'Pacific/Chatham', 'UTC'];
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2199, 11, 31) }),
        fc.constantFrom(...zones),
        (epochMs, zone) => {
          const text = formatInstant(Math.floor(epochMs / 1000) * 1000, zone);
          assert.equal(instantOf(text), Date.parse(text), text);
        },
      ),
      { numRuns: 5_000 },
    );
  });

  test('leaves every other text to Date.parse', () => {
    for (const text of [
      '2026-02-29T10:00:00+01:00',
      '2024-02-29T10:00:00+01:00',
      '2026-04-31T10:00:00+01:00',
      '2026-13-01T10:00:00+01:00',
      '2026-11-24T24:00:00+01:00',
      '2026-11-24T10:00:00Z',
      '2026-11-24T10:00:00.500+01:00',
      '0099-11-24T10:00:00+01:00',
      '2026-11-2xT10:00:00+01:00',
      'not an instant at all, 25',
    ]) {
      assert.deepEqual(instantOf(text), Date.parse(text), text);
    }
  });
});
