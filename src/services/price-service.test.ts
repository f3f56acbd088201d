/**
 * The price service's tier rules: `historyDays` (DESIGN section 4), called with day offsets directly
 * over a real in-memory SQLite store holding the development data (90 days back).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadDevPrices } from '../dev-data/dev-data.js';
import { ApiError } from '../domain/errors/api-error.js';
import { DEFAULT_TIERS, type Tier } from '../domain/limits/tiers.js';
import { openEmbeddedStores } from '../stores/sqlite/index.js';
import type { Stores } from '../stores/types.js';
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
      assert.equal(error.status, 403);
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
