/**
 * `tariff=` on the read endpoints and `GET /api/v1/tariffs` (docs/tariffs.md): an hourly EUR/MWh
 * series in Oslo read under a household tariff in NOK per kWh, on the 25-hour day of 2026-10-25. Every
 * expected number is computed here with decimal.js from the stored texts and the interval's local
 * hour as the answer writes it, independently of the server's arithmetic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';
const DAY = '2026-10-25';
const RATE = '11.6012'; // Friday's rate: the newest published before Sunday
const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -100, toExpPos: 100 });

const TARIFFS = parseTariffs({
  household: {
    description: 'NO1 household: 25% VAT, consumption tax, grid fee higher 06:00-22:00',
    currency: 'NOK',
    unit: 'kWh',
    timezone: ZONE,
    vat: [{ from: '2026-01-01', percent: 25 }],
    fixed: [{ from: '2026-01-01', amount: '0.0713' }],
    fees: [{ from: '2026-01-01', rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }] }],
  },
  'eur-flat': { currency: 'EUR', unit: 'MWh', vat: [{ from: '2026-01-01', percent: 20 }] },
  'sek-flat': { currency: 'SEK', unit: 'kWh' },
});

function hours(date: string): string[] {
  const { start, end } = dayBounds(date, ZONE);
  const out: string[] = [];
  for (let t = start; t < end; t += 3_600_000) out.push(formatInstant(t, ZONE));
  return out;
}

const priceOf = (n: number) => ['41.27', '-3.5', '0.015', `${n}.123456789`, '100'][n % 5] as string;

const text = (value: Decimal) => (value.toFixed() === '-0' ? '0' : value.toFixed());

/** The household parts of the interval starting at `start` (local time as written) at `price` EUR/MWh. */
function expected(start: string, price: string) {
  const spot = new D(price).times(RATE).toDecimalPlaces(6).dividedBy(1000);
  const hour = Number(start.slice(11, 13));
  const fees = new D('0.0713').plus(hour >= 6 && hour < 22 ? '0.3640' : '0.2640');
  const vat = spot.plus(fees).times('0.25').toDecimalPlaces(9);
  return { spot: text(spot), fees: text(fees), vat: text(vat), total: text(spot.plus(fees).plus(vat)) };
}

/** The number texts of one member of every interval, as sent. */
const members = (body: string, name: string) =>
  [...body.matchAll(new RegExp(`"${name}":(-?[0-9.]+)`, 'g'))].map((m) => m[1] as string);

