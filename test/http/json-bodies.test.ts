/**
 * Price uploads with the JSON bodies any HTTP client writes (docs/operating.md "Importing prices"): what
 * `JSON.stringify` makes of an array of points or of `{prices}`, pretty-printed or compact, and the
 * read answer sent back as it came. Prices keep their source text, a bad point is named by its path
 * and line, and a body with one bad point writes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dayBounds, dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import type { StoredPrice } from '../../src/stores/types.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';

interface Problem {
  code: string;
  errorCount?: number;
  errors?: { line: number; reason: string }[];
}

function quarterHours(date: string): string[] {
  return dayIntervals(date, ZONE, 'PT15M').map((i) => formatInstant(i.start, ZONE));
}

describe('JSON documents as price uploads', () => {
  let h: Harness;
  let writeKey: string;
  let readKey: string;

  before(async () => {
    h = await createHarness();
    writeKey = (await h.createKey({ scopes: ['write'], tier: 'pro' })).key;
    readKey = (await h.createKey({ scopes: ['read'], tier: 'pro' })).key;
  });
  after(() => h.close());

  function put(payload: string, type = 'application/json', symbol = 'NO1') {
    return h.app.inject({
      method: 'PUT',
      url: `/api/v1/series/${symbol}/prices`,
      headers: { 'x-api-key': writeKey, 'content-type': type },
      payload,
    });
  }

  function stored(date: string): Promise<StoredPrice[]> {
    const { start, end } = dayBounds(date, ZONE);
    return h.stores.prices.pricesBetween('NO1', start, end);
  }

  /** The read answer of NO1 on `date`, as its text. */
  async function readAnswer(date: string): Promise<string> {
    const response = await h.app.inject({
      url: `/api/v1/prices/${date}?symbols=NO1`,
      headers: { 'x-api-key': readKey },
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.body;
  }

  function problemOf(response: Awaited<ReturnType<typeof put>>): Problem {
    assert.equal(response.statusCode, 422, response.body);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    const problem = response.json() as Problem;
    assert.equal(problem.code, 'invalid_prices');
    return problem;
  }

  test('JSON.stringify of an array of points writes every point, and 41.270 is served as 41.270', async () => {
    const starts = quarterHours('2031-01-10');
    const points = starts.map((start, i) => ({ start, price: i + 0.5 }));
    const response = await put(JSON.stringify(points));
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), { symbol: 'NO1', written: 96 });
    assert.deepEqual(
      (await stored('2031-01-10')).map((p) => p.price),
      starts.map((_, i) => `${i}.5`),
    );

    // JSON.stringify cannot write 41.270; a client that writes JSON text itself can, and it stays.
    const exact = `[{"start":"${starts[0]}","price":41.270},{"start":"${starts[1]}","price":-0.10}]`;
    assert.equal((await put(exact)).statusCode, 200);
    const served = await readAnswer('2031-01-10');
    assert.ok(served.includes('"price":41.270'), served.slice(0, 400));
    assert.ok(served.includes('"price":-0.10'), served.slice(0, 400));
  });

  test('JSON.stringify of {prices} writes its points', async () => {
    const prices = quarterHours('2031-01-11').map((start, i) => ({ start, price: i }));
    const response = await put(JSON.stringify({ prices }));
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().written, 96);
  });

  test('a pretty-printed array of 2 points writes 2 points', async () => {
    const [a, b] = quarterHours('2031-01-12');
    const body = JSON.stringify(
      [
        { start: a, price: 1.25 },
        { start: b, price: 2.5 },
      ],
      null,
      2,
    );
    assert.ok(body.split('\n').length >= 10, 'pretty-printed over many lines');
    const response = await put(body);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().written, 2);
    assert.deepEqual(
      (await stored('2031-01-12')).map((p) => p.price),
      ['1.25', '2.5'],
    );
  });

  test('the read answer sent back as it came leaves the same prices served', async () => {
    const prices = quarterHours('2031-01-13').map((start, i) => ({ start, price: (i * 7) % 13 }));
    assert.equal((await put(JSON.stringify(prices))).statusCode, 200);
    const answer = await readAnswer('2031-01-13');
    assert.match(answer, /"generatedAt"/);
    const before = await stored('2031-01-13');

    const response = await put(answer);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().written, 96);
    assert.deepEqual(await stored('2031-01-13'), before);
    const again = JSON.parse(await readAnswer('2031-01-13')) as { series: unknown[] };
    assert.deepEqual(again.series, (JSON.parse(answer) as { series: unknown[] }).series);

    // Pretty-printed, as a person saves it from a browser, it is the same document.
    const pretty = await put(JSON.stringify(JSON.parse(answer), null, 2));
    assert.equal(pretty.statusCode, 200, pretty.body);
    assert.equal(pretty.json().written, 96);
  });

  test('a read answer of another series is 422 at its symbol and writes nothing', async () => {
    const before = await stored('2031-01-13');
    const answer = (await readAnswer('2031-01-13')).replace(/"symbol":"NO1"/, '"symbol":"DE-LU"');
    const problem = problemOf(await put(answer));
    assert.equal(problem.errorCount, 1);
    assert.deepEqual(problem.errors, [
      { line: 1, reason: 'series[0].symbol: symbol DE-LU is not the series of this request (NO1)' },
    ]);
    assert.deepEqual(await stored('2031-01-13'), before);
  });

  test('a bad point is named by its index and line; nothing of the body is written', async () => {
    const starts = quarterHours('2031-01-14');
    const points: unknown[] = starts.slice(0, 5).map((start) => ({ start, price: 3 }));
    points[2] = { start: starts[2], price: '1e3' };
    points[4] = { start: 'noon', price: 1 };
    const problem = problemOf(await put(JSON.stringify(points)));
    assert.deepEqual(
      problem.errors?.map((e) => [e.line, e.reason.split(':')[0]]),
      [
        [1, '[2]'],
        [1, '[4]'],
      ],
    );
    assert.match(problem.errors?.[1]?.reason ?? '', /start "noon" is not an RFC 3339 timestamp/);

    // Pretty-printed, each point's line is where its `{` is.
    const pretty = problemOf(await put(JSON.stringify({ prices: points }, null, 2)));
    assert.deepEqual(
      pretty.errors?.map((e) => [e.line, e.reason.split(':')[0]]),
      [
        [11, 'prices[2]'],
        [19, 'prices[4]'],
      ],
    );
    assert.deepEqual(await stored('2031-01-14'), [], 'all or nothing');
  });

  test('broken JSON is 422 at the line where it breaks, after the bad points before it', async () => {
    const [a, b] = quarterHours('2031-01-15');
    const body = `[\n{"start":"${a}","price":true},\n{"start":"${b}","price":1}\n{"start":"${b}"}\n]`;
    const problem = problemOf(await put(body));
    assert.deepEqual(problem.errors, [
      { line: 2, reason: '[0]: field "price" must be a number' },
      { line: 4, reason: "is not valid JSON (expected ',')" },
    ]);
    assert.deepEqual(await stored('2031-01-15'), []);
  });

  test('JSON Lines still import: as application/x-ndjson, application/jsonl, and as application/json', async () => {
    const starts = quarterHours('2031-01-16');
    const lines = (from: number) =>
      starts
        .slice(from, from + 3)
        .map((start) => `{"start":"${start}","price":4.10}`)
        .join('\n');
    for (const [type, from] of [
      ['application/x-ndjson', 0],
      ['application/jsonl; charset=utf-8', 3],
      ['application/json', 6],
    ] as const) {
      const response = await put(`${lines(from)}\n`, type);
      assert.equal(response.statusCode, 200, `${type}: ${response.body}`);
      assert.equal(response.json().written, 3, type);
    }
    assert.deepEqual(
      (await stored('2031-01-16')).map((p) => p.price),
      Array.from({ length: 9 }, () => '4.10'),
    );
  });

  test('a 415 names the media types a price upload takes', async () => {
    const response = await put('[]', 'text/plain');
    assert.equal(response.statusCode, 415, response.body);
    const { detail } = response.json() as { detail: string };
    for (const type of ['application/json', 'application/x-ndjson', 'application/jsonl', 'text/csv']) {
      assert.ok(detail.includes(type), `${type} in: ${detail}`);
    }
  });
});
