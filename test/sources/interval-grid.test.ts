/**
 * Priced intervals of known length on one series grid (src/sources/interval-grid.ts), the part the
 * energycharts and awattar connectors share: what fits, what is refused, and that nothing is averaged.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { onGrid, type TimedPrice } from '../../src/sources/interval-grid.js';

const T0 = Date.parse('2025-09-30T21:00Z');
const Q = 15 * 60_000;

function quarters(count: number, from = T0): TimedPrice[] {
  return Array.from({ length: count }, (_, i) => ({ start: from + i * Q, minutes: 15, price: `${i + 1}.5` }));
}

describe('onGrid', () => {
  test('rows of one length make a series of that resolution; a row without a price is left out', () => {
    const rows = quarters(4).map((row, i) => (i === 2 ? { ...row, price: undefined } : row));
    const grid = onGrid(rows, undefined, false);
    assert.deepEqual(grid, {
      ok: true,
      resolution: 'PT15M',
      points: [
        { start: T0, price: '1.5' },
        { start: T0 + Q, price: '2.5' },
        { start: T0 + 3 * Q, price: '4.5' },
      ],
    });
  });

  test('no rows and no resolution: nothing to place, and no resolution made up', () => {
    assert.deepEqual(onGrid([], undefined, false), { ok: true, resolution: undefined, points: [] });
  });

  test('a length Pricepoint has no resolution for is refused', () => {
    const grid = onGrid([{ start: T0, minutes: 45, price: '1' }], undefined, false);
    assert.deepEqual(grid, { ok: false, reason: 'an interval of 45 minutes is not PT15M, PT30M or PT1H' });
  });

  test('an hour fills four quarters only with fillQuarters; quarters never fill an hour', () => {
    const hour: TimedPrice = { start: T0 - 4 * Q, minutes: 60, price: '9' };
    const refused = onGrid([hour], 'PT15M', false);
    assert.ok(!refused.ok);
    assert.match(refused.reason, /set fillQuarters to repeat each price over its 4 intervals/);
    const filled = onGrid([hour, ...quarters(1)], 'PT15M', true);
    assert.ok(filled.ok);
    assert.deepEqual(
      filled.points.map((p) => p.price),
      ['9', '9', '9', '9', '1.5'],
    );
    const averaged = onGrid(quarters(4), 'PT1H', true);
    assert.ok(!averaged.ok);
    assert.match(averaged.reason, /cannot fill a PT1H series \(prices are never averaged\)/);
  });

  test('two rows for one interval are refused, never one chosen', () => {
    const grid = onGrid([...quarters(1), { start: T0, minutes: 15, price: '7' }], undefined, false);
    assert.deepEqual(grid, { ok: false, reason: 'two prices for 2025-09-30T21:00:00.000Z' });
  });
});
