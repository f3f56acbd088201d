/**
 * The Energi Data Service connector against a fake API serving `DayAheadPrices` records across the
 * autumn DST day of 2025 in Copenhagen (100 quarter hours; `TimeDK` shows 02:00 to 02:45 twice).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type EnergiDataServiceSettings,
  energidataservice,
} from '../../src/sources/energidataservice/connector.js';
import type { SourceResult, SourceSeries } from '../../src/sources/types.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

const PATH = '/dataset/DayAheadPrices';
const DAY = { from: Date.parse('2025-10-25T22:00Z'), to: Date.parse('2025-10-26T23:00Z') };
let upstream: FakeUpstream;

async function fetchDay(settings: Partial<EnergiDataServiceSettings> = {}): Promise<SourceResult> {
  const connector = energidataservice.create({
    area: 'DK1',
    currency: 'EUR',
    baseUrl: upstream.url('/'),
    ...settings,
  });
  return connector.fetchWindow(DAY);
}

function onlySeries(result: SourceResult): SourceSeries {
  assert.ok(result.ok, result.ok ? '' : result.failure.message);
  assert.equal(result.series.length, 1);
  return result.series[0] as SourceSeries;
}

describe('the energidataservice connector', () => {
  before(async () => {
    upstream = await new FakeUpstream().start();
    upstream.answer(PATH, { body: fixture('energidataservice/day-ahead-dk1-autumn-dst.json') });
  });
  after(() => upstream.close());

  test('asks for the area in Danish dates a day wider than the window, sorted by TimeUTC', async () => {
    await fetchDay();
    const asked = upstream.requests.at(-1) as URL;
    assert.equal(asked.pathname, PATH);
    assert.deepEqual(Object.fromEntries(asked.searchParams), {
      start: '2025-10-25',
      end: '2025-10-28',
      filter: '{"PriceArea":["DK1"]}',
      columns: 'TimeUTC,PriceArea,DayAheadPriceEUR',
      sort: 'TimeUTC',
      limit: '300',
    });
  });

  test('the DST day keyed on TimeUTC: every quarter hour once, the repeated local hour twice, null missing', async () => {
    const series = onlySeries(await fetchDay());
    assert.deepEqual(series.series, {
      symbol: 'DK1',
      name: 'DK1 day-ahead (Energi Data Service)',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Copenhagen',
      resolution: 'PT15M',
    });
    const got = pairs(series.points);
    assert.equal(got.length, 99, '100 quarter hours, one of them without a price');
    assert.equal(new Set(got.map(([start]) => start)).size, 99);
    const at = new Map(got);
    assert.equal(at.has('2025-10-26T02:15:00.000Z'), false, 'a null price is missing, never 0');
    // 02:15 local time, first (+02:00) and second (+01:00) time round.
    assert.equal(at.get('2025-10-26T00:15:00.000Z'), '86.75');
    assert.equal(at.get('2025-10-26T01:15:00.000Z'), '99.25');
    assert.deepEqual(got[0], ['2025-10-25T22:00:00.000Z', '73']);
    assert.deepEqual(got.at(-1), ['2025-10-26T22:45:00.000Z', '80.5']);
    assert.equal(
      got.some(([, price]) => price === '999.99'),
      false,
      'DK2 records are not DK1 prices',
    );
  });

  test('in DKK, from DayAheadPriceDKK, as its own series', async () => {
    const series = onlySeries(await fetchDay({ currency: 'DKK' }));
    assert.equal(series.series.symbol, 'DK1-DKK');
    assert.equal(series.series.currency, 'DKK');
    assert.deepEqual(pairs(series.points)[0], ['2025-10-25T22:00:00.000Z', '544.61']);
  });

  test("a single record takes the data set's resolution of its date (quarter hours from 2025-10-01)", async () => {
    const one = (time: string) =>
      JSON.stringify({
        total: 1,
        records: [{ TimeUTC: time, PriceArea: 'DK1', DayAheadPriceEUR: 73.5 }],
      });
    upstream.answer(PATH, { body: one('2025-10-26T10:00:00') });
    const quarter = onlySeries(await fetchDay());
    assert.equal(quarter.series.resolution, 'PT15M');
    assert.deepEqual(pairs(quarter.points), [['2025-10-26T10:00:00.000Z', '73.5']]);
    const connector = energidataservice.create({ area: 'DK1', currency: 'EUR', baseUrl: upstream.url('/') });
    upstream.answer(PATH, { body: one('2025-09-15T10:00:00') });
    const hour = onlySeries(
      await connector.fetchWindow({
        from: Date.parse('2025-09-14T22:00Z'),
        to: Date.parse('2025-09-15T22:00Z'),
      }),
    );
    upstream.answer(PATH, { body: fixture('energidataservice/day-ahead-dk1-autumn-dst.json') });
    assert.equal(hour.series.resolution, 'PT1H');
  });

  test('an answer with fewer records than its total is a failure, never a short day', async () => {
    const body = JSON.parse(fixture('energidataservice/day-ahead-dk1-autumn-dst.json').toString('utf8'));
    body.total = 400;
    upstream.answer(PATH, { body: JSON.stringify(body) });
    const result = await fetchDay();
    upstream.answer(PATH, { body: fixture('energidataservice/day-ahead-dk1-autumn-dst.json') });
    assert.ok(!result.ok);
    assert.match(result.failure.message, /sent 101 of 400 records/);
  });

  test('an error answer in the upstream’s words, with its Retry-After', async () => {
    upstream.answer(PATH, {
      status: 429,
      headers: { 'retry-after': '30', 'content-type': 'application/json' },
      body: JSON.stringify({ statusCode: 429, message: 'Rate limit is exceeded. Try again in 30 seconds.' }),
    });
    const result = await fetchDay();
    upstream.answer(PATH, { body: fixture('energidataservice/day-ahead-dk1-autumn-dst.json') });
    assert.ok(!result.ok);
    assert.equal(result.failure.retryAfterMs, 30_000);
    assert.match(result.failure.message, /HTTP 429: Rate limit is exceeded\. Try again in 30 seconds\.$/);
  });

  test('settings name the bad field', () => {
    assert.throws(
      () => energidataservice.create({ area: 'DK3' as 'DK1', currency: 'EUR' }),
      /^SourceSettingsError: area/,
    );
    assert.throws(
      () => energidataservice.create({ area: 'DK1', currency: 'SEK' as 'EUR' }),
      /currency: must be/,
    );
  });
});
