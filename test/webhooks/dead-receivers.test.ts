/**
 * Receivers that never answer (docs/webhooks.md, "Endpoints that do not answer"), on the embedded
 * SQLite stores and on PostgreSQL (skipped with the reason when it is unreachable, except on CI):
 *
 * - 99 real receivers on 127.0.0.1 that accept every request and never answer do not delay a
 *   healthy one: it gets each of 150 events before the first of the hanging requests times out.
 * - An endpoint whose sends time out in a row is held as a whole, probed with one send at a time,
 *   and disabled by the usual retry rules; its other deliveries wait, none is lost.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { WebhookStore } from '../../src/stores/event-types.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import {
  FETCH_PER_ENDPOINT,
  HOLD_AFTER_TIMEOUTS,
  MAX_ATTEMPTS,
  RETRY_DELAYS_S,
} from '../../src/webhooks/limits.js';
import { createWebhookService } from '../../src/webhooks/service.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { openPostgresStoresInFreshSchema, postgresSchemaUrl } from '../helpers/postgres.js';
import { cleanUp, tempDir } from '../helpers/process.js';
import { MemoryEventLog } from './memory-event-log.js';
import { startReceiver } from './receiver.js';

after(cleanUp);

const probe = await postgresSchemaUrl();
const engines = [
  {
    name: 'SQLite',
    skip: false as const,
    open: async () => openEmbeddedStores(join(await tempDir('pricepoint-dead-receivers-'), 'pricepoint.db')),
  },
  { name: 'PostgreSQL', skip: 'skip' in probe ? probe.skip : false, open: openPostgresStoresInFreshSchema },
];

/** A receiver that accepts every request and answers none until told; counts what it holds open. */
async function hangingReceiver() {
  const open = new Set<ServerResponse>();
  const state = { answering: false, mostOpen: 0 };
  const receiver = await startReceiver((_path, res) => {
    if (state.answering) return void res.end('ok');
    open.add(res);
    state.mostOpen = Math.max(state.mostOpen, open.size);
    res.on('close', () => open.delete(res));
  });
  return Object.assign(receiver, { state, open });
}

const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString().slice(0, 10);

/**
 * A worker on a clock the test moves: each wake-up it asks for is kept, and `next()` moves the clock
 * to the one asked for (there must be one) and lets that pass and its sends end.
 */
function onTestClock(stores: Pick<Stores, 'webhooks'>, start: number) {
  const send = { allowPrivate: true, allowHttp: true, timeoutMs: 250 };
  let now = start;
  const events = new MemoryEventLog();
  const store = stores.webhooks as WebhookStore;
  const clock = () => now;
  const service = createWebhookService({ store, keySecret: undefined, send, clock });
  const wakeUps = new Set<{ at: number; wake: () => void }>();
  const worker = new DeliveryWorker({
    store,
    events,
    keySecret: undefined,
    send,
    clock,
    random: () => 0.5,
    wakeAfter: (ms, wake) => {
      const wakeUp = { at: now + ms, wake };
      wakeUps.add(wakeUp);
      return () => wakeUps.delete(wakeUp);
    },
  });
  const next = async () => {
    assert.equal(wakeUps.size, 1, 'one wake-up is set');
    const [wakeUp] = [...wakeUps];
    assert.ok(wakeUp);
    wakeUps.delete(wakeUp);
    now = wakeUp.at;
    await worker.wake();
  };
  return { events, service, worker, next, now: () => now };
}

