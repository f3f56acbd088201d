/**
 * The catalogue: `GET /api/v1/series` and `GET /api/v1/series/{symbol}`, with
 * coverage, `symbols`, `tz`, `format` and `resolution`, limited to the kinds the key's tier reads.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEV_SERIES } from '../../src/dev-data/dev-data.js';
import { createHarness, type Harness } from '../helpers/harness.js';

interface SeriesInfo {
  symbol: string;
  resolution: string;
  timezone: string;
  coverage: { first: string; last: string } | null;
}

describe('GET /api/v1/series', () => {
  let h: Harness;
  let dir: string;
  let electricityOnly: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pricepoint-catalogue-'));
    const config = join(dir, 'pricepoint.json');
    writeFileSync(
      config,
      JSON.stringify({
        tiers: {
          power: { limits: [{ name: 'minute', limit: 1000, windowSeconds: 60 }], kinds: ['electricity'] },
        },
      }),
    );
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z', env: { PRICEPOINT_CONFIG: config } });
    electricityOnly = (await h.createKey({ tier: 'power' })).key;
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (url: string, key = h.demoKey) => h.app.inject({ url, headers: { 'x-api-key': key } });

  test('lists every series the key may read, with metadata and the local dates of its first and last price', async () => {
    const response = await get('/api/v1/series');
    assert.equal(response.statusCode, 200, response.body);
    const { series } = response.json() as { series: SeriesInfo[] };
    assert.deepEqual(
      series.map((s) => s.symbol),
      DEV_SERIES.map((s) => s.symbol).sort(),
    );
    const no1 = series.find((s) => s.symbol === 'NO1');
    assert.deepEqual(no1, {
      symbol: 'NO1',
      name: DEV_SERIES.find((s) => s.symbol === 'NO1')?.name,
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Oslo',
      resolution: 'PT15M',
      coverage: { first: '2026-08-24', last: '2026-11-23' }, // 90 days back through tomorrow
      // Made up here, written by no source: no upstream's terms (docs/decisions.md).
      license: null,
      attribution: null,
    });
    assert.equal(series.find((s) => s.symbol === 'BTC-USD')?.coverage?.last, '2026-11-22');
  });

  test('symbols picks and orders; tz moves the coverage dates; resolution shows what would be served', async () => {
    const response = await get('/api/v1/series?symbols=btc-usd,NO1&tz=Pacific/Kiritimati&resolution=PT1H');
    const { series } = response.json() as { series: SeriesInfo[] };
    assert.deepEqual(
      series.map((s) => [s.symbol, s.resolution, s.coverage?.last]),
      [
        ['BTC-USD', 'PT1H', '2026-11-23'], // 23:00 UTC on the 22nd is the 23rd at +14:00
        ['NO1', 'PT1H', '2026-11-24'],
      ],
    );
  });

  test('one series by symbol, in any letter case, as one object', async () => {
    const response = await get('/api/v1/series/no1');
    assert.equal(response.statusCode, 200, response.body);
    const one = response.json() as SeriesInfo;
    assert.equal(one.symbol, 'NO1');
    assert.deepEqual(one.coverage, { first: '2026-08-24', last: '2026-11-23' });
  });

  test('CSV: a header row and one row per series', async () => {
    const response = await get('/api/v1/series?symbols=NO1,EURUSD&format=csv');
    assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
    const lines = response.body.trimEnd().split('\r\n');
    assert.equal(
      lines[0],
      'symbol,name,kind,currency,unit,timezone,resolution,first,last,license,attribution',
    );
    assert.equal(lines.length, 3);
    assert.match(lines[1] ?? '', /^NO1,.*,electricity,EUR,MWh,Europe\/Oslo,PT15M,2026-08-24,2026-11-23,,$/);
  });

  test('unknown series are 404 unknown_series; a series of a kind the tier may not read is 403', async () => {
    const unknown = await get('/api/v1/series/NOPE');
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'unknown_series');
    const listed = (await get('/api/v1/series', electricityOnly)).json() as { series: SeriesInfo[] };
    assert.ok(listed.series.length > 0, 'some electricity series are listed');
    assert.ok(
      listed.series.every((s) => DEV_SERIES.find((d) => d.symbol === s.symbol)?.kind === 'electricity'),
      'only electricity is listed',
    );
    const refused = await get('/api/v1/series/BTC-USD', electricityOnly);
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'insufficient_scope');
  });

  test('symbols is not a parameter of one series; unknown parameters are 400', async () => {
    const response = await get('/api/v1/series/NO1?symbols=DE-LU');
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().parameter, 'symbols');
  });

  test('a series without prices has coverage null', async () => {
    const admin = (await h.createKey({ scopes: ['admin'], tier: 'pro' })).key;
    const created = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/FRESH',
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      payload: {
        name: 'Fresh',
        kind: 'fx',
        currency: 'EUR',
        unit: 'USD',
        timezone: 'UTC',
        resolution: 'P1D',
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal((await get('/api/v1/series/FRESH')).json().coverage, null);
  });
});
