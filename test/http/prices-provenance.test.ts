/**
 * Day answers say, per series entry, whether the day is complete and which source wrote it: in JSON
 * always, as CSV columns only with `include=provenance`, so today's CSV clients see the columns they
 * know. A series in Oslo at PT1H: 2026-10-24 written whole by the source `entsoe`, the autumn DST day
 * 2026-10-25 (25 hours) uploaded through the API with one hour missing, then completed. A day a
 * source wrote carries its upstream's licence and attribution; an uploaded day carries null.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';

interface Day {
  date: string;
  complete: boolean;
  source: string | null;
  license: string | null;
  attribution: string | null;
  prices: unknown[];
}

/** The starts of every hour of a local day in Oslo. */
function hours(date: string): string[] {
  const { start, end } = dayBounds(date, ZONE);
  const out: string[] = [];
  for (let t = start; t < end; t += 3_600_000) out.push(formatInstant(t, ZONE));
  return out;
}

describe('provenance in day answers', () => {
  let h: Harness;
  let admin: string;
  let reader: string;

  const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': reader } });
  const days = async (url: string): Promise<Day[]> => {
    const response = await get(url);
    assert.equal(response.statusCode, 200, response.body);
    return (response.json() as { series: Day[] }).series;
  };
  const upload = async (starts: string[]) => {
    const response = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/HAND/prices',
      headers: { 'x-api-key': admin, 'content-type': 'text/csv' },
      payload: `start,price\r\n${starts.map((s) => `${s},10\r\n`).join('')}`,
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  before(async () => {
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
    admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
    reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
    const created = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/HAND',
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      payload: {
        name: 'By hand',
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: ZONE,
        resolution: 'PT1H',
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    await h.importPoints(
      hours('2026-10-24').map((start) => ({ symbol: 'HAND', start, price: '20' })),
      'entsoe',
    );
    await upload(hours('2026-10-25').slice(0, 24));
  });
  after(() => h.close());

  test('JSON: a day written whole by a source, an uploaded day with an hour missing, and an empty day', async () => {
    const [whole] = await days('/api/v1/prices/2026-10-24?symbols=HAND');
    assert.equal(whole?.complete, true);
    assert.equal(whole?.source, 'entsoe');
    assert.equal(whole?.license, 'ENTSO-E Transparency Platform Terms and Conditions of Use');
    assert.equal(whole?.attribution, 'Source: ENTSO-E Transparency Platform');
    const [dst] = await days('/api/v1/prices/2026-10-25?symbols=HAND');
    assert.equal(dst?.prices.length, 24);
    assert.equal(dst?.complete, false, '24 of the 25 hours of the autumn DST day');
    assert.equal(dst?.source, 'import');
    assert.deepEqual([dst?.license, dst?.attribution], [null, null], 'uploaded data names no terms');
    const [empty] = await days('/api/v1/prices/2026-10-20?symbols=HAND');
    assert.deepEqual(
      [empty?.complete, empty?.source, empty?.license, empty?.attribution, empty?.prices],
      [false, null, null, null, []],
    );
  });

  test('read in another zone, a day is complete only where the days it overlaps are', async () => {
    const range = await days('/api/v1/prices?from=2026-10-23&to=2026-10-24&symbols=HAND&tz=UTC');
    // UTC 2026-10-23 begins at 02:00 in Oslo on the 23rd, where nothing is stored.
    assert.deepEqual(
      range.map((d) => [d.date, d.complete, d.source]),
      [
        ['2026-10-23', false, 'entsoe'],
        ['2026-10-24', false, 'entsoe'],
      ],
    );
  });

  test('CSV keeps its columns; include=provenance adds complete and source', async () => {
    const plain = await get('/api/v1/prices?from=2026-10-24&to=2026-10-25&symbols=HAND&format=csv');
    assert.equal(plain.statusCode, 200, plain.body);
    const plainLines = plain.body.split('\r\n');
    assert.equal(plainLines[0], 'symbol,date,start,end,price,currency,unit');
    assert.equal(
      plainLines[1],
      'HAND,2026-10-24,2026-10-24T00:00:00+02:00,2026-10-24T01:00:00+02:00,20,EUR,MWh',
    );
    const withProvenance = await get(
      '/api/v1/prices?from=2026-10-24&to=2026-10-25&symbols=HAND&format=csv&include=provenance',
    );
    assert.equal(withProvenance.statusCode, 200, withProvenance.body);
    const lines = withProvenance.body.split('\r\n');
    assert.equal(lines[0], 'symbol,date,start,end,price,currency,unit,complete,source');
    assert.equal(
      lines[1],
      'HAND,2026-10-24,2026-10-24T00:00:00+02:00,2026-10-24T01:00:00+02:00,20,EUR,MWh,true,entsoe',
    );
    assert.equal(lines.at(-2)?.endsWith(',10,EUR,MWh,false,import'), true, lines.at(-2));
    assert.equal(lines.length, 1 + 24 + 24 + 1);
    const refused = await get('/api/v1/prices/2026-10-24?symbols=HAND&include=everything');
    assert.equal(refused.statusCode, 400, refused.body);
  });

  test('the missing hour, uploaded later, makes the day complete', async () => {
    await upload(hours('2026-10-25').slice(24));
    const [dst] = await days('/api/v1/prices/2026-10-25?symbols=HAND');
    assert.equal(dst?.prices.length, 25);
    assert.equal(dst?.complete, true);
  });

  test("the catalogue names the terms of the source that wrote the last day; the latest price its day's", async () => {
    const catalogue = async () => {
      const answer = await get('/api/v1/series/HAND');
      assert.equal(answer.statusCode, 200, answer.body);
      return answer.json() as { license: string | null; attribution: string | null };
    };
    const uploaded = await catalogue();
    assert.deepEqual([uploaded.license, uploaded.attribution], [null, null], 'its last day was uploaded');
    await h.importPoints(
      hours('2026-10-26').map((start) => ({ symbol: 'HAND', start, price: '30' })),
      'energidataservice',
    );
    const fetched = await catalogue();
    assert.deepEqual(
      [fetched.license, fetched.attribution],
      ['CC-BY-4.0', 'Source: Energinet (www.energidataservice.dk)'],
    );
    const csv = await get('/api/v1/series?symbols=HAND&format=csv');
    const [header, row] = csv.body.split('\r\n');
    assert.equal(header, 'symbol,name,kind,currency,unit,timezone,resolution,first,last,license,attribution');
    assert.equal(
      row,
      'HAND,By hand,electricity,EUR,MWh,Europe/Oslo,PT1H,2026-10-24,2026-10-26,CC-BY-4.0,Source: Energinet (www.energidataservice.dk)',
    );
    const [latest] = await days('/api/v1/prices/latest?symbols=HAND');
    assert.equal(latest?.date, '2026-10-26');
    assert.equal(latest?.license, 'CC-BY-4.0');
    const [older] = await days('/api/v1/prices/2026-10-24?symbols=HAND');
    assert.equal(
      older?.attribution,
      'Source: ENTSO-E Transparency Platform',
      'each day names its own source',
    );
  });
});