for (const engine of engines) {
  describe(`webhook receivers that never answer, on ${engine.name}`, { skip: engine.skip }, () => {
    test('99 hanging receivers do not delay a healthy one: it gets each of 150 events before any hanging request could time out', async () => {
      // Every arrival must come before the first hanging request could time out and free a slot; twice
      // the default timeout, so that a loaded machine does not make it flaky (the time itself is
      // measured by bench:webhooks).
      const send = { allowPrivate: true, allowHttp: true, timeoutMs: 20_000 };
      const stores = await engine.open();
      const hanging = await Promise.all(Array.from({ length: 99 }, hangingReceiver));
      const healthy = await startReceiver();
      const events = new MemoryEventLog();
      const store = stores.webhooks as WebhookStore;
      const service = createWebhookService({ store, keySecret: undefined, send });
      const worker = new DeliveryWorker({ store, events, keySecret: undefined, send });
      let stopping: Promise<void> | undefined;
      try {
        const spec = { events: ['day.published'] };
        for (const receiver of hanging) await service.create({ ...spec, url: receiver.url() }, 0);
        // Registered last: the hanging endpoints come first in every listing.
        await service.create({ ...spec, url: healthy.url() }, 0);
        worker.start();
        const appendedAt = new Map<string, number>();
        for (let n = 0; n < 150; n += 1)
          appendedAt.set(events.append('day.published', 'NO1', day(n)).id, Date.now());
        const first = Math.min(...appendedAt.values());
        while (healthy.received.length < 150 && Date.now() < first + send.timeoutMs) {
          await new Promise((resolve) => setTimeout(resolve, 25));
        }

        const ids = healthy.received.map((r) => String(r.headers['webhook-id']));
        assert.equal(
          ids.length,
          150,
          `the healthy endpoint got ${ids.length} of 150 events within the ${send.timeoutMs} ms timeout`,
        );
        assert.deepEqual([...ids].sort(), [...appendedAt.keys()].sort(), 'each event once');
        const latencies = healthy.received
          .map((r) => r.at - (appendedAt.get(String(r.headers['webhook-id'])) ?? 0))
          .sort((a, b) => a - b);
        assert.ok((latencies.at(-1) ?? 0) < send.timeoutMs);
        // The hanging receivers were really held: every one has requests open, none answered.
        for (const receiver of hanging)
          assert.ok(receiver.open.size > 0, 'each hanging receiver holds requests');
        const held = hanging.reduce((sum, r) => sum + r.open.size, 0);
        console.log(
          `# ${engine.name}: event → healthy arrival max ${latencies.at(-1)} ms, p50 ${latencies[75]} ms; ${held} requests held open by the hanging receivers`,
        );
      } finally {
        stopping = worker.stop();
        await Promise.all(hanging.map((r) => r.close()));
        await stopping;
        await healthy.close();
        await stores.close();
      }
    });

    test('an endpoint that times out in a row is held as a whole and probed one send at a time; no delivery is lost, and the retry rules disable it', async () => {
      const stores = await engine.open();
      const receiver = await hangingReceiver();
      const started = Date.parse('2026-11-24T12:00:00Z');
      const { events, service, worker, next: nextWakeUp, now } = onTestClock(stores, started);
      const log = async () => (await service.deliveries(endpoint.id)) ?? [];
      const { endpoint } = await service.create({ url: receiver.url(), events: ['day.published'] }, 0);
      try {
        const sent = Array.from({ length: 12 }, (_, n) => events.append('day.published', 'SE3', day(n)));
        await worker.wake();
        // A lane that has never answered sends one at a time (its share grows only with answers):
        // three timeouts in a row, then the endpoint is held and everything waits for the first retry.
        assert.equal(receiver.received.length, HOLD_AFTER_TIMEOUTS);
        assert.equal(receiver.state.mostOpen, 1);
        let rows = await log();
        assert.equal(rows.length, 12);
        assert.ok(rows.every((r) => r.state === 'pending'));
        assert.deepEqual(rows.map((r) => r.attempts).sort(), [...Array(9).fill(0), 1, 1, 1]);
        const firstRetry = now() + RETRY_DELAYS_S[0] * 1000;
        assert.ok(
          rows.every((r) => Date.parse(r.nextAttemptAt ?? '') === firstRetry),
          'all held until the first retry',
        );

        // Held: one send at a time, always the delivery furthest along its retries.
        receiver.state.mostOpen = 0;
        for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt += 1) {
          await nextWakeUp();
          assert.equal(receiver.received.length, HOLD_AFTER_TIMEOUTS + attempt - 1);
          assert.equal(receiver.state.mostOpen, 1, 'one probe at a time');
          assert.equal(receiver.received.at(-1)?.headers['webhook-id'], sent[0]?.id);
        }
        rows = await log();
        const disabled = await service.get(endpoint.id);
        assert.equal(disabled?.enabled, false);
        assert.match(disabled?.disabledReason ?? '', /failed 11 times/);
        // Each wake-up is a millisecond past the time it was asked for.
        assert.equal(
          now() - started - (MAX_ATTEMPTS - 1),
          RETRY_DELAYS_S.reduce((sum, s) => sum + s * 1000, 0),
          'disabled when its first delivery used up the retry schedule',
        );
        assert.deepEqual(
          rows.map((r) => r.state).sort(),
          ['failed', ...Array(11).fill('pending')],
          'the other deliveries wait',
        );

        // Answering again and enabled: every delivery arrives, the failed one by redelivery.
        receiver.state.answering = true;
        await service.setEnabled(endpoint.id, true);
        await worker.wake();
        await service.redeliver(endpoint.id, sent[0]?.id ?? '');
        await worker.wake();
        assert.deepEqual(
          (await log()).map((r) => r.state),
          Array(12).fill('delivered'),
        );
        const delivered = new Set(
          receiver.received.slice(HOLD_AFTER_TIMEOUTS + MAX_ATTEMPTS - 1).map((r) => r.headers['webhook-id']),
        );
        assert.equal(delivered.size, 12);
      } finally {
        await worker.stop();
        await receiver.close();
        await stores.close();
      }
    });

    test('a receiver that has not answered yet costs a few delivery rows, not one per event; once it answers it gets every event', async () => {
      const stores = await engine.open();
      const receiver = await hangingReceiver();
      const { events, service, worker, next } = onTestClock(stores, Date.parse('2026-11-24T12:00:00Z'));
      const { endpoint } = await service.create({ url: receiver.url(), events: ['day.published'] }, 0);
      try {
        const sent = Array.from({ length: 300 }, (_, n) => events.append('day.published', 'SE3', day(n)));
        await worker.wake();
        const written = (await service.deliveries(endpoint.id)) ?? [];
        assert.ok(
          written.length > 0 && written.length <= FETCH_PER_ENDPOINT,
          `${written.length} delivery rows for a receiver that never answered, of 300 events`,
        );
        // It answers again: at the retry, every event reaches it, in the log's order of rows.
        receiver.state.answering = true;
        for (let i = 0; i < 10 && receiver.received.length < 300 + HOLD_AFTER_TIMEOUTS; i += 1) await next();
        const arrived = new Set(receiver.received.map((r) => r.headers['webhook-id']));
        assert.deepEqual(
          sent.filter((event) => !arrived.has(event.id)).map((event) => event.id),
          [],
          'every event arrived',
        );
      } finally {
        await worker.stop();
        await receiver.close();
        await stores.close();
      }
    });
  });
}
