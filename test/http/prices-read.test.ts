/**
 * The read endpoints beyond today: `/prices/{date}`, `/prices?from=&to=`,
 * `/prices/latest` and `resolution`, over the development data set with an injected clock.
 * Now is Sunday 2026-11-22T10:15:03Z, 11:15 in Oslo.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEV_SERIES, devDay } from '../../src/dev-data/dev-data.js';
import { decimalMean } from '../../src/domain/prices/aggregate.js';
import { dayIntervals } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

interface Day {
  symbol: string;
  resolution: string;
  timezone: string;
  date: string;
  prices: { start: string; end: string; price: number }[];
}

const no1 = DEV_SERIES.find((s) => s.symbol === 'NO1')!;

function get(h: Harness, url: string, key = h.demoKey) {
  return h.app.inject({ url, headers: { 'x-api-key': key } });
}

async function days(h: Harness, url: string, key?: string): Promise<Day[]> {
  const response = await get(h, url, key);
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { series: Day[] }).series;
}

function problem(response: { statusCode: number; body: string }, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  const body = JSON.parse(response.body) as { code: string; parameter?: string; detail: string };
  assert.equal(body.code, code, response.body);
  return body;
}

describe('GET /api/v1/prices/{date}', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
  });
  after(() => h.close());

  test('a date gives that local day with the stored prices, exactly', async () => {
    const [day] = await days(h, '/api/v1/prices/2026-11-20?symbols=NO1');
    assert.equal(day?.date, '2026-11-20');
    const expected = devDay(no1, '2026-11-20');
    assert.equal(day?.prices.length, 96);
    assert.deepEqual(
      day?.prices.map((p) => String(p.price)),
      expected.map((p) => String(Number(p.price))),
    );
    assert.equal(day?.prices[0]?.start, '2026-11-20T00:00:00+01:00');
  });

  test('today, tomorrow and yesterday are days relative to each series', async () => {
    const named = async (name: string) => (await days(h, `/api/v1/prices/${name}?symbols=NO1`))[0]?.date;
    assert.equal(await named('today'), '2026-11-22');
    assert.equal(await named('tomorrow'), '2026-11-23');
    assert.equal(await named('yesterday'), '2026-11-21');
    assert.equal(await named('Tomorrow'), '2026-11-23');
    const today = await get(h, '/api/v1/prices/today?symbols=NO1');
    const alsoToday = await get(h, '/api/v1/prices/2026-11-22?symbols=NO1');
    assert.equal(
      alsoToday.headers.etag,
      today.headers.etag,
      'the same day by name and by date is the same answer',
    );
  });

  test('tomorrow before it is published is an empty list, not an error', async () => {
    const series = await days(h, '/api/v1/prices/tomorrow?symbols=NO1,EURUSD,BTC-USD');
    assert.deepEqual(
      series.map((s) => [s.symbol, s.date, s.prices.length]),
      [
        ['NO1', '2026-11-23', 96],
        ['EURUSD', '2026-11-23', 0],
        ['BTC-USD', '2026-11-23', 0],
      ],
    );
  });

  test('a malformed or impossible date is a 400 naming the path segment', async () => {
    for (const bad of ['2026-02-30', '2026-13-01', '20261120', 'someday', '1899-12-31', '2200-01-01']) {
      const body = problem(await get(h, `/api/v1/prices/${bad}`), 400, 'invalid_parameter');
      assert.equal(body.parameter, 'date', bad);
    }
  });

  test('a day that does not exist in its month is named as such, with the days the month has', async () => {
    const november = problem(await get(h, '/api/v1/prices/2026-11-31'), 400, 'invalid_parameter');
    assert.equal(
      november.detail,
      'The path segment "date" names a day that does not exist: November 2026 has 30 days.',
    );
    const range = problem(
      await get(h, '/api/v1/prices?from=2026-02-29&to=2026-03-01'),
      400,
      'invalid_parameter',
    );
    assert.equal(range.parameter, 'from');
    assert.match(String(range.detail), /does not exist: February 2026 has 28 days/);
  });

  test('a day before the tier history is 403 outside_tier_history; the last day inside it is served', async () => {
    // The demo tier reads 31 days back.
    assert.equal((await days(h, '/api/v1/prices/2026-10-22?symbols=NO1'))[0]?.prices.length, 96);
    problem(await get(h, '/api/v1/prices/2026-10-21?symbols=NO1'), 403, 'outside_tier_history');
  });

  test('a far future day is served empty', async () => {
    const [day] = await days(h, '/api/v1/prices/2199-12-31?symbols=NO1');
    assert.deepEqual(day?.prices, []);
  });

  test('unknown parameters and unknown series are refused by name', async () => {
    const unknown = problem(await get(h, '/api/v1/prices/2026-11-20?colour=red'), 400, 'invalid_parameter');
    assert.equal(unknown.parameter, 'colour');
    const series = problem(await get(h, '/api/v1/prices/2026-11-20?symbols=NO1,NOPE'), 404, 'unknown_series');
    assert.match(series.detail, /NOPE/);
  });

  test('a format that does not exist is a 400 that names the parameter and both formats', async () => {
    const body = problem(await get(h, '/api/v1/prices/2026-11-20?format=xml'), 400, 'invalid_parameter');
    assert.equal(body.parameter, 'format', 'the parameter at fault');
    assert.equal(
      body.detail,
      'The parameter "format" must be one of json, csv.',
      'the allowed values, named',
    );
  });
});

describe('GET /api/v1/prices?from=&to=', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
  });
  after(() => h.close());

  test('one entry per series and day, inclusive, ordered by series then date', async () => {
    const series = await days(h, '/api/v1/prices?from=2026-11-20&to=2026-11-22&symbols=NO1,EURUSD');
    assert.deepEqual(
      series.map((s) => `${s.symbol} ${s.date}`),
      [
        'NO1 2026-11-20',
        'NO1 2026-11-21',
        'NO1 2026-11-22',
        'EURUSD 2026-11-20',
        'EURUSD 2026-11-21',
        'EURUSD 2026-11-22',
      ],
    );
    assert.deepEqual(
      series.filter((s) => s.symbol === 'NO1').map((s) => s.prices.length),
      [96, 96, 96],
    );
    // Each day of the range is the day endpoint's answer for that day.
    const [alone] = await days(h, '/api/v1/prices/2026-11-21?symbols=NO1');
    assert.deepEqual(series[1], alone);
  });

  test('relative names work in ranges, and a range over a DST change has days of 25 hours', async () => {
    const week = await days(h, '/api/v1/prices?from=yesterday&to=tomorrow&symbols=NO1');
    assert.deepEqual(
      week.map((s) => s.date),
      ['2026-11-21', '2026-11-22', '2026-11-23'],
    );
    const autumn = await days(h, '/api/v1/prices?from=2026-10-24&to=2026-10-26&symbols=NO1');
    assert.deepEqual(
      autumn.map((s) => s.prices.length),
      [96, 100, 96],
    );
  });

  test('CSV holds one row per point of every day', async () => {
    const response = await get(h, '/api/v1/prices?from=2026-11-20&to=2026-11-21&symbols=NO1&format=csv');
    assert.equal(response.statusCode, 200);
    const lines = response.body.trimEnd().split('\r\n');
    assert.equal(lines[0], 'symbol,date,start,end,price,currency,unit');
    assert.equal(lines.length, 1 + 2 * 96);
    assert.match(lines[97] ?? '', /^NO1,2026-11-21,2026-11-21T00:00:00\+01:00,/);
  });

  test('366 days are served; 367, a backwards range and a missing bound are 400 naming the parameter', async () => {
    const enterprise = (await h.createKey({ tier: 'enterprise' })).key;
    const year = await days(h, '/api/v1/prices?from=2025-11-23&to=2026-11-23&symbols=EURUSD', enterprise);
    assert.equal(year.length, 366);
    const tooLong = problem(
      await get(h, '/api/v1/prices?from=2025-11-22&to=2026-11-23&symbols=EURUSD', enterprise),
      400,
      'invalid_parameter',
    );
    assert.equal(tooLong.parameter, 'to');
    assert.match(tooLong.detail, /367 days; at most 366/);
    const backwards = problem(
      await get(h, '/api/v1/prices?from=2026-11-22&to=2026-11-21'),
      400,
      'invalid_parameter',
    );
    assert.equal(backwards.parameter, 'to');
    const missing = problem(await get(h, '/api/v1/prices?to=2026-11-21'), 400, 'invalid_parameter');
    assert.equal(missing.parameter, 'from');
    const malformed = problem(
      await get(h, '/api/v1/prices?from=21.11.2026&to=2026-11-21'),
      400,
      'invalid_parameter',
    );
    assert.equal(malformed.parameter, 'from');
  });

  test('a range that starts before the tier history is 403 outside_tier_history', async () => {
    problem(
      await get(h, '/api/v1/prices?from=2026-10-01&to=2026-11-22&symbols=NO1'),
      403,
      'outside_tier_history',
    );
  });
});

describe('GET /api/v1/prices/latest', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
  });
  after(() => h.close());

  test('per series, the interval that contains now', async () => {
    const series = await days(h, '/api/v1/prices/latest?symbols=NO1,BTC-USD,JP-TK');
    const no1Now = series[0]?.prices;
    assert.equal(no1Now?.length, 1);
    assert.equal(no1Now?.[0]?.start, '2026-11-22T11:15:00+01:00');
    assert.equal(no1Now?.[0]?.end, '2026-11-22T11:30:00+01:00');
    const quarter = devDay(no1, '2026-11-22')[45]!; // 11:15 is the 46th quarter hour
    assert.equal(String(no1Now?.[0]?.price), String(Number(quarter.price)));
    assert.equal(series[1]?.prices[0]?.start, '2026-11-22T10:00:00+00:00');
    assert.equal(series[2]?.prices[0]?.start, '2026-11-22T19:00:00+09:00');
  });

  test('a series with nothing now gives the last interval before now: the equity on a Sunday gives Friday close', async () => {
    const [acme] = await days(h, '/api/v1/prices/latest?symbols=ACME');
    assert.equal(acme?.date, '2026-11-20');
    assert.equal(acme?.prices.length, 1);
    assert.ok(
      (acme?.prices[0]?.start ?? '') < '2026-11-20T17:00',
      `Friday's last interval, got ${acme?.prices[0]?.start}`,
    );
  });

  test('with resolution, the coarser interval holding now, as the mean of its points', async () => {
    const [hour] = await days(h, '/api/v1/prices/latest?symbols=NO1&resolution=PT1H');
    assert.equal(hour?.resolution, 'PT1H');
    assert.equal(hour?.prices[0]?.start, '2026-11-22T11:00:00+01:00');
    assert.equal(hour?.prices[0]?.end, '2026-11-22T12:00:00+01:00');
    const quarters = devDay(no1, '2026-11-22').slice(44, 48);
    assert.equal(String(hour?.prices[0]?.price), String(Number(decimalMean(quarters.map((q) => q.price)))));
  });

  test('a series without any price in the tier history answers an empty list', async () => {
    const empty = (await h.createKey({ scopes: ['admin'], tier: 'pro' })).key;
    const created = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/EMPTY',
      headers: { 'x-api-key': empty, 'content-type': 'application/json' },
      payload: {
        name: 'Nothing yet',
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: 'Europe/Oslo',
        resolution: 'PT1H',
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const [series] = await days(h, '/api/v1/prices/latest?symbols=EMPTY');
    assert.deepEqual([series?.date, series?.prices], ['2026-11-22', []]);
  });
});

describe('resolution: means of the finer intervals', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
  });
  after(() => h.close());

  test('PT1H from PT15M: 24 hourly means, each of its four quarter hours, rounded to two decimals', async () => {
    const [day] = await days(h, '/api/v1/prices/2026-11-20?symbols=NO1&resolution=PT1H');
    assert.equal(day?.resolution, 'PT1H');
    assert.equal(day?.prices.length, 24);
    const quarters = devDay(no1, '2026-11-20');
    for (let hour = 0; hour < 24; hour++) {
      const mean = decimalMean(quarters.slice(hour * 4, hour * 4 + 4).map((q) => q.price));
      assert.equal(String(day?.prices[hour]?.price), String(Number(mean)), `hour ${hour}`);
    }
    assert.equal(day?.prices[1]?.start, '2026-11-20T01:00:00+01:00');
    assert.equal(day?.prices[1]?.end, '2026-11-20T02:00:00+01:00');
  });

  test('a 25-hour day gives 25 hourly means, the repeated hour told apart by its offset', async () => {
    const [day] = await days(h, '/api/v1/prices/2026-10-25?symbols=NO1&resolution=PT1H');
    assert.equal(day?.prices.length, 25);
    const starts = day?.prices.map((p) => p.start) ?? [];
    assert.deepEqual(starts.slice(2, 4), ['2026-10-25T02:00:00+02:00', '2026-10-25T02:00:00+01:00']);
    const quarters = devDay(no1, '2026-10-25');
    const repeated = decimalMean(quarters.slice(12, 16).map((q) => q.price));
    assert.equal(String(day?.prices[3]?.price), String(Number(repeated)));
  });

  test('P1D gives one mean per day; PT30M from PT15M gives 48', async () => {
    const [daily] = await days(h, '/api/v1/prices/2026-11-20?symbols=NO1&resolution=P1D');
    assert.deepEqual(
      daily?.prices.map((p) => [p.start, p.end]),
      [['2026-11-20T00:00:00+01:00', '2026-11-21T00:00:00+01:00']],
    );
    const mean = decimalMean(devDay(no1, '2026-11-20').map((q) => q.price));
    assert.equal(String(daily?.prices[0]?.price), String(Number(mean)));
    const [half] = await days(h, '/api/v1/prices/2026-11-20?symbols=NO1&resolution=PT30M');
    assert.equal(half?.prices.length, 48);
  });

  test('with tz, the coarser intervals lie on the grid of that zone', async () => {
    const [day] = await days(h, '/api/v1/prices/2026-11-20?symbols=NO1&resolution=P1D&tz=UTC');
    assert.equal(day?.prices[0]?.start, '2026-11-20T00:00:00+00:00');
    const utcQuarters = [...devDay(no1, '2026-11-20').slice(4), ...devDay(no1, '2026-11-21').slice(0, 4)];
    assert.equal(String(day?.prices[0]?.price), String(Number(decimalMean(utcQuarters.map((q) => q.price)))));
  });

  test('a series already as coarse is served as it is, and says so in its resolution', async () => {
    const series = await days(h, '/api/v1/prices/2026-11-20?symbols=NYISO-J,EURUSD&resolution=PT1H');
    assert.deepEqual(
      series.map((s) => [s.symbol, s.resolution, s.prices.length]),
      [
        ['NYISO-J', 'PT1H', 24],
        ['EURUSD', 'P1D', 1],
      ],
    );
  });

  test('an unknown resolution is a 400 naming it', async () => {
    const body = problem(await get(h, '/api/v1/prices/today?resolution=PT5M'), 400, 'invalid_parameter');
    assert.equal(body.parameter, 'resolution');
  });
});

/**
 * The means of a series imported for this test, worked out by hand, so the rounding is proven through
 * HTTP without the function under test. The answer is read as text: the JSON renderer writes each
 * price's decimal text as it is (render/day-answer.ts), which a parsed double would not show
 * (41.30 would turn into 41.3).
 */
