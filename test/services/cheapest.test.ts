/**
 * The arithmetic of the cheapest hours (src/services/cheapest.ts), without HTTP or a store: durations,
 * windows and intervals against a brute-force reference computed with decimal.js, and the parts of a
 * range that are not published, on the days the clocks change.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';
import {
  cheapestIntervals,
  cheapestWindow,
  intervalsIn,
  missingSpans,
  parseIsoDuration,
  type Timed,
} from '../../src/services/cheapest.js';
import type { Series } from '../../src/stores/types.js';

const HOUR = 3_600_000;
const ZONE = 'Europe/Oslo';

/** Prices as texts with 0 to 4 decimals, both signs: what a store can hold. */
const priceArb = fc
  .tuple(fc.integer({ min: -99_999, max: 99_999 }), fc.integer({ min: 0, max: 4 }))
  .map(([digits, decimals]) => new Decimal(digits).dividedBy(10 ** decimals).toFixed(decimals));

/** Hourly intervals from 0, with some hours left out (gaps a window must not span). */
const pointsArb = fc.array(fc.tuple(priceArb, fc.boolean()), { minLength: 0, maxLength: 40 }).map((rows) =>
  rows
    .map(([price, present], i) => ({ start: i * HOUR, end: (i + 1) * HOUR, price, present }))
    .filter((p) => p.present)
    .map(({ start, end, price }): Timed => ({ start, end, price })),
);

/** Every window of n consecutive intervals, the cheapest by exact sum, the earliest of equal ones. */
function referenceWindow(points: readonly Timed[], n: number): number | undefined {
  let best: { first: number; sum: Decimal } | undefined;
  for (let first = 0; first + n <= points.length; first++) {
    const run = points.slice(first, first + n);
    if (run.some((p, i) => i > 0 && p.start !== (run[i - 1] as Timed).end)) continue;
    const sum = run.reduce((s, p) => s.plus(p.price), new Decimal(0));
    if (best === undefined || sum.lessThan(best.sum)) best = { first, sum };
  }
  return best?.first;
}

describe('durations', () => {
  test('ISO 8601 days, hours, minutes and seconds, in any letter case; nothing else and never zero', () => {
    assert.deepEqual(parseIsoDuration('PT3H'), { text: 'PT3H', days: 0, timeMs: 3 * HOUR });
    assert.deepEqual(parseIsoDuration('pt90m'), { text: 'PT90M', days: 0, timeMs: 1.5 * HOUR });
    assert.deepEqual(parseIsoDuration('P1DT6H'), { text: 'P1DT6H', days: 1, timeMs: 6 * HOUR });
    for (const bad of ['3h', 'PT', 'P', 'PT0H', 'P1W', 'P1M', 'P1Y', 'PT1.5H', '-PT1H', 'PT3H ', '']) {
      assert.equal(parseIsoDuration(bad), undefined, bad);
    }
  });

  test('a whole multiple of the resolution in elapsed time; a daily series counts days', () => {
    const pt = (text: string) => parseIsoDuration(text) as NonNullable<ReturnType<typeof parseIsoDuration>>;
    assert.equal(intervalsIn(pt('PT3H'), 'PT15M'), 12);
    assert.equal(intervalsIn(pt('PT45M'), 'PT15M'), 3);
    assert.equal(intervalsIn(pt('P1D'), 'PT1H'), 24);
    assert.equal(intervalsIn(pt('PT20M'), 'PT15M'), undefined);
    assert.equal(intervalsIn(pt('PT90M'), 'PT1H'), undefined);
    assert.equal(intervalsIn(pt('P2D'), 'P1D'), 2);
    assert.equal(intervalsIn(pt('PT24H'), 'P1D'), undefined);
  });
});

describe('choosing', () => {
  test('the cheapest window is the reference one: exact sums, consecutive intervals, the earliest of equals', () => {
    fc.assert(
      fc.property(pointsArb, fc.integer({ min: 1, max: 6 }), (points, n) => {
        assert.equal(cheapestWindow(points, n), referenceWindow(points, n));
      }),
      { numRuns: 500 },
    );
  });

  test('the N cheapest intervals are the reference ones, in order of time, the earlier of equal prices', () => {
    fc.assert(
      fc.property(pointsArb, fc.integer({ min: 1, max: 10 }), (points, n) => {
        const order = points
          .map((p, i) => ({ i, value: new Decimal(p.price) }))
          .sort((a, b) => a.value.comparedTo(b.value) || a.i - b.i);
        const expected =
          points.length < n
            ? undefined
            : order
                .slice(0, n)
                .map((o) => o.i)
                .sort((a, b) => a - b);
        assert.deepEqual(cheapestIntervals(points, n), expected);
      }),
      { numRuns: 500 },
    );
  });

  test('prices of different decimals compare exactly: 0.1 + 0.2 is less than 0.30001', () => {
    const points = ['9', '0.1', '0.2', '0.30001', '0', '9'].map((price, i) => ({
      start: i * HOUR,
      end: (i + 1) * HOUR,
      price,
    }));
    assert.equal(cheapestWindow(points, 2), 1);
    assert.equal(cheapestWindow(points, 2, 2 * HOUR), 1);
    assert.equal(cheapestWindow(points, 2, 3 * HOUR), undefined, 'two hours never span three');
  });
});

describe('what is not published', () => {
  const series: Series = {
    symbol: 'NO1',
    name: 'Oslo',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: ZONE,
    resolution: 'PT1H',
  };
  const hoursOf = (date: string): Timed[] => {
    const { start, end } = dayBounds(date, ZONE);
    const out: Timed[] = [];
    for (let t = start; t < end; t += HOUR) out.push({ start: t, end: t + HOUR, price: '1' });
    return out;
  };

  test('the 25 hours of the autumn day, the repeated hour included, are each an interval to publish', () => {
    const day = dayBounds('2026-10-25', ZONE);
    const all = hoursOf('2026-10-25');
    assert.equal(all.length, 25);
    assert.deepEqual(missingSpans(series, day, all), []);
    // Leave out the second 02:00 (+01:00) and the last two hours.
    const some = all.filter((_, i) => i !== 3 && i < 23);
    const missing = missingSpans(series, day, some).map((s) => [
      formatInstant(s.start, ZONE),
      formatInstant(s.end, ZONE),
    ]);
    assert.deepEqual(missing, [
      ['2026-10-25T02:00:00+01:00', '2026-10-25T03:00:00+01:00'],
      ['2026-10-25T22:00:00+01:00', '2026-10-26T00:00:00+01:00'],
    ]);
  });

  test('the spring day has 23 hours to publish, and a range cut inside an hour counts whole ones only', () => {
    const day = dayBounds('2026-03-29', ZONE);
    assert.deepEqual(missingSpans(series, day, hoursOf('2026-03-29')), []);
    const cut = { start: day.start + HOUR / 2, end: day.end };
    const missing = missingSpans(series, cut, []);
    assert.equal(missing.length, 1);
    assert.equal(formatInstant(missing[0]?.start ?? 0, ZONE), '2026-03-29T01:00:00+01:00');
    assert.equal(missing[0]?.end, day.end);
  });
});
