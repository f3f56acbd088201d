/**
 * The embedded engine looks at the events table only when its change token has moved (docs/events.md):
 * a server beside a `pricepoint import` (another connection to the same file) still hears every event,
 * and while nothing is committed it makes no query at all.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dayBounds } from '../../src/domain/time/days.js';
import { EMBEDDED_POLL_MS } from '../../src/stores/sql/event-log.js';
import { type EmbeddedStores, openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { ImportPoint } from '../../src/stores/types.js';

/** Every quarter hour of a day in Oslo. */
function day(date: string): ImportPoint[] {
  const { start, end } = dayBounds(date, 'Europe/Oslo');
  const points: ImportPoint[] = [];
  for (let t = start; t < end; t += 15 * 60_000) points.push({ symbol: 'NO1', start: t, price: '41.5' });
  return points;
}

describe('events on SQLite, with another connection writing', () => {
  let dir: string;
  let server: EmbeddedStores;
  let importer: EmbeddedStores;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pricepoint-event-watch-'));
    const file = join(dir, 'pricepoint.db');
    server = await openEmbeddedStores(file);
    importer = await openEmbeddedStores(file);
    await importer.prices.upsertSeries({
      symbol: 'NO1',
      name: 'NO1 day-ahead',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Oslo',
      resolution: 'PT15M',
    });
  });
  after(async () => {
    await server.close();
    await importer.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('hears an import made through another connection, and looks at the table only after a commit', async () => {
    const events = server.events;
    let looks = 0;
    const latestSeq = events.latestSeq.bind(events);
    events.latestSeq = () => {
      looks += 1;
      return latestSeq();
    };
    let heard = 0;
    const stop = events.onAppended(() => {
      heard += 1;
    });
    try {
      // The first look tells listeners, as it always has; then nothing is committed for five polls.
      for (let waited = 0; heard === 0 && waited < 5_000; waited += 20) await sleep(20);
      assert.equal(heard, 1);
      await sleep(EMBEDDED_POLL_MS * 5);
      assert.equal(looks, 1, 'no query while nothing was committed');
      assert.equal(heard, 1);

      const cursor = await latestSeq();
      const session = await importer.prices.beginPriceWrites();
      await session.write(day('2026-11-23'));
      await session.commit();
      for (let waited = 0; heard === 1 && waited < 5_000; waited += 20) await sleep(20);
      assert.equal(heard, 2, 'the import was heard');
      assert.ok(looks >= 2);
      const read = await events.after(cursor, 10);
      assert.deepEqual(
        read.map((e) => [e.type, e.data.date]),
        [['day.published', '2026-11-23']],
      );
    } finally {
      stop();
    }
  });
});
