/**
 * The delivery worker is idle when there is nothing to do (docs/webhooks.md): no store call and no
 * wake-up while no delivery waits, whether there are endpoints or not. It wakes for a new event
 * (which is how it notices an endpoint registered elsewhere), at the time a retry falls due, and
 * when an endpoint is enabled or a delivery redelivered through its store. Its clock and its
 * wake-ups are the test's, and every store call it makes is counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import type { WebhookStore } from '../../src/stores/event-types.js';
import type { SqlTables } from '../../src/stores/sql/schema.js';
import { SqlWebhookStore } from '../../src/stores/sql/webhook-store.js';
import { migrateSqlite, openSqlite } from '../../src/stores/sqlite/database.js';
import { RETRY_DELAYS_S } from '../../src/webhooks/limits.js';
import { createWebhookService } from '../../src/webhooks/service.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { MemoryEventLog } from './memory-event-log.js';
import { startReceiver } from './receiver.js';

const SEND = { allowPrivate: true, allowHttp: true, timeoutMs: 5_000 };
const HOUR_MS = 60 * 60_000;

/**
 * The store with every call counted by method name (subscribing to its notices is no store work);
 * while `failing` is set, every call fails as a database that is away would.
 */
function countingStore(store: WebhookStore) {
  const spied = { calls: [] as string[], failing: false, store };
  spied.store = new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (name === 'onDue') return (value as (...a: unknown[]) => unknown).apply(target, args);
        spied.calls.push(String(name));
        if (spied.failing) return Promise.reject(new Error('the database is away'));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return spied;
}

