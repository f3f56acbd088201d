/**
 * The Elering connector against a fake dashboard API serving `/api/nps/price` for EE, FI, LV and
 * LT: the Tallinn autumn DST day (100 quarter hours), the spring one with the next day not
 * published yet (92), the 15-minute switch (whose first Tallinn hour is still hourly), windows of
 * more than a year asked in parts, and the API's error answers.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type EleringSettings, elering } from '../../src/sources/elering/connector.js';
import { runSource } from '../../src/sources/run-source.js';
import { parseSources } from '../../src/sources/source-config.js';
import type { SourceResult, SourceSeries, SourceWindow } from '../../src/sources/types.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

const PATH = '/api/nps/price';
/** The Tallinn day of 26 October 2025, 25 hours long. */
const AUTUMN = { from: Date.parse('2025-10-25T21:00Z'), to: Date.parse('2025-10-26T22:00Z') };
let upstream: FakeUpstream;

function serve(name: string): void {
  upstream.answer(PATH, {
    body: fixture(`elering/${name}`),
    headers: { 'content-type': 'application/json' },
  });
}

async function fetchWindow(
  window: SourceWindow,
  settings: Partial<EleringSettings> = {},
): Promise<SourceResult> {
  const connector = elering.create({ zone: 'EE', baseUrl: upstream.url('/api/'), ...settings });
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

describe('the elering connector', () => {
  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
  });
  after(() => upstream.close());

  test('asks /api/nps/price for the window, each bound a millisecond early as the API’s own examples', async () => {
    serve('autumn-dst-2025-10-26.json');
    await fetchWindow(AUTUMN);
    const asked = upstream.requests.at(-1) as URL;
    assert.equal(asked.pathname, PATH);
    assert.deepEqual(Object.fromEntries(asked.searchParams), {
      start: '2025-10-25T20:59:59.999Z',
      end: '2025-10-26T21:59:59.999Z',
    });
  });

  test('the autumn DST day: 100 quarter hours from unix seconds, in EUR/MWh, a null price missing', async () => {
    serve('autumn-dst-2025-10-26.json');
    const series = onlySeries(await fetchWindow(AUTUMN));
    assert.deepEqual(series.series, {
      symbol: 'EE',
      name: 'EE day-ahead (Elering)',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Tallinn',
      resolution: 'PT15M',
    });
    const got = pairs(series.points);
    assert.equal(got.length, 99, '100 quarter hours, one of them null');
    const at = new Map(got);
    assert.equal(at.has('2025-10-26T02:00:00.000Z'), false, 'a null price is missing, never 0');
    // 03:00 local time, first (+03:00) and second (+02:00) time round.
    assert.equal(at.get('2025-10-26T00:00:00.000Z'), '92.27');
    assert.equal(at.get('2025-10-26T01:00:00.000Z'), '84.64');
    assert.equal(at.get('2025-10-26T12:00:00.000Z'), '-3.01');
    assert.equal(at.get('2025-10-26T12:15:00.000Z'), '0', 'a real zero price is a price');
    assert.deepEqual(got[0], ['2025-10-25T21:00:00.000Z', '89.4']);
    assert.deepEqual(got.at(-1), ['2025-10-26T21:45:00.000Z', '35.24']);
    const fi = onlySeries(await fetchWindow(AUTUMN, { zone: 'Finland' }));
    assert.equal(fi.series.symbol, 'FI');
    assert.equal(fi.series.timezone, 'Europe/Helsinki');
    assert.equal(fi.points.length, 100, 'FI reads its own list');
  });

  test('the spring DST day has 92 quarter hours; the next day, not in the answer yet, has none', async () => {
    serve('spring-dst-2026-03-29-tomorrow-unpublished.json');
    const window = { from: Date.parse('2026-03-28T22:00Z'), to: Date.parse('2026-03-30T21:00Z') };
    const got = pairs(onlySeries(await fetchWindow(window, { zone: 'LV' })).points);
    assert.equal(got.length, 92, 'nothing for 30 March, never zeros');
    assert.deepEqual(got[4], ['2026-03-28T23:00:00.000Z', '121.32']);
    assert.deepEqual(got[8], ['2026-03-29T00:00:00.000Z', '104.79'], '02:00 local');
    assert.deepEqual(got[12], ['2026-03-29T01:00:00.000Z', '65.24'], '04:00 local: 03:00 does not exist');
    assert.deepEqual(got.at(-1), ['2026-03-29T20:45:00.000Z', '33.81']);
    const tomorrow = await fetchWindow({
      from: Date.parse('2026-03-29T21:00Z'),
      to: Date.parse('2026-03-30T21:00Z'),
    });
    assert.deepEqual(tomorrow, { ok: true, series: [] }, 'a success without points');
  });

  test('a run stores the spring DST day complete with its 92 quarter hours, and nothing for the day not published', async () => {
    serve('spring-dst-2026-03-29-tomorrow-unpublished.json');
    const stores = await openEmbeddedStores(':memory:');
    try {
      const window = { from: Date.parse('2026-03-28T22:00Z'), to: Date.parse('2026-03-30T21:00Z') };
      const run = await runSource(
        elering.create({ zone: 'EE', baseUrl: upstream.url('/api/') }),
        window,
        stores,
      );
      assert.deepEqual(run, {
        ok: true,
        written: 92,
        series: [{ symbol: 'EE', points: 92, created: true }],
        notPublished: false,
      });
      const days = await stores.prices.dayProvenance?.('EE', '2026-03-29', '2026-03-30');
      assert.deepEqual(
        days?.map(({ date, source, complete }) => ({ date, source, complete })),
        [{ date: '2026-03-29', source: 'elering', complete: true }],
      );
    } finally {
      await stores.close();
    }
  });

  test('a country the answer leaves out, an empty list, or no data at all is not published yet', async () => {
    upstream.answer(PATH, { body: JSON.stringify({ success: true, data: { fi: [] } }) });
    assert.deepEqual(await fetchWindow(AUTUMN), { ok: true, series: [] });
    assert.deepEqual(await fetchWindow(AUTUMN, { zone: 'FI' }), { ok: true, series: [] });
    for (const data of [null, []]) {
      upstream.answer(PATH, { body: JSON.stringify({ success: true, data }) });
      assert.deepEqual(await fetchWindow(AUTUMN), { ok: true, series: [] }, JSON.stringify(data));
    }
    upstream.answer(PATH, {
      body: JSON.stringify({ success: true, data: [{ timestamp: 1761426000, price: 1 }] }),
    });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /Elering answer: no data by country/);
  });

  test('the 15-minute switch: the first Tallinn hour of 1 October is still hourly; one grid only with fillQuarters', async () => {
    serve('15-minute-switch-2025-10-01.json');
    const september = onlySeries(
      await fetchWindow({ from: Date.parse('2025-09-29T21:00Z'), to: Date.parse('2025-09-30T21:00Z') }),
    );
    assert.equal(september.series.resolution, 'PT1H');
    assert.equal(september.points.length, 24);
    const october = { from: Date.parse('2025-09-30T21:00Z'), to: Date.parse('2025-10-01T21:00Z') };
    assert.match(
      failureOf(await fetchWindow(october)),
      /mixes intervals of 15 and 60 minutes: set fillQuarters/,
    );
    const filled = pairs(
      onlySeries(await fetchWindow(october, { resolution: 'PT15M', fillQuarters: true })).points,
    );
    assert.equal(filled.length, 96);
    assert.deepEqual(filled.slice(0, 5), [
      ['2025-09-30T21:00:00.000Z', '40.08'],
      ['2025-09-30T21:15:00.000Z', '40.08'],
      ['2025-09-30T21:30:00.000Z', '40.08'],
      ['2025-09-30T21:45:00.000Z', '40.08'],
      ['2025-09-30T22:00:00.000Z', '44.86'],
    ]);
  });

  test('a missing row does not lengthen the one before it', async () => {
    const doc = JSON.parse(fixture('elering/autumn-dst-2025-10-26.json').toString('utf8'));
    doc.data.ee.splice(30, 1); // 2025-10-26T04:30Z left out entirely
    upstream.answer(PATH, { body: JSON.stringify(doc) });
    const got = new Map(pairs(onlySeries(await fetchWindow(AUTUMN)).points));
    assert.equal(got.size, 98);
    assert.equal(got.has('2025-10-26T04:30:00.000Z'), false);
    assert.ok(got.has('2025-10-26T04:15:00.000Z') && got.has('2025-10-26T04:45:00.000Z'));
  });

  test('a window of more than a year is asked in parts of a year', async () => {
    upstream.answer(PATH, { body: JSON.stringify({ success: true, data: { ee: [] } }) });
    const count = upstream.requests.length;
    await fetchWindow({ from: Date.parse('2024-01-01T00:00Z'), to: Date.parse('2025-06-01T00:00Z') });
    assert.deepEqual(
      upstream.requests
        .slice(count)
        .map((url) => [url.searchParams.get('start'), url.searchParams.get('end')]),
      [
        ['2023-12-31T23:59:59.999Z', '2024-12-30T23:59:59.999Z'],
        ['2024-12-30T23:59:59.999Z', '2025-05-31T23:59:59.999Z'],
      ],
    );
  });

  test('a timestamp in milliseconds is a failure, never a date thousands of years ahead', async () => {
    upstream.answer(PATH, {
      body: JSON.stringify({ success: true, data: { ee: [{ timestamp: 1761426000000, price: 89.4 }] } }),
    });
    assert.match(
      failureOf(await fetchWindow(AUTUMN)),
      /data\.ee\[0\]: timestamp 1761426000000 is not in unix seconds/,
    );
    upstream.answer(PATH, {
      body: JSON.stringify({ success: true, data: { ee: [{ timestamp: 1761426000, price: '89,4' }] } }),
    });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /data\.ee\[0\]: price "89,4"/);
  });

  test('an error answer in the API’s words, keeping Retry-After; a page that is not JSON is named', async () => {
    upstream.answer(PATH, {
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ success: false, messages: ['Maximum allowed time period is one year'] }),
    });
    const refused = await fetchWindow(AUTUMN);
    assert.ok(!refused.ok);
    assert.equal(refused.failure.kind, 'upstream');
    assert.match(
      refused.failure.message,
      /nps\/price answered HTTP 400: Maximum allowed time period is one year$/,
    );
    upstream.answer(PATH, { status: 503, headers: { 'retry-after': '60' }, body: 'Service Unavailable' });
    const down = await fetchWindow(AUTUMN);
    assert.ok(!down.ok);
    assert.equal(down.failure.retryAfterMs, 60_000);
    upstream.answer(PATH, {
      headers: { 'content-type': 'text/html' },
      body: '<html><body>Hooldustööd</body></html>',
    });
    assert.match(failureOf(await fetchWindow(AUTUMN)), /sent no JSON; arrived: an HTML page/);
  });

  test('a source from the config file: the day-ahead schedule, its settings checked by name', () => {
    const [source] = parseSources({ ee: { type: 'elering', zone: 'EE' } }, {});
    assert.deepEqual(source?.schedule, [
      { cron: '*/10 12-15 * * *', zone: 'Europe/Brussels', untilTomorrowComplete: true },
      { cron: '0 * * * *', zone: 'Europe/Brussels' },
    ]);
    assert.throws(
      () => parseSources({ ee: { type: 'elering', zone: 'EE', currency: 'EUR' } }, {}),
      /currency/,
    );
  });

  test('settings name the bad field; zones by name, country and EIC', () => {
    assert.throws(
      () => elering.create({ zone: 'SE3' }),
      /^SourceSettingsError: zone: must be EE, LV, LT or FI/,
    );
    assert.throws(() => elering.create({ zone: 'EE', resolution: 'PT5M' as 'PT15M' }), /resolution/);
    assert.throws(() => elering.create({ zone: 'EE', baseUrl: 'ftp://x' }), /^SourceSettingsError: baseUrl/);
    for (const name of ['lt', 'Lithuania', '10YLT-1001A0008Q']) {
      assert.doesNotThrow(() => elering.create({ zone: name }), name);
    }
    assert.deepEqual(
      elering.zones?.map((z) => z.zone),
      ['EE', 'LV', 'LT', 'FI'],
    );
  });
});
