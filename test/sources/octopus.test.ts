/**
 * The Octopus connector against a fake API serving Agile unit rates for region C in two pages,
 * newest first, across the autumn DST day of 2025 in London (50 half hours; 01:00 and 01:30 local
 * come twice). The rates run to 23:00 UK time on 27 October, as Agile publishes its days, so the
 * last hour of the window is not published yet.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type OctopusSettings, octopus } from '../../src/sources/octopus/connector.js';
import { runSource } from '../../src/sources/run-source.js';
import { parseSources } from '../../src/sources/source-config.js';
import type { SourceResult, SourceSeries } from '../../src/sources/types.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

const PATH = '/v1/products/AGILE-24-10-01/electricity-tariffs/E-1R-AGILE-24-10-01-C/standard-unit-rates/';
const QUERY = 'period_from=2025-10-24T23%3A00%3A00Z&period_to=2025-10-28T00%3A00%3A00Z';
// London days 25, 26 (25 hours) and 27 October 2025.
const WINDOW = { from: Date.parse('2025-10-24T23:00Z'), to: Date.parse('2025-10-28T00:00Z') };
let upstream: FakeUpstream;

/** A fixture page as the fake serves it: its links point at the fake, as a mirror's would. */
function page(n: 1 | 2): string {
  return fixture(`octopus/agile-c-page-${n}.json`)
    .toString('utf8')
    .replaceAll('https://api.octopus.energy', upstream.url(''));
}

function serveFixture(): void {
  upstream.answer(PATH, { body: page(1) });
  upstream.answer(`${PATH}?page=2&${QUERY}`, { body: page(2) });
}

async function fetchWindow(settings: Partial<OctopusSettings> = {}, window = WINDOW): Promise<SourceResult> {
  const connector = octopus.create({
    product: 'AGILE-24-10-01',
    region: 'C',
    baseUrl: upstream.url('/'),
    ...settings,
  });
  return connector.fetchWindow(window);
}

function onlySeries(result: SourceResult): SourceSeries {
  assert.ok(result.ok, result.ok ? '' : result.failure.message);
  assert.equal(result.series.length, 1);
  return result.series[0] as SourceSeries;
}

/** A one-page answer holding `results`. */
function onePage(results: unknown[]): string {
  return JSON.stringify({ count: results.length, next: null, previous: null, results });
}

