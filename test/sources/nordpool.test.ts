/**
 * The Nord Pool connector against a fake data portal answering `DayAheadPrices` one CET delivery
 * day at a time: NO1 across both DST days (100 and 92 quarter hours), SE3 in SEK across the
 * 15-minute switch of 1 October 2025 (hourly, then quarter hours), days not published yet (204),
 * preliminary prices and the portal's error answers.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type NordPoolSettings, nordpool } from '../../src/sources/nordpool/connector.js';
import { NORD_POOL_ZONES, nordPoolZone } from '../../src/sources/nordpool/zones.js';
import { runSource } from '../../src/sources/run-source.js';
import { parseSources } from '../../src/sources/source-config.js';
import type { SourceResult, SourceSeries, SourceWindow } from '../../src/sources/types.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { type FakeAnswer, FakeUpstream, fixture, pairs } from './fake-upstream.js';

const PATH = '/api/DayAheadPrices';
/** The Oslo day of 26 October 2025, 25 hours long. */
const AUTUMN = { from: Date.parse('2025-10-25T22:00Z'), to: Date.parse('2025-10-26T23:00Z') };
const FIXTURES: Record<string, string> = {
  '2025-10-26': 'no1-se3-2025-10-26-autumn-dst.json',
  '2026-03-29': 'no1-2026-03-29-spring-dst.json',
  '2025-09-30': 'se3-sek-2025-09-30-hourly.json',
  '2025-10-01': 'se3-sek-2025-10-01-quarters.json',
};
let upstream: FakeUpstream;

/** Each date its fixture, edited by `edit` if given; a date without one is not published (204). */
function serveDays(edit?: (doc: Record<string, unknown>) => void): void {
  upstream.answer(PATH, (url): FakeAnswer => {
    const name = FIXTURES[url.searchParams.get('date') ?? ''];
    if (name === undefined) return { status: 204 };
    const body = fixture(`nordpool/${name}`);
    if (edit === undefined) return { body, headers: { 'content-type': 'application/json; charset=utf-8' } };
    const doc = JSON.parse(body.toString('utf8'));
    edit(doc);
    return { body: JSON.stringify(doc), headers: { 'content-type': 'application/json; charset=utf-8' } };
  });
}

