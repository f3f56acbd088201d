import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { openEmbeddedStores } from '../stores/sqlite/index.js';
import type { UsageStore } from '../stores/usage.js';
import { createUsageHistory } from './usage-history.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-22T10:59:59Z');
let stores: Awaited<ReturnType<typeof openEmbeddedStores>>;
beforeEach(async () => {
  stores = await openEmbeddedStores(':memory:');
});
afterEach(() => stores.close());

const span = (from: number, hours: number) =>
  Array.from({ length: hours }, (_, n) => ({ start: from + n * HOUR, end: from + (n + 1) * HOUR }));

test('counts on both sides of an hour boundary land in their own hours, flushed once', async () => {
  let now = T0;
  const usage = createUsageHistory({
    store: stores.usage,
    clock: () => now,
    flushMs: 60_000,
    retentionDays: 400,
  });
  usage.count('key_a', 200, 1);
  usage.count('key_a', 304, 1);
  now += 2_000;
  usage.count('key_a', 429, 0);
  usage.count('key_a', 404, 1);
  usage.count('key_a', 500, 1);
  const [ten, eleven] = await usage.read(span(Date.parse('2026-11-22T10:00:00Z'), 2), 'key_a');
  assert.deepEqual(
    { ...ten },
    {
      start: Date.parse('2026-11-22T10:00:00Z'),
      end: Date.parse('2026-11-22T11:00:00Z'),
      requests: 2,
      served: 1,
      notModified: 1,
      rateLimited: 0,
      clientErrors: 0,
      units: 2,
    },
  );
  assert.equal(eleven?.requests, 3);
  assert.deepEqual([eleven?.rateLimited, eleven?.clientErrors, eleven?.units], [1, 1, 2]);
  // A second flush adds nothing: the counts were taken by the first.
  await usage.flush();
  const [again] = await usage.read(span(Date.parse('2026-11-22T11:00:00Z'), 1), 'key_a');
  assert.equal(again?.requests, 3);
  await usage.close();
});

test('a write that fails keeps its counts for the next flush, which writes them once', async () => {
  let failing = true;
  const store: UsageStore = {
    add: (rows) => (failing ? Promise.reject(new Error('database away')) : stores.usage.add(rows)),
    hours: (from, to, keyId) => stores.usage.hours(from, to, keyId),
    keyDays: (from, to) => stores.usage.keyDays(from, to),
    tierBuckets: (buckets) => stores.usage.tierBuckets(buckets),
    prune: (before) => stores.usage.prune(before),
  };
  const errors: unknown[] = [];
  const usage = createUsageHistory({
    store,
    clock: () => T0,
    flushMs: 60_000,
    retentionDays: 400,
    onError: (error) => errors.push(error),
  });
  usage.count('key_b', 200, 3);
  await usage.flush();
  assert.equal(errors.length, 1);
  usage.count('key_b', 200, 1);
  failing = false;
  await usage.flush();
  const [hour] = await usage.read(span(Date.parse('2026-11-22T10:00:00Z'), 1), 'key_b');
  assert.deepEqual([hour?.requests, hour?.units], [2, 4]);
  await usage.close();
});

test('hours older than the retention are removed', async () => {
  let now = Date.parse('2026-11-22T10:00:00Z');
  const usage = createUsageHistory({
    store: stores.usage,
    clock: () => now,
    flushMs: 60_000,
    retentionDays: 2,
  });
  usage.count('key_c', 200, 1);
  await usage.flush();
  now += 3 * 24 * HOUR;
  usage.count('key_c', 200, 1);
  await usage.flush();
  const hours = await stores.usage.hours(0, now + HOUR, 'key_c');
  assert.deepEqual(
    hours.map((h) => new Date(h.hourStart).toISOString()),
    ['2026-11-25T10:00:00.000Z'],
  );
  await usage.close();
});
