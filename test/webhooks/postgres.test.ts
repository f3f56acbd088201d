/**
 * Webhooks on PostgreSQL with three instances (docs/webhooks.md "Across instances"): three delivery
 * workers over one schema, racing over the same events, deliver each event to the endpoint once.
 * Skipped with the reason when PostgreSQL is unreachable, except on CI (helpers/postgres.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPostgresStores } from '../../src/stores/postgres/index.js';
import { createWebhookService } from '../../src/webhooks/service.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { MemoryEventLog } from './memory-event-log.js';
import { startReceiver } from './receiver.js';

const probe = await postgresSchemaUrl();
const SEND = { allowPrivate: true, allowHttp: true, timeoutMs: 5_000 };

test('three instances deliver each event to a webhook once', {
  skip: 'skip' in probe ? probe.skip : false,
}, async () => {
  const target = await postgresSchemaUrl();
  if ('skip' in target) throw new Error(target.skip);
  const receiver = await startReceiver();
  const instances = await Promise.all(
    [1, 2, 3].map(() => openPostgresStores(target.url, { schema: target.schema })),
  );
  try {
    const events = new MemoryEventLog();
    const [first] = instances;
    assert.ok(first);
    const service = createWebhookService({ store: first.webhooks, keySecret: undefined, send: SEND });
    await service.create({ url: receiver.url(), events: ['day.published', 'day.revised'] }, 0);
    const workers = instances.map(
      (stores) => new DeliveryWorker({ store: stores.webhooks, events, keySecret: undefined, send: SEND }),
    );
    const sent = Array.from({ length: 30 }, (_, n) =>
      events.append(
        n % 2 === 0 ? 'day.published' : 'day.revised',
        `S${n % 5}`,
        `2026-11-${String(1 + n).padStart(2, '0')}`,
      ),
    );
    // Every instance wakes at once, twice, as they would on the same notice.
    for (let round = 0; round < 2; round += 1) await Promise.all(workers.map((w) => w.wake()));
    await Promise.all(workers.map((w) => w.stop()));

    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    assert.equal(ids.length, sent.length, 'one delivery per event, not one per instance');
    assert.deepEqual([...ids].sort(), sent.map((e) => e.id).sort());
  } finally {
    try {
      await Promise.all(instances.map((s) => s.close()));
    } finally {
      await receiver.close();
      await target.drop();
    }
  }
});
