/**
 * The aWATTar connector against a fake `/v1/marketdata`: the autumn DST day in Germany (25 hours),
 * the spring DST day in Austria (23 hours) with the next day not published yet, records of an hour
 * and of a quarter hour side by side (should aWATTar follow the 15-minute switch), and error answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AwattarSettings, awattar } from '../../src/sources/awattar/connector.js';
import { parseSources } from '../../src/sources/source-config.js';
import type { SourceResult, SourceSeries, SourceWindow } from '../../src/sources/types.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

const PATH = '/v1/marketdata';
const AUTUMN = { from: Date.parse('2025-10-25T22:00Z'), to: Date.parse('2025-10-26T23:00Z') };
let upstream: FakeUpstream;

function serve(name: string): void {
  upstream.answer(PATH, { body: fixture(`awattar/${name}`) });
}

async function fetchWindow(
  window: SourceWindow,
  settings: Partial<AwattarSettings> = {},
): Promise<SourceResult> {
  return awattar.create({ zone: 'DE-LU', baseUrl: upstream.url('/'), ...settings }).fetchWindow(window);
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

describe('the awattar connector', () => {
  before(async () => {
    upstream = await new FakeUpstream().start();
  });
  after(() => upstream.close());

  test('asks /v1/marketdata for the window in epoch milliseconds', async () => {
    serve('de-autumn-dst.json');
    await fetchWindow(AUTUMN);
    const asked = upstream.requests.at(-1) as URL;
    assert.equal(asked.pathname, PATH);
    assert.deepEqual(Object.fromEntries(asked.searchParams), {
      start: '1761429600000',
      end: '1761519600000',
    });
  });

  test('AT and DE-LU, found by their aliases and EIC codes', () => {
    assert.equal(awattar.defaultBaseUrl, 'https://api.awattar.at/');
    assert.deepEqual(
      awattar.zones?.map((z) => z.zone),
      ['AT', 'DE-LU'],
    );
    for (const zone of ['AT', 'austria', 'DE-LU', 'de', 'Germany', '10YAT-APG------L']) {
      assert.equal(awattar.create({ zone }).type, 'awattar', zone);
    }
  });

  test('the autumn DST day in Germany: 25 hours, currency and unit from the records', async () => {
    serve('de-autumn-dst.json');
    const series = onlySeries(await fetchWindow(AUTUMN, { zone: 'Germany' }));
    assert.deepEqual(series.series, {
      symbol: 'DE-LU',
      name: 'DE-LU day-ahead (aWATTar)',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Berlin',
      resolution: 'PT1H',
    });
    const got = pairs(series.points);
    assert.equal(got.length, 25);
    // 02:00 local time, first (+02:00) and second (+01:00) time round.
    assert.deepEqual(got.slice(2, 4), [
      ['2025-10-26T00:00:00.000Z', '108.28'],
      ['2025-10-26T01:00:00.000Z', '124.24'],
    ]);
    assert.deepEqual(got[10], ['2025-10-26T08:00:00.000Z', '-4.5']);
    assert.deepEqual(got[0], ['2025-10-25T22:00:00.000Z', '77.57']);
    assert.deepEqual(got.at(-1), ['2025-10-26T22:00:00.000Z', '94.08']);
  });

  test('the spring DST day in Austria has 23 hours; the next day, not published yet, has no points', async () => {
    serve('at-spring-dst-today-only.json');
    const window = { from: Date.parse('2026-03-28T23:00Z'), to: Date.parse('2026-03-30T22:00Z') };
    const series = onlySeries(await fetchWindow(window, { zone: 'AT', symbol: 'at-awattar' }));
    assert.equal(series.series.symbol, 'AT-AWATTAR');
    assert.equal(series.series.timezone, 'Europe/Vienna');
    const got = pairs(series.points);
    assert.equal(got.length, 23, 'the 30th is not there yet, and nothing stands in for it');
    assert.deepEqual(got.slice(2, 4), [
      ['2026-03-29T01:00:00.000Z', '118.77'],
      ['2026-03-29T02:00:00.000Z', '132.46'],
    ]);
    assert.deepEqual(got.at(-1), ['2026-03-29T21:00:00.000Z', '90.2']);
    upstream.answer(PATH, { body: JSON.stringify({ object: 'list', data: [], url: '/at/v1/marketdata' }) });
    assert.deepEqual(await fetchWindow(window, { zone: 'AT' }), { ok: true, series: [] });
  });

  test('a record without a price is missing, never 0', async () => {
    const body = JSON.parse(fixture('awattar/de-autumn-dst.json').toString('utf8'));
    body.data[3].marketprice = null;
    upstream.answer(PATH, { body: JSON.stringify(body) });
    const got = pairs(onlySeries(await fetchWindow(AUTUMN)).points);
    assert.equal(got.length, 24);
    assert.equal(
      got.some(([start]) => start === '2025-10-26T01:00:00.000Z'),
      false,
    );
  });

  test('hourly and quarter-hour records together: a failure that says what to do, or quarters with fillQuarters', async () => {
    serve('de-15-minute-switch.json');
    const window = { from: Date.parse('2025-09-29T22:00Z'), to: Date.parse('2025-10-01T22:00Z') };
    assert.match(
      failureOf(await fetchWindow(window)),
      /mixes intervals of 15 and 60 minutes: set fillQuarters/,
    );
    const series = onlySeries(await fetchWindow(window, { fillQuarters: true }));
    assert.equal(series.series.resolution, 'PT15M');
    const got = pairs(series.points);
    assert.equal(got.length, 192);
    assert.deepEqual(got.slice(92, 98), [
      ['2025-09-30T21:00:00.000Z', '108.79'],
      ['2025-09-30T21:15:00.000Z', '108.79'],
      ['2025-09-30T21:30:00.000Z', '108.79'],
      ['2025-09-30T21:45:00.000Z', '108.79'],
      ['2025-09-30T22:00:00.000Z', '110.25'],
      ['2025-09-30T22:15:00.000Z', '121.64'],
    ]);
    assert.deepEqual(got.at(-1), ['2025-10-01T21:45:00.000Z', '84.38']);
  });

  test('a unit the connector cannot read, or two units, are failures', async () => {
    const body = JSON.parse(fixture('awattar/de-autumn-dst.json').toString('utf8'));
    body.data[5].unit = 'ct/kWh';
    upstream.answer(PATH, { body: JSON.stringify(body) });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /records in Eur\/MWh and ct\/kWh/);
    for (const record of body.data) record.unit = 'ct/kWh';
    upstream.answer(PATH, { body: JSON.stringify(body) });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /unit "ct\/kWh" is not a currency per MWh or kWh/);
  });

  test('an error answer in the upstream’s words, with its Retry-After', async () => {
    upstream.answer(PATH, {
      status: 429,
      headers: { 'retry-after': '3600', 'content-type': 'application/json' },
      body: JSON.stringify({ error: 'rate limit exceeded: fair use is 100 requests a day' }),
    });
    const limited = await fetchWindow(AUTUMN);
    assert.ok(!limited.ok);
    assert.equal(limited.failure.kind, 'upstream');
    assert.equal(limited.failure.retryAfterMs, 3_600_000);
    assert.match(limited.failure.message, /HTTP 429: rate limit exceeded: fair use is 100 requests a day$/);
    upstream.answer(PATH, { status: 502, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' });
    const down = await fetchWindow(AUTUMN);
    assert.ok(!down.ok);
    assert.equal(down.failure.kind, 'http');
    assert.match(down.failure.message, /HTTP 502: 502 Bad Gateway$/);
    upstream.answer(PATH, { body: JSON.stringify({ object: 'list' }) });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /sent no data list/);
  });

  test('the config file takes an awattar source; its default schedule asks at most 24 times a day', () => {
    const [source] = parseSources({ at: { type: 'awattar', zone: 'AT' } }, {});
    assert.deepEqual(source?.schedule, [
      { cron: '*/15 13-16 * * *', zone: 'Europe/Vienna', untilTomorrowComplete: true },
      { cron: '0 */3 * * *', zone: 'Europe/Vienna' },
    ]);
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
    assert.throws(() => awattar.create({ zone: 'CH' }), /^SourceSettingsError: zone: must be AT or DE-LU/);
    assert.throws(
      () => awattar.create({ zone: 'AT', resolution: 'PT5M' as 'PT15M' }),
      /^SourceSettingsError: resolution/,
    );
    assert.throws(
      () => awattar.create({ zone: 'AT', baseUrl: 'not a url' }),
      /^SourceSettingsError: baseUrl/,
    );
  });
});
