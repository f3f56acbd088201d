/**
 * The price service's tier rules: `historyDays` (docs/keys-and-tiers.md), called with day offsets directly
 * over a real in-memory SQLite store holding the development data (90 days back); long ranges,
 * checked interval by interval against days.ts, and what a request weighs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadDevPrices } from '../dev-data/dev-data.js';
import { ApiError } from '../domain/errors/api-error.js';
import { DEFAULT_TIERS, type Tier } from '../domain/limits/tiers.js';
import { aggregateIntervals } from '../domain/prices/aggregate.js';
import { dayBounds, dayIntervals, formatInstant, intervalEnd, type Resolution } from '../domain/time/days.js';
import { openEmbeddedStores } from '../stores/sqlite/index.js';
import type { Series, Stores } from '../stores/types.js';
import { createPriceService, type PriceService } from './price-service.js';

const NOW = Date.parse('2026-11-22T10:15:03.120Z');
const free = DEFAULT_TIERS.free as Tier; // 31 days
const withHistory = (historyDays: number | null): Tier => ({ ...free, name: 'custom', historyDays });

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError, `an ApiError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the request to be refused');
}

describe('price service: history limits of a tier', () => {
  let stores: Stores;
  let service: PriceService;
  before(async () => {
    stores = await openEmbeddedStores(':memory:');
    await loadDevPrices(stores.prices, NOW);
    service = createPriceService({ prices: stores.prices, clock: () => NOW });
  });
  after(() => stores.close());

  test('a 31-day tier reads the day exactly 31 days back, with its prices', async () => {
    const answer = await service.day(free, { symbols: ['NO1'] }, { offset: -31 });
    assert.equal(answer.series[0]?.date, '2026-10-22');
    assert.equal(answer.series[0]?.prices.length, 96);
  });

  test('a 31-day tier is refused 32 and 40 days back with 403 outside_tier_history naming the limit', async () => {
    for (const offset of [-32, -40]) {
      const error = await refusal(service.day(free, { symbols: ['NO1', 'EURUSD'] }, { offset }));
      assert.equal(error.code, 'outside_tier_history');
      assert.match(error.detail, /Tier free reads at most 31 days back/);
      assert.match(error.detail, /before 2026-10-22/);
      assert.deepEqual(error.options.extra?.symbols, ['NO1', 'EURUSD']);
    }
  });

  test('without symbols, every readable series is checked against the history limit', async () => {
    const error = await refusal(service.day(free, {}, { offset: -40 }));
    assert.equal(error.code, 'outside_tier_history');
  });

  test('historyDays 0 allows today and tomorrow but not yesterday', async () => {
    const tier = withHistory(0);
    assert.equal(
      (await service.day(tier, { symbols: ['NO1'] }, { offset: 0 })).series[0]?.date,
      '2026-11-22',
    );
    assert.equal(
      (await service.day(tier, { symbols: ['NO1'] }, { offset: 1 })).series[0]?.date,
      '2026-11-23',
    );
    const error = await refusal(service.day(tier, { symbols: ['NO1'] }, { offset: -1 }));
    assert.equal(error.code, 'outside_tier_history');
    assert.match(error.detail, /2026-11-21 is before 2026-11-22/);
  });

  test('historyDays null (unlimited) reads 80 days back', async () => {
    const answer = await service.day(withHistory(null), { symbols: ['NO1'] }, { offset: -80 });
    assert.equal(answer.series[0]?.date, '2026-09-03');
    assert.equal(answer.series[0]?.prices.length, 96);
  });

  test('history is counted in the zone the day is read in', async () => {
    // At 23:30 UTC it is already the next day in Oslo (+01:00) but not in New York (-05:00).
    const late = createPriceService({
      prices: stores.prices,
      clock: () => Date.parse('2026-11-22T23:30:00Z'),
    });
    const tier = withHistory(0);
    const oslo = await late.day(tier, { symbols: ['NO1'], tz: 'Europe/Oslo' }, { offset: 0 });
    const newYork = await late.day(tier, { symbols: ['NO1'], tz: 'America/New_York' }, { offset: 0 });
    assert.equal(oslo.series[0]?.date, '2026-11-23');
    assert.equal(newYork.series[0]?.date, '2026-11-22');
    const error = await refusal(late.day(tier, { symbols: ['NO1'], tz: 'America/New_York' }, { offset: -1 }));
    assert.match(error.detail, /2026-11-21 is before 2026-11-22/);
  });
});

describe('price service: long ranges', () => {
  let stores: Stores;
  let service: PriceService;
  const pro = DEFAULT_TIERS.pro as Tier;
  before(async () => {
    stores = await openEmbeddedStores(':memory:');
    await loadDevPrices(stores.prices, NOW);
    service = createPriceService({ prices: stores.prices, clock: () => NOW });
  });
  after(() => stores.close());

  /** What days.ts writes for one series and local day, interval by interval, with nothing shared. */
  async function expectedDay(symbol: string, date: string, zone: string, resolution?: Resolution) {
    const series = (await stores.prices.getSeries(symbol)) as Series;
    const { start, end } = dayBounds(date, zone);
    const stored = await stores.prices.pricesBetween(symbol, start, end);
    if (resolution === undefined) {
      return stored.map((p) => ({
        start: formatInstant(p.start, zone),
        end: formatInstant(intervalEnd(p.start, series.timezone, series.resolution), zone),
        price: p.price,
      }));
    }
    return aggregateIntervals(stored, dayIntervals(date, zone, resolution)).map((a) => ({
      start: formatInstant(a.start, zone),
      end: formatInstant(a.end, zone),
      price: a.price,
    }));
  }

  test('83 days across clock changes and read in another zone are every day exactly as days.ts writes it', async () => {
    const cases = [
      { symbol: 'NO1', query: {} },
      { symbol: 'NO1', query: { tz: 'America/New_York' } },
      { symbol: 'NO1', query: { tz: 'Australia/Lord_Howe', resolution: 'PT1H' as const } },
      { symbol: 'NYISO-J', query: { tz: 'Europe/Oslo', resolution: 'P1D' as const } },
    ];
    for (const { symbol, query } of cases) {
      const answer = await service.range(
        pro,
        { symbols: [symbol], ...query },
        { date: '2026-09-01' },
        { date: '2026-11-22' },
      );
      assert.equal(answer.series.length, 83);
      const zone = query.tz ?? ((await stores.prices.getSeries(symbol)) as Series).timezone;
      for (const day of answer.series) {
        const expected = await expectedDay(symbol, day.date, zone, query.resolution);
        assert.deepEqual(day.prices, expected, `${symbol} ${JSON.stringify(query)} ${day.date}`);
      }
    }
  });

  test('a plan weighs one unit per started 3,000 intervals on each series own grid', async () => {
    const weight = async (symbols: string[] | undefined, from: string, to: string) =>
      (await service.plan(pro, symbols ? { symbols } : {}, { date: from }, { date: to })).weight;
    assert.equal(await weight(['NO1'], '2026-11-22', '2026-11-22'), 1);
    assert.equal(await weight(['NO1'], '2026-10-23', '2026-11-22'), 1); // 31 days: 2,976
    assert.equal(await weight(['NO1'], '2026-10-22', '2026-11-22'), 2); // 32 days: 3,072
    assert.equal(await weight(['NO1'], '2025-11-23', '2026-11-22'), 12); // 35,040
    assert.equal(await weight(['EURUSD'], '2025-11-23', '2026-11-22'), 1); // 365 days of P1D
    assert.equal(await weight(['NO1', 'DE-LU'], '2025-11-23', '2026-11-22'), 24);
    assert.equal(await weight(undefined, '2026-11-22', '2026-11-22'), 1);
  });
});
