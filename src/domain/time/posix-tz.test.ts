import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePosixTz, posixOffsetAt, posixTransitions } from './posix-tz.js';

const s = (iso: string): number => Date.parse(iso) / 1000;
const iso = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000', '');
/** The UTC instants of the year's changes, and the offset (hours) after each. */
const changes = (tz: string, year: number) =>
  posixTransitions(parsePosixTz(tz), year).map((c) => `${iso(c.at)} ${c.offset / 3600}`);
const hoursAt = (tz: string, when: string): number => posixOffsetAt(parsePosixTz(tz), s(when)) / 3600;

describe('POSIX TZ strings of TZif footers', () => {
  test('month-week-day rules with a time: Europe/Oslo and Europe/Chisinau', () => {
    assert.deepEqual(changes('CET-1CEST,M3.5.0,M10.5.0/3', 2026), [
      '2026-03-29T01:00:00Z 2',
      '2026-10-25T01:00:00Z 1',
    ]);
    // Chisinau changes at 03:00 and 04:00 local time (tz 2026a).
    assert.deepEqual(changes('EET-2EEST,M3.5.0/3,M10.5.0/4', 2026), [
      '2026-03-29T01:00:00Z 3',
      '2026-10-25T01:00:00Z 2',
    ]);
    // Week 5 is the last such weekday, also when the month has only four.
    assert.deepEqual(changes('CET-1CEST,M2.5.0,M10.5.0/3', 2026)[0], '2026-02-22T01:00:00Z 2');
  });

  test('a zone without DST: <-03>3 (America/Sao_Paulo) and <+00>0 (Africa/Casablanca from 2026)', () => {
    assert.deepEqual(parsePosixTz('<-03>3'), { stdOffset: -3 * 3600 });
    assert.equal(hoursAt('<-03>3', '2040-07-01T00:00:00Z'), -3);
    assert.equal(Object.is(parsePosixTz('<+00>0').stdOffset, 0), true, 'UTC is 0, never -0');
  });

  test('offsets with minutes, and a southern DST that spans the new year: Australia/Lord_Howe', () => {
    const tz = '<+1030>-10:30<+11>-11,M10.1.0,M4.1.0';
    assert.deepEqual(changes(tz, 2040), ['2040-10-06T15:30:00Z 11', '2040-03-31T15:00:00Z 10.5']);
    assert.equal(hoursAt(tz, '2040-01-15T00:00:00Z'), 11);
    assert.equal(hoursAt(tz, '2040-07-01T00:00:00Z'), 10.5);
    assert.equal(hoursAt(tz, '2040-03-31T14:59:59Z'), 11);
    assert.equal(hoursAt(tz, '2040-03-31T15:00:00Z'), 10.5);
  });

  test('Jn counts 1 to 365 and never February 29; n counts from 0 and does', () => {
    // J60 is March 1 in every year; 59 is February 29 in a leap year and March 1 otherwise.
    assert.equal(changes('<+03>-3<+04>,J60/0,J300/0', 2024)[0], '2024-02-29T21:00:00Z 4');
    assert.equal(changes('<+03>-3<+04>,J60/0,J300/0', 2025)[0], '2025-02-28T21:00:00Z 4');
    assert.equal(changes('<+03>-3<+04>,59/0,299/0', 2024)[0], '2024-02-28T21:00:00Z 4');
    assert.equal(changes('<+03>-3<+04>,59/0,299/0', 2025)[0], '2025-02-28T21:00:00Z 4');
    assert.equal(changes('<+03>-3<+04>,0/0,299/0', 2025)[0], '2024-12-31T21:00:00Z 4');
  });

  test('negative transition times (America/Nuuk) and past 24 hours (Asia/Jerusalem), as RFC 8536 allows', () => {
    // zdump of tzdata/America/Nuuk and Asia/Jerusalem (2026f) for 2040.
    assert.deepEqual(changes('<-02>2<-01>,M3.5.0/-1,M10.5.0/0', 2040), [
      '2040-03-25T01:00:00Z -1',
      '2040-10-28T01:00:00Z -2',
    ]);
    assert.deepEqual(changes('IST-2IDT,M3.4.4/26,M10.5.0', 2040), [
      '2040-03-23T00:00:00Z 3',
      '2040-10-27T23:00:00Z 2',
    ]);
    assert.deepEqual(parsePosixTz('XXX3YYY,M3.2.0/-167,M11.1.0/167:59:59').dst?.end.time, 167 * 3600 + 3599);
  });

  test('negative DST (Europe/Dublin: IST in summer is standard, GMT in winter its "DST")', () => {
    const tz = 'IST-1GMT0,M10.5.0,M3.5.0/1';
    assert.equal(hoursAt(tz, '2040-01-15T00:00:00Z'), 0);
    assert.equal(hoursAt(tz, '2040-07-01T00:00:00Z'), 1);
    assert.equal(hoursAt(tz, '2040-03-25T00:59:59Z'), 0);
    assert.equal(hoursAt(tz, '2040-03-25T01:00:00Z'), 1);
  });

  test('DST all year, written as RFC 8536 does (January 1 00:00 to day 365 at 25:00)', () => {
    const tz = 'EST5EDT,0/0,J365/25';
    for (const when of [
      '2030-01-01T04:59:59Z',
      '2030-01-01T05:00:00Z',
      '2030-07-01T00:00:00Z',
      '2030-12-31T23:59:59Z',
    ]) {
      assert.equal(hoursAt(tz, when), -4, when);
    }
  });

  test('a DST name without rules takes the US rules, as glibc does', () => {
    assert.deepEqual(changes('EST5EDT', 2026), ['2026-03-08T07:00:00Z -4', '2026-11-01T06:00:00Z -5']);
  });

  test('refuses what is not a POSIX TZ string', () => {
    const bad = [
      '',
      'CET',
      '<AB>1',
      'CET-25',
      'CET-1CEST,M3.5.0',
      'CET-1CEST,M13.1.0,M10.5.0',
      'CET-1CEST,J0,J365',
    ];
    for (const text of [
      ...bad,
      'CET-1CEST,M3.5.0,M10.5.0/3x',
      'CET-1CEST,M3.6.0,M10.5.0',
      'XXX3YYY,M3.2.0/168,M11.1.0',
    ]) {
      assert.throws(() => parsePosixTz(text), SyntaxError, text);
    }
  });
});
