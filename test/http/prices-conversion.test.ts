/**
 * Prices in another currency and per another energy unit (docs/data-model.md, "Converted prices").
 * An hourly EUR/MWh series in Oslo, a daily EUR→NOK series with no rate over the weekend and one
 * published later than the day read, and an hourly EUR→SEK series whose first rate ends at 06:00.
 * Every expected price is computed here with decimal.js, independently of the server's arithmetic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';
const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -100, toExpPos: 100 });

interface Fx {
  symbol: string;
  date: string;
  rate: number;
}
interface Point {
  start: string;
  price: number;
  fx?: Fx;
}
interface Day {
  symbol: string;
  date: string;
  currency: string;
  unit: string;
  complete: boolean;
  fx?: Fx | null;
  unconverted?: { intervals: number; reason: string };
  prices: Point[];
}

function hours(date: string): string[] {
  const { start, end } = dayBounds(date, ZONE);
  const out: string[] = [];
  for (let t = start; t < end; t += 3_600_000) out.push(formatInstant(t, ZONE));
  return out;
}

/** The stored price texts of HAND: both signs, many decimals, whole numbers. */
const priceOf = (date: string, n: number) =>
  ['41.27', '-3.5', '0.015', `${n}.123456789`, '100', '-0.0000005'][
    (n + (date === '2026-11-23' ? 1 : 0)) % 6
  ] as string;

/** The expected text: price × rate rounded half away from zero to 6 decimals, then per unit exactly. */
function expected(price: string, rate: string | undefined, perMwh = 1): string {
  let value = new D(price);
  if (rate !== undefined) value = value.times(rate).toDecimalPlaces(6, Decimal.ROUND_HALF_UP);
  const text = value.dividedBy(perMwh).toFixed();
  return text === '-0' ? '0' : text;
}

/** The JSON number text of each price as sent (not as parsed: a double could hide a difference). */
function priceTexts(body: string): string[] {
  return [...body.matchAll(/"price":(-?[0-9.]+)/g)].map((m) => m[1] as string);
}

