/**
 * GET /api/v1/prices/cheapest (docs/api.md, "The cheapest hours"), on both storage engines. An hourly
 * EUR/MWh series in Oslo with cheap hours across the repeated autumn hour (2026-10-25, 25 hours), the
 * skipped spring hour (2026-03-29, 23 hours) and two equally cheap windows on 2026-11-24, whose next
 * day is not published; a daily EUR→NOK series converts it. The clock stands at 2026-11-24 21:00 Oslo.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';
const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -100, toExpPos: 100 });

interface Point {
  start: string;
  end: string;
  price: number;
  fx?: { symbol: string; date: string; rate: number };
}
interface Cheapest {
  symbol: string;
  tariff?: string;
  currency: string;
  unit: string;
  from: string;
  to: string;
  complete: boolean;
  missing: { start: string; end: string }[];
  cheapest: { start: string; end: string; mean: number; prices: Point[] } | null;
}

/** Every hour of a local day, RFC 3339 in Oslo: 23, 24 or 25 of them. */
function hours(date: string): string[] {
  const { start, end } = dayBounds(date, ZONE);
  const out: string[] = [];
  for (let t = start; t < end; t += 3_600_000) out.push(formatInstant(t, ZONE));
  return out;
}

/** Each day's prices by the hour's index in the day; 50 elsewhere. */
const CHEAP: Record<string, Record<number, string>> = {
  // 01:00+02, 02:00+02, 02:00+01 then 03:00+01: three hours of elapsed time are indexes 1 to 3.
  '2026-10-25': { 1: '10', 2: '11', 3: '12', 4: '13' },
  // 01:00+01, then 03:00+02 and 04:00+02: the clock skips 02:00.
  '2026-03-29': { 1: '5', 2: '6', 3: '7', 5: '4' },
  // Spot is cheapest 07:00 to 10:00; with the day's higher grid fee, 01:00 to 04:00 costs less.
  '2026-11-23': { 1: '24', 2: '24', 3: '24', 7: '20', 8: '20', 9: '20' },
  // 02:00 to 05:00 and 14:00 to 17:00 both sum to 60; the earlier wins.
  '2026-11-24': { 2: '20.5', 3: '19.5', 4: '20', 14: '20', 15: '20.25', 16: '19.75', 21: '30', 23: '29' },
};

/** The JSON number texts of a key as sent (not as parsed: a double could hide a difference). */
function numberTexts(body: string, key: string): string[] {
  return [...body.matchAll(new RegExp(`"${key}":(-?[0-9.]+)`, 'g'))].map((m) => m[1] as string);
}

