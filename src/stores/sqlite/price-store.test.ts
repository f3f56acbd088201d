import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inStartOrder, splitJoinedPrices } from './price-store.js';

describe('the prices of a span read as one text', () => {
  test('split into the same starts and price texts as a row per point', () => {
    const rows = [
      { start: -2_208_988_800_000, price: '-0.5' }, // 1900, before the epoch
      { start: 0, price: '0' },
      { start: 1_764_370_800_000, price: '41.270' },
      { start: 7_258_118_400_000, price: '1e3' }, // 2200
      { start: 7_258_119_300_000, price: '123456789012345' },
    ];
    const joined = rows.map((r) => `${r.start},${r.price}`).join(',');
    assert.deepEqual(splitJoinedPrices(joined), rows);
    assert.deepEqual(splitJoinedPrices('5,-0.000001'), [{ start: 5, price: '-0.000001' }]);
  });

  test('are put in start order when SQLite gave them otherwise, and left as they are when in order', () => {
    const sorted = [1, 2, 3].map((start) => ({ start, price: String(start) }));
    assert.equal(inStartOrder(sorted), sorted);
    assert.deepEqual(inStartOrder([3, 1, 2].map((start) => ({ start, price: String(start) }))), sorted);
  });
});
