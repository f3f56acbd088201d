/**
 * A source run end to end: a connector against the fake upstream, the series created on the first
 * run, every point imported through the atomic import into SQLite, nothing written when anything
 * fails, and a rerun of the same window changing nothing but revised prices.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { decimalMean } from '../../src/domain/prices/aggregate.js';
import { createConnector } from '../../src/sources/connectors.js';
import { runSource } from '../../src/sources/run-source.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

const TOKEN = 'token-0b6e4d17';
const DST_DAY = { from: Date.parse('2025-10-25T22:00Z'), to: Date.parse('2025-10-26T23:00Z') };
const ECB_DAYS = { from: Date.parse('2026-04-27T22:00Z'), to: Date.parse('2026-05-05T22:00Z') };
let upstream: FakeUpstream;
let stores: Stores;

function entsoeDeLu() {
  return createConnector('entsoe', { zone: 'DE-LU', token: TOKEN, baseUrl: upstream.url('/api') });
}

function ecbHistory(currencies: string[]) {
  return createConnector('ecb', { currencies, feed: 'history', baseUrl: upstream.url('/ecb') });
}

async function stored(symbol: string, window: { from: number; to: number }) {
  return pairs(await stores.prices.pricesBetween(symbol, window.from, window.to));
}

describe('runSource', () => {
  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
    upstream.answer('/ecb/eurofxref-hist.zip', { body: fixture('ecb/eurofxref-hist.csv') });
  });
  after(async () => {
    await upstream.close();
    await stores?.close();
  });
  beforeEach(async () => {
    await stores?.close();
    stores = await openEmbeddedStores(':memory:');
    upstream.answer('/api', { body: fixture('entsoe/de-lu-dst-100.xml') });
  });

  test('the first run creates the series from the source and stores the whole DST day', async () => {
    const run = await runSource(entsoeDeLu(), DST_DAY, stores);
    assert.deepEqual(run, {
      ok: true,
      notPublished: false,
      written: 100,
      series: [{ symbol: 'DE-LU', points: 100, created: true }],
    });
    assert.deepEqual(await stores.prices.getSeries('DE-LU'), {
      symbol: 'DE-LU',
      name: 'DE-LU day-ahead (ENTSO-E)',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Berlin',
      resolution: 'PT15M',
    });
    const prices = await stored('DE-LU', DST_DAY);
    assert.equal(prices.length, 100);
    assert.deepEqual(prices[0], ['2025-10-25T22:00:00.000Z', '80.50']);
  });

  test('every day written records the source by name, when it was fetched, and that it is complete', async () => {
    const fetchedAt = Date.parse('2025-10-25T12:00:00Z');
    const named = await runSource(entsoeDeLu(), DST_DAY, stores, {
      name: 'entsoe-de-lu',
      now: () => fetchedAt,
    });
    assert.ok(named.ok);
    assert.deepEqual(await stores.prices.dayProvenance?.('DE-LU', '2025-10-25', '2025-10-27'), [
      { date: '2025-10-26', source: 'entsoe-de-lu', fetchedAt, complete: true },
    ]);
    // Without a name, the connector's type; a lower-ranked source leaves the complete day alone.
    const lower = await runSource(entsoeDeLu(), DST_DAY, stores, { ranking: ['entsoe-de-lu', 'entsoe'] });
    assert.deepEqual(lower, {
      ok: true,
      notPublished: false,
      written: 0,
      series: [{ symbol: 'DE-LU', points: 100, created: false }],
    });
    assert.equal(
      (await stores.prices.dayProvenance?.('DE-LU', '2025-10-26', '2025-10-26'))?.[0]?.source,
      'entsoe-de-lu',
    );
    await runSource(entsoeDeLu(), DST_DAY, stores);
    assert.equal(
      (await stores.prices.dayProvenance?.('DE-LU', '2025-10-26', '2025-10-26'))?.[0]?.source,
      'entsoe',
    );
  });

  test('a rerun of the same window is idempotent, and a revised price replaces the old one', async () => {
    await runSource(entsoeDeLu(), DST_DAY, stores);
    const first = await stored('DE-LU', DST_DAY);
    const again = await runSource(entsoeDeLu(), DST_DAY, stores);
    assert.deepEqual(again, {
      ok: true,
      notPublished: false,
      written: 100,
      series: [{ symbol: 'DE-LU', points: 100, created: false }],
    });
    assert.deepEqual(await stored('DE-LU', DST_DAY), first);

    const revised = fixture('entsoe/de-lu-dst-100.xml')
      .toString('utf8')
      .replace('<price.amount>80.50</price.amount>', '<price.amount>79.99</price.amount>');
    upstream.answer('/api', { body: revised });
    await runSource(entsoeDeLu(), DST_DAY, stores);
    const after = await stored('DE-LU', DST_DAY);
    assert.deepEqual(after[0], ['2025-10-25T22:00:00.000Z', '79.99']);
    assert.deepEqual(after.slice(1), first.slice(1));
  });

  test('"no matching data" is not published: it writes nothing and creates no series', async () => {
    upstream.answer('/api', { status: 200, body: fixture('entsoe/acknowledgement-999.xml') });
    const run = await runSource(entsoeDeLu(), DST_DAY, stores);
    assert.deepEqual(run, { ok: true, written: 0, series: [], notPublished: true });
    assert.equal(await stores.prices.getSeries('DE-LU'), undefined);
  });

  test('every series of a source or none: one series that cannot take the prices stops them all', async () => {
    await stores.prices.upsertSeries({
      symbol: 'EURUSD',
      name: 'Euro in US dollars, New York close',
      kind: 'fx',
      currency: 'USD',
      unit: 'EUR',
      timezone: 'America/New_York',
      resolution: 'P1D',
    });
    const run = await runSource(ecbHistory(['NOK', 'USD']), ECB_DAYS, stores);
    assert.deepEqual(run, {
      ok: false,
      stage: 'series',
      message:
        'the source gives EURUSD prices in timezone Europe/Berlin, but the series has timezone America/New_York',
    });
    assert.equal(await stores.prices.getSeries('EURNOK'), undefined, 'EURNOK was not created');
    assert.deepEqual(await stored('EURUSD', ECB_DAYS), []);
  });

  test('a series made hourly before the 15-minute switch takes the hourly means of whole hours', async () => {
    await stores.prices.upsertSeries({
      symbol: 'DE-LU',
      name: 'DE-LU day-ahead, hourly',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Berlin',
      resolution: 'PT1H',
    });
    // The DST day's 100 quarter hours, less the one of 05:15 UTC: that hour has no whole mean.
    const gap = '2025-10-26T05:15:00.000Z';
    const fetched = await entsoeDeLu().fetchWindow(DST_DAY);
    assert.ok(fetched.ok);
    const quarters = (fetched.series[0]?.points ?? []).filter((p) => new Date(p.start).toISOString() !== gap);
    const connector = {
      type: 'entsoe',
      fetchWindow: async () => ({ ...fetched, series: [{ ...fetched.series[0]!, points: quarters }] }),
    };
    const run = await runSource(connector, DST_DAY, stores);
    assert.deepEqual(run, {
      ok: true,
      notPublished: false,
      written: 24,
      series: [{ symbol: 'DE-LU', points: 24, created: false }],
    });
    const hours = await stored('DE-LU', DST_DAY);
    assert.equal(hours.length, 24, 'the 25 hours of the DST day, less the one with a gap');
    assert.ok(!hours.some(([start]) => start === '2025-10-26T05:00:00.000Z'), 'no mean of three quarters');
    const byStart = new Map(quarters.map((p) => [p.start, p.price]));
    for (const [start, price] of hours) {
      const at = Date.parse(start);
      const four = [0, 1, 2, 3].map((q) => byStart.get(at + q * 900_000) as string);
      assert.equal(price, decimalMean(four), start);
    }
    assert.equal((await stores.prices.getSeries('DE-LU'))?.resolution, 'PT1H', 'the series keeps its grid');
  });

  test('a series finer than the source still refuses its prices', async () => {
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    await stores.prices.upsertSeries({
      symbol: 'NO1',
      name: 'NO1, quarter hours',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Oslo',
      resolution: 'PT15M',
    });
    const no1 = createConnector('entsoe', { zone: 'NO1', token: TOKEN, baseUrl: upstream.url('/api') });
    const run = await runSource(
      no1,
      { from: Date.parse('2026-11-22T23:00Z'), to: Date.parse('2026-11-23T23:00Z') },
      stores,
    );
    assert.deepEqual(run, {
      ok: false,
      stage: 'series',
      message: 'the source gives NO1 prices in resolution PT1H, but the series has resolution PT15M',
    });
  });

  test('ECB history: one series per currency, only the days the ECB published', async () => {
    const run = await runSource(ecbHistory(['NOK', 'ISK', 'CYP']), ECB_DAYS, stores);
    assert.deepEqual(run, {
      ok: true,
      notPublished: false,
      written: 9,
      series: [
        { symbol: 'EURNOK', points: 5, created: true },
        { symbol: 'EURISK', points: 4, created: true },
        { symbol: 'EURCYP', points: 0, created: true },
      ],
    });
    assert.deepEqual(
      (await stored('EURNOK', ECB_DAYS)).map(([start]) => start.slice(0, 10)),
      ['2026-04-27', '2026-04-28', '2026-04-29', '2026-05-03', '2026-05-04'],
    );
  });

  test('a connector type is named in the config, and an unknown one is refused by name', () => {
    // Every shipped type is listed; the list grows as connectors are added.
    assert.throws(
      () => createConnector('no-such-upstream', {}),
      (error: Error) => {
        assert.match(error.message, /^type: "no-such-upstream" is not one of /);
        const named = error.message.split(' is not one of ')[1]?.split(', ');
        for (const type of [
          'entsoe',
          'ecb',
          'energidataservice',
          'energycharts',
          'awattar',
          'octopus',
          'omie',
          'nordpool',
          'elering',
        ]) {
          assert.ok(named?.includes(type), `${type} is named`);
        }
        return error.name === 'SourceSettingsError';
      },
    );
  });
});
