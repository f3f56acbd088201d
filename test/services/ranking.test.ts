/**
 * Rank and level as pure arithmetic (src/services/ranking.ts, docs/tariffs.md "Rank and level"):
 * competition ranks within a day and levels against the mean of the 7 days before, compared with a
 * plain reference computed with decimal.js.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { daySum, rankDays, rankDaysAfter } from '../../src/services/ranking.js';

const D = Decimal.clone({ precision: 80 });

/** The documented level, read off the table in docs/tariffs.md. */
function referenceLevel(value: string, before: string[]): string | null {
  if (before.length === 0) return null;
  const mean = before.reduce((s, v) => s.plus(v), new D(0)).dividedBy(before.length);
  if (mean.isZero())
    return new D(value).isNeg() ? 'very_cheap' : new D(value).isZero() ? 'normal' : 'very_expensive';
  const d = new D(value).minus(mean).dividedBy(mean.abs());
  if (d.lte(-0.4)) return 'very_cheap';
  if (d.lte(-0.1)) return 'cheap';
  if (d.gte(0.4)) return 'very_expensive';
  if (d.gte(0.15)) return 'expensive';
  return 'normal';
}

/** Prices as stored: small ranges so that ties and boundaries happen, both signs, a few decimals. */
const price = fc
  .tuple(fc.integer({ min: -300, max: 300 }), fc.integer({ min: 0, max: 3 }))
  .map(([n, scale]) => new D(n).dividedBy(10 ** scale).toFixed());
const day = fc.array(fc.option(price, { nil: undefined, freq: 8 }), { minLength: 0, maxLength: 30 });

describe('rank and level', () => {
  test('ranks are 1 + how many values of the day are strictly lower; levels follow the 7 days before', () => {
    fc.assert(
      fc.property(fc.array(day, { minLength: 1, maxLength: 12 }), fc.nat(), (days, pick) => {
        const first = pick % days.length;
        const ranked = rankDays(days, first);
        assert.equal(ranked.length, days.length - first);
        ranked.forEach((out, k) => {
          const d = first + k;
          const values = days[d] as (string | undefined)[];
          const before = days
            .slice(Math.max(0, d - 7), d)
            .flat()
            .filter((v): v is string => v !== undefined);
          values.forEach((v, i) => {
            if (v === undefined) {
              assert.equal(out[i], undefined);
            } else {
              const lower = values.filter((o) => o !== undefined && new D(o).lt(v)).length;
              assert.deepEqual(out[i], { rank: 1 + lower, level: referenceLevel(v, before) });
            }
          });
        });
      }),
      { numRuns: 300 },
    );
  });

  test('days ranked against the sums of the days before rank as with those days themselves', () => {
    fc.assert(
      fc.property(
        fc.array(day, { minLength: 0, maxLength: 9 }),
        fc.array(day, { maxLength: 4 }),
        (earlier, days) => {
          assert.deepEqual(
            rankDaysAfter(days, earlier.map(daySum)),
            rankDays([...earlier, ...days], earlier.length),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  test('the documented boundaries against a mean of 50, and a mean of 0', () => {
    const ranked = rankDays(
      [
        ['50', '50'],
        ['30', '30.01', '45', '45.01', '57.49', '57.5', '69.99', '70'],
      ],
      1,
    );
    assert.deepEqual(
      ranked[0]?.map((r) => r?.level),
      ['very_cheap', 'cheap', 'cheap', 'normal', 'normal', 'expensive', 'expensive', 'very_expensive'],
    );
    const zero = rankDays(
      [
        ['1', '-1'],
        ['-0.001', '0', '0.001'],
      ],
      1,
    );
    assert.deepEqual(
      zero[0]?.map((r) => r?.level),
      ['very_cheap', 'normal', 'very_expensive'],
    );
  });

  test('ties share a rank and the next ranks are skipped', () => {
    const [ranks] = rankDays([['3', '1', '3', '2', '1', '4']], 0);
    assert.deepEqual(
      ranks?.map((r) => r?.rank),
      [4, 1, 4, 3, 1, 6],
    );
  });
});
