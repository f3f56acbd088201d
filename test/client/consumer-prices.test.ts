/**
 * `@pricepoint/client` reading what a household pays, against a real server over HTTPS: `currency`
 * and `unit`, a tariff (docs/tariffs.md), `include` (rank and level), `cheapest()` and `tariffs()`.
 * An hourly EUR/MWh series in Oslo and a EUR to NOK FX series are imported; every expected number
 * is computed here with decimal.js from the stored texts, and every member of every answer must be
 * one the client's types name (so a member the server sends that the types lack fails the test).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type CheapestAnswer,
  type CheapestChoice,
  type CheapestPoint,
  type CheapestSeries,
  type DayAnswer,
  type FxRate,
  type Level,
  type PricePoint,
  PricepointClient,
  PricepointError,
  type SeriesDay,
  type Tariff,
} from '@pricepoint/client';
import { Decimal } from 'decimal.js';
import { fetch as undiciFetch } from 'undici';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { addDays, dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';
const NOW = '2026-11-24T12:00:00Z'; // noon in Oslo: today is published, tomorrow too
const TODAY = '2026-11-24';
const FIRST = '2026-11-17'; // the 7 days before today are the reference of `level`
// EUR to NOK by the FX day. A daily rate counts as published when its day ends (docs/data-model.md,
// "Converted prices"): the 24th's prices use the 23rd's rate, the 25th's the 24th's.
const RATES: Record<string, string> = { '2026-11-16': '11.5', '2026-11-23': '11.5847', [TODAY]: '11.6012' };
/** The rate the hour starting at `start` uses: of the FX day before its local date, or earlier. */
function rateFor(start: string): { date: string; rate: string } {
  const date = Object.keys(RATES)
    .filter((d) => d < start.slice(0, 10))
    .sort()
    .at(-1) as string;
  return { date, rate: RATES[date] as string };
}
const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -100, toExpPos: 100 });

const TARIFFS = parseTariffs({
  'no1-household': {
    description: 'Oslo household, grid fee higher 06:00-22:00',
    currency: 'NOK',
    unit: 'kWh',
    timezone: ZONE,
    vat: [{ from: '2026-01-01', percent: 25 }],
    fixed: [{ from: '2026-01-01', amount: '0.0713' }],
    fees: [{ from: '2026-01-01', rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }] }],
  },
});

/** The hours of a local day in Oslo, as the answers write them. */
function hours(date: string): string[] {
  const { start, end } = dayBounds(date, ZONE);
  const out: string[] = [];
  for (let t = start; t < end; t += 3_600_000) out.push(formatInstant(t, ZONE));
  return out;
}

/** A price per hour with repeats (equal prices share a rank) and a cheap night. */
function priceOf(date: string, n: number): string {
  const day = Number(date.slice(8, 10));
  const base = [52.1, 48.75, 41.27, 41.27, 39.9, 44.5][n % 6] as number;
  return (base + (n >= 18 ? -20 : n >= 6 ? 15.5 : 0) + (day % 3)).toFixed(2);
}

const DAYS: string[] = [];
for (let d = FIRST; d <= '2026-11-25'; d = addDays(d, 1)) DAYS.push(d);
const STORED = new Map<string, string>(); // start -> EUR/MWh text
for (const date of DAYS) {
  for (const [n, start] of hours(date).entries()) STORED.set(start, priceOf(date, n));
}

const text = (value: Decimal) => (value.toFixed() === '-0' ? '0' : value.toFixed());

/** NOK per kWh of a stored price at `rate` (6 decimals per MWh, then per kWh). */
const nokPerKwh = (price: string, rate: string) =>
  new D(price).times(rate).toDecimalPlaces(6).dividedBy(1000);

/** The household parts of the hour starting at `start` (Oslo time as written). */
function household(start: string) {
  const spot = nokPerKwh(STORED.get(start) as string, rateFor(start).rate);
  const hour = Number(start.slice(11, 13));
  const fees = new D('0.0713').plus(hour >= 6 && hour < 22 ? '0.3640' : '0.2640');
  const vat = spot.plus(fees).times('0.25').toDecimalPlaces(9);
  return { spot, fees, vat, total: spot.plus(fees).plus(vat) };
}

