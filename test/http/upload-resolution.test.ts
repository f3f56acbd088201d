/**
 * An upload never overwrites prices it does not describe (docs/operating.md "Importing prices"): a row whose
 * `end` is not where the series' own interval from its start ends, or a file that states another
 * resolution, is refused with 422 `invalid_prices` naming every such row, and nothing is written.
 * Before, the `end` column was ignored: the hourly CSV export of NO1 uploaded back to NO1 (a PT15M
 * series) answered `written: 72`, and each hourly mean replaced the quarter hour at :00.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dayBounds, dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';
/** Yesterday to tomorrow of the harness' day (2026-11-22): no DST change, so 72 hours. */
const RANGE = 'from=2026-11-21&to=2026-11-23';

interface Problem {
  code: string;
  errorCount: number;
  errors: { line: number; reason: string }[];
}

describe('uploads refuse intervals that are not the series’ own', () => {
  let h: Harness;
  let writeKey: string;
  let readKey: string;

  before(async () => {
    h = await createHarness();
    writeKey = (await h.createKey({ scopes: ['write', 'admin'], tier: 'pro' })).key;
    readKey = (await h.createKey({ scopes: ['read'], tier: 'pro' })).key;
  });
  after(() => h.close());

  const read = async (query: string, accept = 'application/json') => {
    const response = await h.app.inject({
      url: `/api/v1/prices?${query}`,
      headers: { 'x-api-key': readKey, accept },
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.body;
  };
  const put = (symbol: string, type: string, payload: string) =>
    h.app.inject({
      method: 'PUT',
      url: `/api/v1/series/${symbol}/prices`,
      headers: { 'x-api-key': writeKey, 'content-type': type },
      payload,
    });
  /** Every stored point of `symbol` from 2026-11-21 through 2026-11-23, Oslo time. */
  const storedRange = (symbol = 'NO1') =>
    h.stores.prices.pricesBetween(
      symbol,
      dayBounds('2026-11-21', ZONE).start,
      dayBounds('2026-11-23', ZONE).end,
    );
  const createSeries = async (symbol: string, resolution: string) => {
    const response = await h.app.inject({
      method: 'PUT',
      url: `/api/v1/series/${symbol}`,
      headers: { 'x-api-key': writeKey, 'content-type': 'application/json' },
      payload: {
        name: symbol,
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: ZONE,
        resolution,
      },
    });
    assert.equal(response.statusCode, 201, response.body);
  };

  test('the hourly CSV export sent to NO1 (PT15M) is a 422 naming all 72 rows; nothing changes', async () => {
    const csv = await read(`${RANGE}&symbols=NO1&resolution=PT1H`, 'text/csv');
    const before = await storedRange();
    const response = await put('NO1', 'text/csv', csv);
    assert.equal(response.statusCode, 422, response.body);
    const problem = response.json() as Problem;
    assert.equal(problem.code, 'invalid_prices');
    assert.equal(problem.errorCount, 72);
    assert.deepEqual(
      problem.errors.map((e) => e.line),
      Array.from({ length: 72 }, (_, i) => i + 2),
    );
    assert.match(
      problem.errors[0]?.reason ?? '',
      /^end 2026-11-21T01:00:00\+01:00 makes an interval of 60 minutes, not one of the PT15M intervals of NO1 \(from this start it ends at 2026-11-21T00:15:00\+01:00\)/,
    );
    assert.deepEqual(await storedRange(), before, 'the quarter hours at :00 keep their prices');
  });

  test('the quarter-hour CSV export goes back to NO1, and the hourly one to a PT1H series', async () => {
    const before = await storedRange();
    const quarters = await put('NO1', 'text/csv', await read(`${RANGE}&symbols=NO1`, 'text/csv'));
    assert.equal(quarters.statusCode, 200, quarters.body);
    assert.deepEqual(quarters.json(), { symbol: 'NO1', written: 288 });
    assert.deepEqual(await storedRange(), before, 'the same prices, written again');

    await createSeries('NO1-HOURLY', 'PT1H');
    const hourly = JSON.parse(await read(`${RANGE}&symbols=NO1&resolution=PT1H`));
    for (const day of hourly.series) day.symbol = 'NO1-HOURLY';
    const response = await put('NO1-HOURLY', 'application/json', JSON.stringify(hourly));
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), { symbol: 'NO1-HOURLY', written: 72 });
  });

  test('the hourly read answer (it states PT1H) is refused point by point, by resolution and by end', async () => {
    const answer = JSON.parse(await read(`${RANGE}&symbols=NO1&resolution=PT1H`));
    const response = await put('NO1', 'application/json', JSON.stringify(answer));
    assert.equal(response.statusCode, 422, response.body);
    const problem = response.json() as Problem;
    assert.equal(problem.errorCount, 72);
    assert.match(
      problem.errors[0]?.reason ?? '',
      /^series\[0\]\.prices\[0\]: the file states resolution PT1H, but NO1 is PT15M/,
    );
    // Without its `end`s it is still refused: the file says what its points are.
    for (const day of answer.series) for (const point of day.prices) delete point.end;
    const stated = await put('NO1', 'application/json', JSON.stringify(answer, null, 2));
    assert.equal(stated.statusCode, 422, stated.body);
    assert.equal((stated.json() as Problem).errorCount, 72);
  });

  test('a resolution stated after its prices still refuses the file, at that line', async () => {
    const [first] = dayIntervals('2026-11-21', ZONE, 'PT1H');
    const start = formatInstant(first?.start ?? 0, ZONE);
    const body = `{"series": [{"symbol": "NO1",\n"prices": [{"start": "${start}", "price": 1}],\n"resolution": "PT1H"}]}`;
    const before = await storedRange();
    const response = await put('NO1', 'application/json', body);
    assert.equal(response.statusCode, 422, response.body);
    assert.deepEqual((response.json() as Problem).errors, [
      {
        line: 3,
        reason:
          'series[0].resolution: the file states resolution PT1H, but NO1 is PT15M: upload it to a series of that resolution',
      },
    ]);
    assert.deepEqual(await storedRange(), before);
  });

  test('JSON Lines and JSON arrays with an hour-long `end` are refused row by row; right ends and no ends pass', async () => {
    const quarters = dayIntervals('2026-11-22', ZONE, 'PT15M').slice(0, 8);
    const at = (ms: number) => formatInstant(ms, ZONE);
    const lines = quarters.map((q, i) =>
      JSON.stringify({
        start: at(q.start),
        ...(i % 4 === 0 ? { end: at(q.start + 3_600_000) } : i % 4 === 1 ? { end: at(q.end) } : {}),
        price: i,
      }),
    );
    const before = await storedRange();
    const ndjson = await put('NO1', 'application/x-ndjson', `${lines.join('\n')}\n`);
    assert.equal(ndjson.statusCode, 422, ndjson.body);
    assert.deepEqual(
      (ndjson.json() as Problem).errors.map((e) => e.line),
      [1, 5],
    );
    const array = await put('NO1', 'application/json', `[\n${lines.join(',\n')}\n]`);
    assert.equal(array.statusCode, 422, array.body);
    assert.deepEqual(
      (array.json() as Problem).errors.map((e) => e.reason.split(':')[0]),
      ['[0]', '[4]'],
    );
    assert.deepEqual(await storedRange(), before);
    const good = lines.filter((_, i) => i % 4 !== 0);
    const fine = await put('NO1', 'application/x-ndjson', `${good.join('\n')}\n`);
    assert.equal(fine.statusCode, 200, fine.body);
    assert.deepEqual(fine.json(), { symbol: 'NO1', written: 6 });
  });

  test('an interval is real elapsed time: over the autumn DST change an hour ends one hour later', async () => {
    await createSeries('OSLO-1H', 'PT1H');
    const hours = dayIntervals('2026-10-25', ZONE, 'PT1H');
    assert.equal(hours.length, 25);
    const at = (ms: number) => formatInstant(ms, ZONE);
    const csv = ['start,end,price', ...hours.map((i, n) => `${at(i.start)},${at(i.end)},${n}`)];
    const whole = await put('OSLO-1H', 'text/csv', `${csv.join('\n')}\n`);
    assert.equal(whole.statusCode, 200, whole.body);
    assert.deepEqual(whole.json(), { symbol: 'OSLO-1H', written: 25 });
    // 02:00+02:00 to 03:00+01:00 reads as one hour on the wall clock, but two hours pass.
    const wallClock = await put(
      'OSLO-1H',
      'text/csv',
      'start,end,price\n2026-10-25T02:00:00+02:00,2026-10-25T03:00:00+01:00,1\n',
    );
    assert.equal(wallClock.statusCode, 422, wallClock.body);
    assert.match((wallClock.json() as Problem).errors[0]?.reason ?? '', /makes an interval of 120 minutes/);

    await createSeries('OSLO-DAY', 'P1D');
    const day = dayBounds('2026-10-25', ZONE);
    const long = await put('OSLO-DAY', 'text/csv', `start,end,price\n${at(day.start)},${at(day.end)},7\n`);
    assert.equal(long.statusCode, 200, `a 25-hour day is one P1D interval: ${long.body}`);
    const short = await put(
      'OSLO-DAY',
      'text/csv',
      `start,end,price\n${at(day.start)},${at(day.start + 86_400_000)},7\n`,
    );
    assert.equal(short.statusCode, 422, short.body);
  });

  test('an `end` that is no timestamp is a bad row', async () => {
    const response = await put('NO1', 'text/csv', 'start,end,price\n2026-11-22T00:00:00+01:00,soon,1\n');
    assert.equal(response.statusCode, 422, response.body);
    assert.deepEqual((response.json() as Problem).errors, [
      { line: 2, reason: 'end "soon" is not an RFC 3339 timestamp with Z or an offset' },
    ]);
  });
});
