/**
 * `resolution` with `tz=` in a zone whose offset is not a whole hour from the series' zone, through
 * HTTP with the pinned tz release in tzdata/ (docs/using-the-api.md "Reading prices"). Asia/Kolkata (+05:30) half
 * hours begin at :00 and :30 UTC; Asia/Kathmandu (+05:45) hours begin at :15 UTC, so each of them
 * would begin in the middle of a half hour: the read is refused with 400 `invalid_parameter` naming
 * `resolution`, for today, a date, a range, the latest price and CSV alike. Kolkata's quarter hours
 * do fit Kathmandu's hours: each hour is the mean of the four that lie inside it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../helpers/harness.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';

const TZDATA = join(REPO, 'tzdata');
const FIRST = Date.parse('2026-11-22T00:00:00Z');
const QUARTER_HOUR_MS = 15 * 60_000;

interface Interval {
  start: string;
  end: string;
  price: number;
}

let harness: Harness;
let key: string;

const get = (url: string) => harness.app.inject({ url, headers: { 'x-api-key': key } });

async function refused(url: string, symbols: string[]) {
  const response = await get(url);
  assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
  assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8', url);
  const body = response.json() as { code: string; parameter: string; symbols: string[]; detail: string };
  assert.equal(body.code, 'invalid_parameter', url);
  assert.equal(body.parameter, 'resolution', url);
  assert.deepEqual(body.symbols, symbols, url);
  return body.detail;
}

async function served(url: string): Promise<{ date: string; resolution: string; prices: Interval[] }[]> {
  const response = await get(url);
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return (response.json() as { series: { date: string; resolution: string; prices: Interval[] }[] }).series;
}

describe('coarse means with tz= in a zone a quarter or half hour away', () => {
  before(async () => {
    harness = await createHarness({
      now: '2026-11-24T10:15:00Z',
      devData: false,
      env: { PRICEPOINT_TZDIR: TZDATA },
    });
    usePinnedTzdata(harness.config.tzData.setting ?? '');
    const series = { kind: 'electricity', currency: 'INR', unit: 'MWh', timezone: 'Asia/Kolkata' };
    await harness.stores.prices.upsertSeries({
      ...series,
      symbol: 'IN-KOL',
      name: 'Half hours',
      resolution: 'PT30M',
    });
    await harness.stores.prices.upsertSeries({
      ...series,
      symbol: 'IN-KOLQ',
      name: 'Quarters',
      resolution: 'PT15M',
    });
    // Four days from 2026-11-22T00:00Z; the k-th quarter hour from then costs k.25, a half hour k.5.
    const quarters = Array.from({ length: 4 * 96 }, (_, k) => ({
      start: FIRST + k * QUARTER_HOUR_MS,
      price: `${k}.25`,
    }));
    await harness.stores.prices.upsertPrices('IN-KOLQ', quarters);
    const halves = quarters
      .filter((_, k) => k % 2 === 0)
      .map((q, k) => ({ start: q.start, price: `${k}.5` }));
    await harness.stores.prices.upsertPrices('IN-KOL', halves);
    key = (await harness.createKey({ tier: 'enterprise' })).key;
  });
  after(() => harness.close());

  test('Kolkata half hours read in Kathmandu at PT1H are refused: today, a date, a range, latest, CSV', async () => {
    const query = 'symbols=IN-KOL&tz=Asia/Kathmandu&resolution=PT1H';
    const detail = await refused(`/api/v1/prices/today?${query}`, ['IN-KOL']);
    // Today in Kathmandu begins at 2026-11-23T18:15Z, in the half hour from 18:00Z.
    assert.match(detail, /"resolution" \(PT1H\)/);
    assert.match(detail, /2026-11-24T00:00:00\+05:45/);
    assert.match(detail, /PT30M interval of IN-KOL \(Asia\/Kolkata\)/);
    await refused(`/api/v1/prices/today?${query}&format=csv`, ['IN-KOL']);
    await refused(`/api/v1/prices/2026-11-23?${query}`, ['IN-KOL']);
    await refused(`/api/v1/prices?from=2026-11-22&to=today&${query}`, ['IN-KOL']);
    await refused(`/api/v1/prices/latest?${query}`, ['IN-KOL']);
    // P1D too: the Kathmandu day begins at :15 UTC as well.
    await refused('/api/v1/prices/today?symbols=IN-KOL&tz=Asia/Kathmandu&resolution=P1D', ['IN-KOL']);
    // Every series read: only the one whose intervals would be cut is named.
    await refused('/api/v1/prices/today?tz=asia/kathmandu&resolution=PT1H', ['IN-KOL']);
  });

  test('Kolkata quarter hours read in Kathmandu at PT1H: each hour the mean of the four inside it', async () => {
    const [day] = await served('/api/v1/prices/today?symbols=IN-KOLQ&tz=Asia/Kathmandu&resolution=PT1H');
    assert.equal(day?.date, '2026-11-24');
    assert.equal(day?.resolution, 'PT1H');
    assert.equal(day?.prices.length, 24);
    // 00:00+05:45 is 18:15Z on the 23rd, quarter hours 169 to 172 from the first: (169 + 172) / 2 + 0.25.
    assert.deepEqual(day?.prices[0], {
      start: '2026-11-24T00:00:00+05:45',
      end: '2026-11-24T01:00:00+05:45',
      price: 170.75,
    });
    assert.deepEqual(day?.prices[23], {
      start: '2026-11-24T23:00:00+05:45',
      end: '2026-11-25T00:00:00+05:45',
      price: 262.75,
    });
    const csv = await get(
      '/api/v1/prices/today?symbols=IN-KOLQ&tz=Asia/Kathmandu&resolution=PT1H&format=csv',
    );
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(
      csv.body,
      /\r\nIN-KOLQ,2026-11-24,2026-11-24T00:00:00\+05:45,2026-11-24T01:00:00\+05:45,170\.75,/,
    );
    // Now (10:15Z) is 16:00+05:45: the hour from then holds quarter hours 233 to 236.
    const [latest] = await served('/api/v1/prices/latest?symbols=IN-KOLQ&tz=Asia/Kathmandu&resolution=PT1H');
    assert.deepEqual(latest?.prices, [
      { start: '2026-11-24T16:00:00+05:45', end: '2026-11-24T17:00:00+05:45', price: 234.75 },
    ]);
  });

  test('the half hours are served as means in their own zone, and in UTC (whole half hours on both sides)', async () => {
    const [own] = await served('/api/v1/prices/2026-11-23?symbols=IN-KOL&resolution=PT1H');
    // 2026-11-23 in Kolkata begins at 18:30Z on the 22nd: half hours 37 and 38 (37.5, 38.5).
    assert.deepEqual(own?.prices[0], {
      start: '2026-11-23T00:00:00+05:30',
      end: '2026-11-23T01:00:00+05:30',
      price: 38,
    });
    const [utc] = await served('/api/v1/prices/2026-11-23?symbols=IN-KOL&tz=UTC&resolution=P1D');
    // Half hours 48 to 95: their mean is 71.5 + 0.5.
    assert.deepEqual(utc?.prices, [
      { start: '2026-11-23T00:00:00+00:00', end: '2026-11-24T00:00:00+00:00', price: 72 },
    ]);
  });
});