/** Every member name the client's types give each object of the answers. */
const DAY_KEYS = ['generatedAt', 'series'] as const satisfies readonly (keyof DayAnswer)[];
const SERIES_KEYS = [
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
  'tariff',
  'fx',
  'prices',
] as const satisfies readonly (keyof SeriesDay)[];
const POINT_KEYS = [
  'start',
  'end',
  'price',
  'fx',
  'total',
  'spot',
  'fees',
  'vat',
  'rank',
  'level',
] as const satisfies readonly (keyof PricePoint)[];
const FX_KEYS = ['symbol', 'date', 'rate'] as const satisfies readonly (keyof FxRate)[];
const CHEAPEST_KEYS = [
  'generatedAt',
  'contiguous',
  'duration',
  'count',
  'series',
] as const satisfies readonly (keyof CheapestAnswer)[];
const CHEAPEST_SERIES_KEYS = [
  'symbol',
  'name',
  'kind',
  'currency',
  'unit',
  'timezone',
  'resolution',
  'tariff',
  'from',
  'to',
  'complete',
  'missing',
  'cheapest',
] as const satisfies readonly (keyof CheapestSeries)[];
const CHOICE_KEYS = ['start', 'end', 'mean', 'prices'] as const satisfies readonly (keyof CheapestChoice)[];
const CHEAP_POINT_KEYS = [
  'start',
  'end',
  'price',
  'fx',
  'total',
  'spot',
  'fees',
  'vat',
] as const satisfies readonly (keyof CheapestPoint)[];
const TARIFF_KEYS = [
  'name',
  'description',
  'currency',
  'unit',
  'timezone',
  'vat',
  'fixed',
  'fees',
] as const satisfies readonly (keyof Tariff)[];
const LEVELS: readonly Level[] = ['very_cheap', 'cheap', 'normal', 'expensive', 'very_expensive'];

function onlyTyped(value: object, keys: readonly string[], what: string): void {
  for (const key of Object.keys(value))
    assert.ok(keys.includes(key), `${what} has "${key}", which its type lacks`);
}

function typedDay(answer: DayAnswer): void {
  onlyTyped(answer, DAY_KEYS, 'DayAnswer');
  for (const s of answer.series) {
    onlyTyped(s, SERIES_KEYS, 'SeriesDay');
    if (s.fx) onlyTyped(s.fx, FX_KEYS, 'SeriesDay.fx');
    for (const p of s.prices) {
      onlyTyped(p, POINT_KEYS, 'PricePoint');
      if (p.fx) onlyTyped(p.fx, FX_KEYS, 'PricePoint.fx');
    }
  }
}

function typedCheapest(answer: CheapestAnswer): void {
  onlyTyped(answer, CHEAPEST_KEYS, 'CheapestAnswer');
  for (const s of answer.series) {
    onlyTyped(s, CHEAPEST_SERIES_KEYS, 'CheapestSeries');
    if (s.cheapest === null) continue;
    onlyTyped(s.cheapest, CHOICE_KEYS, 'CheapestChoice');
    for (const p of s.cheapest.prices) onlyTyped(p, CHEAP_POINT_KEYS, 'CheapestPoint');
  }
}

/** The number texts of one member of every interval, as the server sent them. */
const members = (body: string, name: string) =>
  [...body.matchAll(new RegExp(`"${name}":(-?[0-9.]+)`, 'g'))].map((m) => m[1] as string);

let h: Harness;
let server: Awaited<ReturnType<typeof listenHttps>>;
let client: PricepointClient;
let reader: string;
let sent: string[];

before(async () => {
  h = await createHarness({
    https: true,
    devData: false,
    now: NOW,
    config: { fx: { EUR: { NOK: 'FXEURNOK' } }, tariffs: TARIFFS },
  });
  server = await listenHttps(h);
  const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
  reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
  sent = [];
  const fetch = (url: string, init: Parameters<typeof undiciFetch>[1]) => {
    sent.push(url);
    return undiciFetch(url, { ...init, dispatcher: server.agent });
  };
  const adminClient = new PricepointClient({ baseUrl: server.base, apiKey: admin, fetch });
  client = new PricepointClient({ baseUrl: server.base, apiKey: reader, fetch });
  await adminClient.upsertSeries('TNO1', {
    name: 'Test Oslo',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: ZONE,
    resolution: 'PT1H',
  });
  await adminClient.upsertSeries('FXEURNOK', {
    name: 'EUR in NOK',
    kind: 'fx',
    currency: 'NOK',
    unit: 'EUR',
    timezone: ZONE,
    resolution: 'P1D',
  });
  await h.importPoints([
    ...[...STORED].map(([start, price]) => ({ symbol: 'TNO1', start, price })),
    ...Object.entries(RATES).map(([date, price]) => ({
      symbol: 'FXEURNOK',
      start: hours(date)[0] as string,
      price,
    })),
  ]);
});
after(async () => {
  await server.close();
  await h.close();
});

