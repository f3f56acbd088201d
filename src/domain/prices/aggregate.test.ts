import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { dayIntervals } from '../time/days.js';
import { aggregateIntervals, decimalMean } from './aggregate.js';

describe('decimalMean: exact, rounded to the most decimals of its inputs', () => {
  test('examples, including negative prices and trailing zeros', () => {
    assert.equal(decimalMean(['41.27']), '41.27');
    assert.equal(decimalMean(['41.27', '40', '-3.5']), '25.92'); // 77.77 / 3 = 25.9233…
    assert.equal(decimalMean(['41.20', '41.40']), '41.30'); // two decimals seen: two kept
    assert.equal(decimalMean(['1.01', '1.02', '1.02', '1.02']), '1.02', '1.0175 rounds to 1.02');
    assert.equal(
      decimalMean(['1.01', '1.02']),
      '1.02',
      '1.015 rounds half away from zero, as no double would',
    );
    assert.equal(decimalMean(['1', '2']), '2'); // 1.5 rounds half away from zero
    assert.equal(decimalMean(['-1', '-2']), '-2');
    assert.equal(decimalMean(['-0.01', '0']), '-0.01'); // -0.005 rounds away from zero
    assert.equal(decimalMean(['-0.01', '0', '0']), '0.00'); // -0.0033 is zero, written without a minus
    assert.equal(decimalMean(['0.1', '0.2']), '0.2'); // 0.15, where doubles would give 0.15000000000000002
    assert.equal(decimalMean(['999999999999999', '999999999999999']), '999999999999999');
  });

  test('property: up to 15 significant digits and 100 prices, the exact mean, also where doubles would round', () => {
    // The reference: the exact rational mean in BigInt, rounded half away from zero.
    const reference = (prices: string[], scale: number): bigint => {
      const units = prices.map((p) => {
        const [whole = '', fraction = ''] = p.replace('-', '').split('.');
        const value = BigInt(whole + fraction.padEnd(scale, '0'));
        return p.startsWith('-') ? -value : value;
      });
      const sum = units.reduce((a, b) => a + b, 0n);
      const n = BigInt(prices.length);
      const twice = (sum < 0n ? -sum : sum) * 2n;
      const rounded = twice / (2n * n) + (twice % (2n * n) >= n ? 1n : 0n);
      return sum < 0n ? -rounded : rounded;
    };
    const price = fc
      .tuple(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 14 }))
      .map(([units, scale]) => {
        const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
        const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
        return units < 0n ? `-${text}` : text;
      });
    fc.assert(
      fc.property(fc.array(price, { minLength: 1, maxLength: 100 }), (prices) => {
        const scale = Math.max(...prices.map((p) => p.split('.')[1]?.length ?? 0));
        const mean = decimalMean(prices);
        const [whole = '', fraction = ''] = mean.replace('-', '').split('.');
        assert.equal(fraction.length, scale);
        const units = BigInt(whole + fraction) * (mean.startsWith('-') ? -1n : 1n);
        assert.equal(units, reference(prices, scale), `mean ${mean} of ${prices.join(' ')}`);
      }),
      { numRuns: 500 },
    );
  });

  test('never the mean of nothing', () => {
    assert.throws(() => decimalMean([]), RangeError);
  });

  test('property: the mean lies between the smallest and largest input and differs from the exact mean by at most half a unit', () => {
    const price = fc
      .tuple(fc.integer({ min: -99_999_999, max: 99_999_999 }), fc.integer({ min: 0, max: 4 }))
      .map(([units, scale]) => (scale === 0 ? String(units) : (units / 10 ** scale).toFixed(scale)));
    fc.assert(
      fc.property(fc.array(price, { minLength: 1, maxLength: 100 }), (prices) => {
        const mean = decimalMean(prices);
        const scale = Math.max(...prices.map((p) => (p.includes('.') ? (p.split('.')[1]?.length ?? 0) : 0)));
        const toUnits = (p: string) => BigInt(Math.round(Number(p) * 10 ** scale));
        const sum = prices.reduce((acc, p) => acc + toUnits(p), 0n);
        const n = BigInt(prices.length);
        const units = toUnits(mean);
        // |units * n - sum| <= n / 2, i.e. at most half a unit away from the exact mean.
        const error = units * n - sum;
        assert.ok((error < 0n ? -error : error) * 2n <= n, `mean ${mean} of ${prices.join(' ')}`);
        const values = prices.map(Number);
        assert.ok(
          Number(mean) >= Math.min(...values) && Number(mean) <= Math.max(...values),
          `range of ${mean}`,
        );
        const decimals = mean.includes('.') ? (mean.split('.')[1]?.length ?? 0) : 0;
        assert.equal(decimals, scale, `decimals of ${mean}`);
      }),
    );
  });
});

describe('aggregateIntervals', () => {
  const hours = dayIntervals('2026-10-25', 'Europe/Oslo', 'PT1H'); // 25 hours: 02:00 twice
  const quarters = dayIntervals('2026-10-25', 'Europe/Oslo', 'PT15M');

  test('a 25-hour day gives 25 hourly means of four quarter hours each', () => {
    const points = quarters.map((q, i) => ({ start: q.start, price: String(i) }));
    const means = aggregateIntervals(points, hours);
    assert.equal(means.length, 25);
    assert.deepEqual(
      means.slice(0, 3).map((m) => m.price),
      ['2', '6', '10'], // mean(0..3) = 1.5 → 2, mean(4..7) = 5.5 → 6, …
    );
    assert.deepEqual(means[2], { start: hours[2]?.start, end: hours[2]?.end, price: '10' });
  });

  test('sparse data: an hour with some quarters averages those, an hour with none is left out', () => {
    const points = [
      { start: quarters[0]!.start, price: '10' },
      { start: quarters[3]!.start, price: '20.5' },
      { start: quarters[12]!.start, price: '7' },
    ];
    const means = aggregateIntervals(points, hours);
    assert.deepEqual(
      means.map((m) => [m.start, m.price]),
      [
        [hours[0]!.start, '15.3'], // 15.25 → 15.3 (one decimal seen)
        [hours[3]!.start, '7'],
      ],
    );
  });
});
