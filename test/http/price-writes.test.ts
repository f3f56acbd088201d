/**
 * `PUT /api/v1/series/{symbol}/prices` (docs/operating.md "Importing prices"): JSON and CSV bodies, all or
 * nothing, every bad row named with its line, idempotent, and served at once by the read endpoints.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { dayBounds, dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import type { StoredPrice } from '../../src/stores/types.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const PATH = '/api/v1/series/NO1/prices';
const ZONE = 'Europe/Oslo';

interface Problem {
  code: string;
  status: number;
  errorCount?: number;
  errors?: { line: number; reason: string }[];
}

/** The quarter-hour starts of a local day of NO1, written with the offset in force. */
function quarterHours(date: string): string[] {
  return dayIntervals(date, ZONE, 'PT15M').map((i) => formatInstant(i.start, ZONE));
}

describe('PUT /api/v1/series/{symbol}/prices', () => {
  let h: Harness;
  let writeKey: string;
  let readKey: string;
  let adminKey: string;

  before(async () => {
    h = await createHarness();
    writeKey = (await h.createKey({ scopes: ['write'], tier: 'pro' })).key;
    readKey = (await h.createKey({ scopes: ['read'], tier: 'pro' })).key;
    adminKey = (await h.createKey({ scopes: ['admin'], tier: 'pro' })).key;
  });
  after(() => h.close());

  function put(payload: string, type: string, options: { key?: string; path?: string } = {}) {
    return h.app.inject({
      method: 'PUT',
      url: options.path ?? PATH,
      headers: { 'x-api-key': options.key ?? writeKey, 'content-type': type },
      payload,
    });
  }

  /** Every stored point of NO1 on a local day. */
  function stored(date: string): Promise<StoredPrice[]> {
    const { start, end } = dayBounds(date, ZONE);
    return h.stores.prices.pricesBetween('NO1', start, end);
  }

  async function today(): Promise<{ start: string; price: number }[]> {
    const response = await h.app.inject({
      url: '/api/v1/prices/today?symbols=NO1',
      headers: { 'x-api-key': readKey },
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().series[0].prices;
  }

  describe('happy cases', () => {
    test('a CSV body upserts its points, and GET /prices/today serves them at once', async () => {
      const [first, second] = quarterHours('2026-11-22');
      await today(); // a read before the write: nothing may keep serving it
      const response = await put(`start,price\r\n${first},12.5\r\n${second},-0.75\r\n`, 'text/csv');
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), { symbol: 'NO1', written: 2 });
      const served = await today();
      assert.equal(served.length, 96);
      assert.deepEqual(
        served.slice(0, 2).map((p) => [p.start, p.price]),
        [
          [first, 12.5],
          [second, -0.75],
        ],
      );
    });

    test('a JSON body, one point per line, keeps prices exactly as written (41.270 stays 41.270)', async () => {
      const [, , third, fourth] = quarterHours('2026-11-22');
      const body = `{"start":"${third}","price":41.270}\n{"symbol":"no1","start":"${fourth}","price":"7"}\n`;
      const response = await put(body, 'application/json; charset=utf-8');
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().written, 2);
      const response2 = await h.app.inject({
        url: '/api/v1/prices/today?symbols=NO1',
        headers: { 'x-api-key': readKey },
      });
      assert.ok(
        response2.body.includes(`"start":"${third}","end":"${fourth}","price":41.270}`),
        response2.body,
      );
    });

    test('a JSON array written one point per line imports as well', async () => {
      const [a, b] = quarterHours('2026-11-21');
      const body = `[\n  {"start":"${a}","price":1},\n  {"start":"${b}","price":2}\n]\n`;
      const response = await put(body, 'application/json');
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().written, 2);
    });

    test('the CSV the API serves imports as is and changes nothing', async () => {
      const before = await stored('2026-11-22');
      const csv = await h.app.inject({
        url: '/api/v1/prices/today?symbols=NO1&format=csv',
        headers: { 'x-api-key': readKey },
      });
      assert.equal(csv.statusCode, 200);
      const response = await put(csv.body, 'text/csv');
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().written, 96);
      assert.deepEqual(await stored('2026-11-22'), before);
    });

    test('importing the same body twice changes nothing; a new value replaces the old one', async () => {
      const starts = quarterHours('2026-11-20');
      const body = `start,price\n${starts.map((s, i) => `${s},${i}.5`).join('\n')}\n`;
      assert.equal((await put(body, 'text/csv')).statusCode, 200);
      const once = await stored('2026-11-20');
      assert.equal((await put(body, 'text/csv')).statusCode, 200);
      assert.deepEqual(await stored('2026-11-20'), once);
      assert.equal((await put(`start,price\n${starts[5]},99.99\n`, 'text/csv')).statusCode, 200);
      const after = await stored('2026-11-20');
      assert.equal(after.length, 96);
      assert.equal(after[5]?.price, '99.99');
      assert.deepEqual(
        after.filter((_, i) => i !== 5),
        once.filter((_, i) => i !== 5),
      );
    });

    test('the DST day in Europe/Oslo takes 100 quarter hours, the repeated hour told apart by its offset', async () => {
      const starts = quarterHours('2026-10-25');
      assert.equal(starts.length, 100);
      assert.ok(starts.includes('2026-10-25T02:00:00+02:00'), 'first 02:00');
      assert.ok(starts.includes('2026-10-25T02:00:00+01:00'), 'repeated 02:00');
      const body = `start,price\n${starts.map((s, i) => `${s},${i}`).join('\n')}\n`;
      const response = await put(body, 'text/csv');
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().written, 100);
      const points = await stored('2026-10-25');
      assert.deepEqual(
        points.map((p) => p.price),
        starts.map((_, i) => String(i)),
      );
    });

    test('an admin key may write too', async () => {
      const [a] = quarterHours('2026-11-19');
      const response = await put(`start,price\n${a},1\n`, 'text/csv', { key: adminKey });
      assert.equal(response.statusCode, 200, response.body);
    });
  });

  describe('bad rows', () => {
    test('every kind of bad row is named with its line, and nothing of the batch is written', async () => {
      const day = quarterHours('2026-11-18');
      const before = await stored('2026-11-18');
      const rows = [
        'symbol,start,price,currency,unit', // line 1
        `NO1,${day[0]},10,EUR,MWh`, // 2: good
        `NO1,${day[1]},11,EUR,MWh`, // 3: good
        'NO1,2026-11-18T00:07:00+01:00,1,EUR,MWh', // 4: off the grid
        'NO1,2026-11-18 00:30,1,EUR,MWh', // 5: not RFC 3339
        'NO1,2026-11-18T00:30:00,1,EUR,MWh', // 6: no offset
        `NO1,${day[2]},1e3,EUR,MWh`, // 7: exponent
        `NO1,${day[3]},1.2345678901234567,EUR,MWh`, // 8: too many digits
        `NO1,${day[4]},,EUR,MWh`, // 9: empty price
        `DE-LU,${day[5]},1,EUR,MWh`, // 10: another series than the path names
        `NO1,${day[0]},12,EUR,MWh`, // 11: the interval of line 2 again
        `NO1,${day[6]},1,USD,MWh`, // 12: wrong currency
        `NO1,${day[7]},1,EUR`, // 13: a field missing
        `NO1,${day[8]},abc,EUR,MWh`, // 14: not a number
        `NO1,${formatInstant(Date.parse(day[1] ?? ''), 'UTC').replace('+00:00', 'Z')},13,EUR,MWh`, // 15: line 3 in UTC
        `NO1,${day[9]},+5,EUR,MWh`, // 16: leading plus
      ];
      const response = await put(`${rows.join('\n')}\n`, 'text/csv');
      assert.equal(response.statusCode, 422, response.body);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      const problem = response.json() as Problem;
      assert.equal(problem.code, 'invalid_prices');
      assert.deepEqual(
        problem.errors?.map((e) => e.line),
        [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
      );
      assert.equal(problem.errorCount, 13);
      const reasons = new Map(problem.errors?.map((e) => [e.line, e.reason]));
      const expect: [number, RegExp][] = [
        [4, /not on the PT15M grid of NO1 in Europe\/Oslo/],
        [5, /not an RFC 3339 timestamp/],
        [6, /not an RFC 3339 timestamp/],
        [7, /not a plain decimal/],
        [8, /17 significant digits/],
        [9, /price is empty/],
        [10, /DE-LU is not the series of this request \(NO1\)/],
        [11, /already in this import/],
        [12, /currency USD is not the currency of NO1 \(EUR\)/],
        [13, /has 4 fields; the header has 5/],
        [14, /"abc" is not a plain decimal/],
        [15, /already in this import/],
        [16, /"\+5" is not a plain decimal/],
      ];
      for (const [line, pattern] of expect)
        assert.match(reasons.get(line) ?? '(none)', pattern, `line ${line}`);
      assert.deepEqual(await stored('2026-11-18'), before);
    });

    test('JSON rows are named by line too: broken JSON, unknown fields, wrong types', async () => {
      const day = quarterHours('2026-11-18');
      const before = await stored('2026-11-18');
      const body = [
        `{"start":"${day[0]}","price":1}`,
        `{"start":"${day[1]}","price":1`,
        `{"start":"${day[2]}","price":1,"colour":"red"}`,
        `{"start":"${day[3]}","price":true}`,
        `{"start":"${day[4]}","price":1e400}`,
        '',
        `{"start":"${day[5]}"}`,
      ].join('\n');
      // As JSON Lines each line is read on its own; application/json would stop at line 2's break.
      const response = await put(body, 'application/x-ndjson');
      assert.equal(response.statusCode, 422, response.body);
      const problem = response.json() as Problem;
      assert.deepEqual(
        problem.errors?.map((e) => e.line),
        [2, 3, 4, 5, 7],
      );
      assert.match(problem.errors?.[1]?.reason ?? '', /unknown field "colour"/);
      assert.match(problem.errors?.[4]?.reason ?? '', /price is missing/);
      assert.deepEqual(await stored('2026-11-18'), before);
    });

    test('at most 100 bad rows are listed; errorCount counts them all', async () => {
      const body = `start,price\n${Array.from({ length: 150 }, () => 'nope,1').join('\n')}\n`;
      const response = await put(body, 'text/csv');
      assert.equal(response.statusCode, 422);
      const problem = response.json() as Problem;
      assert.equal(problem.errors?.length, 100);
      assert.equal(problem.errorCount, 150);
      assert.equal(problem.errors?.[99]?.line, 101);
    });

    test('an unknown column refuses the whole body at line 1', async () => {
      const response = await put('start,price,colour\n2026-11-18T00:00:00+01:00,1,red\n', 'text/csv');
      assert.equal(response.statusCode, 422);
      const problem = response.json() as Problem;
      assert.equal(problem.errors?.[0]?.line, 1);
      assert.match(problem.errors?.[0]?.reason ?? '', /unknown column "colour"/);
    });
  });

  describe('errors and security', () => {
    test('an unknown series in the path is 404 unknown_series', async () => {
      const response = await put('start,price\n', 'text/csv', { path: '/api/v1/series/NOPE/prices' });
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().code, 'unknown_series');
      assert.deepEqual(response.json().symbols, ['NOPE']);
    });

    test('a media type other than JSON or CSV is 415 unsupported_media_type', async () => {
      for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
        const response = await put('start,price\n', type);
        assert.equal(response.statusCode, 415, `${type}: ${response.body}`);
        assert.equal(response.json().code, 'unsupported_media_type');
      }
    });

    test('a body over 16 MiB is 413 payload_too_large and writes nothing', async () => {
      const before = await stored('2026-11-17');
      const [a] = quarterHours('2026-11-17');
      const body = `start,price\n${a},1\n${'x'.repeat(17 * 1024 * 1024)}\n`;
      const response = await put(body, 'text/csv');
      assert.equal(response.statusCode, 413, response.body.slice(0, 300));
      assert.equal(response.json().code, 'payload_too_large');
      assert.deepEqual(await stored('2026-11-17'), before);
    });

    test('a streamed body without a length is cut off at 16 MiB: 413, nothing written', async () => {
      const before = await stored('2026-11-16');
      const [a] = quarterHours('2026-11-16');
      async function* body() {
        yield `start,price\n${a},1\n`;
        const filler = `${'0'.repeat(1023)}\n`.repeat(1024); // 1 MiB of lines
        for (let i = 0; i < 17; i++) yield filler;
      }
      const response = await h.app.inject({
        method: 'PUT',
        url: PATH,
        headers: { 'x-api-key': writeKey, 'content-type': 'text/csv' },
        payload: Readable.from(body()),
      });
      assert.equal(response.statusCode, 413, response.body.slice(0, 300));
      assert.equal(response.json().code, 'payload_too_large');
      assert.deepEqual(await stored('2026-11-16'), before);
    });

    test('a read key gets 403 insufficient_scope; no key gets 401', async () => {
      const [a] = quarterHours('2026-11-17');
      const before = await stored('2026-11-17');
      const refused = await put(`start,price\n${a},1\n`, 'text/csv', { key: readKey });
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().code, 'insufficient_scope');
      const anonymous = await h.app.inject({
        method: 'PUT',
        url: PATH,
        headers: { 'content-type': 'text/csv' },
        payload: `start,price\n${a},1\n`,
      });
      assert.equal(anonymous.statusCode, 401);
      assert.deepEqual(await stored('2026-11-17'), before);
    });
  });
});
