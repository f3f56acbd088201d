/**
 * Pruning the events table (docs/events.md, "How long events are kept") on SQLite and PostgreSQL,
 * with the pruner's clock moved past the history: old events go in small batches, the newest event
 * of each day stays, so the outbox still tells a revision from a first publication and an unchanged
 * rewrite from a change. On SQLite, a run meets another process's write lock without waiting for it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { EventLog } from '../../src/stores/event-types.js';
import { EVENT_HISTORY_MS } from '../../src/stores/sql/event-log.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { ImportPoint, PriceStore } from '../../src/stores/types.js';
import { openPostgresStoresInFreshSchema, postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';

const HOUR = 60 * 60_000;
const probe = await postgresSchemaUrl();

interface Opened {
  readonly prices: PriceStore;
  readonly events: EventLog;
  close(): Promise<void>;
}

/** Every hour of a UTC day, priced `price`. */
function day(date: string, price: string): ImportPoint[] {
  const start = Date.parse(`${date}T00:00:00Z`);
  return Array.from({ length: 24 }, (_, h) => ({ symbol: 'SPOT', start: start + h * HOUR, price }));
}

async function imported(prices: PriceStore, points: ImportPoint[]): Promise<void> {
  const session = await prices.beginPriceWrites({ small: true });
  try {
    await session.write(points);
    await session.commit();
  } catch (error) {
    await session.rollback();
    throw error;
  }
}

function pruningBehaviour(name: string, open: () => Promise<Opened>): void {
  test(`${name}: events past the history are deleted, the newest of each day is kept`, async () => {
    const { prices, events, close } = await open();
    try {
      await prices.upsertSeries({
        symbol: 'SPOT',
        name: 'Spot',
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: 'UTC',
        resolution: 'PT1H',
      });
      for (const price of ['1.5', '2.5', '3.5']) await imported(prices, day('2026-03-02', price));
      await imported(prices, day('2026-03-03', '9.5'));
      const listed = async () => (await events.after(0, 100)).map((e) => `${e.seq} ${e.type} ${e.data.date}`);
      const written = await listed();
      assert.deepEqual(written, [
        '1 day.published 2026-03-02',
        '2 day.revised 2026-03-02',
        '3 day.revised 2026-03-02',
        '4 day.published 2026-03-03',
      ]);
      assert.ok(events.prune, 'the SQL event log prunes');

      // Within the history: nothing goes.
      const soon = await events.prune({ clock: () => Date.now() + HOUR });
      assert.deepEqual(soon, { deleted: 0, batches: 0, complete: true });
      assert.deepEqual(await listed(), written);

      // Past it, one event a batch: the two superseded revisions of the first day go.
      const later = Date.now() + EVENT_HISTORY_MS + HOUR;
      const pruned = await events.prune({ clock: () => later, batch: 1, pauseMs: 0 });
      assert.deepEqual(pruned, { deleted: 2, batches: 4, complete: true });
      assert.deepEqual(await listed(), ['3 day.revised 2026-03-02', '4 day.published 2026-03-03']);
      assert.equal(await events.latestSeq(), 4);

      // The kept event still carries the day's ETag: the same prices again are no change, new ones a revision.
      await imported(prices, day('2026-03-02', '3.5'));
      await imported(prices, day('2026-03-02', '4.5'));
      assert.deepEqual(await listed(), [
        '3 day.revised 2026-03-02',
        '4 day.published 2026-03-03',
        '5 day.revised 2026-03-02',
      ]);
    } finally {
      await close();
    }
  });
}

describe('pruning price events', () => {
  pruningBehaviour('SQLite in memory', () => openEmbeddedStores(':memory:'));

  test('SQLite file: a run stops at once while another process holds the write lock, and goes on later', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pricepoint-prune-'));
    const file = join(dir, 'pricepoint.db');
    const stores = await openEmbeddedStores(file);
    const other = new Database(file);
    try {
      await stores.prices.upsertSeries({
        symbol: 'SPOT',
        name: 'Spot',
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: 'UTC',
        resolution: 'PT1H',
      });
      await imported(stores.prices, day('2026-03-02', '1.5'));
      await imported(stores.prices, day('2026-03-02', '2.5'));
      const later = () => Date.now() + EVENT_HISTORY_MS + HOUR;
      assert.ok(stores.events.prune);
      // Another process (an import) holds the write lock: the run gives up instead of waiting for it.
      other.prepare('BEGIN IMMEDIATE').run();
      const blocked = await stores.events.prune({ clock: later });
      assert.deepEqual(blocked, { deleted: 0, batches: 0, complete: false });
      other.prepare('COMMIT').run();
      const freed = await stores.events.prune({ clock: later });
      assert.deepEqual(freed, { deleted: 1, batches: 1, complete: true });
      assert.deepEqual(
        (await stores.events.after(0, 10)).map((e) => e.seq),
        [2],
      );
    } finally {
      other.close();
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  describeOrSkip('PostgreSQL', { skip: 'skip' in probe ? probe.skip : false }, () =>
    pruningBehaviour('PostgreSQL', openPostgresStoresInFreshSchema),
  );
});
