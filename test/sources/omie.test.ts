/**
 * The OMIE connector against a fake site serving day files in OMIE's formats (ISO-8859-1, decimal
 * comma in the report): the report of the autumn DST day of 2025 (100 quarter hours, H1Q1 to H25Q4),
 * an hourly report of 2008 in cents per kWh with its hour 25, and the marginalpdbc file of the spring
 * DST day of 2026 (92 quarter hours).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type OmieSettings, omie } from '../../src/sources/omie/connector.js';
import { runSource } from '../../src/sources/run-source.js';
import { parseSources } from '../../src/sources/source-config.js';
import type { SourceResult, SourceSeries, SourceWindow, UpstreamOptions } from '../../src/sources/types.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

const REPORT_2025_10_26 =
  '/sites/default/files/dados/AGNO_2025/MES_10/TXT/INT_PBC_EV_H_1_26_10_2025_26_10_2025.TXT';
const REPORT_2025_10_27 =
  '/sites/default/files/dados/AGNO_2025/MES_10/TXT/INT_PBC_EV_H_1_27_10_2025_27_10_2025.TXT';
const REPORT_2008_10_26 =
  '/sites/default/files/dados/AGNO_2008/MES_10/TXT/INT_PBC_EV_H_1_26_10_2008_26_10_2008.TXT';
const PDBC_2026_03_29 = '/es/file-download?parents=marginalpdbc&filename=marginalpdbc_20260329.1';
// Market days in Madrid: 25 hours on 26 October 2025, 23 hours on 29 March 2026.
const DAY_2025_10_26 = { from: Date.parse('2025-10-25T22:00Z'), to: Date.parse('2025-10-26T23:00Z') };
const DAY_2008_10_26 = { from: Date.parse('2008-10-25T22:00Z'), to: Date.parse('2008-10-26T23:00Z') };
const DAY_2026_03_29 = { from: Date.parse('2026-03-28T23:00Z'), to: Date.parse('2026-03-29T22:00Z') };
const LATER = { now: () => Date.parse('2026-06-01T12:00Z') };
let upstream: FakeUpstream;

async function fetchWindow(
  window: SourceWindow,
  settings: Partial<OmieSettings> = {},
  options: UpstreamOptions = LATER,
): Promise<SourceResult> {
  return omie.create({ zone: 'ES', baseUrl: upstream.url('/'), ...settings }, options).fetchWindow(window);
}

function onlySeries(result: SourceResult): SourceSeries {
  assert.ok(result.ok, result.ok ? '' : result.failure.message);
  assert.equal(result.series.length, 1);
  return result.series[0] as SourceSeries;
}

describe('the omie connector', () => {
  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
  });
  beforeEach(() => {
    upstream
      .answer(REPORT_2025_10_26, { body: fixture('omie/INT_PBC_EV_H_1_26_10_2025_26_10_2025.TXT') })
      .answer(REPORT_2008_10_26, { body: fixture('omie/INT_PBC_EV_H_1_26_10_2008_26_10_2008.TXT') })
      .answer(PDBC_2026_03_29, { body: fixture('omie/marginalpdbc_20260329.1') })
      .answer(REPORT_2025_10_27, { status: 404, body: 'Page not found' });
  });
  after(() => upstream.close());

  test('asks for each market day’s file by its OMIE name', async () => {
    upstream.requests.length = 0;
    await fetchWindow(DAY_2025_10_26);
    await fetchWindow(DAY_2026_03_29, { file: 'marginalpdbc' });
    const [report, pdbc] = upstream.requests as [URL, URL];
    assert.equal(upstream.requests.length, 2);
    assert.equal(report.pathname, REPORT_2025_10_26);
    assert.equal(report.search, '');
    assert.equal(pdbc.pathname, '/es/file-download');
    assert.deepEqual(Object.fromEntries(pdbc.searchParams), {
      parents: 'marginalpdbc',
      filename: 'marginalpdbc_20260329.1',
    });
  });

  test('the autumn DST report: 100 quarter hours from 00:00 Madrid time, the empty one missing', async () => {
    const series = onlySeries(await fetchWindow(DAY_2025_10_26));
    assert.deepEqual(series.series, {
      symbol: 'ES',
      name: 'ES day-ahead (OMIE)',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Madrid',
      resolution: 'PT15M',
    });
    const got = pairs(series.points);
    assert.equal(got.length, 99, '100 quarter hours, one without a price');
    assert.deepEqual(got[0], ['2025-10-25T22:00:00.000Z', '60.00']);
    assert.deepEqual(got.at(-1), ['2025-10-26T22:45:00.000Z', '73.87']);
    const at = new Map(got);
    assert.equal(at.has('2025-10-25T23:45:00.000Z'), false, 'an empty cell is missing, never 0');
    // 02:00 Madrid time, first (H3, +02:00) and second (H4, +01:00) time round.
    assert.equal(at.get('2025-10-26T00:00:00.000Z'), '106.04');
    assert.equal(at.get('2025-10-26T01:00:00.000Z'), '104.56');
    assert.equal(at.get('2025-10-26T12:00:00.000Z'), '-0.50');
  });

  test('Portugal from its own row, in Lisbon’s time zone, at the same instants', async () => {
    const series = onlySeries(await fetchWindow(DAY_2025_10_26, { zone: 'Portugal' }));
    assert.equal(series.series.symbol, 'PT');
    assert.equal(series.series.timezone, 'Europe/Lisbon');
    const at = new Map(pairs(series.points));
    assert.equal(series.points.length, 100);
    assert.equal(at.get('2025-10-26T08:00:00.000Z'), '77.95', 'the PT price where the zones part');
    assert.equal(at.get('2025-10-25T23:45:00.000Z'), '69.91', 'PT has the price ES left empty');
  });

  test('an hourly report of 2008 in cents per kWh: 25 hours, moved exactly to EUR/MWh', async () => {
    const series = onlySeries(await fetchWindow(DAY_2008_10_26));
    assert.equal(series.series.resolution, 'PT1H');
    assert.equal(series.series.unit, 'MWh');
    const got = pairs(series.points);
    assert.equal(got.length, 25);
    assert.deepEqual(got[0], ['2008-10-25T22:00:00.000Z', '65']);
    assert.deepEqual(got[2], ['2008-10-26T00:00:00.000Z', '67.74']);
    assert.deepEqual(got.at(-1), ['2008-10-26T22:00:00.000Z', '77.88']);
  });

  test('a report without a row for the zone is a failure', async () => {
    const result = await fetchWindow(DAY_2008_10_26, { zone: 'PT' });
    assert.ok(!result.ok);
    assert.match(result.failure.message, /no marginal price row for PT$/);
  });

  test('marginalpdbc on the spring DST day: 92 quarter hours, Portugal in column 5, Spain in 6', async () => {
    const es = onlySeries(await fetchWindow(DAY_2026_03_29, { file: 'marginalpdbc' }));
    assert.equal(es.series.resolution, 'PT15M');
    const got = pairs(es.points);
    assert.equal(got.length, 92);
    assert.deepEqual(got[0], ['2026-03-28T23:00:00.000Z', '60']);
    assert.deepEqual(got[40], ['2026-03-29T09:00:00.000Z', '90.2']);
    assert.deepEqual(got.at(-1), ['2026-03-29T21:45:00.000Z', '77.83']);
    const pt = onlySeries(await fetchWindow(DAY_2026_03_29, { file: 'marginalpdbc', zone: 'PT' }));
    assert.deepEqual(pairs(pt.points)[40], ['2026-03-29T09:00:00.000Z', '77.95']);
  });

  test('tomorrow’s file not there yet (404) is not published: a success without its points', async () => {
    const twoDays = { from: DAY_2025_10_26.from, to: Date.parse('2025-10-27T23:00Z') };
    const noon = { now: () => Date.parse('2025-10-26T11:00Z') };
    const series = onlySeries(await fetchWindow(twoDays, {}, noon));
    assert.equal(series.points.length, 99);
    assert.equal(upstream.requests.at(-1)?.pathname, REPORT_2025_10_27);
  });

  test('a day gone by without its file is a failure naming the day', async () => {
    const twoDays = { from: DAY_2025_10_26.from, to: Date.parse('2025-10-27T23:00Z') };
    const result = await fetchWindow(twoDays);
    assert.ok(!result.ok);
    assert.equal(result.failure.status, 404);
    assert.match(result.failure.message, /answered HTTP 404: no file for market day 2025-10-27$/);
  });

  test('hour 25 exists only on the autumn DST day', async () => {
    const text = fixture('omie/INT_PBC_EV_H_1_26_10_2025_26_10_2025.TXT')
      .toString('latin1')
      .replace(';;26/10/2025;', ';;27/10/2025;');
    upstream.answer(REPORT_2025_10_27, { body: Buffer.from(text, 'latin1') });
    const result = await fetchWindow({
      from: Date.parse('2025-10-26T23:00Z'),
      to: Date.parse('2025-10-27T23:00Z'),
    });
    assert.ok(!result.ok);
    assert.match(result.failure.message, /period H25Q1 on a day of 96 periods$/);
  });

  test('a file for another day than its name is a failure', async () => {
    upstream.answer(REPORT_2025_10_27, { body: fixture('omie/INT_PBC_EV_H_1_26_10_2025_26_10_2025.TXT') });
    const result = await fetchWindow({
      from: Date.parse('2025-10-26T23:00Z'),
      to: Date.parse('2025-10-27T23:00Z'),
    });
    assert.ok(!result.ok);
    assert.match(result.failure.message, /the file is for 26\/10\/2025, not 2025-10-27$/);
  });

  test('a marginalpdbc file cut short before its "*" is a failure, never a short day', async () => {
    const cut = fixture('omie/marginalpdbc_20260329.1')
      .toString('latin1')
      .split('\n')
      .slice(0, 50)
      .join('\n');
    upstream.answer(PDBC_2026_03_29, { body: cut });
    const result = await fetchWindow(DAY_2026_03_29, { file: 'marginalpdbc' });
    assert.ok(!result.ok);
    assert.match(result.failure.message, /ends before its closing "\*" line/);
  });

  test('an error status is a failure with the site’s words and its Retry-After', async () => {
    upstream.answer(REPORT_2025_10_26, {
      status: 503,
      headers: { 'retry-after': '120', 'content-type': 'text/html' },
      body: '<html><body><h1>Service Unavailable</h1><p>Maintenance</p></body></html>',
    });
    const result = await fetchWindow(DAY_2025_10_26);
    assert.ok(!result.ok);
    assert.equal(result.failure.retryAfterMs, 120_000);
    assert.match(result.failure.message, /answered HTTP 503: Service Unavailable Maintenance$/);
  });

  test('a run stores the spring DST day whole: 92 quarter hours make the Madrid day complete', async () => {
    const stores = await openEmbeddedStores(':memory:');
    try {
      const connector = omie.create({ zone: 'ES', file: 'marginalpdbc', baseUrl: upstream.url('/') }, LATER);
      const run = await runSource(connector, DAY_2026_03_29, stores, { name: 'omie-es', now: LATER.now });
      assert.deepEqual(run, {
        ok: true,
        written: 92,
        series: [{ symbol: 'ES', points: 92, created: true }],
        notPublished: false,
      });
      const days = await stores.prices.dayProvenance?.('ES', '2026-03-29', '2026-03-30');
      assert.deepEqual(
        days?.map((d) => [d.date, d.source, d.complete]),
        [['2026-03-29', 'omie-es', true]],
      );
    } finally {
      await stores.close();
    }
  });

  test('in the config file: the day-ahead schedule at noon Brussels time, a misspelt setting refused', () => {
    const [source] = parseSources({ 'omie-pt': { type: 'omie', zone: 'PT', file: 'marginalpdbc' } }, {});
    assert.deepEqual(source?.schedule, [
      { cron: '*/10 12-15 * * *', zone: 'Europe/Brussels', untilTomorrowComplete: true },
      { cron: '0 * * * *', zone: 'Europe/Brussels' },
    ]);
    assert.throws(
      () => parseSources({ 'omie-pt': { type: 'omie', zone: 'PT', files: 'report' } }, {}),
      /sources\.omie-pt\.files.*is not a setting of omie sources/,
    );
  });

  test('settings name the bad field; zones carry their EIC codes', () => {
    assert.throws(() => omie.create({ zone: 'FR' }), /^SourceSettingsError: zone/);
    assert.throws(() => omie.create({ zone: 'ES', file: 'xls' as 'report' }), /^SourceSettingsError: file/);
    assert.doesNotThrow(() => omie.create({ zone: '10YPT-REN------W' }));
    assert.deepEqual(
      omie.zones?.map((z) => [z.zone, z.eic]),
      [
        ['ES', '10YES-REE------0'],
        ['PT', '10YPT-REN------W'],
      ],
    );
  });
});