// Both storage engines: the rates are found with the store's own queries.
for (const engine of ['sqlite', 'postgres'] as const)
  describe(`currency and unit conversion (${engine})`, () => {
    let h: Harness;
    let reader: string;
    let admin: string;
    const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': reader } });
    const ok = async (url: string) => {
      const response = await get(url);
      assert.equal(response.statusCode, 200, response.body);
      return { body: response.body, series: (response.json() as { series: Day[] }).series };
    };
    const refused = async (url: string, parameter: string) => {
      const response = await get(url);
      assert.equal(response.statusCode, 400, response.body);
      const body = response.json() as { code: string; parameter: string };
      assert.equal(body.code, 'invalid_parameter');
      assert.equal(body.parameter, parameter);
    };

    before(async () => {
      h = await createHarness({
        engine,
        now: '2026-11-24T20:00:00Z',
        config: { fx: { EUR: { USD: 'EURUSD', NOK: 'FXEURNOK', SEK: 'FXEURSEK' } } },
      });
      admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
      reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
      const series = [
        ['HAND', 'electricity', 'EUR', 'MWh', 'PT1H'],
        ['FXEURNOK', 'fx', 'NOK', 'EUR', 'P1D'],
        ['FXEURSEK', 'fx', 'SEK', 'EUR', 'PT1H'],
      ];
      for (const [symbol, kind, currency, unit, resolution] of series) {
        const created = await h.app.inject({
          method: 'PUT',
          url: `/api/v1/series/${symbol}`,
          headers: { 'x-api-key': admin, 'content-type': 'application/json' },
          payload: { name: symbol, kind, currency, unit, timezone: ZONE, resolution },
        });
        assert.equal(created.statusCode, 201, created.body);
      }
      const points = [
        ...['2026-11-23', '2026-11-24'].flatMap((date) =>
          hours(date).map((start, n) => ({ symbol: 'HAND', start, price: priceOf(date, n) })),
        ),
        // Friday's rate, none over the weekend, Monday's, and Tuesday's (out only on Tuesday evening).
        { symbol: 'FXEURNOK', start: '2026-11-20T00:00:00+01:00', price: '11.5012' },
        { symbol: 'FXEURNOK', start: '2026-11-23T00:00:00+01:00', price: '11.5847' },
        { symbol: 'FXEURNOK', start: '2026-11-24T00:00:00+01:00', price: '11.7' },
        { symbol: 'FXEURSEK', start: '2026-11-24T05:00:00+01:00', price: '11.0001' },
        { symbol: 'FXEURSEK', start: '2026-11-24T11:00:00+01:00', price: '11.0002' },
      ];
      await h.importPoints(points);
    });
    after(() => h.close());

    test('unit=kWh and unit=Wh divide EUR/MWh exactly', async () => {
      for (const [unit, per] of [
        ['kWh', 1000],
        ['Wh', 1_000_000],
        ['MWh', 1],
      ] as const) {
        const { body, series } = await ok(`/api/v1/prices/2026-11-24?symbols=HAND&unit=${unit}`);
        assert.equal(series[0]?.unit, unit);
        assert.equal(series[0]?.currency, 'EUR');
        assert.equal(series[0]?.fx, undefined, 'no currency asked, no rate');
        const want = hours('2026-11-24').map((_, n) => expected(priceOf('2026-11-24', n), undefined, per));
        assert.deepEqual(priceTexts(body), want);
      }
      const { body } = await ok('/api/v1/prices/2026-11-24?symbols=HAND&unit=kwh');
      assert.equal(priceTexts(body)[0], '0.04127', 'the unit is read in any letter case');
    });

    test('unit on a series not priced per energy unit, or an unknown unit, is a 400 naming unit', async () => {
      await refused('/api/v1/prices/2026-11-24?symbols=EURUSD&unit=kWh', 'unit');
      await refused('/api/v1/prices/2026-11-24?symbols=HAND,XAU-USD&unit=MWh', 'unit');
      await refused('/api/v1/prices/2026-11-24?symbols=HAND&unit=GWh', 'unit');
      await refused('/api/v1/prices?from=2026-11-23&to=2026-11-24&symbols=EURUSD&unit=kWh', 'unit');
      await refused('/api/v1/prices/latest?symbols=ACME&unit=kWh', 'unit');
    });

    test("currency=NOK uses the newest rate whose day has ended by each interval's start", async () => {
      const { body, series } = await ok(
        '/api/v1/prices?from=2026-11-23&to=2026-11-24&symbols=HAND&currency=NOK',
      );
      const [monday, tuesday] = series;
      assert.deepEqual(monday?.fx, { symbol: 'FXEURNOK', date: '2026-11-20', rate: 11.5012 });
      assert.deepEqual(tuesday?.fx, { symbol: 'FXEURNOK', date: '2026-11-23', rate: 11.5847 });
      assert.equal(tuesday?.currency, 'NOK');
      assert.equal(tuesday?.unit, 'MWh');
      assert.ok(
        tuesday?.prices.every((p) => p.fx === undefined),
        'one rate for the day: named once',
      );
      assert.ok(body.includes('"rate":11.5847}'), 'the rate as stored');
      const want = [
        ...hours('2026-11-23').map((_, n) => expected(priceOf('2026-11-23', n), '11.5012')),
        ...hours('2026-11-24').map((_, n) => expected(priceOf('2026-11-24', n), '11.5847')),
      ];
      assert.deepEqual(priceTexts(body), want);
      assert.equal(priceTexts(body)[24], '478.100569', '41.27 EUR/MWh at 11.5847 NOK/EUR');
    });

    test('currency and unit together: 41.27 EUR/MWh at 11.5847 is 0.478100569 NOK/kWh', async () => {
      const { body, series } = await ok('/api/v1/prices/2026-11-24?symbols=HAND&currency=nok&unit=kWh');
      assert.equal(series[0]?.currency, 'NOK');
      assert.equal(series[0]?.unit, 'kWh');
      assert.equal(priceTexts(body)[0], '0.478100569');
      const want = hours('2026-11-24').map((_, n) => expected(priceOf('2026-11-24', n), '11.5847', 1000));
      assert.deepEqual(priceTexts(body), want);
    });

    test('intervals before the first published rate are left out; differing rates are named per interval', async () => {
      const { series } = await ok('/api/v1/prices/2026-11-24?symbols=HAND&currency=SEK');
      const day = series[0] as Day;
      assert.equal(day.complete, false, 'hours without a rate are missing from the converted day');
      assert.deepEqual(day.fx, { symbol: 'FXEURSEK', date: '2026-11-24', rate: 11.0001 });
      const all = hours('2026-11-24');
      assert.deepEqual(
        day.prices.map((p) => p.start),
        all.slice(6),
        'the 05:00 rate is out at 06:00: nothing before',
      );
      for (const p of day.prices) {
        const hour = Number(p.start.slice(11, 13));
        const rate = hour < 12 ? 11.0001 : 11.0002;
        assert.deepEqual(p.fx, { symbol: 'FXEURSEK', date: '2026-11-24', rate }, p.start);
        assert.equal(p.price, Number(expected(priceOf('2026-11-24', hour), String(rate))), p.start);
      }
      assert.deepEqual(day.unconverted, {
        intervals: 6,
        reason: 'FXEURSEK has no rate published by 2026-11-24T00:00:00+01:00, so 6 intervals are left out.',
      });
      const none = await ok('/api/v1/prices/2026-11-23?symbols=HAND&currency=SEK');
      assert.equal(none.series[0]?.fx, null, 'no rate at all: null, and no prices');
      assert.deepEqual(none.series[0]?.prices, []);
      assert.equal(none.series[0]?.unconverted?.intervals, 24, 'the empty day says why it is empty');
      // Every interval converted: no such field.
      const whole = await ok('/api/v1/prices/2026-11-24?symbols=HAND&currency=NOK');
      assert.equal(whole.series[0]?.unconverted, undefined);
    });

    test('an FX series the config names that does not exist is named in the day, not a silent empty day', async () => {
      const missing = await createHarness({
        engine,
        now: '2026-11-24T20:00:00Z',
        config: { fx: { EUR: { NOK: 'NOSUCHFX' } } },
      });
      try {
        const key = (await missing.createKey({ tier: 'enterprise' })).key;
        const response = await missing.app.inject({
          url: '/api/v1/prices/2026-11-24?symbols=NO1&currency=NOK',
          headers: { 'x-api-key': key },
        });
        assert.equal(response.statusCode, 200, response.body);
        const [day] = (response.json() as { series: Day[] }).series;
        assert.deepEqual(day?.prices, []);
        assert.deepEqual(day?.unconverted, {
          intervals: 96,
          reason: 'The FX series NOSUCHFX that converts EUR into NOK does not exist on this server.',
        });
      } finally {
        await missing.close();
      }
    });

    test('a pair without an FX series is a 400 naming currency; the same currency is served as stored', async () => {
      await refused('/api/v1/prices/2026-11-24?symbols=HAND&currency=JPY', 'currency');
      await refused('/api/v1/prices/latest?symbols=HAND&currency=JPY', 'currency');
      await refused('/api/v1/prices/2026-11-24?symbols=HAND&currency=N%C3%98K', 'currency');
      const { body, series } = await ok('/api/v1/prices/2026-11-24?symbols=HAND&currency=EUR');
      assert.equal(series[0]?.fx, undefined);
      assert.deepEqual(
        priceTexts(body),
        hours('2026-11-24').map((_, n) => priceOf('2026-11-24', n)),
      );
    });

    test('the development data: NO1 in USD with EURUSD, the rate of an earlier Berlin day', async () => {
      const { body, series } = await ok('/api/v1/prices/2026-11-20?symbols=NO1&currency=USD');
      const day = series[0] as Day;
      const fx = day.fx as Fx;
      assert.equal(fx.symbol, 'EURUSD');
      assert.ok(fx.date < '2026-11-20', fx.date);
      const rates = await ok(`/api/v1/prices/${fx.date}?symbols=EURUSD`);
      const rate = priceTexts(rates.body)[0] as string;
      assert.equal(fx.rate, Number(rate));
      const plain = await ok('/api/v1/prices/2026-11-20?symbols=NO1');
      assert.deepEqual(
        priceTexts(body),
        priceTexts(plain.body).map((p) => expected(p, rate)),
      );
    });

    test('CSV names the rate of every row', async () => {
      const response = await get('/api/v1/prices/2026-11-24?symbols=HAND&currency=SEK&unit=kWh&format=csv');
      assert.equal(response.statusCode, 200, response.body);
      const [header, first, last] = response.body
        .split('\r\n')
        .filter((_line, i, a) => i === 0 || i === 1 || i === a.length - 2);
      assert.equal(header, 'symbol,date,start,end,price,currency,unit,fx_symbol,fx_date,fx_rate');
      const hour6 = hours('2026-11-24')[6] as string;
      assert.equal(
        first,
        `HAND,2026-11-24,${hour6},${hours('2026-11-24')[7]},${expected(priceOf('2026-11-24', 6), '11.0001', 1000)},SEK,kWh,FXEURSEK,2026-11-24,11.0001`,
      );
      assert.match(last ?? '', /,SEK,kWh,FXEURSEK,2026-11-24,11\.0002$/);
      const both = await get(
        '/api/v1/prices/2026-11-24?symbols=HAND,FXEURNOK&currency=NOK&include=provenance&format=csv',
      );
      const lines = both.body.split('\r\n');
      assert.equal(
        lines[0],
        'symbol,date,start,end,price,currency,unit,complete,source,fx_symbol,fx_date,fx_rate',
      );
      assert.match(lines[1] ?? '', /^HAND,.*,NOK,MWh,true,import,FXEURNOK,2026-11-23,11\.5847$/);
      // A series already in NOK needs no rate: its rows keep the columns, empty.
      assert.match(lines.at(-2) ?? '', /^FXEURNOK,2026-11-24,.*,11\.7,NOK,EUR,true,import,,,$/);
      const plain = await get('/api/v1/prices/2026-11-24?symbols=HAND&format=csv');
      assert.equal(plain.body.split('\r\n')[0], 'symbol,date,start,end,price,currency,unit');
    });

    test('latest converts too; converted and plain answers are cached apart', async () => {
      const { series } = await ok('/api/v1/prices/latest?symbols=HAND&currency=NOK&unit=kWh');
      assert.equal(series[0]?.currency, 'NOK');
      assert.deepEqual(series[0]?.fx, { symbol: 'FXEURNOK', date: '2026-11-23', rate: 11.5847 });
      // Now is 21:00 in Oslo: the hour that contains it.
      assert.equal(series[0]?.prices[0]?.start, '2026-11-24T21:00:00+01:00');
      assert.equal(series[0]?.prices[0]?.price, Number(expected(priceOf('2026-11-24', 21), '11.5847', 1000)));
      const urls = [
        '/api/v1/prices/2026-11-24?symbols=HAND',
        '/api/v1/prices/2026-11-24?symbols=HAND&currency=NOK',
        '/api/v1/prices/2026-11-24?symbols=HAND&unit=kWh',
        '/api/v1/prices/2026-11-24?symbols=HAND&currency=NOK&unit=kWh',
      ];
      const first = await Promise.all(urls.map(async (u) => (await get(u)).body));
      const again = await Promise.all(urls.map(async (u) => (await get(u)).body));
      assert.equal(new Set(first.map((b) => priceTexts(b).join())).size, 4, 'four different answers');
      assert.deepEqual(
        again.map((b) => priceTexts(b)),
        first.map((b) => priceTexts(b)),
      );
    });

    test('a rate published later changes a kept converted answer', async () => {
      const url = '/api/v1/prices/2026-11-24?symbols=HAND&currency=SEK';
      const before = await ok(url);
      assert.equal(before.series[0]?.prices[0]?.start, '2026-11-24T06:00:00+01:00');
      const uploaded = await h.app.inject({
        method: 'PUT',
        url: '/api/v1/series/FXEURSEK/prices',
        headers: { 'x-api-key': admin, 'content-type': 'text/csv' },
        payload: 'start,price\r\n2026-11-24T00:00:00+01:00,10.9999\r\n',
      });
      assert.equal(uploaded.statusCode, 200, uploaded.body);
      // What a server's stores announce after a write (src/stores/announcing.ts), which this
      // harness's PostgreSQL stores leave out: the notice names the FX series alone.
      await h.stores.notices.publish({ kind: 'prices', symbols: ['FXEURSEK'] });
      const after = await ok(url);
      assert.equal(after.series[0]?.prices[0]?.start, '2026-11-24T01:00:00+01:00');
      assert.deepEqual(after.series[0]?.fx, { symbol: 'FXEURSEK', date: '2026-11-24', rate: 10.9999 });
    });
  });
