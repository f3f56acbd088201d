/**
 * Which tz data the server uses, with the default sources of the machine the test runs on (no
 * setting): the newest of the system's /usr/share/zoneinfo, the shipped tzdata/ (2026f) and Node's
 * ICU (2025c on Node 20.20). /healthz and /metrics say which, and a Vancouver series is served with
 * the rules of 2026: today (2026-11-24) starts at 07:00Z, timestamps carry -07:00, and a P1D point at
 * that true midnight is accepted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { compareReleases, folderRelease, SHIPPED_TZDIR } from '../../src/domain/time/tz-source.js';
import { createHarness, type Harness } from '../helpers/harness.js';

/** What the defaults choose here: the system's folder only where it is newer than the shipped copy. */
const systemRelease = folderRelease('/usr/share/zoneinfo');
const expected =
  systemRelease !== undefined && compareReleases(systemRelease, '2026f') > 0
    ? { release: systemRelease, source: 'system' }
    : { release: '2026f', source: 'shipped' };

let h: Harness;
let readKey: string;
let writeKey: string;

describe('tz data in use, with the default sources', () => {
  before(async () => {
    h = await createHarness({ now: '2026-11-24T10:15:00Z', devData: false });
    readKey = (await h.createKey({ tier: 'enterprise' })).key;
    writeKey = (await h.createKey({ scopes: ['write'], tier: 'pro' })).key;
    for (const [symbol, resolution] of [
      ['VANH', 'PT1H'],
      ['VAND', 'P1D'],
    ] as const) {
      await h.stores.prices.upsertSeries({
        symbol,
        name: `Vancouver ${resolution}`,
        kind: 'electricity',
        currency: 'CAD',
        unit: 'MWh',
        timezone: 'America/Vancouver',
        resolution,
      });
    }
    // Every hour from 2026-11-23T07:00Z to 2026-11-25T07:00Z: the two days at -07:00.
    const hours = Array.from({ length: 48 }, (_, i) => ({
      start: Date.parse('2026-11-23T07:00:00Z') + i * 3_600_000,
      price: String(i),
    }));
    await h.stores.prices.upsertPrices('VANH', hours);
  });
  after(() => h.close());

  test('the machine has a system zoneinfo older than the shipped release, or the test says why not', () => {
    // On the machine this was written on: system 2025b, shipped 2026f, ICU 2025c.
    assert.ok(compareReleases(expected.release, '2026f') >= 0);
    assert.ok(compareReleases(expected.release, process.versions.tz ?? '0000a') >= 0, 'ICU is older');
  });

  test('/healthz says the release and where it came from, and no path', async () => {
    const response = await h.app.inject({ url: '/healthz' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'ok', tz: expected });
    assert.ok(!response.body.includes(SHIPPED_TZDIR), 'no path of the machine');
  });

  test('/metrics has pricepoint_tz_info with the release and its source', async () => {
    const response = await h.app.inject({ url: '/metrics' });
    const lines = response.body.split('\n').filter((line) => line.startsWith('pricepoint_tz_info'));
    assert.deepEqual(lines, [
      `pricepoint_tz_info{release="${expected.release}",source="${expected.source}"} 1`,
    ]);
  });

  test('America/Vancouver today (2026-11-24) starts at 07:00Z and writes -07:00', async () => {
    const response = await h.app.inject({
      url: '/api/v1/prices/today?symbols=VANH',
      headers: { 'x-api-key': readKey },
    });
    assert.equal(response.statusCode, 200, response.body);
    const [day] = response.json().series as { date: string; prices: { start: string; end: string }[] }[];
    assert.equal(day?.date, '2026-11-24');
    assert.equal(day?.prices.length, 24);
    assert.equal(day?.prices[0]?.start, '2026-11-24T00:00:00-07:00');
    assert.equal(Date.parse(day?.prices[0]?.start ?? ''), Date.parse('2026-11-24T07:00:00Z'));
    assert.equal(day?.prices.at(-1)?.end, '2026-11-25T00:00:00-07:00');
    assert.ok(day?.prices.every((p) => p.start.endsWith('-07:00')));
  });

  test('a zone name in another letter case is refused for a series with the current name as suggestion', async () => {
    const adminKey = (await h.createKey({ scopes: ['admin'], tier: 'pro' })).key;
    const put = (timezone: string) =>
      h.app.inject({
        method: 'PUT',
        url: '/api/v1/series/KTM',
        headers: { 'x-api-key': adminKey },
        payload: {
          name: 'Kathmandu',
          kind: 'electricity',
          currency: 'NPR',
          unit: 'MWh',
          timezone,
          resolution: 'PT1H',
        },
      });
    for (const [typed, current] of [
      ['asia/katmandu', 'Asia/Kathmandu'],
      ['asia/kathmandu', 'Asia/Kathmandu'],
      ['europe/kiev', 'Europe/Kyiv'],
    ] as const) {
      const refused = await put(typed);
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(
        refused.json().errors[0].detail,
        `The field "timezone" must be spelt exactly as the IANA database does: ${current}.`,
      );
    }
    // An old name spelt right is kept as written, and reads in its zone.
    const kept = await put('Asia/Katmandu');
    assert.equal(kept.statusCode, 201, kept.body);
    assert.equal(kept.json().timezone, 'Asia/Katmandu');
    const read = await h.app.inject({
      url: '/api/v1/prices/2026-11-24?symbols=VANH&tz=asia/katmandu',
      headers: { 'x-api-key': readKey },
    });
    assert.equal(read.statusCode, 200, read.body);
    assert.ok(read.json().series[0].prices[0].start.endsWith('+05:45'));
  });

  test('a P1D point at the true midnight (07:00Z) is on the grid; the old one (08:00Z) is not', async () => {
    const put = (start: string) =>
      h.app.inject({
        method: 'PUT',
        url: '/api/v1/series/VAND/prices',
        headers: { 'x-api-key': writeKey, 'content-type': 'text/csv' },
        payload: `start,price\r\n${start},42\r\n`,
      });
    const right = await put('2026-11-24T00:00:00-07:00');
    assert.equal(right.statusCode, 200, right.body);
    const old = await put('2026-11-24T00:00:00-08:00');
    assert.equal(old.statusCode, 422, old.body);
    const read = await h.app.inject({
      url: '/api/v1/prices/2026-11-24?symbols=VAND',
      headers: { 'x-api-key': readKey },
    });
    assert.deepEqual(
      read.json().series[0].prices.map((p: { start: string; price: number }) => [p.start, p.price]),
      [['2026-11-24T00:00:00-07:00', 42]],
    );
  });
});
