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
  isCalendarDate,
  isOnGrid,
  isResolution,
  localDate,
  RESOLUTIONS,
  type Resolution,
} from './days.js';
import { intlOffsetMinutes, offsetMinutes } from './zone.js';

const MINUTE = 60_000;
const QUARTER_HOUR = 15 * MINUTE;
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

interface NamedDay {
  readonly zone: string;
  readonly date: string;
  readonly story: string;
  readonly hours: number;
  readonly counts: Readonly<Record<Resolution, number>>;
  /** Formatted start and end of the day. */
  readonly start: string;
  readonly end: string;
  /** Formatted start of the last interval, per resolution shorter than a day. */
  readonly lastStart: Readonly<Record<Exclude<Resolution, 'P1D'>, string>>;
  /** A wall-clock time that happens twice: both readings, in order, start intervals where on the grid. */
  readonly repeated?: readonly [string, string];
  /** Wall-clock times that never happen: no interval starts there. */
  readonly skipped?: RegExp;
}

const NAMED_DAYS: NamedDay[] = [
  {
    zone: 'Europe/Oslo',
    date: '2026-11-22',
    story: 'an ordinary day',
    hours: 24,
    counts: { PT15M: 96, PT30M: 48, PT1H: 24, P1D: 1 },
    start: '2026-11-22T00:00:00+01:00',
    end: '2026-11-23T00:00:00+01:00',
    lastStart: {
      PT15M: '2026-11-22T23:45:00+01:00',
      PT30M: '2026-11-22T23:30:00+01:00',
      PT1H: '2026-11-22T23:00:00+01:00',
    },
  },
  {
    zone: 'Europe/Oslo',
    date: '2026-03-29',
    story: 'clocks forward, 02:00 to 03:00',
    hours: 23,
    counts: { PT15M: 92, PT30M: 46, PT1H: 23, P1D: 1 },
    start: '2026-03-29T00:00:00+01:00',
    end: '2026-03-30T00:00:00+02:00',
    lastStart: {
      PT15M: '2026-03-29T23:45:00+02:00',
      PT30M: '2026-03-29T23:30:00+02:00',
      PT1H: '2026-03-29T23:00:00+02:00',
    },
    skipped: /^2026-03-29T02:/,
  },
  {
    zone: 'Europe/Oslo',
    date: '2026-10-25',
    story: 'clocks back, 03:00 to 02:00',
    hours: 25,
    counts: { PT15M: 100, PT30M: 50, PT1H: 25, P1D: 1 },
    start: '2026-10-25T00:00:00+02:00',
    end: '2026-10-26T00:00:00+01:00',
    lastStart: {
      PT15M: '2026-10-25T23:45:00+01:00',
      PT30M: '2026-10-25T23:30:00+01:00',
      PT1H: '2026-10-25T23:00:00+01:00',
    },
    repeated: ['2026-10-25T02:00:00+02:00', '2026-10-25T02:00:00+01:00'],
  },
  {
    zone: 'America/New_York',
    date: '2026-03-08',
    story: 'clocks forward, 02:00 to 03:00',
    hours: 23,
    counts: { PT15M: 92, PT30M: 46, PT1H: 23, P1D: 1 },
    start: '2026-03-08T00:00:00-05:00',
    end: '2026-03-09T00:00:00-04:00',
    lastStart: {
      PT15M: '2026-03-08T23:45:00-04:00',
      PT30M: '2026-03-08T23:30:00-04:00',
      PT1H: '2026-03-08T23:00:00-04:00',
    },
    skipped: /^2026-03-08T02:/,
  },
  {
    zone: 'America/New_York',
    date: '2026-11-01',
    story: 'clocks back, 02:00 to 01:00',
    hours: 25,
    counts: { PT15M: 100, PT30M: 50, PT1H: 25, P1D: 1 },
    start: '2026-11-01T00:00:00-04:00',
    end: '2026-11-02T00:00:00-05:00',
    lastStart: {
      PT15M: '2026-11-01T23:45:00-05:00',
      PT30M: '2026-11-01T23:30:00-05:00',
      PT1H: '2026-11-01T23:00:00-05:00',
    },
    repeated: ['2026-11-01T01:00:00-04:00', '2026-11-01T01:00:00-05:00'],
  },
  {
    zone: 'Asia/Tokyo',
    date: '2026-03-29',
    story: 'no daylight saving time, on the day Europe changes clocks',
    hours: 24,
    counts: { PT15M: 96, PT30M: 48, PT1H: 24, P1D: 1 },
    start: '2026-03-29T00:00:00+09:00',
    end: '2026-03-30T00:00:00+09:00',
    lastStart: {
      PT15M: '2026-03-29T23:45:00+09:00',
      PT30M: '2026-03-29T23:30:00+09:00',
      PT1H: '2026-03-29T23:00:00+09:00',
    },
  },
  {
    zone: 'America/Santiago',
    date: '2026-09-06',
    story: 'clocks forward at midnight, so the day starts at 01:00',
    hours: 23,
    counts: { PT15M: 92, PT30M: 46, PT1H: 23, P1D: 1 },
    start: '2026-09-06T01:00:00-03:00',
    end: '2026-09-07T00:00:00-03:00',
    lastStart: {
      PT15M: '2026-09-06T23:45:00-03:00',
      PT30M: '2026-09-06T23:30:00-03:00',
      PT1H: '2026-09-06T23:00:00-03:00',
    },
    skipped: /^2026-09-06T00:/,
  },
  {
    zone: 'America/Santiago',
    date: '2026-04-04',
    story: 'clocks back at midnight, so 23:00 happens twice',
    hours: 25,
    counts: { PT15M: 100, PT30M: 50, PT1H: 25, P1D: 1 },
    start: '2026-04-04T00:00:00-03:00',
    end: '2026-04-05T00:00:00-04:00',
    lastStart: {
      PT15M: '2026-04-04T23:45:00-04:00',
      PT30M: '2026-04-04T23:30:00-04:00',
      PT1H: '2026-04-04T23:00:00-04:00',
    },
    repeated: ['2026-04-04T23:00:00-03:00', '2026-04-04T23:00:00-04:00'],
  },
  {
    zone: 'Australia/Lord_Howe',
    date: '2026-10-04',
    story: 'clocks forward by 30 minutes, 02:00 to 02:30',
    hours: 23.5,
    counts: { PT15M: 94, PT30M: 47, PT1H: 23, P1D: 1 },
    start: '2026-10-04T00:00:00+10:30',
    end: '2026-10-05T00:00:00+11:00',
    lastStart: {
      PT15M: '2026-10-04T23:45:00+11:00',
      PT30M: '2026-10-04T23:30:00+11:00',
      PT1H: '2026-10-04T23:00:00+11:00',
    },
    skipped: /^2026-10-04T02:[0-2]/,
  },
  {
    zone: 'Australia/Lord_Howe',
    date: '2026-04-05',
    story: 'clocks back by 30 minutes, 02:00 to 01:30',
    hours: 24.5,
    counts: { PT15M: 98, PT30M: 49, PT1H: 24, P1D: 1 },
    start: '2026-04-05T00:00:00+11:00',
    end: '2026-04-06T00:00:00+10:30',
    lastStart: {
      PT15M: '2026-04-05T23:45:00+10:30',
      PT30M: '2026-04-05T23:30:00+10:30',
      PT1H: '2026-04-05T23:00:00+10:30',
    },
    repeated: ['2026-04-05T01:30:00+11:00', '2026-04-05T01:30:00+10:30'],
  },
];

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

