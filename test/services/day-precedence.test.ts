/**
 * Several sources for one series (docs/sources.md): the rule per stored day, and imports through it
 * into a real store: a lower-ranked source fills only what higher-ranked ones left incomplete, and
 * never overwrites a day they delivered complete.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { decideDay, rankedAbove, rankOf } from '../../src/services/day-precedence.js';
import type { RawRow } from '../../src/services/import-formats.js';
import { createImportService } from '../../src/services/import-service.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';

const RANKING = ['entsoe', 'nordpool'];

describe('decideDay', () => {
  test('a day nobody wrote is written', () => {
    assert.equal(decideDay(undefined, 'nordpool', RANKING), 'write');
  });
  test('the same source or a higher-ranked one replaces the day, complete or not', () => {
    assert.equal(decideDay({ source: 'entsoe', complete: true }, 'entsoe', RANKING), 'write');
    assert.equal(decideDay({ source: 'nordpool', complete: true }, 'entsoe', RANKING), 'write');
    assert.equal(decideDay({ source: 'import', complete: true }, 'nordpool', RANKING), 'write');
  });
  test('a lower-ranked source fills an incomplete day and leaves a complete one alone', () => {
    assert.equal(decideDay({ source: 'entsoe', complete: false }, 'nordpool', RANKING), 'fill');
    assert.equal(decideDay({ source: 'entsoe', complete: true }, 'nordpool', RANKING), 'skip');
    assert.equal(decideDay({ source: 'entsoe', complete: true }, 'import', RANKING), 'skip');
  });
  test('an unlisted source ranks below every listed one', () => {
    assert.equal(rankOf('import', RANKING), 2);
    assert.deepEqual(rankedAbove('nordpool', RANKING), ['entsoe']);
    assert.deepEqual(rankedAbove('entsoe', RANKING), []);
  });
});

describe('a ranked import', () => {
  let stores: Stores;
  const ZONE = 'Europe/Oslo';
  /** The rows of every hour of a local day in Oslo at `price`, but for the hours in `leaveOut`. */
  const day = (date: string, price: string, leaveOut: readonly number[] = []) => {
    const { start, end } = dayBounds(date, ZONE);
    const rows: RawRow[] = [];
    for (let t = start, n = 0; t < end; t += 3_600_000, n++) {
      if (leaveOut.includes(n)) continue;
      const start = formatInstant(t, ZONE);
      rows.push({ line: n + 1, symbol: 'NO1', start, price, currency: 'EUR', unit: 'MWh', error: undefined });
    }
    return rows;
  };
  const run = (rows: readonly RawRow[], source: string) =>
    createImportService(stores).run(
      (async function* () {
        yield rows;
      })(),
      { source, ranking: RANKING, fetchedAt: Date.parse('2026-11-21T12:00:00Z') },
    );
  const pricesOf = async (date: string) => {
    const { start, end } = dayBounds(date, ZONE);
    return (await stores.prices.pricesBetween('NO1', start, end)).map((p) => p.price);
  };
  const provenance = async (date: string) => (await stores.prices.dayProvenance?.('NO1', date, date))?.[0];

  beforeEach(async () => {
    stores = await openEmbeddedStores(':memory:');
    await stores.prices.upsertSeries({
      symbol: 'NO1',
      name: 'Oslo',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: ZONE,
      resolution: 'PT1H',
    });
  });
  afterEach(() => stores.close());

  test('a lower-ranked source fills the missing hours of the day and keeps the others', async () => {
    assert.deepEqual(await run(day('2026-11-22', '10', [5, 6]), 'entsoe'), {
      ok: true,
      written: 22,
      series: ['NO1'],
    });
    assert.deepEqual(await provenance('2026-11-22'), {
      date: '2026-11-22',
      source: 'entsoe',
      fetchedAt: Date.parse('2026-11-21T12:00:00Z'),
      complete: false,
    });
    const filled = await run(day('2026-11-22', '99'), 'nordpool');
    assert.ok(filled.ok);
    assert.equal(filled.written, 2, 'only the two missing hours');
    const prices = await pricesOf('2026-11-22');
    assert.equal(prices.length, 24);
    assert.deepEqual(
      prices.map((p, n) => [n, p]).filter(([, p]) => p === '99'),
      [
        [5, '99'],
        [6, '99'],
      ],
    );
    assert.equal((await provenance('2026-11-22'))?.source, 'entsoe', 'the day stays the higher source');
    assert.equal((await provenance('2026-11-22'))?.complete, true);
  });

  test('a lower-ranked source never overwrites a complete day; a higher one revises it', async () => {
    await run(day('2026-11-22', '10'), 'entsoe');
    const skipped = await run([...day('2026-11-22', '99'), ...day('2026-11-23', '99')], 'nordpool');
    assert.ok(skipped.ok);
    assert.equal(skipped.written, 24, 'only the day the higher source has not written');
    assert.deepEqual(new Set(await pricesOf('2026-11-22')), new Set(['10']));
    assert.equal((await provenance('2026-11-23'))?.source, 'nordpool');
    await run(day('2026-11-23', '11'), 'entsoe');
    assert.deepEqual(new Set(await pricesOf('2026-11-23')), new Set(['11']));
    assert.equal((await provenance('2026-11-23'))?.source, 'entsoe');
  });

  test('the autumn DST day is complete with its 25 hours, not with 24', async () => {
    await run(day('2026-10-25', '10', [24]), 'entsoe');
    assert.equal((await provenance('2026-10-25'))?.complete, false);
    await run(day('2026-10-25', '20'), 'nordpool');
    assert.equal((await provenance('2026-10-25'))?.complete, true);
    assert.deepEqual((await pricesOf('2026-10-25')).filter((p) => p === '20').length, 1);
  });
});
