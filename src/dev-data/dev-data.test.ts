import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isWellFormedKey, keyKind } from '../domain/keys/key-format.js';
import { addDays, dayIntervals, localDate } from '../domain/time/days.js';
import { openEmbeddedStores } from '../stores/sqlite/index.js';
import { DEMO_API_KEY, DEV_DATA_DAYS_BACK, DEV_SERIES, devDay, loadDevPrices } from './dev-data.js';

describe('the development data set', () => {
  test('has the series docs/data-model.md lists', () => {
    const has = (kind: string, resolution: string, timezone?: string) =>
      DEV_SERIES.some(
        (s) => s.kind === kind && s.resolution === resolution && (!timezone || s.timezone === timezone),
      );
    assert.ok(has('electricity', 'PT15M', 'Europe/Oslo'));
    assert.ok(has('electricity', 'PT15M', 'Europe/Berlin'));
    assert.ok(has('electricity', 'PT30M', 'Asia/Tokyo'));
    assert.ok(has('electricity', 'PT1H', 'America/New_York'));
    assert.ok(DEV_SERIES.some((s) => s.kind === 'fx'));
    assert.ok(has('crypto', 'PT1H', 'UTC'));
    assert.ok(
      DEV_SERIES.some((s) => s.kind === 'commodity' && s.unit === 'troy_oz' && s.resolution === 'PT1H'),
    );
    assert.ok(DEV_SERIES.some((s) => s.kind === 'equity'));
  });

  test('the demo key is a well-formed demo key', () => {
    assert.ok(isWellFormedKey(DEMO_API_KEY));
    assert.equal(keyKind(DEMO_API_KEY), 'demo');
  });

  test('prices depend only on series and interval: loading on different days gives the same values', async () => {
    const a = await openEmbeddedStores(':memory:');
    const b = await openEmbeddedStores(':memory:');
    try {
      await loadDevPrices(a.prices, Date.parse('2026-11-22T10:00:00Z'));
      await loadDevPrices(b.prices, Date.parse('2026-10-01T10:00:00Z'));
      const from = Date.parse('2026-09-01T00:00:00Z');
      const to = Date.parse('2026-09-03T00:00:00Z');
      for (const s of DEV_SERIES) {
        const pa = await a.prices.pricesBetween(s.symbol, from, to);
        assert.deepEqual(pa, await b.prices.pricesBetween(s.symbol, from, to), s.symbol);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('covers 90 days back through tomorrow for electricity and through today for the rest', async () => {
    const stores = await openEmbeddedStores(':memory:');
    try {
      const now = Date.parse('2026-11-22T10:00:00Z');
      await loadDevPrices(stores.prices, now);
      for (const s of DEV_SERIES) {
        const today = localDate(now, s.timezone);
        const points = await stores.prices.pricesBetween(s.symbol, 0, Number.MAX_SAFE_INTEGER);
        const first = localDate(points[0]!.start, s.timezone);
        const last = localDate(points.at(-1)!.start, s.timezone);
        assert.ok(
          first >= addDays(today, -DEV_DATA_DAYS_BACK) && first <= addDays(today, -DEV_DATA_DAYS_BACK + 3),
          s.symbol,
        );
        assert.equal(
          last,
          s.kind === 'electricity' ? addDays(today, 1) : s.symbol === 'ACME' ? '2026-11-20' : today,
          s.symbol,
        );
      }
    } finally {
      await stores.close();
    }
  });

  test('shapes look real: electricity has negative hours, the equity trades only on weekdays 09:30-16:00', () => {
    const days = Array.from({ length: 60 }, (_, i) => addDays('2026-09-01', i));
    const electricity = DEV_SERIES.filter((s) => s.kind === 'electricity');
    const negatives = electricity
      .flatMap((s) => days.flatMap((d) => devDay(s, d)))
      .filter((p) => Number(p.price) < 0);
    assert.ok(negatives.length > 0, 'some negative electricity prices');
    const acme = DEV_SERIES.find((s) => s.symbol === 'ACME')!;
    assert.equal(devDay(acme, '2026-11-21').length, 0, 'Saturday');
    const friday = devDay(acme, '2026-11-20');
    assert.equal(friday.length, 13);
    assert.equal(new Date(friday[0]!.start).toISOString(), '2026-11-20T14:30:00.000Z');
  });

  test('every point lies on its series grid, one per interval', () => {
    for (const s of DEV_SERIES.filter((x) => x.kind === 'electricity')) {
      const points = devDay(s, '2026-10-25');
      assert.deepEqual(
        points.map((p) => p.start),
        dayIntervals('2026-10-25', s.timezone, s.resolution).map((i) => i.start),
      );
    }
  });
});