describe('currency and unit', () => {
  test('day() converts to NOK per kWh exactly and names the rate', async () => {
    sent.length = 0;
    const answer = await client.day(TODAY, { symbols: ['TNO1'], currency: 'nok', unit: 'kWh' });
    const query = new URL(sent[0] as string).searchParams;
    assert.equal(query.get('currency'), 'nok');
    assert.equal(query.get('unit'), 'kWh');
    typedDay(answer);
    const [day] = answer.series;
    assert.ok(day);
    assert.equal(day.currency, 'NOK');
    assert.equal(day.unit, 'kWh');
    // The 23rd's rate: published when the 23rd ended, the newest at or before each hour's start.
    assert.deepEqual(day.fx, { symbol: 'FXEURNOK', date: '2026-11-23', rate: 11.5847 });
    assert.equal(day.tariff, undefined);
    assert.deepEqual(
      day.prices.map((p) => [p.start, p.price]),
      hours(TODAY).map((start) => [start, Number(nokPerKwh(STORED.get(start) as string, '11.5847'))]),
    );
    assert.ok(day.prices.every((p) => p.fx === undefined && p.total === undefined && p.rank === undefined));
  });

  test('read in UTC, the hour after the new rate names its own fx', async () => {
    const answer = await client.day(TODAY, { symbols: ['TNO1'], currency: 'NOK', tz: 'UTC' });
    typedDay(answer);
    const prices = answer.series[0]?.prices ?? [];
    assert.equal(prices.length, 24);
    // The UTC day ends at 01:00 in Oslo on the 25th: its last hour already uses the 24th's rate,
    // so every hour names its own.
    assert.deepEqual(prices.at(-1)?.fx, { symbol: 'FXEURNOK', date: TODAY, rate: 11.6012 });
    assert.deepEqual(prices[0]?.fx, { symbol: 'FXEURNOK', date: '2026-11-23', rate: 11.5847 });
    assert.ok(prices.every((p) => p.fx !== undefined));
    assert.deepEqual(answer.series[0]?.fx, prices[0]?.fx);
  });

  test('a unit for a series not priced per energy is a typed 400 naming unit', async () => {
    const error = await rejection(client.today({ symbols: ['FXEURNOK'], unit: 'kWh' }));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'invalid_parameter');
    assert.equal(error.problem.parameter, 'unit');
  });
});

