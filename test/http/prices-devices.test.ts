/**
 * The device answers (docs/integrations.md): GET /api/v1/prices/now, /prices/cheapest-now and
 * /prices/forecast. An hourly EUR/MWh series in Oslo with cheap hours across the repeated autumn hour
 * (2026-10-25, 25 hours) and the skipped spring hour (2026-03-29, 23 hours), and a quarter-hour
 * series with today and tomorrow published; a household tariff per kWh. The clock is moved per test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';

/** Every interval start of a local day, RFC 3339 in Oslo. */
function starts(date: string, minutes: number): string[] {
  const { start, end } = dayBounds(date, ZONE);
  const out: string[] = [];
  for (let t = start; t < end; t += minutes * 60_000) out.push(formatInstant(t, ZONE));
  return out;
}

/** The hourly series' prices by the hour's index in the day; 50 elsewhere. */
const HOURLY: Record<string, Record<number, string>> = {
  // 01:00+02, 02:00+02, 02:00+01, then 03:00+01.
  '2026-10-25': { 1: '10', 2: '11', 3: '12', 4: '13' },
  // 01:00+01, then 03:00+02: the clock skips 02:00, so index 5 is 06:00+02:00.
  '2026-03-29': { 1: '5', 2: '6', 3: '7', 5: '4' },
};
/** The quarter-hour series: 40 to 46 by index, four cheap quarters at 02:00 to 02:15 and 07:30 to 07:45. */
const quarter = (i: number) => ({ 8: '1', 9: '2', 30: '3', 31: '4' })[i] ?? String(40 + (i % 7));

