/**
 * GET /api/v1/prices/today: the payload of docs/api.md, `symbols`, `tz`, CSV, and days that
 * are right on DST transitions. The clock is injected, so "today" is whatever a test says it is.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEV_SERIES, devPrice } from '../../src/dev-data/dev-data.js';
import { createHarness, type Harness } from '../helpers/harness.js';

interface Day {
  symbol: string;
  name: string;
  kind: string;
  currency: string;
  unit: string;
  timezone: string;
  resolution: string;
  date: string;
  complete: boolean;
  source: string | null;
  license: string | null;
  attribution: string | null;
  prices: { start: string; end: string; price: number }[];
}

async function today(h: Harness, query = '', headers: Record<string, string> = {}) {
  const response = await h.app.inject({
    url: `/api/v1/prices/today${query}`,
    headers: { 'x-api-key': h.demoKey, ...headers },
  });
  return {
    response,
    body: String(response.headers['content-type']).startsWith('application/json')
      ? (response.json() as { generatedAt: string; series: Day[] })
      : undefined,
  };
}

function seriesOf(body: { series: Day[] } | undefined, symbol: string): Day {
  const found = body?.series.find((s) => s.symbol === symbol);
  assert.ok(found, `series ${symbol} in the answer`);
  return found;
}

describe('GET /api/v1/prices/today', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
  });
  after(() => h.close());

  test('answers every readable series for its own local today, with the payload of docs/api.md', async () => {
    const { response, body } = await today(h);
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(body?.generatedAt, '2026-11-22T10:15:03.120Z');
    assert.deepEqual(
      body?.series.map((s) => s.symbol),
      DEV_SERIES.map((s) => s.symbol).sort(),
    );
    const no1 = seriesOf(body, 'NO1');
    assert.deepEqual(Object.keys(no1), [
      'symbol',
      'name',
      'kind',
      'currency',
      'unit',
      'timezone',
      'resolution',
      'date',
      'complete',
      'source',
      'license',
      'attribution',
      'prices',
    ]);
    assert.equal(no1.date, '2026-11-22');
    // The development data set is written as an import, every day whole.
    assert.equal(no1.complete, true);
    assert.equal(no1.source, 'import');
    assert.deepEqual([no1.license, no1.attribution], [null, null], 'imported: no upstream terms');
    assert.equal(no1.timezone, 'Europe/Oslo');
    assert.equal(no1.prices.length, 96);
    assert.deepEqual(Object.keys(no1.prices[0] ?? {}), ['start', 'end', 'price']);
    assert.equal(no1.prices[0]?.start, '2026-11-22T00:00:00+01:00');
    assert.equal(no1.prices[0]?.end, '2026-11-22T00:15:00+01:00');
    assert.equal(no1.prices.at(-1)?.end, '2026-11-23T00:00:00+01:00');
    assert.equal(typeof no1.prices[0]?.price, 'number');
  });

  test('serves the stored development prices, which are the same whatever day they were generated', async () => {
    const { body } = await today(h, '?symbols=NO1');
    const no1 = DEV_SERIES.find((s) => s.symbol === 'NO1')!;
    const first = seriesOf(body, 'NO1').prices[0]!;
    assert.equal(first.price, Number(devPrice(no1, Date.parse(first.start))));
  });

  test('a series with nothing for the day is present with an empty list (an equity on a Sunday)', async () => {
    const { response, body } = await today(h, '?symbols=ACME');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(seriesOf(body, 'ACME').prices, []);
    assert.match(response.body, /"prices":\[\]/);
  });

  test('symbols are matched case-insensitively, keep the order asked, and one symbol is still an array', async () => {
    const { body } = await today(h, '?symbols=de-lu,no1');
    assert.deepEqual(
      body?.series.map((s) => s.symbol),
      ['DE-LU', 'NO1'],
    );
    const one = await today(h, '?symbols=BTC-USD');
    assert.equal(one.body?.series.length, 1);
  });

  test('without tz each series uses its own zone, so two series can report different dates', async () => {
    const late = await createHarness({ now: '2026-11-22T20:00:00Z' });
    try {
      const { body } = await today(late, '?symbols=JP-TK,NYISO-J');
      assert.equal(seriesOf(body, 'JP-TK').date, '2026-11-23');
      assert.equal(seriesOf(body, 'JP-TK').prices[0]?.start, '2026-11-23T00:00:00+09:00');
      assert.equal(seriesOf(body, 'NYISO-J').date, '2026-11-22');
      assert.equal(seriesOf(body, 'NYISO-J').prices.length, 24);
    } finally {
      await late.close();
    }
  });

  test('tz makes every series use that zone’s calendar day and writes timestamps with its offset', async () => {
    const { body } = await today(h, '?symbols=NO1,JP-TK&tz=America/New_York');
    const no1 = seriesOf(body, 'NO1');
    assert.equal(no1.date, '2026-11-22');
    assert.equal(no1.timezone, 'Europe/Oslo');
    assert.equal(no1.prices.length, 96);
    assert.equal(no1.prices[0]?.start, '2026-11-22T00:00:00-05:00');
    assert.equal(no1.prices.at(-1)?.end, '2026-11-23T00:00:00-05:00');
    // Tokyo's 30-minute grid, read on New York's calendar day.
    const jp = seriesOf(body, 'JP-TK');
    assert.equal(jp.date, '2026-11-22');
    assert.equal(jp.prices.length, 48);
    assert.equal(jp.prices[0]?.start, '2026-11-22T00:00:00-05:00');
  });

  test('tz is accepted in any letter case and answered in the tz database spelling', async () => {
    const { response, body } = await today(h, '?symbols=NO1&tz=utc');
    assert.equal(response.statusCode, 200);
    assert.equal(seriesOf(body, 'NO1').prices[0]?.start, '2026-11-22T00:00:00+00:00');
  });

  test('format=csv and Accept: text/csv both give a header row and one row per point', async () => {
    const viaParam = await h.app.inject({
      url: '/api/v1/prices/today?symbols=NO1,BTC-USD&format=csv',
      headers: { 'x-api-key': h.demoKey },
    });
    const viaAccept = await h.app.inject({
      url: '/api/v1/prices/today?symbols=NO1,BTC-USD',
      headers: { 'x-api-key': h.demoKey, accept: 'text/csv' },
    });
    for (const response of [viaParam, viaAccept]) {
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
      const lines = response.body.trimEnd().split('\r\n');
      assert.equal(lines[0], 'symbol,date,start,end,price,currency,unit');
      assert.equal(lines.length, 1 + 96 + 24);
      assert.match(
        lines[1] ?? '',
        /^NO1,2026-11-22,2026-11-22T00:00:00\+01:00,2026-11-22T00:15:00\+01:00,-?\d+\.\d{2},EUR,MWh$/,
      );
    }
    assert.equal(viaParam.body, viaAccept.body);
  });

  test('format=json wins over an Accept header that prefers CSV', async () => {
    const { response } = await today(h, '?symbols=NO1&format=json', { accept: 'text/csv' });
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
  });

  test('both header forms give the same answer', async () => {
    const a = await today(h, '?symbols=NO1');
    const b = await h.app.inject({
      url: '/api/v1/prices/today?symbols=NO1',
      headers: { authorization: `Bearer ${h.demoKey}` },
    });
    assert.equal(b.statusCode, 200);
    assert.equal(b.body, a.response.body);
  });
});

describe('prices come back exactly as they were ingested', () => {
  test('decimal text survives unchanged: no float noise, negatives, 15 significant digits', async () => {
    const h = await createHarness({ now: '2026-06-10T12:00:00Z', devData: false });
    try {
      await h.stores.prices.upsertSeries({
        symbol: 'EXACT',
        name: 'Exact',
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: 'UTC',
        resolution: 'PT1H',
      });
      const values = [
        '41.27',
        '-0.01',
        '0.1',
        '123456789.012345',
        '-999999999999999',
        '0.000001',
        '41.270',
        '0',
      ];
      await h.stores.prices.upsertPrices(
        'EXACT',
        values.map((price, i) => ({ start: Date.parse('2026-06-10T00:00:00Z') + i * 3_600_000, price })),
      );
      const { key } = await h.createKey({ tier: 'free' });
      const response = await h.app.inject({ url: '/api/v1/prices/today', headers: { 'x-api-key': key } });
      assert.equal(response.statusCode, 200);
      const raw = [...response.body.matchAll(/"price":([^}]+)\}/g)].map((m) => m[1]);
      assert.deepEqual(raw, values);
      const parsed = response.json() as { series: Day[] };
      assert.equal(seriesOf(parsed, 'EXACT').prices[0]?.price, 41.27);
    } finally {
      await h.close();
    }
  });
});

describe('days are right on DST transitions', () => {
  const cases = [
    {
      name: 'Oslo spring forward: 92 quarter hours, no 02:xx',
      now: '2026-03-29T12:00:00Z',
      symbol: 'NO1',
      count: 92,
    },
    {
      name: 'Oslo fall back: 100 quarter hours, 02:00 twice',
      now: '2026-10-25T12:00:00Z',
      symbol: 'NO1',
      count: 100,
    },
    { name: 'New York spring forward: 23 hours', now: '2026-03-08T17:00:00Z', symbol: 'NYISO-J', count: 23 },
    { name: 'New York fall back: 25 hours', now: '2026-11-01T17:00:00Z', symbol: 'NYISO-J', count: 25 },
    { name: 'Tokyo has no DST: 48 half hours', now: '2026-03-29T03:00:00Z', symbol: 'JP-TK', count: 48 },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const h = await createHarness({ now: c.now });
      try {
        const { body } = await today(h, `?symbols=${c.symbol}`);
        const day = seriesOf(body, c.symbol);
        assert.equal(day.prices.length, c.count);
        const starts = day.prices.map((p) => p.start);
        assert.equal(new Set(starts.map((s) => Date.parse(s))).size, c.count, 'every instant once');
        for (let i = 1; i < day.prices.length; i++) {
          assert.equal(day.prices[i]?.start, day.prices[i - 1]?.end, 'intervals are contiguous');
        }
        if (c.symbol === 'NO1' && c.count === 100) {
          assert.ok(starts.includes('2026-10-25T02:00:00+02:00'));
          assert.ok(starts.includes('2026-10-25T02:00:00+01:00'));
          assert.equal(
            starts.indexOf('2026-10-25T02:00:00+01:00') - starts.indexOf('2026-10-25T02:00:00+02:00'),
            4,
          );
        }
        if (c.symbol === 'NO1' && c.count === 92) {
          assert.ok(!starts.some((s) => s.startsWith('2026-03-29T02:')));
          assert.ok(starts.includes('2026-03-29T01:45:00+01:00'));
          assert.equal(starts[starts.indexOf('2026-03-29T01:45:00+01:00') + 1], '2026-03-29T03:00:00+02:00');
        }
        if (c.symbol === 'NYISO-J' && c.count === 25) {
          assert.deepEqual(
            starts.filter((s) => s.startsWith('2026-11-01T01:')),
            ['2026-11-01T01:00:00-04:00', '2026-11-01T01:00:00-05:00'],
          );
        }
      } finally {
        await h.close();
      }
    });
  }
});