async function fetchWindow(
  window: SourceWindow,
  settings: Partial<NordPoolSettings> = {},
): Promise<SourceResult> {
  const connector = nordpool.create({ zone: 'NO1', baseUrl: upstream.url('/api/'), ...settings });
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

function askedSince(count: number): URL[] {
  return upstream.requests.slice(count);
}

describe('the nordpool connector', () => {
  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
  });
  after(() => upstream.close());

  test('asks DayAheadPrices for each CET delivery day of the window, the area by its portal code', async () => {
    serveDays();
    const count = upstream.requests.length;
    await fetchWindow(AUTUMN);
    const asked = askedSince(count);
    assert.equal(asked.length, 1, 'an Oslo day is one CET delivery day');
    assert.equal(asked[0]?.pathname, PATH);
    assert.deepEqual(Object.fromEntries(asked[0]?.searchParams ?? []), {
      date: '2025-10-26',
      market: 'DayAhead',
      deliveryArea: 'NO1',
      currency: 'EUR',
    });
    const before = upstream.requests.length;
    await fetchWindow(
      { from: Date.parse('2025-10-25T21:00Z'), to: Date.parse('2025-10-26T22:00Z') },
      { zone: 'Finland' },
    );
    assert.deepEqual(
      askedSince(before).map((url) => [url.searchParams.get('date'), url.searchParams.get('deliveryArea')]),
      [
        ['2025-10-25', 'FI'],
        ['2025-10-26', 'FI'],
      ],
      'a Helsinki day starts at 23:00 CET the day before',
    );
    await fetchWindow(AUTUMN, { zone: 'DE-LU' });
    assert.equal(upstream.requests.at(-1)?.searchParams.get('deliveryArea'), 'GER');
  });

  test('the autumn DST day: 100 quarter hours from UTC deliveryStart, null or absent prices missing, 0 kept', async () => {
    serveDays();
    const series = onlySeries(await fetchWindow(AUTUMN));
    assert.deepEqual(series.series, {
      symbol: 'NO1',
      name: 'NO1 day-ahead (Nord Pool)',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Oslo',
      resolution: 'PT15M',
    });
    const got = pairs(series.points);
    assert.equal(got.length, 98, '100 quarter hours, one null and one left out');
    const at = new Map(got);
    assert.equal(at.has('2025-10-26T01:15:00.000Z'), false, 'a null price is missing, never 0');
    assert.equal(at.has('2025-10-26T08:00:00.000Z'), false, 'an area left out of an entry is missing');
    // 02:00 local time, first (+02:00) and second (+01:00) time round.
    assert.equal(at.get('2025-10-26T00:00:00.000Z'), '108.79');
    assert.equal(at.get('2025-10-26T01:00:00.000Z'), '92.87');
    assert.equal(at.get('2025-10-26T11:00:00.000Z'), '-1.25');
    assert.equal(at.get('2025-10-26T11:15:00.000Z'), '0', 'a real zero price is a price');
    assert.deepEqual(got[0], ['2025-10-25T22:00:00.000Z', '89.82']);
    assert.deepEqual(got.at(-1), ['2025-10-26T22:45:00.000Z', '78.28']);
    const se3 = onlySeries(await fetchWindow(AUTUMN, { zone: 'SE3' }));
    assert.deepEqual(pairs(se3.points)[0], ['2025-10-25T22:00:00.000Z', '80.72'], 'SE3 reads its own column');
    assert.equal(se3.series.timezone, 'Europe/Stockholm');
  });

  test('the spring DST day has 92 quarter hours; the next day, 204 No Content, is not published yet', async () => {
    serveDays();
    const count = upstream.requests.length;
    const window = { from: Date.parse('2026-03-28T23:00Z'), to: Date.parse('2026-03-30T22:00Z') };
    const got = pairs(onlySeries(await fetchWindow(window)).points);
    assert.equal(askedSince(count).length, 2);
    assert.equal(got.length, 92, 'nothing for 30 March, never zeros');
    assert.deepEqual(got[8], ['2026-03-29T01:00:00.000Z', '108.79'], '00:00 to 02:00, then 03:00 local');
    assert.deepEqual(got.at(-1), ['2026-03-29T21:45:00.000Z', '92.6']);
    const tomorrow = await fetchWindow({
      from: Date.parse('2026-03-29T22:00Z'),
      to: Date.parse('2026-03-30T22:00Z'),
    });
    assert.deepEqual(tomorrow, { ok: true, series: [] }, 'a success without points');
  });

  test('a run stores the spring DST day complete with its 92 quarter hours, and nothing for the day not published', async () => {
    serveDays();
    const stores = await openEmbeddedStores(':memory:');
    try {
      const window = { from: Date.parse('2026-03-28T23:00Z'), to: Date.parse('2026-03-30T22:00Z') };
      const connector = nordpool.create({ zone: 'NO1', baseUrl: upstream.url('/api/') });
      const run = await runSource(connector, window, stores, { name: 'nordpool-no1' });
      assert.deepEqual(run, {
        ok: true,
        written: 92,
        series: [{ symbol: 'NO1', points: 92, created: true }],
        notPublished: false,
      });
      const days = await stores.prices.dayProvenance?.('NO1', '2026-03-29', '2026-03-30');
      assert.deepEqual(
        days?.map(({ date, source, complete }) => ({ date, source, complete })),
        [{ date: '2026-03-29', source: 'nordpool-no1', complete: true }],
      );
    } finally {
      await stores.close();
    }
  });

  test('an answer with no entries is not published yet', async () => {
    serveDays((doc) => {
      doc['multiAreaEntries'] = [];
    });
    assert.deepEqual(await fetchWindow(AUTUMN), { ok: true, series: [] });
  });

  test('preliminary prices are left out unless the source takes them', async () => {
    serveDays((doc) => {
      doc['areaStates'] = [
        { state: 'Preliminary', areas: ['NO1'] },
        { state: 'Final', areas: ['SE3'] },
      ];
    });
    assert.deepEqual(await fetchWindow(AUTUMN), { ok: true, series: [] });
    assert.equal(onlySeries(await fetchWindow(AUTUMN, { zone: 'SE3' })).points.length, 100);
    assert.equal(onlySeries(await fetchWindow(AUTUMN, { preliminary: true })).points.length, 98);
  });

  test('an area the answer gives no state for, or a state it does not know, is a failure', async () => {
    serveDays((doc) => {
      doc['areaStates'] = [{ state: 'Final', areas: ['SE3'] }];
    });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /2025-10-26 NO1: areaStates gives the area no state/);
    serveDays((doc) => {
      doc['areaStates'] = [{ state: 'Cancelled', areas: ['NO1', 'SE3'] }];
    });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /the state "Cancelled"/);
  });

  test('in SEK across the 15-minute switch: hourly then quarter hours, one grid only with fillQuarters', async () => {
    serveDays();
    const hourly = onlySeries(
      await fetchWindow(
        { from: Date.parse('2025-09-29T22:00Z'), to: Date.parse('2025-09-30T22:00Z') },
        { zone: 'SE3', currency: 'SEK' },
      ),
    );
    assert.equal(upstream.requests.at(-1)?.searchParams.get('currency'), 'SEK');
    assert.equal(hourly.series.symbol, 'SE3-SEK');
    assert.equal(hourly.series.currency, 'SEK');
    assert.equal(hourly.series.resolution, 'PT1H');
    assert.equal(hourly.points.length, 24);
    assert.deepEqual(pairs(hourly.points)[0], ['2025-09-29T22:00:00.000Z', '989.95']);

    const across = { from: Date.parse('2025-09-29T22:00Z'), to: Date.parse('2025-10-01T22:00Z') };
    assert.match(
      failureOf(await fetchWindow(across, { zone: 'SE3', currency: 'SEK' })),
      /mixes intervals of 15 and 60 minutes: set fillQuarters/,
    );
    const filled = onlySeries(
      await fetchWindow(across, { zone: 'SE3', currency: 'SEK', resolution: 'PT15M', fillQuarters: true }),
    );
    const got = pairs(filled.points);
    assert.equal(got.length, 24 * 4 + 96);
    assert.deepEqual(got.slice(92, 97), [
      ['2025-09-30T21:00:00.000Z', '385.64'],
      ['2025-09-30T21:15:00.000Z', '385.64'],
      ['2025-09-30T21:30:00.000Z', '385.64'],
      ['2025-09-30T21:45:00.000Z', '385.64'],
      ['2025-09-30T22:00:00.000Z', '992.26'],
    ]);
  });

  test('an answer in another currency than asked is a failure, never relabelled', async () => {
    serveDays((doc) => {
      doc['currency'] = 'EUR';
    });
    assert.match(
      failureOf(await fetchWindow(AUTUMN, { currency: 'NOK' })),
      /2025-10-26 NO1: prices in "EUR", NOK was asked/,
    );
  });

  test('an error answer in the portal’s words, keeping Retry-After; a page that is not JSON is named', async () => {
    upstream.answer(PATH, {
      status: 400,
      headers: { 'content-type': 'application/problem+json; charset=utf-8' },
      body: JSON.stringify({
        type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
        title: 'One or more validation errors occurred.',
        status: 400,
        errors: { deliveryArea: ['The deliveryArea field is required.'] },
      }),
    });
    const invalid = await fetchWindow(AUTUMN);
    assert.ok(!invalid.ok);
    assert.equal(invalid.failure.kind, 'upstream');
    assert.match(
      invalid.failure.message,
      /DayAheadPrices answered HTTP 400: One or more validation errors occurred\.; deliveryArea: The deliveryArea field is required\.$/,
    );
    upstream.answer(PATH, { status: 429, headers: { 'retry-after': '120' }, body: 'Too Many Requests' });
    const limited = await fetchWindow(AUTUMN);
    assert.ok(!limited.ok);
    assert.equal(limited.failure.retryAfterMs, 120_000);
    assert.match(limited.failure.message, /answered HTTP 429: Too Many Requests$/);
    upstream.answer(PATH, {
      headers: { 'content-type': 'text/html' },
      body: '<!DOCTYPE html><html><body>Maintenance</body></html>',
    });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /sent no JSON for 2025-10-26; arrived: an HTML page/);
  });

  test('an error on one day of the window fails the run, never a window cut short', async () => {
    upstream.answer(PATH, (url): FakeAnswer => {
      const date = url.searchParams.get('date');
      if (date === '2026-03-30') return { status: 502, body: 'Bad Gateway' };
      return { body: fixture(`nordpool/${FIXTURES[date ?? '']}`) };
    });
    const window = { from: Date.parse('2026-03-28T23:00Z'), to: Date.parse('2026-03-30T22:00Z') };
    assert.match(failureOf(await fetchWindow(window)), /DayAheadPrices answered HTTP 502: Bad Gateway$/);
  });

  test('an entry without a readable UTC deliveryStart is a failure', async () => {
    serveDays((doc) => {
      const entries = doc['multiAreaEntries'] as Record<string, unknown>[];
      (entries[3] as Record<string, unknown>)['deliveryStart'] = '2025-10-26T00:45:00';
    });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /entry 4: deliveryStart "2025-10-26T00:45:00"/);
  });

  test('a source from the config file: the day-ahead schedule, its settings checked by name', () => {
    const [source] = parseSources(
      { np: { type: 'nordpool', zone: 'NO1', currency: 'NOK', preliminary: true } },
      {},
    );
    assert.deepEqual(source?.schedule, [
      { cron: '*/10 12-15 * * *', zone: 'Europe/Brussels', untilTomorrowComplete: true },
      { cron: '0 * * * *', zone: 'Europe/Brussels' },
    ]);
    assert.throws(
      () => parseSources({ np: { type: 'nordpool', zone: 'NO1', curency: 'NOK' } }, {}),
      /curency/,
    );
    assert.throws(() => parseSources({ np: { type: 'nordpool', zone: 'NO9' } }, {}), /sources\.np\.zone/);
  });

  test('settings name the bad field; every zone is found by its code, symbol, aliases and EIC', () => {
    assert.throws(() => nordpool.create({ zone: 'NO9' }), /^SourceSettingsError: zone/);
    assert.throws(() => nordpool.create({ zone: 'NO1', currency: 'USD' }), /currency: must be one of/);
    assert.throws(
      () => nordpool.create({ zone: 'NO1', preliminary: 'yes' as unknown as boolean }),
      /preliminary/,
    );
    assert.throws(() => nordpool.create({ zone: 'NO1', resolution: 'P1D' }), /resolution/);
    for (const zone of NORD_POOL_ZONES) {
      for (const name of [zone.zone, zone.symbol, zone.eic, ...zone.aliases]) {
        assert.equal(nordPoolZone(name.toLowerCase())?.zone, zone.zone, name);
      }
    }
    assert.equal(nordpool.zones?.find((z) => z.zone === 'GER')?.eic, '10Y1001A1001A82H');
    assert.match(nordpool.terms?.redistribution ?? '', /prior written consent/);
  });
});