describe('resolution, against means worked out by hand', () => {
  let h: Harness;
  let reader: string;
  // Oslo is UTC+01:00 in November. Four hours with points, the fourth quarter of some left empty.
  const QUARTERS = [
    ['00:00', '1.01'],
    ['00:15', '1.02'],
    ['00:30', '1.02'],
    ['00:45', '1.02'], // hour 00: 4.07 / 4 = 1.0175 → 1.02
    ['01:00', '41.20'],
    ['01:30', '41.40'], // hour 01: 82.60 / 2 = 41.30, trailing zero kept (two decimals seen)
    ['02:00', '-1'],
    ['02:15', '-2'], // hour 02: -3 / 2 = -1.5 → -2, half away from zero
    ['03:00', '0.1'],
    ['03:45', '0.2'], // hour 03: 0.3 / 2 = 0.15 → 0.2 (doubles: 0.15000000000000002)
    ['04:00', '41.27'],
    ['04:15', '40'],
    ['04:30', '-3.5'], // hour 04: 77.77 / 3 = 25.9233… → 25.92
  ];

  /** Every `"price":` of a JSON answer, as the text the server wrote. */
  const priceTexts = (body: string) => [...body.matchAll(/"price":([^,}]+)/g)].map((m) => m[1]);

  before(async () => {
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
    const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
    reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
    const created = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/HAND',
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      payload: {
        name: 'Means by hand',
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: 'Europe/Oslo',
        resolution: 'PT15M',
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const csv = QUARTERS.map(([time, price]) => `2026-11-20T${time}:00+01:00,${price}\r\n`).join('');
    const written = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/HAND/prices',
      headers: { 'x-api-key': admin, 'content-type': 'text/csv' },
      payload: `start,price\r\n${csv}`,
    });
    assert.equal(written.statusCode, 200, written.body);
  });
  after(() => h.close());

  test('the imported quarter hours come back as they were written', async () => {
    const response = await get(h, '/api/v1/prices/2026-11-20?symbols=HAND', reader);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(
      priceTexts(response.body),
      QUARTERS.map(([, price]) => price),
      'every price text as imported, 41.20 with its zero',
    );
  });

  test('PT1H: each hour the mean of its quarters, rounded half away from zero to the most decimals seen', async () => {
    const response = await get(h, '/api/v1/prices/2026-11-20?symbols=HAND&resolution=PT1H', reader);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(
      priceTexts(response.body),
      ['1.02', '41.30', '-2', '0.2', '25.92'],
      `hourly means in ${response.body}`,
    );
    assert.match(
      response.body,
      /\{"start":"2026-11-20T00:00:00\+01:00","end":"2026-11-20T01:00:00\+01:00","price":1\.02\}/,
      'hour 00 is 00:00 to 01:00 at 1.02',
    );
  });

  test('P1D: one mean of all thirteen points; CSV writes the same texts', async () => {
    // 161.74 / 13 = 12.4415… → 12.44
    const daily = await get(h, '/api/v1/prices/2026-11-20?symbols=HAND&resolution=P1D', reader);
    assert.equal(daily.statusCode, 200, daily.body);
    assert.deepEqual(priceTexts(daily.body), ['12.44'], `the daily mean in ${daily.body}`);
    const csv = await get(h, '/api/v1/prices/2026-11-20?symbols=HAND&resolution=PT1H&format=csv', reader);
    assert.equal(csv.statusCode, 200, csv.body);
    assert.deepEqual(
      csv.body
        .trimEnd()
        .split('\r\n')
        .slice(1)
        .map((row) => row.split(',')[4]),
      ['1.02', '41.30', '-2', '0.2', '25.92'],
      `hourly means in ${csv.body}`,
    );
  });

  test('PT30M: 1.01 and 1.02 give 1.015 → 1.02; an empty half hour is left out', async () => {
    const response = await get(h, '/api/v1/prices/2026-11-20?symbols=HAND&resolution=PT30M', reader);
    assert.equal(response.statusCode, 200, response.body);
    // 00:00 1.015 → 1.02, 00:30 1.02, 01:00 41.20, 01:30 41.40, 02:00 -1.5 → -2, 03:00 0.1,
    // 03:30 0.2, 04:00 40.635 → 40.64, 04:30 -3.5 (02:30 and 03:15 hold no point).
    assert.deepEqual(
      priceTexts(response.body),
      ['1.02', '1.02', '41.20', '41.40', '-2', '0.1', '0.2', '40.64', '-3.5'],
      `half-hourly means in ${response.body}`,
    );
  });
});

describe('resolution on a 23-hour day', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ now: '2026-03-29T12:00:00Z' });
  });
  after(() => h.close());

  test('Oslo spring forward gives 23 hourly means and no 02:00', async () => {
    const [day] = await days(h, '/api/v1/prices/today?symbols=NO1&resolution=PT1H');
    assert.equal(day?.prices.length, 23);
    const starts = day?.prices.map((p) => p.start) ?? [];
    assert.deepEqual(starts.slice(1, 3), ['2026-03-29T01:00:00+01:00', '2026-03-29T03:00:00+02:00']);
    assert.equal(dayIntervals('2026-03-29', 'Europe/Oslo', 'PT1H').length, 23);
  });
});
