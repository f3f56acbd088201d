/**
 * On SQLite the webhook store waits for the write lock on a timer, never inside better-sqlite3
 * (docs/webhooks.md, SECURITY.md promise 20): while another connection holds the lock, as
 * `pricepoint import` does while it commits, every webhook write of the admin API and of the
 * delivery worker waits with the event loop free, and lands once the lock is let go. Written through
 * Kysely instead, the first write would stop the whole process for the busy timeout (5 s) and fail.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import type { DeliveryRow, EndpointRow, WebhookStore } from '../../src/stores/event-types.js';
import { type EmbeddedStores, openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { createWebhookService } from '../../src/webhooks/service.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { MemoryEventLog } from './memory-event-log.js';
import { startReceiver } from './receiver.js';

/** How long the other connection holds the lock: shorter than the 5 s a synchronous wait would take. */
const HOLD_MS = 3_000;
/**
 * Below the hold, with room for a loaded machine: a write that waited inside SQLite would leave a gap
 * of the whole busy timeout (5 s), since the timer that ends the hold could not fire meanwhile.
 */
const LONGEST_GAP_MS = 2_500;
const SEND = { allowPrivate: true, allowHttp: true, timeoutMs: 5_000 };
const KEY_SECRET = 'a-key-secret-for-the-tests-0123456789';

interface UnderLock<T> {
  /** What the writes gave, or their error: read once the lock is free again. */
  readonly outcome: { ok: true; value: T } | { ok: false; error: unknown };
  /** True when the writes had not ended when the lock was let go (they could not have landed). */
  readonly pendingAtRelease: boolean;
  /** The longest time the event loop went without a tick of a 10 ms interval while the lock was held. */
  readonly longestGapMs: number;
}

/**
 * Takes the write lock on a connection of its own to `path`, starts `writes`, holds the lock for
 * `HOLD_MS` on a timer of this same event loop, lets it go and waits for the writes. Were a write to
 * wait inside SQLite, this thread could not let go of the lock meanwhile.
 */
async function underTheLock<T>(path: string, writes: () => Promise<T>): Promise<UnderLock<T>> {
  const other = new SQLite(path);
  try {
    other.exec('begin immediate');
    let last = performance.now();
    let longestGapMs = 0;
    const tick = () => {
      const now = performance.now();
      longestGapMs = Math.max(longestGapMs, now - last);
      last = now;
    };
    const ticker = setInterval(tick, 10);
    let settled = false;
    const work = writes().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    void work.finally(() => {
      settled = true;
    });
    try {
      await sleep(HOLD_MS);
      tick();
    } finally {
      clearInterval(ticker);
    }
    const pendingAtRelease = !settled;
    other.exec('commit');
    return { outcome: await work, pendingAtRelease, longestGapMs };
  } finally {
    other.close();
  }
}

function endpointRow(id: string, createdAt: number): EndpointRow {
  return {
    id,
    url: `https://hooks.example.com/${id}`,
    events: JSON.stringify(['day.published']),
    symbols: null,
    secret: 'sealed-elsewhere',
    enabled: 1,
    disabled_reason: null,
    cursor: 0,
    created_at: createdAt,
  };
}

function deliveryRow(endpointId: string, seq: number, nextAttemptAt: number): DeliveryRow {
  return {
    endpoint_id: endpointId,
    event_id: `evt_${String(seq).padStart(12, '0')}`,
    event_seq: seq,
    payload: JSON.stringify({ seq }),
    state: 'pending',
    attempts: 0,
    next_attempt_at: nextAttemptAt,
    last_attempt_at: null,
    last_status: null,
    last_latency_ms: null,
    last_error: null,
  };
}

