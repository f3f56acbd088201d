/** Packed days (the read cache's form of them) come back exactly as they went in. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { areDays, packDays, unpackDays } from './packed-days.js';
import { quarterHours, series } from './served-days-fixtures.js';

describe('packed days', () => {
  test('unpack gives back every day, field and interval text exactly, in order', () => {
    const days = [
      quarterHours('2026-03-28', 96),
      quarterHours('2026-03-29', 92, '+02:00'),
      { ...series, date: '2026-03-30', prices: [] },
      quarterHours('2026-03-31', 1, '+02:00'),
    ];
    const back = unpackDays(packDays(days));
    assert.deepEqual(back, days);
    assert.deepEqual(
      back.map((d) => Object.keys(d)),
      days.map((d) => Object.keys(d)),
      'the same fields in the same order (the renderer writes them in order)',
    );
  });

  test('a day of means over coarser intervals (resolution changed) keeps its served resolution', () => {
    const day = { ...quarterHours('2026-11-22', 24), resolution: 'PT1H' as const };
    assert.equal(unpackDays(packDays([day]))[0]?.resolution, 'PT1H');
  });

  test('areDays tells days from other cached values', () => {
    assert.equal(areDays([quarterHours('2026-11-22', 4)]), true);
    assert.equal(areDays([]), false, 'nothing to pack');
    assert.equal(areDays([series]), false, 'the series list');
    assert.equal(areDays('text'), false);
    assert.equal(areDays([{ date: '2026-11-22', prices: 'no' }]), false);
  });
});