// ---------------------------------------------------------------------------------------------------
// Property test: every offset transition of every IANA zone from 2020 to 2030.
//
// The reference shares nothing with the module but the platform's tz data: it reads wall-clock time
// from its own Intl formatter, finds each zone's transitions by probing every 48 hours and bisecting
// to the second (the tz database has no two transitions closer than 28 days in this period: Fiji,
// 2021), and from them knows the offset at every instant without asking Intl again.

const DAY = 86_400_000;
const PERIOD_START = Date.UTC(2020, 0, 1);
const PERIOD_END = Date.UTC(2031, 0, 1);
const PROBE_STEP = 48 * HOUR;

const referenceFormats = new Map<string, Intl.DateTimeFormat>();
const READING = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;

/** The wall-clock reading at `epochMs` (to the second), as epoch milliseconds of the same reading in UTC. */
function wallReading(epochMs: number, zone: string): number {
  let format = referenceFormats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    referenceFormats.set(zone, format);
  }
  const text = format.format(epochMs);
  const m = READING.exec(text);
  if (m === null) throw new Error(`unexpected Intl output ${JSON.stringify(text)}`);
  return Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]), Number(m[4]), Number(m[5]), Number(m[6]));
}

function referenceOffset(epochMs: number, zone: string): number {
  return (wallReading(epochMs, zone) - Math.floor(epochMs / 1000) * 1000) / MINUTE;
}

interface Transition {
  readonly zone: string;
  /** The first instant with the new offset. */
  readonly at: number;
  readonly before: number;
  readonly after: number;
}

/** A zone's offsets from two days before the period to two days after it. */
interface Timeline {
  readonly zone: string;
  readonly initial: number;
  readonly transitions: readonly Transition[];
}