describe('SQLite: webhook writes while another process holds the write lock', () => {
  let dir: string;
  let path: string;
  let stores: EmbeddedStores;
  let store: WebhookStore;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pricepoint-webhook-lock-'));
    path = join(dir, 'pricepoint.db');
    stores = await openEmbeddedStores(path);
    assert.ok(stores.webhooks, 'the embedded stores keep webhooks');
    store = stores.webhooks;
  });
  after(async () => {
    await stores.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('every write of the store waits with the event loop free, and lands once the lock is let go', async () => {
    const now = 1_000_000;
    await store.insertEndpoint(endpointRow('whe_kept', 1));
    await store.insertEndpoint(endpointRow('whe_gone', 2));
    const due = deliveryRow('whe_kept', 1, now);
    const failed = deliveryRow('whe_kept', 2, now);
    const added = deliveryRow('whe_kept', 3, now);
    await store.enqueue(['whe_kept'], 2, [due, failed]);
    await store.record('whe_kept', failed.event_id, {
      state: 'failed',
      attempts: 11,
      next_attempt_at: null,
      last_attempt_at: now,
      last_status: 503,
      last_latency_ms: 10,
      last_error: 'answered 503',
    });
    await store.enqueue(['whe_gone'], 1, [deliveryRow('whe_gone', 1, now)]);

    const { outcome, pendingAtRelease, longestGapMs } = await underTheLock(path, () =>
      Promise.all([
        store.insertEndpoint(endpointRow('whe_new', 3)),
        // Twice, as two instances would: the delivery is inserted once.
        store.enqueue(['whe_kept'], 3, [added]),
        store.enqueue(['whe_kept'], 3, [added]),
        // Twice from the same row read, as two instances would: only the first takes it.
        store.claim([due], now + 60_000),
        store.claim([due], now + 60_000),
        store.record('whe_kept', due.event_id, {
          state: 'delivered',
          attempts: 1,
          next_attempt_at: null,
          last_attempt_at: now,
          last_status: 200,
          last_latency_ms: 12,
          last_error: null,
        }),
        store.redeliver('whe_kept', failed.event_id, now),
        store.setEnabled('whe_kept', false, 'paused by the test'),
        store.deleteEndpoint('whe_gone'),
      ]),
    );

    assert.ok(pendingAtRelease, 'no write ended while the lock was held elsewhere');
    assert.ok(
      longestGapMs < LONGEST_GAP_MS,
      `the event loop kept turning under the lock (longest gap ${Math.round(longestGapMs)} ms)`,
    );
    assert.ok(outcome.ok, `the writes landed once the lock was free: ${outcome.ok || String(outcome.error)}`);
    assert.deepEqual(outcome.value, [
      undefined,
      undefined,
      undefined,
      [true],
      [false],
      undefined,
      true,
      true,
      true,
    ]);

    const endpoints = await store.endpoints();
    assert.deepEqual(
      endpoints.map((e) => [e.id, e.enabled, e.disabled_reason, e.cursor]),
      [
        ['whe_kept', 0, 'paused by the test', 3],
        ['whe_new', 1, null, 0],
      ],
    );
    const deliveries = await store.deliveries('whe_kept', 10);
    assert.deepEqual(
      deliveries.map((d) => [d.event_id, d.state, d.attempts, d.next_attempt_at]),
      [
        [added.event_id, 'pending', 0, now],
        [failed.event_id, 'pending', 0, now],
        [due.event_id, 'delivered', 1, null],
      ],
    );
    assert.deepEqual(
      await store.deliveries('whe_gone', 10),
      [],
      'the deleted endpoint took its deliveries along',
    );
  });

  test("the delivery worker's pass waits with the event loop free, and delivers once the lock is let go", async () => {
    const receiver = await startReceiver();
    const events = new MemoryEventLog();
    const service = createWebhookService({ store, keySecret: KEY_SECRET, send: SEND });
    const errors: unknown[] = [];
    const worker = new DeliveryWorker({
      store,
      events,
      keySecret: KEY_SECRET,
      send: SEND,
      onError: (error) => errors.push(error),
    });
    try {
      const { endpoint } = await service.create(
        { url: receiver.url(), events: ['day.published'], symbols: ['NO1'] },
        await events.latestSeq(),
      );
      const event = events.append('day.published', 'NO1', '2026-11-25');

      const { outcome, pendingAtRelease, longestGapMs } = await underTheLock(path, () => worker.wake());

      assert.ok(pendingAtRelease, 'the pass could not turn the event into a delivery under the lock');
      assert.ok(
        longestGapMs < LONGEST_GAP_MS,
        `the event loop kept turning under the lock (longest gap ${Math.round(longestGapMs)} ms)`,
      );
      assert.ok(outcome.ok, `the pass ended: ${outcome.ok || String(outcome.error)}`);
      assert.deepEqual(errors, [], 'and no write of it failed');
      assert.deepEqual(
        receiver.received.map((r) => r.headers['webhook-id']),
        [event.id],
      );
      const log = await service.deliveries(endpoint.id);
      assert.deepEqual(
        log?.map((d) => [d.eventId, d.state, d.status]),
        [[event.id, 'delivered', 200]],
      );
      await service.remove(endpoint.id);
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });
});