for (const engine of ['sqlite', 'postgres'] as const)
  describe(`tariffs on the read endpoints (${engine})`, () => {
    let h: Harness;
    let reader: string;
    const get = (url: string, key = reader) => h.app.inject({ url, headers: { 'x-api-key': key } });
    const refused = async (url: string, parameter: string) => {
      const response = await get(url);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      const body = response.json() as { code: string; parameter: string; detail: string };
      assert.equal(body.code, 'invalid_parameter');
      assert.equal(body.parameter, parameter);
      return body;
    };

    before(async () => {
      h = await createHarness({
        engine,
        devData: false,
        now: '2026-10-26T12:00:00Z',
        config: { fx: { EUR: { NOK: 'FXEURNOK' } }, tariffs: TARIFFS },
      });
      const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
      reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
      for (const [symbol, kind, currency, unit, resolution] of [
        ['TNO1', 'electricity', 'EUR', 'MWh', 'PT1H'],
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
        ...hours(DAY).map((start, n) => ({ symbol: 'TNO1', start, price: priceOf(n) })),
        { symbol: 'FXEURNOK', start: '2026-10-22T00:00:00+02:00', price: '11.5847' },
        { symbol: 'FXEURNOK', start: '2026-10-23T00:00:00+02:00', price: RATE },
      ];
      await h.importPoints(points);
    });
    after(() => h.close());

    test('each interval of the 25-hour day has its total and parts in NOK per kWh', async () => {
      const response = await get(`/api/v1/prices/${DAY}?symbols=TNO1&tariff=household`);
      assert.equal(response.statusCode, 200, response.body);
      const [day] = (response.json() as { series: Record<string, unknown>[] }).series;
      assert.equal(day?.tariff, 'household');
      assert.equal(day?.currency, 'NOK');
      assert.equal(day?.unit, 'kWh');
      assert.deepEqual(day?.fx, { symbol: 'FXEURNOK', date: '2026-10-23', rate: 11.6012 });
      const starts = hours(DAY);
      assert.equal(starts.length, 25);
      const want = starts.map((start, n) => expected(start, priceOf(n)));
      assert.deepEqual(
        members(response.body, 'total'),
        want.map((w) => w.total),
      );
      assert.deepEqual(
        members(response.body, 'spot'),
        want.map((w) => w.spot),
      );
      assert.deepEqual(
        members(response.body, 'fees'),
        want.map((w) => w.fees),
      );
      assert.deepEqual(
        members(response.body, 'vat'),
        want.map((w) => w.vat),
      );
      // The spot part is the converted price, and the repeated 02:00 hour is charged at night rate twice.
      assert.deepEqual(members(response.body, 'price'), members(response.body, 'spot'));
      const fees = members(response.body, 'fees');
      assert.equal(starts[2], '2026-10-25T02:00:00+02:00');
      assert.equal(starts[3], '2026-10-25T02:00:00+01:00');
      assert.deepEqual([fees[2], fees[3]], ['0.3353', '0.3353']);
      assert.equal(fees.filter((f) => f === '0.4353').length, 16);
    });

    test('today, a range and latest take the tariff too; names are case-insensitive', async () => {
      h.clock.set('2026-10-25T10:30:00+01:00');
      try {
        const today = await get('/api/v1/prices/today?symbols=TNO1&tariff=HOUSEHOLD');
        const range = await get(`/api/v1/prices?symbols=TNO1&from=${DAY}&to=${DAY}&tariff=household`);
        const latest = await get('/api/v1/prices/latest?symbols=TNO1&tariff=household');
        const all = expected('2026-10-25T10:00:00+01:00', priceOf(11));
        for (const r of [today, range]) {
          assert.equal(r.statusCode, 200, r.body);
          assert.equal(members(r.body, 'total')[11], all.total);
        }
        assert.equal(latest.statusCode, 200, latest.body);
        assert.deepEqual(members(latest.body, 'total'), [all.total]);
      } finally {
        h.clock.set('2026-10-26T12:00:00Z');
      }
    });

    test('CSV carries the tariff columns only when a tariff is asked', async () => {
      const plain = await get(`/api/v1/prices/${DAY}?symbols=TNO1&format=csv`);
      assert.equal(plain.body.split('\r\n')[0], 'symbol,date,start,end,price,currency,unit');
      const csv = await get(`/api/v1/prices/${DAY}?symbols=TNO1&format=csv&tariff=household`);
      assert.equal(csv.statusCode, 200, csv.body);
      const lines = csv.body.split('\r\n');
      assert.equal(
        lines[0],
        'symbol,date,start,end,price,currency,unit,fx_symbol,fx_date,fx_rate,tariff,spot,fees,vat,total',
      );
      const w = expected('2026-10-25T02:00:00+01:00', priceOf(3));
      assert.equal(
        lines[4],
        `TNO1,${DAY},2026-10-25T02:00:00+01:00,2026-10-25T03:00:00+01:00,${w.spot},NOK,kWh,FXEURNOK,2026-10-23,${RATE},household,${w.spot},${w.fees},${w.vat},${w.total}`,
      );
      assert.equal(lines.length, 27); // header, 25 rows, and the empty string after the last CRLF
    });

    test('the answer cache keeps a plain and a tariffed answer apart', async () => {
      const url = `/api/v1/prices/${DAY}?symbols=TNO1`;
      for (let round = 0; round < 2; round++) {
        const plain = await get(url);
        const tariffed = await get(`${url}&tariff=household`);
        const other = await get(`${url}&tariff=eur-flat`);
        assert.deepEqual(members(plain.body, 'total'), []);
        assert.equal(members(tariffed.body, 'total').length, 25);
        // eur-flat: EUR per MWh, no conversion, 20% VAT on the stored price.
        assert.equal(members(other.body, 'total')[0], text(new D(priceOf(0)).times('1.2')));
        assert.notEqual(plain.headers.etag, tariffed.headers.etag);
      }
    });

    test('an unknown tariff, a clash with currency or unit, a daily mean and a non-energy series are 400', async () => {
      const unknown = await refused(`/api/v1/prices/${DAY}?symbols=TNO1&tariff=nope`, 'tariff');
      assert.match(unknown.detail, /eur-flat, household, sek-flat/);
      await refused(`/api/v1/prices/${DAY}?symbols=TNO1&tariff=household&currency=EUR`, 'currency');
      await refused(`/api/v1/prices/${DAY}?symbols=TNO1&tariff=household&unit=MWh`, 'unit');
      await refused(`/api/v1/prices/${DAY}?symbols=TNO1&tariff=household&resolution=P1D`, 'resolution');
      await refused(`/api/v1/prices/${DAY}?symbols=FXEURNOK&tariff=eur-flat`, 'tariff');
      // A tariff in a currency no FX series converts the series into.
      const sek = await refused(`/api/v1/prices/${DAY}?symbols=TNO1&tariff=sek-flat`, 'tariff');
      assert.match(sek.detail, /EUR into SEK/);
      await refused(`/api/v1/prices/${DAY}?symbols=TNO1&tariff=${'x'.repeat(40)}`, 'tariff');
      // Matching currency and unit are no clash.
      const same = await get(`/api/v1/prices/${DAY}?symbols=TNO1&tariff=household&currency=nok&unit=kWh`);
      assert.equal(same.statusCode, 200, same.body);
    });

    test('GET /api/v1/tariffs lists them as configured, with a key only', async () => {
      const response = await get('/api/v1/tariffs');
      assert.equal(response.statusCode, 200, response.body);
      assert.ok(response.headers.etag);
      const { tariffs } = response.json() as { tariffs: Record<string, unknown>[] };
      assert.deepEqual(
        tariffs.map((t) => t.name),
        ['eur-flat', 'household', 'sek-flat'],
      );
      assert.deepEqual(tariffs[1], {
        name: 'household',
        description: 'NO1 household: 25% VAT, consumption tax, grid fee higher 06:00-22:00',
        currency: 'NOK',
        unit: 'kWh',
        timezone: ZONE,
        vat: [{ from: '2026-01-01', percent: 25 }],
        fixed: [{ from: '2026-01-01', amount: 0.0713 }],
        fees: [
          {
            from: '2026-01-01',
            rules: [{ amount: 0.364, hours: '06:00-22:00' }, { amount: 0.264 }],
          },
        ],
      });
      assert.match(response.body, /"amount":0\.3640/, 'amounts are written digit for digit');
      const unkeyed = await h.app.inject({ url: '/api/v1/tariffs' });
      assert.equal(unkeyed.statusCode, 401);
      const again = await h.app.inject({
        url: '/api/v1/tariffs',
        headers: { 'x-api-key': reader, 'if-none-match': String(response.headers.etag) },
      });
      assert.equal(again.statusCode, 304);
      await refused('/api/v1/tariffs?bogus=1', 'bogus');
    });
  });