function timeline(zone: string): Timeline {
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

function offsetAt(line: Timeline, epochMs: number): number {
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
function dayProblems(line: Timeline, date: string): string[] {
  const { zone } = line;
  const problems: string[] = [];
  const where = `${zone} ${date}`;
  const day = dayNumber(Date.parse(`${date}T00:00:00Z`));
  const reading = (t: number): number => t + offsetAt(line, t) * MINUTE;
  const show = (t: number): string => `${new Date(t).toISOString()} (${formatInstant(t, zone)})`;

  // The day's bounds, read straight from Intl: the first instant with the date, and the first after it.
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
    // The reference's reading is Intl's own where the clock changes.
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

describe('every IANA zone, every offset transition from 2020 to 2030', () => {
  const zones = Intl.supportedValuesOf('timeZone');
  let lines: Timeline[] = [];
  const inPeriod = (t: Transition): boolean => t.at >= PERIOD_START && t.at < PERIOD_END;

  test('the reference finds the transitions of the zones that change clocks', () => {
    lines = zones.map(timeline);
    const count = (zone: string): number =>
      lines.find((l) => l.zone === zone)?.transitions.filter(inPeriod).length ?? -1;
    assert.equal(count('Europe/Oslo'), 22);
    assert.equal(count('America/New_York'), 22);
    assert.equal(count('Asia/Tokyo'), 0);
    assert.ok(lines.flatMap((l) => l.transitions).length > 2000);
  });

  test('the reference knows the offset at random instants as Intl does (no transition was missed)', () => {
    fc.assert(
      fc.property(
        fc.nat(lines.length - 1),
        fc.integer({ min: PERIOD_START, max: PERIOD_END - 1 }),
        (i, t) => {
          const line = lines[i];
          assert.ok(line !== undefined);
          assert.equal(offsetAt(line, t), referenceOffset(t, line.zone), line.zone);
        },
      ),
      { numRuns: 5000 },
    );
  });

  test('offsetMinutes (cached) and intlOffsetMinutes equal the reference at, before and after each transition', () => {
    const problems: string[] = [];
    for (const { zone, at: t, before, after } of lines.flatMap((l) => l.transitions.filter(inPeriod))) {
      const probes: [number, number][] = [
        [t + 1000, after],
        [t, after],
        [t - 1000, before],
      ];
      for (const [instant, want] of probes) {
        const cached = offsetMinutes(instant, zone);
        const intl = intlOffsetMinutes(instant, zone);
        if (cached !== want || intl !== want) {
          problems.push(
            `${zone} ${new Date(instant).toISOString()}: cached ${cached}, Intl ${intl}, expected ${want}`,
          );
        }
      }
    }
    assert.deepEqual(problems.slice(0, 20), []);
  });

  test('the days around each transition, and one ordinary day per zone, have a contiguous grid on local time', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const line of lines) {
      const dates = new Set(['2026-01-15']);
      for (const { at: t, before, after } of line.transitions.filter(inPeriod)) {
        const oldDate = new Date(t - 1000 + before * MINUTE).toISOString().slice(0, 10);
        const newDate = new Date(t + after * MINUTE).toISOString().slice(0, 10);
        for (const date of [addDays(oldDate, -1), oldDate, newDate, addDays(newDate, 1)]) dates.add(date);
      }
      for (const date of dates) {
        problems.push(...dayProblems(line, date));
        checked++;
      }
    }
    assert.ok(checked > 8000, `${checked} days`);
    assert.deepEqual(problems.slice(0, 20), []);
  });
});

describe('random days and instants (fast-check)', () => {
  const zones = Intl.supportedValuesOf('timeZone');
  const dates = fc
    .integer({ min: 0, max: daysBetween('2020-01-01', '2030-12-31') })
    .map((n) => addDays('2020-01-01', n));

  test('a day starts on its own date, ends on the next and meets the next day', () => {
    fc.assert(
      fc.property(fc.constantFrom(...zones), dates, (zone, date) => {
        const { start, end } = dayBounds(date, zone);
        assert.equal(localDate(start, zone), date);
        assert.equal(localDate(end - 1, zone), date);
        assert.equal(localDate(end, zone), addDays(date, 1));
        assert.equal(dayBounds(addDays(date, 1), zone).start, end);
      }),
      { numRuns: 1000 },
    );
  });

  test('isOnGrid is true exactly for the starts of the day, and intervalEnd agrees with dayIntervals', () => {
    const instants = fc.tuple(
      fc.integer({ min: PERIOD_START / QUARTER_HOUR, max: PERIOD_END / QUARTER_HOUR - 1 }),
      fc.oneof(fc.constant(0), fc.integer({ min: 1, max: QUARTER_HOUR - 1 })),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        instants,
        fc.constantFrom(...ALL_RESOLUTIONS),
        (zone, [q, ms], res) => {
          const t = q * QUARTER_HOUR + ms;
          const spans = dayIntervals(localDate(t, zone), zone, res);
          const span = spans.find((s) => s.start === t);
          assert.equal(isOnGrid(t, zone, res), span !== undefined);
          if (span !== undefined) assert.equal(intervalEnd(t, zone, res), span.end);
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('formatInstant of any instant parses back to it, to the second', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: PERIOD_START, max: PERIOD_END - 1 }),
        (zone, t) => {
          assert.equal(Date.parse(formatInstant(t, zone)), Math.floor(t / 1000) * 1000);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
