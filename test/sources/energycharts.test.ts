/**
 * The Energy-Charts connector against a fake `/price` serving DE-LU across both DST days (100 and
 * 92 quarter hours), a next day not published yet (null prices), the 15-minute switch of
 * 1 October 2025 (hourly intervals, then quarter hours) and the API's error answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EnergyChartsSettings, energycharts } from '../../src/sources/energycharts/connector.js';
import { CC_BY_ZONES, ENERGY_CHARTS_ZONES, energyChartsZone } from '../../src/sources/energycharts/zones.js';
import { biddingZone } from '../../src/sources/entsoe/zones.js';
import { parseSources } from '../../src/sources/source-config.js';
import type { SourceResult, SourceSeries, SourceWindow } from '../../src/sources/types.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

const PATH = '/price';
const AUTUMN = { from: Date.parse('2025-10-25T22:00Z'), to: Date.parse('2025-10-26T23:00Z') };
let upstream: FakeUpstream;

function serve(name: string): void {
  upstream.answer(PATH, { body: fixture(`energycharts/${name}`) });
}

async function fetchWindow(
  window: SourceWindow,
  settings: Partial<EnergyChartsSettings> = {},
): Promise<SourceResult> {
  const connector = energycharts.create({ zone: 'DE-LU', baseUrl: upstream.url('/'), ...settings });
  return connector.fetchWindow(window);
}

function onlySeries(result: SourceResult): SourceSeries {
  assert.ok(result.ok, result.ok ? '' : result.failure.message);
  assert.equal(result.series.length, 1);
  return result.series[0] as SourceSeries;
}

function failureOf(result: SourceResult): string {
  assert.ok(!result.ok, 'expected a failure');
  return result.failure.message;
}

describe('the energycharts connector', () => {
  before(async () => {
    upstream = await new FakeUpstream().start();
  });
  after(() => upstream.close());

  test('asks /price for the bzn by German dates, a day before the window and its last day included', async () => {
    serve('de-lu-autumn-dst.json');
    await fetchWindow(AUTUMN, { zone: 'de' });
    const asked = upstream.requests.at(-1) as URL;
    assert.equal(asked.pathname, PATH);
    assert.deepEqual(Object.fromEntries(asked.searchParams), {
      bzn: 'DE-LU',
      start: '2025-10-25',
      end: '2025-10-26',
    });
  });

  test('an Italian zone is asked by its Energy-Charts name and fills the series entsoe would', async () => {
    serve('de-lu-autumn-dst.json');
    const series = onlySeries(await fetchWindow(AUTUMN, { zone: 'IT-NORD' }));
    assert.equal((upstream.requests.at(-1) as URL).searchParams.get('bzn'), 'IT-North');
    assert.equal(series.series.symbol, 'IT-NORD');
    assert.equal(series.series.timezone, 'Europe/Rome');
  });

  test('the autumn DST day: 100 quarter hours, a null price missing, the unit read from the answer', async () => {
    serve('de-lu-autumn-dst.json');
    const series = onlySeries(await fetchWindow(AUTUMN));
    assert.deepEqual(series.series, {
      symbol: 'DE-LU',
      name: 'DE-LU day-ahead (Energy-Charts)',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Berlin',
      resolution: 'PT15M',
    });
    const got = pairs(series.points);
    assert.equal(got.length, 99, '100 quarter hours, one of them null');
    const at = new Map(got);
    assert.equal(at.has('2025-10-26T00:15:00.000Z'), false, 'a null price is missing, never 0');
    // 02:00 and 02:15 local time, first (+02:00) and second (+01:00) time round.
    assert.equal(at.get('2025-10-26T00:00:00.000Z'), '39.43');
    assert.equal(at.get('2025-10-26T01:00:00.000Z'), '20.51');
    assert.equal(at.get('2025-10-26T01:15:00.000Z'), '31.22');
    assert.equal(at.get('2025-10-26T11:00:00.000Z'), '-0.01');
    assert.deepEqual(got[0], ['2025-10-25T22:00:00.000Z', '92.9']);
    assert.deepEqual(got.at(-1), ['2025-10-26T22:45:00.000Z', '123.73']);
  });

  test('the spring DST day has 92 quarter hours; a next day of null prices is not published yet, never zeros', async () => {
    serve('de-lu-spring-dst-tomorrow-unpublished.json');
    const window = { from: Date.parse('2026-03-28T23:00Z'), to: Date.parse('2026-03-30T22:00Z') };
    const series = onlySeries(await fetchWindow(window));
    const got = pairs(series.points);
    assert.equal(got.length, 92);
    assert.deepEqual(got[0], ['2026-03-28T23:00:00.000Z', '13.05']);
    assert.deepEqual(got[8], ['2026-03-29T01:00:00.000Z', '40.4'], '00:00 to 02:00, then 03:00 local');
    assert.deepEqual(got.at(-1), ['2026-03-29T21:45:00.000Z', '105.61']);
    const tomorrow = onlySeries(
      await fetchWindow({ from: Date.parse('2026-03-29T22:00Z'), to: Date.parse('2026-03-30T22:00Z') }),
    );
    assert.deepEqual(tomorrow.points, [], 'a success without points');
  });

  test('an answer with no interval in the window is a success without series', async () => {
    upstream.answer(PATH, {
      body: JSON.stringify({
        license_info: 'x',
        unix_seconds: [],
        price: [],
        unit: 'EUR / MWh',
        deprecated: false,
      }),
    });
    const result = await fetchWindow(AUTUMN);
    assert.deepEqual(result, { ok: true, series: [] });
  });

  test('a lone interval shows no length: a failure unless resolution is set', async () => {
    const start = AUTUMN.from / 1000;
    upstream.answer(PATH, {
      body: JSON.stringify({ license_info: 'x', unix_seconds: [start], price: [50.5], unit: 'EUR / MWh' }),
    });
    assert.match(
      failureOf(await fetchWindow(AUTUMN)),
      /a single interval shows no resolution: set resolution/,
    );
    const series = onlySeries(await fetchWindow(AUTUMN, { resolution: 'PT15M' }));
    assert.deepEqual(pairs(series.points), [['2025-10-25T22:00:00.000Z', '50.5']]);
  });

  test('across the 15-minute switch: a failure that says what to do, or hourly prices repeated over quarters with fillQuarters', async () => {
    serve('de-lu-15-minute-switch.json');
    const window = { from: Date.parse('2025-09-29T22:00Z'), to: Date.parse('2025-10-01T22:00Z') };
    assert.match(
      failureOf(await fetchWindow(window)),
      /mixes intervals of 15 and 60 minutes: set fillQuarters/,
    );
    assert.match(
      failureOf(await fetchWindow(window, { resolution: 'PT1H' })),
      /15 minutes at 2025-09-30T22:00:00.000Z cannot fill a PT1H series \(prices are never averaged\)/,
    );
    const series = onlySeries(await fetchWindow(window, { fillQuarters: true }));
    assert.equal(series.series.resolution, 'PT15M');
    const got = pairs(series.points);
    assert.equal(got.length, 192, '24 hours as 96 quarters, then 96 quarters');
    assert.deepEqual(got.slice(88, 98), [
      ['2025-09-30T20:00:00.000Z', got[88]?.[1] as string],
      ['2025-09-30T20:15:00.000Z', got[88]?.[1] as string],
      ['2025-09-30T20:30:00.000Z', got[88]?.[1] as string],
      ['2025-09-30T20:45:00.000Z', got[88]?.[1] as string],
      ['2025-09-30T21:00:00.000Z', '29.15'],
      ['2025-09-30T21:15:00.000Z', '29.15'],
      ['2025-09-30T21:30:00.000Z', '29.15'],
      ['2025-09-30T21:45:00.000Z', '29.15'],
      ['2025-09-30T22:00:00.000Z', '47.02'],
      ['2025-09-30T22:15:00.000Z', '60.17'],
    ]);
    assert.deepEqual(got[0], ['2025-09-29T22:00:00.000Z', '65.11']);
    assert.deepEqual(got.at(-1), ['2025-10-01T21:45:00.000Z', '59.46']);
    // Hourly alone (the day before the switch) stays hourly.
    const before = onlySeries(
      await fetchWindow({ from: Date.parse('2025-09-29T22:00Z'), to: Date.parse('2025-09-30T22:00Z') }),
    );
    assert.equal(before.series.resolution, 'PT1H');
    assert.equal(before.points.length, 24);
  });

  test('the currency and unit come from the answer; an answer without a readable unit is a failure', async () => {
    const body = JSON.parse(fixture('energycharts/de-lu-autumn-dst.json').toString('utf8'));
    upstream.answer(PATH, { body: JSON.stringify({ ...body, unit: 'CHF/kWh' }) });
    const series = onlySeries(await fetchWindow(AUTUMN));
    assert.equal(series.series.currency, 'CHF');
    assert.equal(series.series.unit, 'kWh');
    upstream.answer(PATH, { body: JSON.stringify({ ...body, unit: undefined }) });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /unit null is not a currency per MWh or kWh/);
    upstream.answer(PATH, { body: JSON.stringify({ ...body, price: body.price.slice(1) }) });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /292 unix_seconds but 291 prices/);
  });

  test('a 404 is a named gap in the API’s words; a 422 lists its messages; a 429 keeps its Retry-After', async () => {
    upstream.answer(PATH, {
      status: 404,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ detail: 'Not Found' }),
    });
    const gap = await fetchWindow(AUTUMN);
    assert.ok(!gap.ok);
    assert.equal(gap.failure.kind, 'upstream');
    assert.match(
      gap.failure.message,
      /^Energy-Charts has no DE-LU prices from 2025-10-25 to 2025-10-26: http:\/\/127\.0\.0\.1:\d+\/price answered HTTP 404: Not Found$/,
    );
    upstream.answer(PATH, {
      status: 422,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        detail: [{ loc: ['query', 'bzn'], msg: 'Input should be a valid bidding zone', type: 'enum' }],
      }),
    });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /HTTP 422: Input should be a valid bidding zone$/);
    upstream.answer(PATH, { status: 429, headers: { 'retry-after': '120' }, body: 'Too Many Requests' });
    const limited = await fetchWindow(AUTUMN);
    assert.ok(!limited.ok);
    assert.equal(limited.failure.kind, 'http');
    assert.equal(limited.failure.retryAfterMs, 120_000);
    assert.match(limited.failure.message, /HTTP 429: Too Many Requests$/);
  });

  test('a 200 that is not JSON (a maintenance page) is a failure that says what arrived', async () => {
    upstream.answer(PATH, {
      headers: { 'content-type': 'text/html' },
      body: '<!DOCTYPE html><html><body>Wartungsarbeiten</body></html>',
    });
    assert.match(
      failureOf(await fetchWindow(AUTUMN)),
      /sent no JSON; arrived: an HTML page \(text\/html\), starting "<!DOCTYPE html><html><body>Wartu"$/,
    );
  });

  test('settings name the bad field', () => {
    assert.throws(
      () => energycharts.create({ zone: 'XX' }),
      /^SourceSettingsError: zone: "XX" is not a bidding zone/,
    );
    assert.throws(
      () => energycharts.create({ zone: 'NL', resolution: 'P1D' }),
      /^SourceSettingsError: resolution/,
    );
    assert.throws(
      () => energycharts.create({ zone: 'NL', baseUrl: 'ftp://mirror.example/' }),
      /^SourceSettingsError: baseUrl/,
    );
  });

  test("the config file takes an energycharts source by zone, and refuses the API's own parameter names", () => {
    const [source] = parseSources({ nl: { type: 'energycharts', zone: 'Netherlands' } }, {});
    assert.equal(source?.type, 'energycharts');
    assert.deepEqual(
      source?.schedule.map((entry) => entry.cron),
      ['*/10 12-15 * * *', '0 * * * *'],
    );
    assert.throws(
      () => parseSources({ nl: { type: 'energycharts', bzn: 'NL' } }, {}),
      /setting "sources\.nl\.bzn" is not a setting of energycharts sources/,
    );
    assert.throws(
      () => parseSources({ nl: { type: 'energycharts', zone: 'NL9' } }, {}),
      /setting "sources\.nl\.zone" "NL9" is not a bidding zone Energy-Charts serves/,
    );
  });

  test('every zone has the EIC code and market time zone the entsoe type knows it by, and its aliases find it', () => {
    assert.equal(ENERGY_CHARTS_ZONES.length, 45);
    for (const zone of ENERGY_CHARTS_ZONES) {
      const known = biddingZone(zone.symbol);
      if (known !== undefined) {
        assert.equal(zone.eic, known.eic, zone.zone);
        assert.equal(zone.timezone, known.timezone, zone.zone);
      }
      for (const name of [zone.zone, zone.eic, ...zone.aliases]) {
        assert.equal(energyChartsZone(name.toLowerCase())?.zone, zone.zone, name);
      }
    }
    for (const zone of CC_BY_ZONES) assert.ok(energyChartsZone(zone), zone);
    assert.equal(energycharts.terms?.license, 'CC-BY-4.0');
    assert.deepEqual(
      energycharts.zones?.find((z) => z.zone === 'DE-LU'),
      { zone: 'DE-LU', eic: '10Y1001A1001A82H', aliases: ['DE', 'LU', 'Germany', 'Luxembourg'] },
    );
  });
});
