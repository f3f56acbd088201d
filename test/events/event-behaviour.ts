/**
 * The behaviour of price events on every engine (docs/events.md): written in the import's own
 * transaction, one per day that became complete or changed once complete, none otherwise. Not a
 * test file itself: sqlite-events.test.ts and postgres-events.test.ts run it against their engine.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dayBounds } from '../../src/domain/time/days.js';
import type { EventLog } from '../../src/stores/event-types.js';
import type { ImportPoint, PriceStore, Series } from '../../src/stores/types.js';

export interface EventStores {
  readonly prices: PriceStore;
  readonly events: EventLog;
  close(): Promise<void>;
}

const Q = 15 * 60_000;

function series(symbol: string, timezone: string): Series {
  return {
    symbol,
    name: `${symbol} day-ahead`,
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone,
    resolution: 'PT15M',
  };
}

/** Every quarter hour of a local day of `symbol`, priced `price`, or all but the last `short`. */
function day(symbol: string, timezone: string, date: string, price = '41.5', short = 0): ImportPoint[] {
  const { start, end } = dayBounds(date, timezone);
  const list: ImportPoint[] = [];
  for (let t = start; t < end; t += Q) list.push({ symbol, start: t, price });
  return list.slice(0, list.length - short);
}
const oslo = (date: string, price?: string, short?: number) => day('NO1', 'Europe/Oslo', date, price, short);

export function eventBehaviour(name: string, open: () => Promise<EventStores>): void {
  async function withStores(body: (stores: EventStores) => Promise<void>): Promise<void> {
    const stores = await open();
    try {
      await stores.prices.upsertSeries(series('NO1', 'Europe/Oslo'));
      await stores.prices.upsertSeries(series('FI', 'Europe/Helsinki'));
      await body(stores);
    } finally {
      await stores.close();
    }
  }
  const imported = async (prices: PriceStore, points: ImportPoint[], small = false) => {
    const session = await prices.beginPriceWrites({ small });
    try {
      await session.write(points);
      await session.commit();
    } catch (error) {
      await session.rollback();
      throw error;
    }
  };
  const all = (events: EventLog) => events.after(0, 1_000);

  describe(`${name}: price events`, () => {
    test('an import that completes a day writes day.published with the day, its zone, intervals and etag', () =>
      withStores(async ({ prices, events }) => {
        assert.equal(await events.latestSeq(), 0);
        const before = Date.now();
        // 2026-10-25 is the day Oslo's clocks go back: 100 quarter hours.
        await imported(prices, [...oslo('2026-11-20'), ...oslo('2026-10-25')]);
        const written = await all(events);
        assert.deepEqual(
          written.map((e) => [e.type, e.data.symbol, e.data.date, e.data.timezone, e.data.intervals]),
          [
            ['day.published', 'NO1', '2026-10-25', 'Europe/Oslo', 100],
            ['day.published', 'NO1', '2026-11-20', 'Europe/Oslo', 96],
          ].sort((a, b) => String(a[2]).localeCompare(String(b[2]))),
        );
        const [first, second] = written;
        assert.ok(first && second);
        assert.ok(first.seq < second.seq);
        assert.notEqual(first.id, second.id);
        assert.match(first.id, /^evt_\d+$/);
        assert.match(first.data.etag, /^"[\w-]{27}"$/);
        assert.ok(Date.parse(first.time) >= before - 1_000 && first.time.endsWith('Z'));
        assert.equal(await events.latestSeq(), second.seq);
        assert.deepEqual(await events.after(first.seq, 10), [second]);
        assert.deepEqual(await events.after(0, 1), [first]);
      }));

    test('an incomplete day writes nothing until its last interval arrives, from any import', () =>
      withStores(async ({ prices, events }) => {
        await imported(prices, oslo('2026-11-21', '10', 1));
        assert.deepEqual(await all(events), []);
        await imported(prices, oslo('2026-11-21', '10').slice(-1), true);
        const written = await all(events);
        assert.deepEqual(
          written.map((e) => [e.type, e.data.date, e.data.intervals]),
          [['day.published', '2026-11-21', 96]],
        );
      }));

    test('changing a complete day writes day.revised with a new etag; writing the same prices again writes nothing', () =>
      withStores(async ({ prices, events }) => {
        await imported(prices, oslo('2026-11-20'));
        await imported(prices, oslo('2026-11-20'));
        await prices.upsertPrices('NO1', oslo('2026-11-20').slice(0, 4));
        assert.equal((await all(events)).length, 1, 'the same prices again are no change');
        const changed = oslo('2026-11-20')[7];
        assert.ok(changed);
        await prices.upsertPrices('NO1', [{ start: changed.start, price: '99.9' }]);
        const [published, revised, ...more] = await all(events);
        assert.deepEqual(more, []);
        assert.equal(published?.type, 'day.published');
        assert.equal(revised?.type, 'day.revised');
        assert.equal(revised?.data.date, '2026-11-20');
        assert.equal(revised?.data.intervals, 96);
        assert.notEqual(revised?.data.etag, published?.data.etag);
        // Back to the first prices: a revision again, and the first day's tag again.
        await prices.upsertPrices('NO1', [{ start: changed.start, price: '41.5' }]);
        const last = (await all(events)).at(-1);
        assert.equal(last?.type, 'day.revised');
        assert.equal(last?.data.etag, published?.data.etag);
      }));

    test('an import rolled back (a bad row, or by its caller) writes no event', () =>
      withStores(async ({ prices, events }) => {
        const bad = [
          ...oslo('2026-11-20'),
          { symbol: 'NOPE', start: Date.parse('2026-11-20T00:00:00Z'), price: '1' },
        ];
        await assert.rejects(imported(prices, bad), /no series NOPE/);
        await assert.rejects(imported(prices, bad, true), /no series NOPE/);
        const session = await prices.beginPriceWrites();
        await session.write(oslo('2026-11-22'));
        await session.rollback();
        assert.deepEqual(await all(events), []);
        assert.deepEqual(await prices.pricesBetween('NO1', 0, Date.parse('2027-01-01T00:00:00Z')), []);
        // The day is published by the first import that does commit.
        await imported(prices, oslo('2026-11-20'));
        assert.deepEqual(
          (await all(events)).map((e) => e.type),
          ['day.published'],
        );
      }));

    test('each series has its own days: a day complete in one zone is not in another', () =>
      withStores(async ({ prices, events }) => {
        // Oslo's 2026-11-20 covers Helsinki's 2026-11-20 from 01:00 to the end, and 2026-11-21 to 01:00.
        const helsinki = oslo('2026-11-20').map((p) => ({ ...p, symbol: 'FI' }));
        await imported(prices, [...oslo('2026-11-20'), ...helsinki]);
        assert.deepEqual(
          (await all(events)).map((e) => [e.data.symbol, e.data.date]),
          [['NO1', '2026-11-20']],
        );
      }));

    test('listeners hear of events committed after they subscribed, then read them', () =>
      withStores(async ({ prices, events }) => {
        const cursor = await events.latestSeq();
        let stop = () => {};
        const heard = new Promise<void>((resolve) => {
          stop = events.onAppended(resolve);
        });
        try {
          await imported(prices, oslo('2026-11-23'));
          await heard;
          const read = await events.after(cursor, 10);
          assert.deepEqual(
            read.map((e) => [e.type, e.data.date]),
            [['day.published', '2026-11-23']],
          );
        } finally {
          stop();
        }
      }));
  });
}
