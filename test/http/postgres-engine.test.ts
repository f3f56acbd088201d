/**
 * The HTTP API on the scale-out engine (docs/scale-out.md): a few representative behaviours, through
 * the real app, with keys and prices in PostgreSQL (a fresh schema, dropped afterwards). The full
 * store contract is proven by test/stores/postgres-stores.test.ts; this shows the app is wired to it.
 * Skipped with the reason when PostgreSQL is unreachable, except on CI (helpers/postgres.ts).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEV_SERIES, devPrice } from '../../src/dev-data/dev-data.js';
import { dayBounds, dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';

const probe = await postgresSchemaUrl();
const skip = 'skip' in probe ? probe.skip : false;

interface Day {
  symbol: string;
  date: string;
  prices: { start: string; end: string; price: number }[];
}

describeOrSkip('the HTTP API on PostgreSQL', { skip }, () => {
  let h: Harness;
  let admin: string;
  before(async () => {
    h = await createHarness({ engine: 'postgres', now: '2026-11-22T10:15:03.120Z' });
    admin = (await h.createKey({ scopes: ['admin'], tier: 'enterprise' })).key;
  });
  after(() => h?.close());

  function get(url: string, key = h.demoKey) {
    return h.app.inject({ url, headers: { 'x-api-key': key } });
  }

  async function days(url: string, key = h.demoKey): Promise<Day[]> {
    const response = await get(url, key);
    assert.equal(response.statusCode, 200, response.body);
    return (response.json() as { series: Day[] }).series;
  }

  test("today's payload serves the stored development prices for every series", async () => {
    const series = await days('/api/v1/prices/today');
    assert.deepEqual(
      series.map((s) => s.symbol),
      DEV_SERIES.map((s) => s.symbol).sort(),
    );
    const no1 = series.find((s) => s.symbol === 'NO1');
    assert.equal(no1?.date, '2026-11-22');
    assert.equal(no1?.prices.length, 96);
    assert.equal(no1?.prices[0]?.start, '2026-11-22T00:00:00+01:00');
    const spec = DEV_SERIES.find((s) => s.symbol === 'NO1')!;
    for (const point of no1?.prices ?? []) {
      assert.equal(point.price, Number(devPrice(spec, Date.parse(point.start))));
    }
  });

  test('the Oslo fall-back day has 100 quarter hours, 02:00 twice with its offsets', async () => {
    const [day] = await days('/api/v1/prices/2026-10-25?symbols=NO1');
    const starts = day?.prices.map((p) => p.start) ?? [];
    assert.equal(starts.length, 100);
    assert.equal(
      starts.indexOf('2026-10-25T02:00:00+01:00') - starts.indexOf('2026-10-25T02:00:00+02:00'),
      4,
      'the repeated hour follows the first one',
    );
  });

  test('a CSV import is all or nothing: a bad row writes nothing; the good file is served exactly', async () => {
    const starts = dayIntervals('2026-11-19', 'Europe/Oslo', 'PT15M').map((i) =>
      formatInstant(i.start, 'Europe/Oslo'),
    );
    const { start, end } = dayBounds('2026-11-19', 'Europe/Oslo');
    const before = await h.stores.prices.pricesBetween('NO1', start, end);
    const put = (body: string) =>
      h.app.inject({
        method: 'PUT',
        url: '/api/v1/series/NO1/prices',
        headers: { 'x-api-key': admin, 'content-type': 'text/csv' },
        payload: body,
      });

    const bad = await put(`start,price\n${starts[0]},41.270\n${starts[1]},abc\n`);
    assert.equal(bad.statusCode, 422, bad.body);
    assert.deepEqual(
      bad.json().errors.map((e: { line: number }) => e.line),
      [3],
    );
    assert.deepEqual(await h.stores.prices.pricesBetween('NO1', start, end), before, 'nothing written');

    const good = await put(`start,price\n${starts[0]},41.270\n${starts[1]},-0.5\n`);
    assert.equal(good.statusCode, 200, good.body);
    assert.deepEqual(good.json(), { symbol: 'NO1', written: 2 });
    const stored = await h.stores.prices.pricesBetween('NO1', start, end);
    assert.deepEqual(
      stored.slice(0, 2).map((p) => p.price),
      ['41.270', '-0.5'],
    );
    const served = await get('/api/v1/prices/2026-11-19?symbols=NO1');
    assert.ok(
      served.body.includes(`"start":"${starts[0]}","end":"${starts[1]}","price":41.270}`),
      served.body,
    );
  });

  test('keys created through the admin API work at once, and a revoked key is refused', async () => {
    const created = await h.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'x-api-key': admin },
      payload: { name: 'on postgres', tier: 'free' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const { key, id } = created.json() as { key: string; id: string };
    assert.equal((await get('/api/v1/prices/today?symbols=NO1', key)).statusCode, 200);
    const listed = await get('/api/v1/keys', admin);
    assert.ok(
      (listed.json() as { id: string }[]).some((k) => k.id === id),
      'the new key is listed',
    );
    const revoked = await h.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${id}`,
      headers: { 'x-api-key': admin },
    });
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.notEqual(revoked.json().revokedAt, null);
    assert.equal((await get('/api/v1/prices/today?symbols=NO1', key)).statusCode, 401);
  });

  test('/prices/latest gives the interval that contains now', async () => {
    const [no1] = await days('/api/v1/prices/latest?symbols=NO1');
    assert.equal(no1?.prices.length, 1);
    assert.equal(no1?.prices[0]?.start, '2026-11-22T11:15:00+01:00');
  });

  test('/series reports coverage from the first to the last stored date', async () => {
    const response = await get('/api/v1/series/NO1');
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json().coverage, { first: '2026-08-24', last: '2026-11-23' });
  });
});
