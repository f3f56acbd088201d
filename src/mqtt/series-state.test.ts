/** When the MQTT publisher wakes next: the real interval boundaries of a series' day, DST days included. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nextBoundary } from './series-state.js';

const at = (iso: string) => Date.parse(iso);

describe('nextBoundary', () => {
  test('quarter hours and hours on an ordinary day', () => {
    assert.equal(
      nextBoundary(at('2026-11-22T10:15:03Z'), 'Europe/Oslo', 'PT15M'),
      at('2026-11-22T10:30:00Z'),
    );
    assert.equal(
      nextBoundary(at('2026-11-22T10:30:00Z'), 'Europe/Oslo', 'PT15M'),
      at('2026-11-22T10:45:00Z'),
    );
    assert.equal(nextBoundary(at('2026-11-22T10:15:03Z'), 'Europe/Oslo', 'PT1H'), at('2026-11-22T11:00:00Z'));
  });

  test('the spring night: 01:00 is followed by 03:00 summer time', () => {
    // 01:30+01:00 on 2026-03-29 in Oslo; the next hour starts at 03:00+02:00, 30 minutes later.
    assert.equal(nextBoundary(at('2026-03-29T00:30:00Z'), 'Europe/Oslo', 'PT1H'), at('2026-03-29T01:00:00Z'));
    // The 23-hour day ends at local midnight, 22:00Z, not 24 hours after it began.
    assert.equal(nextBoundary(at('2026-03-29T12:00:00Z'), 'Europe/Oslo', 'P1D'), at('2026-03-29T22:00:00Z'));
  });

  test('the autumn night: the repeated hour is an interval of its own', () => {
    // 02:30+02:00, then 02:00+01:00 (01:00Z) starts the repeated hour.
    assert.equal(nextBoundary(at('2026-10-25T00:30:00Z'), 'Europe/Oslo', 'PT1H'), at('2026-10-25T01:00:00Z'));
    assert.equal(nextBoundary(at('2026-10-25T01:30:00Z'), 'Europe/Oslo', 'PT1H'), at('2026-10-25T02:00:00Z'));
    // The 25-hour day ends at 23:00Z.
    assert.equal(nextBoundary(at('2026-10-25T12:00:00Z'), 'Europe/Oslo', 'P1D'), at('2026-10-25T23:00:00Z'));
  });

  test('the last interval of the day ends at the next local midnight', () => {
    assert.equal(
      nextBoundary(at('2026-11-22T22:50:00Z'), 'Europe/Oslo', 'PT15M'),
      at('2026-11-22T23:00:00Z'),
    );
    assert.equal(nextBoundary(at('2026-11-22T15:10:00Z'), 'Asia/Tokyo', 'PT30M'), at('2026-11-22T15:30:00Z'));
  });
});
