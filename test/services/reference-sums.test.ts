/**
 * The levels' reference (docs/tariffs.md, "Rank and level") is read, converted and priced once per
 * series and day, not for every ranked request (src/services/reference-sums.ts): over a real
 * in-memory SQLite store, with the store's reads counted. And what is kept follows what changes a
 * level: another tariff is another reference, and a change of a reference day's prices (its
 * notice, `forget`) is seen by the next request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { addDays, dayBounds } from '../../src/domain/time/days.js';
import { createPriceService, type PriceService } from '../../src/services/price-service.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { PriceStore, Stores } from '../../src/stores/types.js';

const ZONE = 'Europe/Oslo';
const DAY = '2026-11-23';
const NOW = Date.parse(`${DAY}T12:00:00Z`);
const tier = { ...DEFAULT_TIERS.enterprise, name: 'all' } as Tier;
/** A grid fee of 100 per MWh at every hour: with it, 40 against a week of 50 is normal, without it cheap. */
const TARIFFS = parseTariffs({
  grid: { currency: 'EUR', unit: 'MWh', fees: [{ from: '2026-01-01', rules: [{ amount: 100 }] }] },
});

/** The hours of a local day in Oslo as epoch ms. */
function hours(date: string): number[] {
  const { start, end } = dayBounds(date, ZONE);
  const out: number[] = [];
  for (let t = start; t < end; t += 3_600_000) out.push(t);
  return out;
}

describe('the reference of the levels', () => {
  let stores: Stores;
  let service: PriceService;
  /** Local dates of the hours each `pricesBetween` of RS asked for since the last `reset`. */
  let readDates: string[] = [];

  before(async () => {
    stores = await openEmbeddedStores(':memory:');
    await stores.prices.upsertSeries({
      symbol: 'RS',
      name: 'RS',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: ZONE,
      resolution: 'PT1H',
    });
    // 50 on each of the 9 days before DAY; 40 all day on DAY and the day after.
    const points = [];
    for (let d = -9; d <= 1; d++) {
      for (const start of hours(addDays(DAY, d))) points.push({ start, price: d < 0 ? '50' : '40' });
    }
    await stores.prices.upsertPrices('RS', points);
    const counted: PriceStore = Object.create(stores.prices);
    counted.pricesBetween = async (symbol, from, to) => {
      const found = await stores.prices.pricesBetween(symbol, from, to);
      if (symbol === 'RS') {
        for (const p of found) readDates.push(new Date(p.start + 3_600_000).toISOString().slice(0, 10));
      }
      return found;
    };
    service = createPriceService({
      prices: counted,
      clock: () => NOW,
      cache: { freshMs: 3_600_000, staleMs: 3_600_000, now: () => performance.now() },
      tariffs: TARIFFS,
    });
  });
  after(() => stores.close());

  const levels = async (date: string, tariff?: string) => {
    const answer = await service.day(
      tier,
      { symbols: ['RS'], rank: true, ...(tariff && { tariff }) },
      { date },
    );
    return [...new Set(answer.series[0]?.prices.map((p) => p.level))];
  };

  test('a ranked day after a ranked day reads only its own day from the store', async () => {
    readDates = [];
    assert.deepEqual(await levels(DAY), ['cheap']);
    assert.deepEqual(
      [...new Set(readDates)].sort(),
      [-7, -6, -5, -4, -3, -2, -1, 0].map((d) => addDays(DAY, d)),
      'the first reads the day and its 7 days before',
    );
    readDates = [];
    // Against 50 on six days and 40 on one: a mean of 48.57, and 40 is still cheap.
    assert.deepEqual(await levels(addDays(DAY, 1)), ['cheap']);
    assert.deepEqual([...new Set(readDates)], [addDays(DAY, 1)], 'the days before were summed already');
    readDates = [];
    assert.deepEqual(await levels(DAY), ['cheap']);
    assert.deepEqual(readDates, [], 'the day again reads nothing');
  });

  test('a tariff is another reference: the totals of the days before, not their prices', async () => {
    assert.deepEqual(await levels(DAY), ['cheap']);
    // 140 against a week of 150: normal. Against the prices' mean of 50 it would be very expensive.
    assert.deepEqual(await levels(DAY, 'grid'), ['normal']);
  });

  test('a change of a day before, once noticed, changes the levels after it', async () => {
    assert.deepEqual(await levels(DAY), ['cheap']);
    // 10 on the day before: a mean of (6 × 50 + 10) / 7 = 44.29, against which 40 is normal (−9.7%).
    await stores.prices.upsertPrices(
      'RS',
      hours(addDays(DAY, -1)).map((start) => ({ start, price: '10' })),
    );
    service.forget(['RS']);
    assert.deepEqual(await levels(DAY), ['normal']);
  });
});