describe('tariff and include', () => {
  test('today() under the household tariff: each hour its spot, fees, VAT and total, ranked', async () => {
    sent.length = 0;
    const answer = await client.today({
      symbols: ['TNO1'],
      tariff: 'No1-Household',
      include: ['provenance', 'rank'],
    });
    const query = new URL(sent[0] as string).searchParams;
    assert.equal(query.get('tariff'), 'No1-Household');
    assert.equal(query.get('include'), 'provenance,rank');
    typedDay(answer);
    const [day] = answer.series;
    assert.ok(day);
    assert.equal(day.tariff, 'no1-household');
    assert.equal(day.currency, 'NOK');
    assert.equal(day.unit, 'kWh');
    assert.equal(day.complete, true);
    assert.equal(day.source, 'import');
    assert.deepEqual(day.fx, { symbol: 'FXEURNOK', date: '2026-11-23', rate: 11.5847 });
    const starts = hours(TODAY);
    const want = starts.map((start) => household(start));
    assert.deepEqual(
      day.prices.map((p) => [p.start, p.spot, p.fees, p.vat, p.total, p.price]),
      starts.map((start, n) => {
        const w = want[n] as ReturnType<typeof household>;
        return [start, Number(w.spot), Number(w.fees), Number(w.vat), Number(w.total), Number(w.spot)];
      }),
    );
    // Rank: 1 + the number of hours strictly cheaper in total (ties share a rank).
    assert.deepEqual(
      day.prices.map((p) => p.rank),
      want.map((w) => 1 + want.filter((o) => o.total.lt(w.total)).length),
    );
    assert.ok(
      day.prices.some((p, n) => n > 0 && p.rank === day.prices[n - 1]?.rank),
      'a tie shares a rank',
    );
    assert.ok(day.prices.every((p) => p.level !== undefined && p.level !== null && LEVELS.includes(p.level)));
  });

  test('the JSON numbers are the exact decimal texts', async () => {
    const raw = await server.get(`/api/v1/prices/${TODAY}?symbols=TNO1&tariff=no1-household`, {
      'x-api-key': reader,
    });
    assert.equal(raw.status, 200, raw.text);
    const want = hours(TODAY).map((start) => household(start));
    assert.deepEqual(
      members(raw.text, 'total'),
      want.map((w) => text(w.total)),
    );
    assert.deepEqual(
      members(raw.text, 'vat'),
      want.map((w) => text(w.vat)),
    );
    // What the client parsed is the same answer.
    const parsed = await client.day(TODAY, { symbols: ['TNO1'], tariff: 'no1-household' });
    assert.deepEqual(parsed.series, (JSON.parse(raw.text) as DayAnswer).series);
  });

  test('range() takes the tariff and rank for each day; the first day has no reference before it', async () => {
    const answer = await client.range(FIRST, '2026-11-18', {
      symbols: ['TNO1'],
      tariff: 'no1-household',
      include: ['rank'],
    });
    typedDay(answer);
    assert.deepEqual(
      answer.series.map((s) => [s.date, s.tariff, s.prices.length]),
      [
        [FIRST, 'no1-household', 24],
        ['2026-11-18', 'no1-household', 24],
      ],
    );
    // The 17th uses the 16th's rate, the newest published at or before each hour.
    assert.deepEqual(answer.series[0]?.fx, { symbol: 'FXEURNOK', date: '2026-11-16', rate: 11.5 });
    assert.ok(
      answer.series[0]?.prices.every((p) => p.level === null),
      'nothing before the 17th',
    );
    assert.ok(answer.series[1]?.prices.every((p) => p.level !== null));
    assert.deepEqual(
      answer.series[1]?.prices.map((p) => p.total),
      hours('2026-11-18').map((start) => Number(household(start).total)),
    );
  });

  test('latest() takes the tariff: the hour that contains now', async () => {
    const answer = await client.latest({
      symbols: ['TNO1'],
      tariff: 'no1-household',
      include: ['provenance'],
    });
    typedDay(answer);
    const [point] = answer.series[0]?.prices ?? [];
    assert.equal(point?.start, '2026-11-24T13:00:00+01:00');
    assert.equal(point?.total, Number(household('2026-11-24T13:00:00+01:00').total));
    assert.equal(point?.rank, undefined);
  });

  test('latest() refuses a rank: the type does not take it, and the server answers 400 naming include', async () => {
    // @ts-expect-error a rank is of a whole day: `latest` takes `include: ['provenance']` only
    const error = await rejection(client.latest({ symbols: ['TNO1'], include: ['rank'] }));
    assert.equal(error.status, 400);
    assert.equal(error.problem.parameter, 'include');
  });

  test('CSV under the tariff ends each row with the rate, the parts, rank and level', async () => {
    const csv = await client.today({
      symbols: ['TNO1'],
      tariff: 'no1-household',
      include: ['rank'],
      format: 'csv',
    });
    const lines = csv.trimEnd().split('\r\n');
    assert.equal(
      lines[0],
      'symbol,date,start,end,price,currency,unit,fx_symbol,fx_date,fx_rate,tariff,spot,fees,vat,total,rank,level',
    );
    assert.equal(lines.length, 25);
    const w = household('2026-11-24T07:00:00+01:00');
    const row = lines.map((l) => l.split(',')).find((r) => r[2] === '2026-11-24T07:00:00+01:00');
    assert.deepEqual(row?.slice(7, 15), [
      'FXEURNOK',
      '2026-11-23',
      '11.5847',
      'no1-household',
      text(w.spot),
      text(w.fees),
      text(w.vat),
      text(w.total),
    ]);
  });

  test('an unknown tariff is a typed 400 naming tariff', async () => {
    const error = await rejection(client.today({ symbols: ['TNO1'], tariff: 'nope' }));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'invalid_parameter');
    assert.equal(error.problem.parameter, 'tariff');
  });
});

