/**
 * The ENTSO-E connector against a fake Transparency Platform serving A44 documents written from the
 * platform's API guide: curve types A01 and A03, quarter hours and hours, two auctions of one day,
 * DST days, and the acknowledgement document that answers a request without data.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EntsoeSettings, entsoe } from '../../src/sources/entsoe/connector.js';
import { BIDDING_ZONES, biddingZone } from '../../src/sources/entsoe/zones.js';
import type { SourceResult, SourceSeries } from '../../src/sources/types.js';
import { FakeUpstream, fixture, pairs } from './fake-upstream.js';

const TOKEN = 'token-5f1c9e2a-7b44-4c1d';
const Q = 900_000;
let upstream: FakeUpstream;

function xml(name: string, status = 200) {
  return { status, headers: { 'content-type': 'text/xml' }, body: fixture(`entsoe/${name}`) };
}

async function fetchDays(
  name: string,
  from: string,
  to: string,
  settings: Partial<EntsoeSettings> = {},
): Promise<SourceResult> {
  upstream.answer('/api', xml(name));
  const connector = entsoe.create({
    zone: 'DE-LU',
    token: TOKEN,
    baseUrl: upstream.url('/api'),
    ...settings,
  });
  return connector.fetchWindow({ from: Date.parse(from), to: Date.parse(to) });
}

function onlySeries(result: SourceResult): SourceSeries {
  assert.ok(result.ok, result.ok ? '' : result.failure.message);
  assert.equal(result.series.length, 1);
  return result.series[0] as SourceSeries;
}

/** `[start, price]` for positions `from..to` (1-based) of a period starting at `start`. */
function run(start: string, step: number, from: number, to: number, price: string): [string, string][] {
  const out: [string, string][] = [];
  for (let p = from; p <= to; p++)
    out.push([new Date(Date.parse(start) + (p - 1) * step).toISOString(), price]);
  return out;
}