describe('an idle webhook worker', () => {
  let db: Kysely<SqlTables>;
  let now = Date.parse('2026-11-24T12:00:00Z');
  const clock = () => now;
  /** The wake-ups the worker asked for: when (on the test's clock), and what to call then. */
  const wakeUps = new Set<{ at: number; wake: () => void }>();

  /** Moves the clock to `to` and calls the wake-ups due by then, as the timers would. */
  const advanceTo = (to: number) => {
    now = to;
    for (const wakeUp of [...wakeUps]) {
      if (wakeUp.at > now) continue;
      wakeUps.delete(wakeUp);
      wakeUp.wake();
    }
  };

  before(async () => {
    const opened = openSqlite(':memory:');
    await migrateSqlite(opened.db);
    db = opened.db;
  });
  after(() => db.destroy());

  const setUp = () => {
    const raw = SqlWebhookStore.over(db);
    const spied = countingStore(raw);
    const { store, calls } = spied;
    const events = new MemoryEventLog();
    const service = createWebhookService({ store: raw, keySecret: undefined, send: SEND, clock });
    const worker = new DeliveryWorker({
      store,
      events,
      keySecret: undefined,
      send: SEND,
      clock,
      random: () => 0.5,
      wakeAfter: (ms, wake) => {
        const wakeUp = { at: now + ms, wake };
        wakeUps.add(wakeUp);
        return () => wakeUps.delete(wakeUp);
      },
    });
    return { spied, calls, events, service, worker };
  };

  test('without endpoints it makes no store call and sets no wake-up, however long it waits', async () => {
    const { calls, worker } = setUp();
    worker.start();
    await worker.wake();
    calls.length = 0;
    // The worker used to look every second: a day of its clock and a real pause find nothing done.
    advanceTo(now + 24 * HOUR_MS);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.deepEqual(calls, [], 'no store call while idle');
    assert.equal(wakeUps.size, 0, 'no wake-up asked for');
    await worker.stop();
  });

  test('after its deliveries it is idle; a failed one wakes it exactly when its retry is due', async () => {
    let status = 503;
    const receiver = await startReceiver((_path, res) => {
      res.statusCode = status;
      res.end();
    });
    const { calls, events, service, worker } = setUp();
    try {
      const { endpoint } = await service.create({ url: receiver.url(), events: ['day.published'] }, 0);
      worker.start();
      await worker.wake();

      // The event wakes the worker (no call here asks it to), and the send fails.
      events.append('day.published', 'NO1', '2026-11-25');
      await waitFor(() => receiver.received.length === 1);
      // Lets the outcome be written and the next due time asked.
      await worker.wake();
      const [row] = (await service.deliveries(endpoint.id)) ?? [];
      assert.equal(row?.state, 'pending');
      const retryAt = Date.parse(row?.nextAttemptAt ?? '');
      assert.equal(retryAt - now, RETRY_DELAYS_S[0] * 1000, 'the first retry, without jitter');
      assert.deepEqual(
        [...wakeUps].map((w) => w.at),
        [retryAt + 1],
        'one wake-up, just past the retry time',
      );

      // Up to a moment before it: nothing.
      calls.length = 0;
      advanceTo(retryAt - 1);
      assert.deepEqual(calls, [], 'no store call before the retry is due');
      status = 200;
      advanceTo(retryAt + 1);
      await worker.wake();
      assert.equal(receiver.received.length, 2, 'the retry was sent when due');
      assert.equal((await service.deliveries(endpoint.id))?.[0]?.state, 'delivered');
      assert.equal(wakeUps.size, 0, 'nothing left to wake for');

      calls.length = 0;
      advanceTo(now + 24 * HOUR_MS);
      assert.deepEqual(calls, [], 'no store call once everything is delivered');
      await service.remove(endpoint.id);
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  test('a pass that failed is tried again 5 s later, not left for the next event', async () => {
    const receiver = await startReceiver();
    const { spied, events, service, worker } = setUp();
    try {
      await service.create({ url: receiver.url(), events: ['day.published'] }, 0);
      worker.start();
      await worker.wake();
      spied.failing = true;
      const event = events.append('day.published', 'DK1', '2026-11-25');
      await worker.wake();
      assert.deepEqual(
        [...wakeUps].map((w) => w.at - now),
        [5_001],
        'one wake-up, 5 s after the failure',
      );
      spied.failing = false;
      advanceTo(now + 5_001);
      await worker.wake();
      assert.deepEqual(
        receiver.received.map((r) => r.headers['webhook-id']),
        [event.id],
      );
      assert.equal(wakeUps.size, 0, 'idle again');
    } finally {
      await worker.stop();
      await receiver.close();
      await service.remove((await service.list())[0]?.id ?? '');
    }
  });

  test('an endpoint registered elsewhere gets the next event; enabling and redelivering wake it', async () => {
    const receiver = await startReceiver();
    const { events, service, worker } = setUp();
    try {
      worker.start();
      await worker.wake();
      // Registered over another store of the same tables, as another instance would: nothing tells
      // this worker, and it needs no telling until an event concerns the endpoint.
      const elsewhere = createWebhookService({
        store: SqlWebhookStore.over(db),
        keySecret: undefined,
        send: SEND,
        clock,
      });
      const { endpoint } = await elsewhere.create(
        { url: receiver.url(), events: ['day.published'] },
        await events.latestSeq(),
      );
      const first = events.append('day.published', 'SE3', '2026-11-25');
      await waitFor(() => receiver.received.length === 1);
      assert.deepEqual(
        receiver.received.map((r) => r.headers['webhook-id']),
        [first.id],
      );

      // Disabled and enabled again through this worker's store: the event it missed is sent at once.
      await elsewhere.setEnabled(endpoint.id, false);
      const missed = events.append('day.published', 'SE3', '2026-11-26');
      await worker.wake();
      assert.equal(receiver.received.length, 1, 'nothing is sent while it is disabled');
      await service.setEnabled(endpoint.id, true);
      await waitFor(() => receiver.received.length === 2);
      assert.equal(receiver.received[1]?.headers['webhook-id'], missed.id);

      await service.redeliver(endpoint.id, first.id);
      await waitFor(() => receiver.received.length === 3);
      assert.equal(receiver.received[2]?.headers['webhook-id'], first.id);
      await service.remove(endpoint.id);
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });
});

/** Waits (up to 30 s) until `check` holds: the worker runs on its own after a notice. */
async function waitFor(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    assert.ok(Date.now() < deadline, 'timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
