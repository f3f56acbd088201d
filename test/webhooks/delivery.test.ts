/**
 * Webhook deliveries (docs/webhooks.md): real HTTP deliveries to a local receiver, verified with the
 * Standard Webhooks reference library; each event once per endpoint; retries with backoff until the
 * endpoint is disabled; enabling it again and redelivering.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { SqlTables } from '../../src/stores/sql/schema.js';
import { SqlWebhookStore } from '../../src/stores/sql/webhook-store.js';
import { migrateSqlite, openSqlite } from '../../src/stores/sqlite/database.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_S } from '../../src/webhooks/limits.js';
import { createWebhookService, type WebhookService } from '../../src/webhooks/service.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { waitUntil } from '../helpers/process.js';
import { MemoryEventLog } from './memory-event-log.js';
import { startReceiver } from './receiver.js';

const SEND = { allowPrivate: true, allowHttp: true, timeoutMs: 5_000 };
const KEY_SECRET = 'a-key-secret-for-the-tests-0123456789';

describe('webhook deliveries', () => {
  let db: Kysely<SqlTables>;
  let close: () => Promise<void>;
  let now = Date.parse('2026-11-24T12:00:00Z');
  const clock = () => now;

  before(async () => {
    const opened = openSqlite(':memory:');
    await migrateSqlite(opened.db);
    db = opened.db;
    close = () => opened.db.destroy();
  });
  after(() => close());

  const setUp = () => {
    const store = SqlWebhookStore.over(db);
    const events = new MemoryEventLog();
    const service: WebhookService = createWebhookService({ store, keySecret: KEY_SECRET, send: SEND, clock });
    const worker = new DeliveryWorker({
      store,
      events,
      keySecret: KEY_SECRET,
      send: SEND,
      clock,
      random: () => 0.5,
    });
    return { store, events, service, worker };
  };

  test('each wanted event reaches the endpoint once, signed so that standardwebhooks verifies it', async () => {
    const receiver = await startReceiver();
    const { events, service, worker } = setUp();
    try {
      const { endpoint, secret } = await service.create(
        { url: receiver.url(), events: ['day.published'], symbols: ['NO1'] },
        await events.latestSeq(),
      );
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.ok(!JSON.stringify(await service.list()).includes(secret), 'no listing shows the secret');
      const wanted = events.append('day.published', 'NO1', '2026-11-25');
      events.append('day.revised', 'NO1', '2026-11-25');
      events.append('day.published', 'SE3', '2026-11-25');
      await worker.wake();
      await worker.wake();

      assert.equal(receiver.received.length, 1);
      const [got] = receiver.received;
      assert.ok(got);
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
      assert.equal(headers['webhook-id'], wanted.id);
      const verified = new Webhook(secret).verify(got.body, headers) as {
        id: string;
        type: string;
        data: object;
      };
      assert.deepEqual(verified, {
        id: wanted.id,
        type: 'day.published',
        time: wanted.time,
        data: wanted.data,
      });
      assert.throws(
        () => new Webhook(secret).verify(got.body.replace('NO1', 'NO2'), headers),
        'a changed body fails',
      );

      const log = await service.deliveries(endpoint.id);
      assert.equal(log?.length, 1);
      assert.equal(log?.[0]?.state, 'delivered');
      assert.equal(log?.[0]?.status, 200);
      assert.equal(typeof log?.[0]?.latencyMs, 'number');
      assert.equal(log?.[0]?.error, null);

      // Stopping the worker and starting another over the same tables sends nothing again.
      await worker.stop();
      const { worker: second } = {
        worker: new DeliveryWorker({
          store: SqlWebhookStore.over(db),
          events,
          keySecret: KEY_SECRET,
          send: SEND,
          clock,
        }),
      };
      await second.wake();
      assert.equal(receiver.received.length, 1);
      await service.remove(endpoint.id);
    } finally {
      await receiver.close();
    }
  });

  test('a failing endpoint is retried with growing delays, then disabled; enabled again, it gets what it missed', async () => {
    let status = 503;
    const receiver = await startReceiver((_path, res) => {
      res.statusCode = status;
      res.end();
    });
    const { events, service, worker } = setUp();
    try {
      const { endpoint, secret } = await service.create(
        { url: receiver.url(), events: ['day.published', 'day.revised'] },
        0,
      );
      const event = events.append('day.revised', 'DE-LU', '2026-11-25');
      await worker.wake();
      let previousDelay = 0;
      for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt += 1) {
        const [row] = (await service.deliveries(endpoint.id)) ?? [];
        assert.equal(row?.state, 'pending');
        assert.equal(row?.attempts, attempt);
        assert.equal(row?.status, 503);
        assert.equal(row?.error, 'answered 503');
        const delay = Date.parse(row?.nextAttemptAt ?? '') - now;
        assert.equal(delay, (RETRY_DELAYS_S[attempt - 1] ?? 0) * 1000, 'with random 0.5 the jitter is zero');
        assert.ok(delay >= previousDelay, 'delays never shrink');
        previousDelay = delay;
        // Not yet due: nothing is sent.
        await worker.wake();
        assert.equal(receiver.received.length, attempt);
        now += delay;
        await worker.wake();
      }
      assert.equal(receiver.received.length, MAX_ATTEMPTS);
      const disabled = await service.get(endpoint.id);
      assert.equal(disabled?.enabled, false);
      assert.match(disabled?.disabledReason ?? '', /failed 11 times/);
      assert.equal((await service.deliveries(endpoint.id))?.[0]?.state, 'failed');

      // While disabled, new events wait; enabled again, they are delivered, and a redelivery resends the failed one.
      const missed = events.append('day.published', 'DE-LU', '2026-11-26');
      await worker.wake();
      assert.equal(receiver.received.length, MAX_ATTEMPTS);
      status = 200;
      await service.setEnabled(endpoint.id, true);
      await worker.wake();
      assert.equal(receiver.received.at(-1)?.headers['webhook-id'], missed.id);
      assert.equal((await service.redeliver(endpoint.id, event.id))?.state, 'pending');
      await worker.wake();
      const last = receiver.received.at(-1);
      assert.equal(last?.headers['webhook-id'], event.id);
      const headers = Object.fromEntries(Object.entries(last?.headers ?? {}).map(([k, v]) => [k, String(v)]));
      assert.doesNotThrow(() => new Webhook(secret).verify(last?.body ?? '', headers));
      const states = ((await service.deliveries(endpoint.id)) ?? []).map((d) => [d.eventId, d.state]);
      assert.deepEqual(states, [
        [missed.id, 'delivered'],
        [event.id, 'delivered'],
      ]);
      await worker.stop();
    } finally {
      await receiver.close();
    }
  });

  test('a receiver that does not answer holds neither the worker nor other endpoints', async () => {
    const held: ServerResponse[] = [];
    let cut = 0;
    const stuck = await startReceiver((_path, res) => {
      held.push(res);
      res.on('close', () => {
        cut += 1;
      });
    });
    const fine = await startReceiver();
    const { events, service, worker } = setUp();
    try {
      const spec = { events: ['day.published'] };
      await service.create({ ...spec, url: stuck.url() }, 0);
      await service.create({ ...spec, url: fine.url() }, 0);
      // Started as the server starts it: woken by the log.
      worker.start();
      const first = events.append('day.published', 'NO2', '2026-11-25');
      await waitUntil(() => stuck.received[0] && fine.received[0], 10_000, 'both receivers');
      // The stuck receiver still holds its request; a new event reaches the other endpoint meanwhile.
      const second = events.append('day.published', 'NO2', '2026-11-26');
      await waitUntil(() => fine.received[1], 10_000, 'the second event at the fine receiver');
      // Still within its first request's time limit: nothing waited for that request to end.
      assert.equal(cut, 0, 'no request to the stuck receiver ended');
      assert.deepEqual(
        fine.received.map((r) => r.headers['webhook-id']),
        [first.id, second.id],
      );
      for (const res of held) res.end();
      await worker.stop();
    } finally {
      await stuck.close();
      await fine.close();
    }
  });
});