describe('the entsoe connector', () => {
  before(async () => {
    upstream = await new FakeUpstream().start();
  });
  after(() => upstream.close());

  test('asks for A44 of the zone by its EIC code and the window in UTC, with the token', async () => {
    const result = await fetchDays('no1-a01-pt60m.xml', '2026-11-22T23:00Z', '2026-11-23T23:00Z', {
      zone: 'no1',
    });
    assert.ok(result.ok);
    const asked = upstream.requests.at(-1) as URL;
    assert.equal(asked.pathname, '/api');
    assert.deepEqual(Object.fromEntries(asked.searchParams), {
      securityToken: TOKEN,
      documentType: 'A44',
      'contract_MarketAgreement.type': 'A01',
      in_Domain: '10YNO-1--------2',
      out_Domain: '10YNO-1--------2',
      periodStart: '202611222300',
      periodEnd: '202611232300',
    });
  });

  test('A01: every written price as written, NaN and left-out positions missing (never 0), metadata from the document', async () => {
    const series = onlySeries(
      await fetchDays('no1-a01-pt60m.xml', '2026-11-22T23:00Z', '2026-11-23T23:00Z', { zone: 'NO1' }),
    );
    assert.deepEqual(series.series, {
      symbol: 'NO1',
      name: 'NO1 day-ahead (ENTSO-E)',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Oslo',
      resolution: 'PT1H',
    });
    const got = pairs(series.points);
    assert.equal(got.length, 22, 'hour 7 (NaN) and hour 19 (left out of an A01 curve) have no price');
    const at = new Map(got);
    assert.equal(at.get('2026-11-23T01:00:00.000Z'), '41.270', 'trailing zeros kept');
    assert.equal(at.get('2026-11-23T02:00:00.000Z'), '-0.01');
    assert.equal(at.get('2026-11-23T03:00:00.000Z'), '0');
    assert.equal(at.has('2026-11-23T05:00:00.000Z'), false, 'NaN is missing');
    assert.equal(at.has('2026-11-23T17:00:00.000Z'), false, 'A01 never fills');
  });

  test('A03: a left-out position repeats the previous price within its period only, up to its end', async () => {
    const series = onlySeries(
      await fetchDays('de-lu-a03-pt15m.xml', '2025-11-03T23:00Z', '2025-11-05T23:00Z'),
    );
    const day1 = '2025-11-03T23:00:00Z';
    const day2 = '2025-11-04T23:00:00Z';
    assert.deepEqual(pairs(series.points), [
      ...run(day1, Q, 1, 1, '85.10'),
      ...run(day1, Q, 2, 3, '84.93'),
      ...run(day1, Q, 4, 4, '80.02'),
      // A gap right after a 0 price repeats the 0.
      ...run(day1, Q, 5, 7, '0'),
      ...run(day1, Q, 8, 8, '-1.25'),
      // 9 is NaN, so 10 and 11 repeat "no price": missing.
      ...run(day1, Q, 12, 96, '60.5'),
      // Day 2 starts a new period: positions 1 and 2 have nothing before them there.
      ...run(day2, Q, 3, 95, '70.00'),
      ...run(day2, Q, 96, 96, '71.75'),
    ]);
    assert.equal(series.series.resolution, 'PT15M');
  });

  test('points outside the window are left out, even when the document has them', async () => {
    const series = onlySeries(
      await fetchDays('de-lu-a03-pt15m.xml', '2025-11-04T22:00Z', '2025-11-05T00:00Z'),
    );
    assert.deepEqual(pairs(series.points), [
      ...run('2025-11-04T22:00:00Z', Q, 1, 4, '60.5'),
      ...run('2025-11-04T23:00:00Z', Q, 3, 4, '70.00'),
    ]);
  });

  test('an hourly period fills the four quarters of a PT15M series only when fillQuarters is set', async () => {
    const window = ['2026-11-22T23:00Z', '2026-11-23T23:00Z'] as const;
    const refused = await fetchDays('no1-a01-pt60m.xml', ...window, { zone: 'NO1', resolution: 'PT15M' });
    assert.ok(!refused.ok);
    assert.equal(refused.failure.kind, 'format');
    assert.match(refused.failure.message, /PT60M period for a PT15M series: set fillQuarters/);

    const filled = onlySeries(
      await fetchDays('no1-a01-pt60m.xml', ...window, {
        zone: 'NO1',
        resolution: 'PT15M',
        fillQuarters: true,
      }),
    );
    assert.equal(filled.series.resolution, 'PT15M');
    assert.equal(filled.points.length, 22 * 4);
    assert.deepEqual(pairs(filled.points).slice(8, 16), [
      ...run('2026-11-23T01:00:00Z', Q, 1, 4, '41.270'),
      ...run('2026-11-23T02:00:00Z', Q, 1, 4, '-0.01'),
    ]);
  });

  test('across the 15-minute switch: mixed periods need a choice, and fillQuarters makes one PT15M series', async () => {
    const window = ['2025-09-29T22:00Z', '2025-10-01T22:00Z'] as const;
    const refused = await fetchDays('no1-switch.xml', ...window, { zone: 'NO1' });
    assert.ok(!refused.ok);
    assert.match(refused.failure.message, /mixes PT60M and PT15M periods/);

    const series = onlySeries(
      await fetchDays('no1-switch.xml', ...window, { zone: 'NO1', fillQuarters: true }),
    );
    assert.equal(series.series.resolution, 'PT15M');
    assert.equal(series.points.length, 24 * 4 + 96);
    const got = pairs(series.points);
    assert.deepEqual(got.slice(0, 4), run('2025-09-29T22:00:00Z', Q, 1, 4, '40.50'));
    assert.equal(got[96]?.[0], '2025-09-30T22:00:00.000Z');
  });

  test('two TimeSeries of one day: the first auction by its sequence, whatever the document order', async () => {
    const window = ['2025-06-14T22:00Z', '2025-06-15T22:00Z'] as const;
    const first = onlySeries(await fetchDays('de-lu-two-auctions.xml', ...window));
    assert.equal(first.points.length, 24);
    assert.deepEqual(pairs(first.points)[0], ['2025-06-14T22:00:00.000Z', '70.50']);

    const second = onlySeries(await fetchDays('de-lu-two-auctions.xml', ...window, { sequence: 2 }));
    assert.deepEqual(pairs(second.points)[0], ['2025-06-14T22:00:00.000Z', '100.50']);

    const none = await fetchDays('de-lu-two-auctions.xml', ...window, { sequence: 3 });
    assert.ok(!none.ok);
    assert.match(none.failure.message, /TimeSeries of sequence 2, 1, none of sequence 3/);
  });

  test('day-ahead only: an intraday (A07) series of the same sequence beside it is left out', async () => {
    const window = ['2025-11-09T23:00Z', '2025-11-10T23:00Z'] as const;
    const spain = onlySeries(await fetchDays('es-day-ahead-and-intraday.xml', ...window, { zone: 'ES' }));
    assert.equal(spain.points.length, 96);
    assert.deepEqual(pairs(spain.points).slice(0, 2), [
      ['2025-11-09T23:00:00.000Z', '60.00'],
      ['2025-11-09T23:15:00.000Z', '61.25'],
    ]);
    assert.equal(spain.series.timezone, 'Europe/Madrid');
  });

  test('DST days: 92 quarter hours in spring and 100 in autumn, each once, on the UTC instants', async () => {
    for (const [name, from, to, count] of [
      ['de-lu-dst-92.xml', '2026-03-28T23:00Z', '2026-03-29T22:00Z', 92],
      ['de-lu-dst-100.xml', '2025-10-25T22:00Z', '2025-10-26T23:00Z', 100],
    ] as const) {
      const series = onlySeries(await fetchDays(name, from, to));
      assert.equal(series.series.timezone, 'Europe/Berlin');
      assert.equal(series.points.length, count, name);
      series.points.forEach((p, i) => {
        assert.equal(p.start, Date.parse(from) + i * Q);
      });
    }
  });

  test('a ZIP archive where the XML belongs is named as such, with its content type', async () => {
    upstream.answer('/api', {
      headers: { 'content-type': 'application/zip' },
      body: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00]),
    });
    const connector = entsoe.create({ zone: 'NO1', token: TOKEN, baseUrl: upstream.url('/api') });
    const result = await connector.fetchWindow({
      from: Date.parse('2026-11-22T23:00Z'),
      to: Date.parse('2026-11-23T23:00Z'),
    });
    assert.ok(!result.ok);
    assert.equal(result.failure.kind, 'format');
    assert.match(
      result.failure.message,
      /arrived: a ZIP archive \(application\/zip\), starting "PK\\x03\\x04\\x14/,
    );
  });

  test('"No matching data found" is nothing published yet; any other acknowledgement is a failed run with its reason', async () => {
    const window = { from: Date.parse('2026-11-23T23:00Z'), to: Date.parse('2026-11-24T23:00Z') };
    const connector = entsoe.create({ zone: 'NO1', token: TOKEN, baseUrl: upstream.url('/api') });
    for (const status of [200, 400]) {
      upstream.answer('/api', xml('acknowledgement-999.xml', status));
      assert.deepEqual(await connector.fetchWindow(window), { ok: true, series: [] }, `with ${status}`);
    }
    // The same code with other words: the request itself was refused.
    const tooMuch = fixture('entsoe/acknowledgement-999.xml')
      .toString('utf8')
      .replace(
        /<text>No matching data found[^<]*<\/text>/,
        '<text>The amount of requested data exceeds allowed limit.</text>',
      );
    upstream.answer('/api', { status: 400, headers: { 'content-type': 'text/xml' }, body: tooMuch });
    const result = await connector.fetchWindow(window);
    assert.ok(!result.ok);
    assert.equal(result.failure.kind, 'upstream');
    assert.equal(result.failure.status, 400);
    assert.match(result.failure.message, /999 The amount of requested data exceeds allowed limit/);
  });

  test('an error status keeps Retry-After as data, and the token never shows in a message', async () => {
    upstream.answer('/api', {
      status: 429,
      headers: { 'retry-after': '120' },
      body: `Too many requests for ${TOKEN}`,
    });
    const connector = entsoe.create({ zone: 'NO1', token: TOKEN, baseUrl: upstream.url('/api') });
    const window = { from: Date.parse('2026-11-23T23:00Z'), to: Date.parse('2026-11-24T23:00Z') };
    const limited = await connector.fetchWindow(window);
    assert.ok(!limited.ok);
    assert.deepEqual(
      { ...limited.failure, message: undefined },
      { kind: 'http', status: 429, retryAfterMs: 120_000, message: undefined },
    );
    assert.equal(limited.failure.message.includes(TOKEN), false);
    assert.match(limited.failure.message, /HTTP 429: Too many requests for \*\*\*/);

    upstream.answer('/api', { status: 401, body: '<html><body><h1>Unauthorized</h1></body></html>' });
    const refused = await connector.fetchWindow(window);
    assert.ok(!refused.ok);
    assert.equal(refused.failure.retryAfterMs, undefined);
    assert.match(refused.failure.message, /HTTP 401: Unauthorized$/);
  });

  test('settings name the bad field', () => {
    assert.throws(() => entsoe.create({ zone: 'NO6', token: TOKEN }), /^SourceSettingsError: zone: "NO6"/);
    assert.throws(
      () => entsoe.create({ zone: 'NO1', token: '' }),
      /token: an ENTSO-E security token is required/,
    );
    assert.equal(entsoe.defaultBaseUrl, 'https://web-api.tp.entsoe.eu/api');
  });

  test('the zone table: every European bidding zone once, by name or EIC code, in a real time zone', () => {
    const names =
      'NO1 NO2 NO3 NO4 NO5 SE1 SE2 SE3 SE4 DK1 DK2 FI EE LV LT DE-LU AT BE NL FR CH ES PT PL CZ SK HU SI HR RO BG GR IE-SEM IT-NORD IT-CNOR IT-CSUD IT-SUD IT-CALA IT-SICI IT-SARD';
    for (const name of names.split(' ')) assert.equal(biddingZone(name.toLowerCase())?.name, name);
    assert.equal(new Set(BIDDING_ZONES.map((z) => z.eic)).size, BIDDING_ZONES.length);
    for (const zone of BIDDING_ZONES) {
      assert.match(zone.eic, /^10Y[0-9A-Z-]{13}$/, zone.name);
      assert.equal(biddingZone(zone.eic), zone);
      assert.doesNotThrow(() => new Intl.DateTimeFormat('en', { timeZone: zone.timezone }), zone.timezone);
    }
  });
});
