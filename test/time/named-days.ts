/**
 * Days of zones whose clocks change, and what days.ts must make of each
 * (src/domain/time/days-named.test.ts).
 */
import type { Resolution } from '../../src/domain/time/days.js';

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

export const NAMED_DAYS: NamedDay[] = [
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