describe('the octopus connector', () => {
  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
  });
  beforeEach(() => serveFixture());
  after(() => upstream.close());

  test('asks for the tariff of the product and region in UTC, then follows next to page 2', async () => {
    upstream.requests.length = 0;
    onlySeries(await fetchWindow({ region: 'London' }));
    assert.equal(upstream.requests.length, 2);
    const [first, second] = upstream.requests as [URL, URL];
    assert.equal(first.pathname, PATH);
    assert.deepEqual(Object.fromEntries(first.searchParams), {
      period_from: '2025-10-24T23:00:00Z',
      period_to: '2025-10-28T00:00:00Z',
    });
    assert.equal(second.pathname, PATH);
    assert.equal(second.searchParams.get('page'), '2');
  });

  test('both pages, oldest first, in pounds per kWh without VAT; the DST day has its 50 half hours', async () => {
    const series = onlySeries(await fetchWindow());
    assert.deepEqual(series.series, {
      symbol: 'AGILE-24-10-01-C',
      name: 'Octopus AGILE-24-10-01, London (C), VAT excluded',
      kind: 'electricity',
      currency: 'GBP',
      unit: 'kWh',
      timezone: 'Europe/London',
      resolution: 'PT30M',
    });
    const got = pairs(series.points);
    // 144 half hours published, one of them without a price.
    assert.equal(got.length, 143);
    assert.deepEqual(got[0], ['2025-10-24T23:00:00.000Z', '0.119048']);
    assert.deepEqual(got.at(-1), ['2025-10-27T22:30:00.000Z', '0.119048']);
    const at = new Map(got);
    // 01:00 London, first (BST) and second (GMT) time round.
    assert.equal(at.get('2025-10-26T00:00:00.000Z'), '0.19819');
    assert.equal(at.get('2025-10-26T01:00:00.000Z'), '0.119048');
    assert.equal(at.get('2025-10-26T13:00:00.000Z'), '-0.028571', 'a negative price stays negative');
    assert.equal(at.has('2025-10-26T01:30:00.000Z'), false, 'a null rate is missing, never 0');
    const dstDay = got.filter(([start]) => start >= '2025-10-25T23:00' && start < '2025-10-27T00:00');
    assert.equal(dstDay.length, 49, '50 half hours on 26 October, one without a price');
  });

  test('the hour after 23:00 on the last day is not published yet: no points, no failure', async () => {
    const series = onlySeries(await fetchWindow());
    const last = series.points.at(-1);
    assert.equal(last?.start, Date.parse('2025-10-27T22:30Z'));
    assert.equal(
      series.points.some((p) => p.start >= Date.parse('2025-10-27T23:00Z')),
      false,
    );
  });

  test('vat: included reads value_inc_vat, as its own series', async () => {
    const series = onlySeries(await fetchWindow({ vat: 'included' }));
    assert.equal(series.series.symbol, 'AGILE-24-10-01-C-INC-VAT');
    assert.equal(series.series.name, 'Octopus AGILE-24-10-01, London (C), VAT included');
    const at = new Map(pairs(series.points));
    assert.equal(at.get('2025-10-24T23:00:00.000Z'), '0.125');
    assert.equal(at.get('2025-10-26T00:00:00.000Z'), '0.2081');
    assert.equal(at.get('2025-10-26T13:00:00.000Z'), '-0.03');
  });

  test('only the window: rates outside it are left out', async () => {
    const day = { from: Date.parse('2025-10-25T23:00Z'), to: Date.parse('2025-10-27T00:00Z') };
    upstream.answer(PATH, {
      body: page(1)
        .replace(/"next": "[^"]*"/, '"next": null')
        .replace('"count": 144', '"count": 100'),
    });
    const series = onlySeries(await fetchWindow({}, day));
    assert.equal(series.points.length, 49);
    assert.equal(series.points[0]?.start, day.from);
  });

  test('a page missing from the pages (fewer rates than count) is a failure, never a short day', async () => {
    upstream.answer(`${PATH}?page=2&${QUERY}`, {
      body: page(2).replace(/"results": \[[\s\S]*\]/, '"results": []'),
    });
    const result = await fetchWindow();
    assert.ok(!result.ok);
    assert.match(result.failure.message, /the pages hold 100 of 144 rates/);
  });

  test('a next link to another host is not followed', async () => {
    upstream.answer(PATH, { body: page(1).replace(upstream.url(''), 'https://elsewhere.example') });
    upstream.requests.length = 0;
    const result = await fetchWindow();
    assert.ok(!result.ok);
    assert.match(result.failure.message, /links its next page to "https:\/\/elsewhere\.example/);
    assert.equal(upstream.requests.length, 1);
  });

  test('rates per payment method: the chosen one, direct debit unless set', async () => {
    const rate = (method: string, exc: number) => ({
      value_exc_vat: exc,
      value_inc_vat: exc * 1.05,
      valid_from: '2025-10-26T12:00:00Z',
      valid_to: '2025-10-26T12:30:00Z',
      payment_method: method,
    });
    upstream.answer(PATH, { body: onePage([rate('DIRECT_DEBIT', 20.1), rate('NON_DIRECT_DEBIT', 21.3)]) });
    assert.deepEqual(pairs(onlySeries(await fetchWindow()).points), [['2025-10-26T12:00:00.000Z', '0.201']]);
    assert.deepEqual(pairs(onlySeries(await fetchWindow({ paymentMethod: 'NON_DIRECT_DEBIT' })).points), [
      ['2025-10-26T12:00:00.000Z', '0.213'],
    ]);
  });

  test('a rate that is not one half hour is refused, never spread', async () => {
    upstream.answer(PATH, {
      body: onePage([
        {
          value_exc_vat: 24.5,
          value_inc_vat: 25.725,
          valid_from: '2025-10-26T00:00:00Z',
          valid_to: null,
          payment_method: null,
        },
      ]),
    });
    const result = await fetchWindow();
    assert.ok(!result.ok);
    assert.match(result.failure.message, /valid_to "null" is no half hour's end/);
  });

  test('an unknown product answers 404 in the API’s own words', async () => {
    upstream.answer(PATH, {
      status: 404,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ detail: 'No ElectricityTariff matches the given query.' }),
    });
    const result = await fetchWindow();
    assert.ok(!result.ok);
    assert.equal(result.failure.kind, 'upstream');
    assert.equal(result.failure.status, 404);
    assert.match(
      result.failure.message,
      /answered HTTP 404: No ElectricityTariff matches the given query\.$/,
    );
  });

  test('a 429 carries its Retry-After', async () => {
    upstream.answer(PATH, {
      status: 429,
      headers: { 'retry-after': '60', 'content-type': 'application/json' },
      body: JSON.stringify({ detail: 'Request was throttled. Expected available in 60 seconds.' }),
    });
    const result = await fetchWindow();
    assert.ok(!result.ok);
    assert.equal(result.failure.retryAfterMs, 60_000);
    assert.match(result.failure.message, /Request was throttled/);
  });

  test('an empty answer is a success with no points (not published yet)', async () => {
    upstream.answer(PATH, { body: onePage([]) });
    const series = onlySeries(await fetchWindow());
    assert.deepEqual(series.points, []);
  });

  test('a run stores every half hour; a London day is complete only with all its half hours', async () => {
    const stores = await openEmbeddedStores(':memory:');
    try {
      const connector = octopus.create({
        product: 'AGILE-24-10-01',
        region: 'C',
        baseUrl: upstream.url('/'),
      });
      const run = await runSource(connector, WINDOW, stores, { name: 'agile-c' });
      assert.deepEqual(run, {
        ok: true,
        written: 143,
        series: [{ symbol: 'AGILE-24-10-01-C', points: 143, created: true }],
        notPublished: false,
      });
      const days = await stores.prices.dayProvenance?.('AGILE-24-10-01-C', '2025-10-25', '2025-10-28');
      // 26 October lacks its null half hour; 27 October its last hour, not published yet.
      assert.deepEqual(
        days?.map((d) => [d.date, d.complete]),
        [
          ['2025-10-25', true],
          ['2025-10-26', false],
          ['2025-10-27', false],
        ],
      );
    } finally {
      await stores.close();
    }
  });

  test('in the config file: the afternoon schedule by default, a misspelt setting refused', () => {
    const [source] = parseSources({ agile: { type: 'octopus', product: 'AGILE-24-10-01', region: 'C' } }, {});
    assert.deepEqual(source?.schedule, [
      { cron: '*/15 16-17 * * *', zone: 'Europe/London' },
      { cron: '0 */6 * * *', zone: 'Europe/London' },
    ]);
    assert.deepEqual(source?.plan.window, { zone: 'Europe/London', daysBack: 1, daysAhead: 1 });
    assert.throws(
      () =>
        parseSources(
          { agile: { type: 'octopus', product: 'AGILE-24-10-01', region: 'C', VAT: 'included' } },
          {},
        ),
      /sources\.agile\.VAT.*is not a setting of octopus sources/,
    );
    assert.throws(
      () => parseSources({ agile: { type: 'octopus', product: 'AGILE-24-10-01', region: 'Q' } }, {}),
      /sources\.agile\.region/,
    );
  });

  test('settings name the bad field', () => {
    assert.throws(
      () => octopus.create({ product: 'AGILE-24-10-01', region: 'I' }),
      /^SourceSettingsError: region/,
    );
    assert.throws(
      () => octopus.create({ product: 'agile 24', region: 'C' }),
      /^SourceSettingsError: product/,
    );
    assert.throws(
      () => octopus.create({ product: 'AGILE-24-10-01', region: 'C', vat: 'yes' as 'included' }),
      /^SourceSettingsError: vat: must be excluded or included/,
    );
    assert.throws(
      () => octopus.create({ product: 'AGILE-FLEX-BB-23-02-08-EXTRA-LONG', region: 'C', vat: 'included' }),
      /^SourceSettingsError: symbol/,
    );
    assert.equal(octopus.zones?.length, 14);
    assert.deepEqual(
      octopus.zones?.find((z) => z.zone === 'P'),
      { zone: 'P', aliases: ['_P', 'Northern Scotland'] },
    );
  });
});