describe('answers for devices', () => {
  let h: Harness;
  let reader: string;
  const get = (url: string, headers: Record<string, string> = {}, key = reader) =>
    h.app.inject({ url, headers: { 'x-api-key': key, ...headers } });
  const ok = async (url: string, headers: Record<string, string> = {}) => {
    const response = await get(url, headers);
    assert.equal(response.statusCode, 200, response.body);
    return response;
  };
  const refused = async (url: string, status: number, code: string, parameter?: string) => {
    const response = await get(url);
    assert.equal(response.statusCode, status, response.body);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    const body = response.json() as { code: string; parameter?: string };
    assert.equal(body.code, code);
    if (parameter !== undefined) assert.equal(body.parameter, parameter);
  };

  before(async () => {
    h = await createHarness({
      devData: false,
      now: '2026-11-24T20:14:20Z',
      config: {
        tariffs: parseTariffs({
          household: {
            currency: 'EUR',
            unit: 'kWh',
            vat: [{ from: '2026-01-01', percent: 25 }],
            fixed: [{ from: '2026-01-01', amount: '0.05' }],
            fees: [
              { from: '2026-01-01', rules: [{ hours: '06:00-22:00', amount: '0.04' }, { amount: '0.02' }] },
            ],
          },
        }),
      },
    });
    const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
    reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
    for (const [symbol, resolution] of [
      ['OSLH', 'PT1H'],
      ['OSLQ', 'PT15M'],
    ]) {
      const created = await h.app.inject({
        method: 'PUT',
        url: `/api/v1/series/${symbol}`,
        headers: { 'x-api-key': admin, 'content-type': 'application/json' },
        payload: {
          name: symbol,
          kind: 'electricity',
          currency: 'EUR',
          unit: 'MWh',
          timezone: ZONE,
          resolution,
        },
      });
      assert.equal(created.statusCode, 201, created.body);
    }
    await h.importPoints([
      ...Object.entries(HOURLY).flatMap(([date, cheap]) =>
        starts(date, 60).map((start, n) => ({ symbol: 'OSLH', start, price: cheap[n] ?? '50' })),
      ),
      ...['2026-11-24', '2026-11-25'].flatMap((date) =>
        starts(date, 15).map((start, n) => ({ symbol: 'OSLQ', start, price: quarter(n) })),
      ),
    ]);
  });
  after(() => h.close());

  describe('GET /api/v1/prices/now', () => {
    test('answers the interval holding now, as JSON or the number alone', async () => {
      h.clock.set('2026-11-24T20:14:20Z'); // 21:14:20 in Oslo: the quarter 21:00, index 84
      const json = await ok('/api/v1/prices/now?symbols=oslq');
      assert.equal(
        json.body,
        '{"symbol":"OSLQ","price":40,"currency":"EUR","unit":"MWh","start":"2026-11-24T21:00:00+01:00","end":"2026-11-24T21:15:00+01:00"}',
      );
      const text = await ok('/api/v1/prices/now?symbols=OSLQ&format=text&unit=kWh');
      assert.match(String(text.headers['content-type']), /^text\/plain/);
      assert.equal(text.body, '0.04\n');
      const accepted = await ok('/api/v1/prices/now?symbols=OSLQ', { accept: 'text/plain' });
      assert.equal(accepted.body, '40\n');
    });

    test('is reusable only until the interval it describes ends', async () => {
      h.clock.set('2026-11-24T20:14:20Z');
      const near = await ok('/api/v1/prices/now?symbols=OSLQ');
      assert.equal(near.headers['cache-control'], 'private, max-age=40');
      h.clock.set('2026-11-24T20:00:00Z');
      const far = await ok('/api/v1/prices/now?symbols=OSLQ');
      assert.equal(far.headers['cache-control'], 'private, max-age=60');
      const again = await get('/api/v1/prices/now?symbols=OSLQ', {
        'if-none-match': String(far.headers.etag),
      });
      assert.equal(again.statusCode, 304);
      h.clock.set('2026-11-24T20:15:00Z'); // the next quarter: another price, another tag
      const next = await ok('/api/v1/prices/now?symbols=OSLQ');
      assert.notEqual(next.headers.etag, far.headers.etag);
      assert.equal(next.json().start, '2026-11-24T21:15:00+01:00');
    });

    test('with a tariff, the total of the interval, as the day endpoint computes it', async () => {
      h.clock.set('2026-11-24T20:14:20Z');
      const now = (await ok('/api/v1/prices/now?symbols=OSLQ&tariff=household')).json();
      // 40 EUR/MWh is 0.04 EUR/kWh; fees 0.05 + 0.04 (21:00 is within 06:00-22:00); VAT 25 %.
      assert.equal(new Decimal('0.04').plus('0.05').plus('0.04').times('1.25').toString(), '0.1625');
      assert.deepEqual(now, {
        symbol: 'OSLQ',
        price: 0.1625,
        currency: 'EUR',
        unit: 'kWh',
        tariff: 'household',
        start: '2026-11-24T21:00:00+01:00',
        end: '2026-11-24T21:15:00+01:00',
      });
      const day = (await ok('/api/v1/prices/today?symbols=OSLQ&tariff=household')).json() as {
        series: { prices: { start: string; total: number }[] }[];
      };
      const same = day.series[0]?.prices.find((p) => p.start === now.start);
      assert.equal(same?.total, now.price);
    });

    test('404 when no price is published for now', async () => {
      h.clock.set('2026-11-26T10:00:00Z');
      await refused('/api/v1/prices/now?symbols=OSLQ', 404, 'not_found');
      await refused('/api/v1/prices/now?symbols=OSLQ&format=text', 404, 'not_found');
    });
  });

  describe('GET /api/v1/prices/cheapest-now', () => {
    const cheap = async (at: string, query: string) => {
      h.clock.set(at);
      const json = (await ok(`/api/v1/prices/cheapest-now?${query}`)).json() as {
        cheap: boolean;
        intervals: number;
        start: string;
        date: string;
        complete: boolean;
      };
      const text = await ok(`/api/v1/prices/cheapest-now?${query}&format=text`);
      assert.equal(text.body, json.cheap ? '1\n' : '0\n');
      return json;
    };

    test('on the 25-hour day, 3 hours are 3 hours of elapsed time across the repeated hour', async () => {
      // 02:30+01:00 is the second 02:00 hour: the third cheapest.
      const second = await cheap('2026-10-25T01:30:00Z', 'symbols=OSLH&hours=3');
      assert.equal(second.start, '2026-10-25T02:00:00+01:00');
      assert.deepEqual(
        [second.cheap, second.intervals, second.date, second.complete],
        [true, 3, '2026-10-25', true],
      );
      const first = await cheap('2026-10-25T00:30:00Z', 'symbols=OSLH&hours=3');
      assert.equal(first.start, '2026-10-25T02:00:00+02:00');
      assert.equal(first.cheap, true);
      // 03:00+01:00 costs 13: the fourth cheapest.
      assert.equal((await cheap('2026-10-25T02:30:00Z', 'symbols=OSLH&hours=3')).cheap, false);
      assert.equal((await cheap('2026-10-25T02:30:00Z', 'symbols=OSLH&hours=4')).cheap, true);
    });

    test('on the 23-hour day, the cheapest hours skip the missing one, and 24 hours are all of it', async () => {
      // Prices 5 (01:00+01), 6 (03:00+02), 7 (04:00+02) and 4 (06:00+02): the 2 cheapest are 06:00 and 01:00.
      assert.equal((await cheap('2026-03-29T04:30:00Z', 'symbols=OSLH&hours=2')).cheap, true);
      assert.equal((await cheap('2026-03-29T00:30:00Z', 'symbols=OSLH&hours=2')).cheap, true);
      assert.equal((await cheap('2026-03-29T01:30:00Z', 'symbols=OSLH&hours=2')).cheap, false);
      const all = await cheap('2026-03-29T20:30:00Z', 'symbols=OSLH&hours=24');
      assert.deepEqual([all.cheap, all.intervals], [true, 23]);
    });

    test('on a quarter-hour series, an hour is its 4 cheapest quarters wherever they lie', async () => {
      const in02 = await cheap('2026-11-24T01:15:00Z', 'symbols=OSLQ&hours=1'); // 02:15+01:00
      assert.deepEqual([in02.cheap, in02.intervals], [true, 4]);
      assert.equal((await cheap('2026-11-24T06:30:00Z', 'symbols=OSLQ&hours=1')).cheap, true); // 07:30
      assert.equal((await cheap('2026-11-24T01:30:00Z', 'symbols=OSLQ&hours=1')).cheap, false); // 02:30
    });

    test('bad input is a problem that names the parameter', async () => {
      h.clock.set('2026-11-24T20:14:20Z');
      await refused('/api/v1/prices/cheapest-now?symbols=OSLQ', 400, 'invalid_parameter', 'hours');
      await refused('/api/v1/prices/cheapest-now?symbols=OSLQ&hours=0', 400, 'invalid_parameter', 'hours');
      await refused('/api/v1/prices/cheapest-now?symbols=OSLQ&hours=25', 400, 'invalid_parameter', 'hours');
      await refused('/api/v1/prices/cheapest-now?symbols=OSLQ&hours=2.5', 400, 'invalid_parameter', 'hours');
      await refused('/api/v1/prices/cheapest-now?hours=4', 400, 'invalid_parameter', 'symbols');
      await refused(
        '/api/v1/prices/cheapest-now?symbols=OSLQ,OSLH&hours=4',
        400,
        'invalid_parameter',
        'symbols',
      );
      await refused('/api/v1/prices/cheapest-now?symbols=NOPE&hours=4', 404, 'unknown_series');
      await refused('/api/v1/prices/now?symbols=OSLQ&format=xml', 400, 'invalid_parameter', 'format');
      await refused('/api/v1/prices/now?symbols=OSLQ&tariff=nope', 400, 'invalid_parameter', 'tariff');
      const png = await get('/api/v1/prices/now?symbols=OSLQ', { accept: 'image/png' });
      assert.equal(png.statusCode, 406);
    });
  });

  describe('GET /api/v1/prices/forecast', () => {
    test('from the interval holding now to the end of tomorrow, as prices and values', async () => {
      h.clock.set('2026-11-24T20:14:20Z');
      const body = (await ok('/api/v1/prices/forecast?symbols=OSLQ')).json() as {
        price: number;
        resolution: string;
        prices: { start: string; end: string; value: number }[];
        values: number[];
      };
      // 21:00 to midnight is 12 quarters, and tomorrow 96.
      assert.equal(body.prices.length, 12 + 96);
      assert.equal(body.prices[0]?.start, '2026-11-24T21:00:00+01:00');
      assert.equal(body.prices.at(-1)?.end, '2026-11-26T00:00:00+01:00');
      assert.deepEqual(
        body.values,
        body.prices.map((p) => p.value),
      );
      assert.equal(body.price, body.values[0]);
      assert.equal(body.resolution, 'PT15M');
      const hourly = (await ok('/api/v1/prices/forecast?symbols=OSLQ&resolution=PT1H')).json() as {
        values: number[];
      };
      assert.equal(hourly.values.length, 3 + 24);
    });

    test('format=evcc is the list alone, per kWh', async () => {
      h.clock.set('2026-11-24T20:14:20Z');
      const json = (await ok('/api/v1/prices/forecast?symbols=OSLQ')).json() as {
        prices: { value: number }[];
      };
      const evcc = (await ok('/api/v1/prices/forecast?symbols=OSLQ&format=evcc')).json() as {
        value: number;
      }[];
      assert.ok(Array.isArray(evcc));
      assert.deepEqual(
        evcc.map((r) => r.value),
        json.prices.map((p) => new Decimal(p.value).div(1000).toNumber()),
      );
      await refused(
        '/api/v1/prices/forecast?symbols=OSLQ&format=evcc&unit=MWh',
        400,
        'invalid_parameter',
        'unit',
      );
    });

    test('tomorrow not yet published: the list ends with today', async () => {
      h.clock.set('2026-11-25T20:14:20Z');
      const body = (await ok('/api/v1/prices/forecast?symbols=OSLQ')).json() as { prices: unknown[] };
      assert.equal(body.prices.length, 12);
    });
  });

  test('each answer, under a tariff too, takes one rate-limit unit', async () => {
    h.clock.set('2026-11-24T20:14:20Z');
    const { key } = await h.createKey({ tier: 'enterprise', scopes: ['read'] });
    const remaining: number[] = [];
    for (const url of [
      '/api/v1/prices/now?symbols=OSLQ&tariff=household',
      '/api/v1/prices/cheapest-now?symbols=OSLQ&hours=4&tariff=household',
      '/api/v1/prices/forecast?symbols=OSLQ&tariff=household',
      '/api/v1/prices/forecast?symbols=OSLQ&tariff=household',
    ]) {
      const response = await get(url, {}, key);
      assert.equal(response.statusCode, 200, response.body);
      remaining.push(Number(response.headers['x-ratelimit-remaining']));
    }
    assert.deepEqual(
      remaining.slice(1).map((r, i) => (remaining[i] as number) - r),
      [1, 1, 1],
    );
  });
});
