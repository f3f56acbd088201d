/**
 * The ECB connector against a fake ECB serving its reference rate files as published: the daily
 * and 90-day XML, and the history CSV (plain and in its ZIP file) with a TARGET holiday, a weekend,
 * `N/A` and retired currencies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { zipSync } from 'fflate';
import { type EcbSettings, ecb } from '../../src/sources/ecb/connector.js';
import type { SourceResult, SourceSeries } from '../../src/sources/types.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

let upstream: FakeUpstream;
const NOW = Date.parse('2026-11-22T10:00:00Z');

async function fetchRates(settings: Partial<EcbSettings>, from: string, to: string): Promise<SourceResult> {
  const connector = ecb.create(
    { currencies: ['NOK'], baseUrl: upstream.url('/stats/eurofxref'), ...settings },
    { now: () => NOW },
  );
  return connector.fetchWindow({ from: Date.parse(from), to: Date.parse(to) });
}

function bySymbol(result: SourceResult): Map<string, SourceSeries> {
  assert.ok(result.ok, result.ok ? '' : result.failure.message);
  return new Map(result.series.map((s) => [s.series.symbol, s]));
}

describe('the ecb connector', () => {
  before(async () => {
    upstream = await new FakeUpstream().start();
    upstream
      .answer('/stats/eurofxref/eurofxref-daily.xml', { body: fixture('ecb/eurofxref-daily.xml') })
      .answer('/stats/eurofxref/eurofxref-hist-90d.xml', { body: fixture('ecb/eurofxref-hist-90d.xml') });
  });
  after(() => upstream.close());

  test('the daily file: one P1D point per currency on its Frankfurt day, metadata of a euro rate', async () => {
    const series = bySymbol(
      await fetchRates({ currencies: ['NOK', 'GBP', 'ISK'] }, '2026-11-19T23:00Z', '2026-11-22T23:00Z'),
    );
    assert.equal(upstream.requests.at(-1)?.pathname, '/stats/eurofxref/eurofxref-daily.xml');
    assert.deepEqual(series.get('EURNOK')?.series, {
      symbol: 'EURNOK',
      name: 'Euro in NOK, ECB reference rate',
      kind: 'fx',
      currency: 'NOK',
      unit: 'EUR',
      timezone: 'Europe/Berlin',
      resolution: 'P1D',
    });
    assert.deepEqual(pairs(series.get('EURNOK')?.points ?? []), [['2026-11-19T23:00:00.000Z', '11.6840']]);
    assert.deepEqual(pairs(series.get('EURGBP')?.points ?? []), [['2026-11-19T23:00:00.000Z', '0.87130']]);
    assert.deepEqual(series.get('EURISK')?.points, [], 'a currency the file does not quote has no point');
  });

  test('the 90-day file for recent weeks: a day without a currency gives it no point, never the previous rate', async () => {
    const series = bySymbol(
      await fetchRates({ currencies: ['NOK', 'USD'] }, '2026-11-17T23:00Z', '2026-11-22T23:00Z'),
    );
    assert.equal(upstream.requests.at(-1)?.pathname, '/stats/eurofxref/eurofxref-hist-90d.xml');
    assert.deepEqual(pairs(series.get('EURNOK')?.points ?? []), [
      ['2026-11-18T23:00:00.000Z', '11.7025'],
      ['2026-11-19T23:00:00.000Z', '11.6840'],
    ]);
    assert.equal(series.get('EURUSD')?.points.length, 3);
  });

  for (const packed of [false, true]) {
    test(`the history ${packed ? 'ZIP file' : 'CSV'}: no rows on the holiday and weekend, N/A missing, retired currencies empty`, async () => {
      const csv = fixture('ecb/eurofxref-hist.csv');
      const body = packed ? zipSync({ 'eurofxref-hist.csv': csv }) : csv;
      upstream.answer('/stats/eurofxref/eurofxref-hist.zip', { body });
      const series = bySymbol(
        await fetchRates(
          { currencies: ['NOK', 'ISK', 'CYP', 'HRK'] },
          '2026-04-27T22:00Z',
          '2026-05-05T22:00Z',
        ),
      );
      assert.equal(upstream.requests.at(-1)?.pathname, '/stats/eurofxref/eurofxref-hist.zip');
      // 1 May (a TARGET holiday) and the weekend after it have no row, so no point.
      assert.deepEqual(pairs(series.get('EURNOK')?.points ?? []), [
        ['2026-04-27T22:00:00.000Z', '11.4790'],
        ['2026-04-28T22:00:00.000Z', '11.4870'],
        ['2026-04-29T22:00:00.000Z', '11.4980'],
        ['2026-05-03T22:00:00.000Z', '11.5230'],
        ['2026-05-04T22:00:00.000Z', '11.5105'],
      ]);
      assert.deepEqual(
        pairs(series.get('EURISK')?.points ?? []).map(([start]) => start),
        [
          '2026-04-27T22:00:00.000Z',
          '2026-04-28T22:00:00.000Z',
          '2026-04-29T22:00:00.000Z',
          '2026-05-04T22:00:00.000Z',
        ],
        'N/A on 4 May is missing',
      );
      assert.deepEqual(series.get('EURCYP')?.points, []);
      assert.deepEqual(series.get('EURHRK')?.points, []);
    });
  }

  test('the history reaches back to a retired currency’s days', async () => {
    upstream.answer('/stats/eurofxref/eurofxref-hist.zip', { body: fixture('ecb/eurofxref-hist.csv') });
    const series = bySymbol(
      await fetchRates({ currencies: ['CYP'] }, '2001-01-01T23:00Z', '2001-01-02T23:00Z'),
    );
    assert.deepEqual(pairs(series.get('EURCYP')?.points ?? []), [['2001-01-01T23:00:00.000Z', '0.57520']]);
  });

  test('a currency the history never had is a failure, not an empty series', async () => {
    upstream.answer('/stats/eurofxref/eurofxref-hist.zip', { body: fixture('ecb/eurofxref-hist.csv') });
    const result = await fetchRates({ currencies: ['NOK', 'XAU'] }, '2026-04-27T22:00Z', '2026-05-05T22:00Z');
    assert.ok(!result.ok);
    assert.equal(result.failure.kind, 'format');
    assert.match(result.failure.message, /has no column for XAU$/);
  });

  test('an HTML page where the history file belongs is named as such, not as a CSV without a Date column', async () => {
    upstream.answer('/stats/eurofxref/eurofxref-hist.zip', {
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: '<!DOCTYPE html><html><head><title>Maintenance</title></head><body>Back soon</body></html>',
    });
    const result = await fetchRates({}, '2026-04-27T22:00Z', '2026-05-05T22:00Z');
    assert.ok(!result.ok);
    assert.equal(result.failure.kind, 'format');
    assert.match(
      result.failure.message,
      /arrived: an HTML page \(text\/html; charset=utf-8\), starting "<!DOCTYPE html><html><head><titl"/,
    );
  });

  test('a 503 keeps its Retry-After date as a delay', async () => {
    upstream.answer('/stats/eurofxref/eurofxref-daily.xml', {
      status: 503,
      headers: { 'retry-after': new Date(NOW + 90_000).toUTCString() },
      body: 'Service Unavailable',
    });
    const result = await fetchRates({ feed: 'daily' }, '2026-11-19T23:00Z', '2026-11-22T23:00Z');
    upstream.answer('/stats/eurofxref/eurofxref-daily.xml', { body: fixture('ecb/eurofxref-daily.xml') });
    assert.ok(!result.ok);
    assert.equal(result.failure.status, 503);
    assert.equal(result.failure.retryAfterMs, 90_000);
  });

  test('settings name the bad field', () => {
    assert.throws(() => ecb.create({ currencies: [] }), /currencies: name at least one currency/);
    assert.throws(() => ecb.create({ currencies: ['NOK', 'nok'] }), /currencies\[1\]: "nok"/);
    assert.equal(ecb.defaultBaseUrl, 'https://www.ecb.europa.eu/stats/eurofxref/');
  });
});
