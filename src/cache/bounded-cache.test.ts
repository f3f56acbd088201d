/** The bounded cache: what it keeps, what it pushes out first, and how it counts weight. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { boundedCache } from './bounded-cache.js';

describe('boundedCache: bounded in entries', () => {
  test('past maxEntries the least recently used entry goes first; a get counts as a use', () => {
    const cache = boundedCache<string, number>({ maxEntries: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1, 'a is now the most recently used');
    cache.set('c', 3);
    assert.deepEqual([cache.has('a'), cache.has('b'), cache.has('c')], [true, false, true]);
    assert.equal(cache.size, 2);
  });

  test('peek reads without counting as a use', () => {
    const cache = boundedCache<string, number>({ maxEntries: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.peek('a'), 1);
    cache.set('c', 3);
    assert.equal(cache.has('a'), false, 'a was still the least recently used');
  });

  test('deleteWhere drops exactly the entries it picks and says how many', () => {
    const cache = boundedCache<string, { tags: string[] }>({ maxEntries: 10 });
    cache.set('NO1|d1', { tags: ['NO1'] });
    cache.set('NO1+SE3|d1', { tags: ['NO1', 'SE3'] });
    cache.set('SE3|d1', { tags: ['SE3'] });
    assert.equal(
      cache.deleteWhere((value) => value.tags.includes('NO1')),
      2,
    );
    assert.deepEqual(
      [cache.has('NO1|d1'), cache.has('NO1+SE3|d1'), cache.has('SE3|d1')],
      [false, false, true],
    );
  });

  test('clear and delete empty it', () => {
    const cache = boundedCache<string, number>({ maxEntries: 0 });
    assert.equal(cache.set('a', 1), true, 'at least one entry is always kept');
    assert.equal(cache.delete('a'), true);
    assert.equal(cache.delete('a'), false);
    cache.set('b', 2);
    cache.clear();
    assert.equal(cache.size, 0);
  });
});

describe('boundedCache: bounded in weight', () => {
  const weighed = () =>
    boundedCache<string, string>({ maxEntries: 100, maxWeight: 10, weigh: (value) => value.length });

  test('past maxWeight the least recently used entries go until the rest fits', () => {
    const cache = weighed();
    cache.set('a', 'xxxx');
    cache.set('b', 'xxxx');
    cache.set('c', 'xxxx');
    assert.deepEqual([cache.has('a'), cache.has('b'), cache.has('c')], [false, true, true]);
    assert.equal(cache.weight, 8);
  });

  test('an entry heavier than the whole budget is refused, and the older value under its key dropped', () => {
    const cache = weighed();
    cache.set('a', 'xx');
    cache.set('b', 'xx');
    assert.equal(cache.set('a', 'x'.repeat(11)), false);
    assert.equal(cache.get('a'), undefined, 'no stale value stays behind the refused one');
    assert.equal(cache.get('b'), 'xx', 'the others stay');
    assert.equal(cache.weight, 2);
  });

  test('an entry set again is weighed again, even as the same object', () => {
    const cache = boundedCache<string, { bytes: number }>({
      maxEntries: 10,
      maxWeight: 100,
      weigh: (value) => value.bytes,
    });
    const answer = { bytes: 10 };
    cache.set('k', answer);
    answer.bytes = 60; // a compressed body was added to the same answer
    cache.set('k', answer);
    assert.equal(cache.weight, 60);
  });

  test('weights are whole and at least 1, whatever weigh answers', () => {
    const cache = boundedCache<string, number>({ maxEntries: 10, maxWeight: 100, weigh: (n) => n });
    cache.set('zero', 0);
    cache.set('half', 2.5);
    assert.equal(cache.weight, 1 + 3);
  });

  test('weigh without maxWeight counts the weight and bounds only entries', () => {
    const cache = boundedCache<string, string>({ maxEntries: 2, weigh: (value) => value.length });
    cache.set('a', 'x'.repeat(1_000));
    cache.set('b', 'x'.repeat(2_000));
    assert.equal(cache.weight, 3_000);
    cache.set('c', 'x');
    assert.equal(cache.weight, 2_001);
  });

  test('maxWeight without weigh, or below 1, is refused at once', () => {
    assert.throws(() => boundedCache<string, string>({ maxEntries: 1, maxWeight: 10 }), /needs weigh/);
    assert.throws(
      () => boundedCache<string, string>({ maxEntries: 1, maxWeight: 0, weigh: () => 1 }),
      /at least 1/,
    );
  });
});