describe('cheapest()', () => {
  const night = { from: '2026-11-24T18:00:00+01:00', to: '2026-11-25T07:00:00+01:00' } as const;
  const nightHours = [...hours(TODAY), ...hours('2026-11-25')].filter((s) => s >= night.from && s < night.to);
  const totals = nightHours.map((s) => household(s).total);

  test('the cheapest three hours tonight under the tariff, chosen on the totals', async () => {
    sent.length = 0;
    const answer = await client.cheapest({
      symbols: ['TNO1'],
      duration: 'PT3H',
      tariff: 'no1-household',
      ...night,
    });
    const query = new URL(sent[0] as string).searchParams;
    assert.deepEqual(
      [query.get('from'), query.get('to'), query.get('duration'), query.get('contiguous')],
      [night.from, night.to, 'PT3H', null],
    );
    typedCheapest(answer);
    assert.equal(answer.contiguous, true);
    assert.equal(answer.duration, 'PT3H');
    const [s] = answer.series;
    assert.ok(s?.cheapest);
    assert.equal(s.tariff, 'no1-household');
    assert.equal(s.complete, true);
    assert.deepEqual(s.missing, []);
    // Every 3-hour window of the night by exact sum; the earliest of equal ones wins.
    const sums = totals.slice(0, -2).map((_, i) => totals.slice(i, i + 3).reduce((a, b) => a.plus(b)));
    const best = sums.reduce((b, sum, i) => (sum.lt(sums[b] as Decimal) ? i : b), 0);
    assert.equal(s.cheapest.start, nightHours[best]);
    assert.deepEqual(
      s.cheapest.prices.map((p) => p.total),
      totals.slice(best, best + 3).map(Number),
    );
    // The exact mean, rounded half away from zero to the most decimals among the three totals.
    const decimals = Math.max(...totals.slice(best, best + 3).map((t) => t.decimalPlaces()));
    const mean = (sums[best] as Decimal).dividedBy(3).toDecimalPlaces(decimals);
    assert.equal(s.cheapest.mean, Number(mean));
    assert.ok(s.cheapest.prices.every((p) => p.fx?.symbol === 'FXEURNOK'));
  });

  test('contiguous false: the four cheapest hours of the night, in order of time', async () => {
    const answer = await client.cheapest({
      symbols: ['TNO1'],
      contiguous: false,
      count: 4,
      tariff: 'no1-household',
      ...night,
    });
    typedCheapest(answer);
    assert.equal(answer.contiguous, false);
    assert.equal(answer.count, 4);
    const order = totals.map((t, i) => ({ t, i })).sort((a, b) => a.t.comparedTo(b.t) || a.i - b.i);
    const picked = order
      .slice(0, 4)
      .map((o) => o.i)
      .sort((a, b) => a - b);
    assert.deepEqual(
      answer.series[0]?.cheapest?.prices.map((p) => p.start),
      picked.map((i) => nightHours[i]),
    );
  });

  test('a range reaching past the published prices says what is missing; a Date is sent as UTC', async () => {
    sent.length = 0;
    const answer = await client.cheapest({
      symbols: ['TNO1'],
      duration: 'PT2H',
      from: new Date('2026-11-25T20:00:00Z'),
      to: '2026-11-26',
    });
    assert.equal(new URL(sent[0] as string).searchParams.get('from'), '2026-11-25T20:00:00.000Z');
    typedCheapest(answer);
    const [s] = answer.series;
    assert.equal(s?.complete, false);
    assert.deepEqual(s?.missing, [{ start: '2026-11-26T00:00:00+01:00', end: '2026-11-27T00:00:00+01:00' }]);
    assert.equal(s?.cheapest?.prices.length, 2);
    assert.equal(s?.tariff, undefined);
    assert.equal(s?.currency, 'EUR');
  });

  test('CSV answers one row per hour chosen, with the tariff columns', async () => {
    const csv = await client.cheapest({
      symbols: ['TNO1'],
      duration: 'PT3H',
      tariff: 'no1-household',
      format: 'csv',
      ...night,
    });
    const lines = csv.trimEnd().split('\r\n');
    assert.equal(
      lines[0],
      'symbol,cheapest_start,cheapest_end,mean,start,end,price,currency,unit,complete,fx_symbol,fx_date,fx_rate,tariff,spot,fees,vat,total',
    );
    assert.equal(lines.length, 4);
  });

  test('a duration that is no ISO 8601 duration is a typed 400 naming duration', async () => {
    const error = await rejection(client.cheapest({ symbols: ['TNO1'], duration: 'P3 hours', ...night }));
    assert.equal(error.status, 400);
    assert.equal(error.problem.parameter, 'duration');
  });
});

describe('tariffs()', () => {
  test('lists the configured tariff with its versions, amounts as configured', async () => {
    const { tariffs } = await client.tariffs();
    for (const t of tariffs) onlyTyped(t, TARIFF_KEYS, 'Tariff');
    assert.deepEqual(tariffs, [
      {
        name: 'no1-household',
        description: 'Oslo household, grid fee higher 06:00-22:00',
        currency: 'NOK',
        unit: 'kWh',
        timezone: ZONE,
        vat: [{ from: '2026-01-01', percent: 25 }],
        fixed: [{ from: '2026-01-01', amount: 0.0713 }],
        fees: [
          {
            from: '2026-01-01',
            rules: [{ hours: '06:00-22:00', amount: 0.364 }, { amount: 0.264 }],
          },
        ],
      },
    ]);
  });
});

async function rejection(promise: Promise<unknown>): Promise<PricepointError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof PricepointError, `expected a PricepointError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}
