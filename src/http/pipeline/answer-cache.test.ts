import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type AnswerContent, answerKey, createAnswerCache } from './answer-cache.js';

function content(body: string, tags: readonly string[] = ['NO1'], validUntil = 1_000): AnswerContent {
  return {
    etag: '"e"',
    maxAge: 60,
    type: 'application/json',
    body: Buffer.from(body),
    tags,
    validUntil,
    route: '/r',
  };
}

describe('answer cache', () => {
  test('serves a kept answer until it is no longer valid', () => {
    const cache = createAnswerCache({ maxBytes: 1_000_000 });
    const key = answerKey('free', undefined, '/api/v1/prices/today?symbols=NO1');
    cache.keep(key, content('{"a":1}', ['NO1'], 100), 0);
    assert.equal(cache.get(key, 99)?.body.toString(), '{"a":1}');
    assert.equal(cache.get(key, 100), undefined);
    assert.equal(cache.size, 0);
  });

  test('20,000 distinct URLs hold at most maxEntries answers and maxBytes of keys and bodies', () => {
    const cache = createAnswerCache({ maxBytes: 2_000_000, maxEntries: 1_000 });
    for (let i = 0; i < 20_000; i++) {
      cache.keep(
        answerKey('free', undefined, `/api/v1/prices/today?tz=${'x'.repeat(i % 500)}&i=${i}`),
        content('{}'),
        0,
      );
      assert.ok(
        cache.size <= 1_000 && cache.bytes <= 2_000_000,
        `${cache.size} answers, ${cache.bytes} bytes`,
      );
    }
    const small = createAnswerCache({ maxBytes: 100_000 });
    for (let i = 0; i < 20_000; i++) small.keep(`/long-url-${'y'.repeat(1_000)}-${i}`, content('{}'), 0);
    assert.ok(small.bytes <= 100_000, `${small.bytes} bytes`);
    assert.ok(small.size < 100, `${small.size} answers: long keys count against the bytes`);
  });

  test('past its bound the least recently served answer goes first', () => {
    const cache = createAnswerCache({ maxBytes: 1_000_000, maxEntries: 3 });
    for (const key of ['a', 'b', 'c']) cache.keep(key, content(key), 0);
    cache.get('a', 0);
    cache.keep('d', content('d'), 0);
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((key) => cache.get(key, 0) !== undefined),
      [true, false, true, true],
    );
  });

  test('a compressed body counts against the bytes once it is made', async () => {
    const cache = createAnswerCache({ maxBytes: 1_000_000 });
    const answer = cache.keep('k', content(JSON.stringify({ prices: Array(500).fill(41.27) })), 0);
    const before = cache.bytes;
    const gzip = await cache.encoded(answer, 'gzip');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(cache.bytes, before + gzip.length);
    assert.equal(cache.get('k', 0), answer, 'the same answer, still kept');
  });

  test('forget drops every answer holding a changed series and every all-series answer', () => {
    const cache = createAnswerCache({ maxBytes: 1_000_000 });
    cache.keep('no1', content('1', ['NO1']), 0);
    cache.keep('de', content('2', ['DE-LU']), 0);
    cache.keep('all', content('3', ['*']), 0);
    cache.forget(['NO1']);
    assert.deepEqual(
      ['no1', 'de', 'all'].map((key) => cache.get(key, 0) !== undefined),
      [false, true, false],
    );
  });
});