for (const engine of ['sqlite', 'postgres'] as const)
  describe(`the cheapest hours (${engine})`, () => {
    let h: Harness;
    let reader: string;
    let writer: string;
    const get = (url: string, key = reader, headers: Record<string, string> = {}) =>
      h.app.inject({ url, headers: { 'x-api-key': key, ...headers } });
    const cheapest = async (query: string) => {
      const response = await get(`/api/v1/prices/cheapest?symbols=OSLH&${query}`);
      assert.equal(response.statusCode, 200, response.body);
      const series = (response.json() as { series: Cheapest[] }).series;
      assert.equal(series.length, 1);
      return { body: response.body, series: series[0] as Cheapest, response };
    };
    const refused = async (query: string, parameter: string) => {
      const response = await get(`/api/v1/prices/cheapest?${query}`);
      assert.equal(response.statusCode, 400, response.body);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      const body = response.json() as { code: string; parameter: string };
      assert.equal(body.code, 'invalid_parameter');
      assert.equal(body.parameter, parameter);
    };
    const starts = (c: Cheapest) => c.cheapest?.prices.map((p) => p.start);

    before(async () => {
      h = await createHarness({
        engine,
        devData: false,
        now: '2026-11-24T20:00:00Z',
        config: {
          fx: { EUR: { NOK: 'FXEURNOK' } },
          tariffs: parseTariffs({
            household: {
              currency: 'NOK',
              unit: 'kWh',
              vat: [{ from: '2026-01-01', percent: 25 }],
              fixed: [{ from: '2026-01-01', amount: '0.0713' }],
              fees: [
                {
                  from: '2026-01-01',
                  rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }],
                },
              ],
            },
          }),
        },
      });
      const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
      reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
      writer = (await h.createKey({ tier: 'enterprise', scopes: ['write'] })).key;
      for (const [symbol, kind, currency, unit, resolution] of [
        ['OSLH', 'electricity', 'EUR', 'MWh', 'PT1H'],
        ['FXEURNOK', 'fx', 'NOK', 'EUR', 'P1D'],
      ]) {
        const created = await h.app.inject({
          method: 'PUT',
          url: `/api/v1/series/${symbol}`,
          headers: { 'x-api-key': admin, 'content-type': 'application/json' },
          payload: { name: symbol, kind, currency, unit, timezone: ZONE, resolution },
        });
        assert.equal(created.statusCode, 201, created.body);
      }
      const points = [
        ...Object.entries(CHEAP).flatMap(([date, cheap]) =>
          hours(date).map((start, n) => ({ symbol: 'OSLH', start, price: cheap[n] ?? '50' })),
        ),
        { symbol: 'FXEURNOK', start: '2026-11-20T00:00:00+01:00', price: '11.5012' },
        { symbol: 'FXEURNOK', start: '2026-11-23T00:00:00+01:00', price: '11.5847' },
      ];
      await h.importPoints(points);
    });
    after(() => h.close());

    test('a 3-hour window across the repeated autumn hour holds 3 hours of intervals, not 4 wall-clock hours', async () => {
      const { series, body } = await cheapest('duration=PT3H&from=2026-10-25&to=2026-10-25');
      assert.equal(series.from, '2026-10-25T00:00:00+02:00');
      assert.equal(series.to, '2026-10-26T00:00:00+01:00');
      assert.equal(series.complete, true);
      assert.deepEqual(series.missing, []);
      assert.equal(series.cheapest?.start, '2026-10-25T01:00:00+02:00');
      assert.equal(series.cheapest?.end, '2026-10-25T03:00:00+01:00');
      assert.deepEqual(starts(series), [
        '2026-10-25T01:00:00+02:00',
        '2026-10-25T02:00:00+02:00',
        '2026-10-25T02:00:00+01:00',
      ]);
      assert.deepEqual(numberTexts(body, 'mean'), ['11']);
    });

    test('a 3-hour window across the skipped spring hour spans 3 hours of elapsed time', async () => {
      const { series } = await cheapest('duration=PT3H&from=2026-03-29&to=2026-03-29');
      assert.equal(series.to, '2026-03-30T00:00:00+02:00');
      assert.equal(series.cheapest?.start, '2026-03-29T01:00:00+01:00');
      assert.equal(series.cheapest?.end, '2026-03-29T05:00:00+02:00');
      assert.equal(
        Date.parse(series.cheapest?.end ?? '') - Date.parse(series.cheapest?.start ?? ''),
        3 * 3_600_000,
      );
      assert.equal(series.cheapest?.prices.length, 3);
      assert.equal(series.cheapest?.mean, 6);
    });

    test('of equally cheap windows the earliest wins, and the mean is exact', async () => {
      const { series, body } = await cheapest('duration=PT3H&from=2026-11-24&to=2026-11-24');
      assert.deepEqual(starts(series), [
        '2026-11-24T02:00:00+01:00',
        '2026-11-24T03:00:00+01:00',
        '2026-11-24T04:00:00+01:00',
      ]);
      // 60 / 3, written with the most decimals among its prices.
      assert.deepEqual(numberTexts(body, 'mean'), ['20.0']);
      assert.deepEqual(numberTexts(body, 'price'), ['20.5', '19.5', '20']);
    });

    test('contiguous=false answers the N cheapest intervals in order of time, ties to the earliest', async () => {
      const { series, body } = await cheapest('contiguous=false&count=4&from=2026-11-24&to=2026-11-24');
      assert.deepEqual(starts(series), [
        '2026-11-24T03:00:00+01:00',
        '2026-11-24T04:00:00+01:00',
        '2026-11-24T14:00:00+01:00',
        '2026-11-24T16:00:00+01:00',
      ]);
      // (19.5 + 20 + 20 + 19.75) / 4 = 19.8125, rounded half away from zero to 2 decimals.
      assert.deepEqual(numberTexts(body, 'mean'), ['19.81']);
      const byDuration = await cheapest('contiguous=false&duration=PT4H&from=2026-11-24&to=2026-11-24');
      assert.deepEqual(starts(byDuration.series), starts(series));
    });

    test('instants bound the range; an interval that begins before from is not in it', async () => {
      const { series } = await cheapest(
        `duration=PT3H&from=${encodeURIComponent('2026-11-24T02:30:00+01:00')}&to=${encodeURIComponent('2026-11-24T18:00:00+01:00')}`,
      );
      assert.equal(series.from, '2026-11-24T02:30:00+01:00');
      assert.equal(series.cheapest?.start, '2026-11-24T14:00:00+01:00');
      assert.equal(series.complete, true);
      // Days are read in tz's calendar, and every timestamp is written with its offsets.
      const utc = await cheapest('duration=PT3H&from=2026-11-24&to=2026-11-24&tz=utc');
      assert.equal(utc.series.from, '2026-11-24T00:00:00+00:00');
      assert.equal(utc.series.to, '2026-11-25T00:00:00+00:00');
      assert.equal(utc.series.cheapest?.start, '2026-11-24T01:00:00+00:00');
      assert.equal(utc.series.complete, false, "the UTC day's last hour is Oslo's first of the 25th");
    });

    test('a range not yet fully published says which part is missing, and chooses among the published', async () => {
      const { series } = await cheapest('duration=PT2H&from=now&to=tomorrow');
      assert.equal(series.from, '2026-11-24T21:00:00+01:00');
      assert.equal(series.complete, false);
      assert.deepEqual(series.missing, [
        { start: '2026-11-25T00:00:00+01:00', end: '2026-11-26T00:00:00+01:00' },
      ]);
      assert.equal(series.cheapest?.start, '2026-11-24T22:00:00+01:00');
      const none = await cheapest('duration=PT3H&from=tomorrow&to=tomorrow');
      assert.equal(none.series.cheapest, null);
      assert.equal(none.series.complete, false);
    });

    test('currency and unit convert every price exactly, and the mean is of the converted prices', async () => {
      const { series, body } = await cheapest(
        'duration=PT3H&from=2026-11-24&to=2026-11-24&currency=nok&unit=kWh',
      );
      assert.equal(series.currency, 'NOK');
      assert.equal(series.unit, 'kWh');
      const expected = ['20.5', '19.5', '20'].map((p) =>
        new D(p).times('11.5847').toDecimalPlaces(6).dividedBy(1000).toFixed(),
      );
      assert.deepEqual(numberTexts(body, 'price'), expected);
      const decimals = Math.max(...expected.map((e) => e.split('.')[1]?.length ?? 0));
      const mean = expected
        .reduce((sum, e) => sum.plus(e), new D(0))
        .dividedBy(3)
        .toFixed(decimals);
      assert.deepEqual(numberTexts(body, 'mean'), [mean]);
      for (const p of series.cheapest?.prices ?? []) {
        assert.deepEqual(p.fx, { symbol: 'FXEURNOK', date: '2026-11-23', rate: 11.5847 });
      }
    });

    test("tariff= chooses on each interval's total: the day's higher grid fee moves the window into the night", async () => {
      const day = 'from=2026-11-23&to=2026-11-23&duration=PT3H';
      const spot = await cheapest(`${day}&currency=NOK&unit=kWh`);
      assert.equal(spot.series.cheapest?.start, '2026-11-23T07:00:00+01:00');
      const { series, body } = await cheapest(`${day}&tariff=Household`);
      assert.equal(series.tariff, 'household');
      assert.equal(series.currency, 'NOK');
      assert.equal(series.unit, 'kWh');
      assert.equal(series.cheapest?.start, '2026-11-23T01:00:00+01:00');
      // Friday's rate, the newest published by Monday; night fee 0.2640 plus 0.0713; 25% VAT to 9 decimals.
      const spotNok = new D('24').times('11.5012').toDecimalPlaces(6).dividedBy(1000);
      const fees = new D('0.2640').plus('0.0713');
      const vat = spotNok.plus(fees).times('0.25').toDecimalPlaces(9);
      const total = spotNok.plus(fees).plus(vat).toFixed();
      assert.deepEqual(numberTexts(body, 'total'), [total, total, total]);
      assert.deepEqual(numberTexts(body, 'mean'), [total]);
      const csv = await get(`/api/v1/prices/cheapest?symbols=OSLH&${day}&tariff=household&format=csv`);
      const [header, row] = csv.body.split('\r\n');
      assert.equal(
        header,
        'symbol,cheapest_start,cheapest_end,mean,start,end,price,currency,unit,complete,fx_symbol,fx_date,fx_rate,tariff,spot,fees,vat,total',
      );
      assert.match(
        String(row),
        new RegExp(
          `,household,${spotNok.toFixed().replace('.', '\\.')},0\\.3353,[0-9.]+,${total.replace('.', '\\.')}$`,
        ),
      );
      await refused(`symbols=OSLH&${day}&tariff=nope`, 'tariff');
    });

    test('CSV: one row per interval chosen, named as a file', async () => {
      const response = await get(
        '/api/v1/prices/cheapest?symbols=OSLH&duration=PT3H&from=2026-11-24&to=2026-11-24&format=csv',
      );
      assert.equal(response.statusCode, 200, response.body);
      assert.match(String(response.headers['content-type']), /^text\/csv/);
      assert.equal(response.headers['content-disposition'], 'attachment; filename="cheapest-2026-11-24.csv"');
      assert.deepEqual(response.body.split('\r\n'), [
        'symbol,cheapest_start,cheapest_end,mean,start,end,price,currency,unit,complete',
        'OSLH,2026-11-24T02:00:00+01:00,2026-11-24T05:00:00+01:00,20.0,2026-11-24T02:00:00+01:00,2026-11-24T03:00:00+01:00,20.5,EUR,MWh,true',
        'OSLH,2026-11-24T02:00:00+01:00,2026-11-24T05:00:00+01:00,20.0,2026-11-24T03:00:00+01:00,2026-11-24T04:00:00+01:00,19.5,EUR,MWh,true',
        'OSLH,2026-11-24T02:00:00+01:00,2026-11-24T05:00:00+01:00,20.0,2026-11-24T04:00:00+01:00,2026-11-24T05:00:00+01:00,20,EUR,MWh,true',
        '',
      ]);
      const none = await get(
        '/api/v1/prices/cheapest?symbols=OSLH&duration=PT3H&from=tomorrow&to=tomorrow',
        reader,
        {
          accept: 'text/csv',
        },
      );
      assert.equal(none.body.split('\r\n')[1], 'OSLH,,,,,,,EUR,MWh,false');
    });

    test('counted as one request, whatever the range, with no cost in RateLimit-Policy', async () => {
      const { key } = await h.createKey({ tier: 'enterprise', scopes: ['read'] });
      const remaining: number[] = [];
      for (const query of [
        'duration=PT3H&from=2026-10-25&to=2026-11-24',
        'duration=PT1H&from=today&to=today',
      ]) {
        const response = await get(`/api/v1/prices/cheapest?symbols=OSLH&${query}`, key);
        assert.equal(response.statusCode, 200, response.body);
        assert.doesNotMatch(String(response.headers['ratelimit-policy']), /pricepoint-cost/);
        remaining.push(Number(response.headers['x-ratelimit-remaining']));
      }
      assert.equal(remaining[0] as number, (remaining[1] as number) + 1);
    });

    test('cached per parameter, revalidated by ETag, and built again when a price changes', async () => {
      const url = '/api/v1/prices/cheapest?symbols=OSLH&duration=PT3H&from=2026-11-24&to=2026-11-24';
      const first = await get(url);
      const again = await get(url, reader, { 'if-none-match': String(first.headers.etag) });
      assert.equal(again.statusCode, 304);
      const shorter = await get(url.replace('PT3H', 'PT1H'));
      assert.notEqual(shorter.headers.etag, first.headers.etag);
      assert.equal(
        (shorter.json() as { series: Cheapest[] }).series[0]?.cheapest?.start,
        '2026-11-24T03:00:00+01:00',
      );
      const written = await h.app.inject({
        method: 'PUT',
        url: '/api/v1/series/OSLH/prices',
        headers: { 'x-api-key': writer, 'content-type': 'application/json' },
        payload: '{"start":"2026-11-24T09:00:00+01:00","price":-100}\n',
      });
      assert.equal(written.statusCode, 200, written.body);
      // The harness opens PostgreSQL without the wrapper of src/server/open-stores.ts that announces
      // each write to the other instances (SQLite's change token needs none): publish its notice.
      if (engine === 'postgres') await h.stores.notices.publish({ kind: 'prices', symbols: ['OSLH'] });
      const after = await get(url);
      assert.notEqual(after.headers.etag, first.headers.etag);
      assert.equal(
        (after.json() as { series: Cheapest[] }).series[0]?.cheapest?.start,
        '2026-11-24T07:00:00+01:00',
      );
    });

    test('bad parameters are 400 naming the parameter', async () => {
      const base = 'symbols=OSLH&from=2026-11-24&to=2026-11-24';
      await refused(`${base}&duration=PT20M`, 'duration');
      await refused(`${base}&duration=3h`, 'duration');
      await refused(`${base}&duration=PT25H`, 'duration');
      await refused(base, 'duration');
      await refused(`${base}&duration=PT3H&count=3`, 'count');
      await refused(`${base}&contiguous=false`, 'count');
      await refused(`${base}&contiguous=false&count=0`, 'count');
      await refused('symbols=OSLH&duration=PT3H&from=2026-11-24T25:00:00Z&to=tomorrow', 'from');
      await refused('symbols=OSLH&duration=PT3H&from=2026-11-24&to=2026-11-23', 'to');
      await refused('symbols=OSLH&duration=PT3H&from=2026-01-01&to=2026-11-24', 'to');
      await refused(`${base}&duration=PT3H&resolution=PT1H`, 'resolution');
      await refused(`${base}&duration=PT3H&unit=oz`, 'unit');
      const unknown = await get(`/api/v1/prices/cheapest?symbols=NOPE&duration=PT3H&from=today&to=today`);
      assert.equal(unknown.statusCode, 404);
    });
  });
