/**
 * Last-used times (docs/keys-and-tiers.md): written in batches, never once per request. A store wrapper
 * counts every key-store write while many requests run; the times land with the periodic flush
 * and, for whatever is left, when the app closes.
 */
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import type { KeyStore } from '../../src/stores/types.js';
import { createHarness } from '../helpers/harness.js';

const TODAY = '/api/v1/prices/today?symbols=NO1';
const WRITES = ['insert', 'revoke', 'setTier', 'rotate', 'recordLastUsed'] as const;

/** Counts calls of every writing method of `store`; batches passed to recordLastUsed are kept. */
function countWrites(store: KeyStore) {
  const counts = Object.fromEntries(WRITES.map((name) => [name, 0])) as Record<
    (typeof WRITES)[number],
    number
  >;
  const batches: Map<string, number>[] = [];
  for (const name of WRITES) {
    const real = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
    (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      counts[name] += 1;
      if (name === 'recordLastUsed') batches.push(new Map(args[0] as ReadonlyMap<string, number>));
      return real(...args);
    };
  }
  return { counts, batches, total: () => Object.values(counts).reduce((a, b) => a + b, 0) };
}

test('many requests write no last-used time; closing the app writes them all in one batch', async () => {
  const h = await createHarness();
  const first = await h.createKey({ tier: 'enterprise' });
  const second = await h.createKey({ tier: 'enterprise' });
  const writes = countWrites(h.stores.keys);
  for (let i = 0; i < 60; i += 1) {
    h.clock.advance(1_000);
    const key = i % 2 === 0 ? first.key : second.key;
    const response = await h.app.inject({ method: 'GET', url: TODAY, headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
  }
  const lastFirst = h.clock.now - 1_000;
  assert.equal(writes.total(), 0, `60 requests wrote ${JSON.stringify(writes.counts)}`);
  assert.equal((await h.stores.keys.get(first.id))?.lastUsedAt, null, 'nothing written yet');

  await h.app.close();
  assert.equal(writes.counts.recordLastUsed, 1, 'one batch on close');
  assert.equal(writes.total(), 1, `only that batch: ${JSON.stringify(writes.counts)}`);
  assert.deepEqual(
    writes.batches[0],
    new Map([
      [first.id, lastFirst],
      [second.id, h.clock.now],
    ]),
  );
  assert.equal((await h.stores.keys.get(first.id))?.lastUsedAt, lastFirst, 'the last use of the first key');
  assert.equal(
    (await h.stores.keys.get(second.id))?.lastUsedAt,
    h.clock.now,
    'the last use of the second key',
  );
  await h.stores.close();
});

test('the flusher writes collected times every 5 seconds, one batch each time, and nothing when idle', async (t) => {
  // Fake timers from before the app exists, so the flusher's interval is one of them.
  mock.timers.enable({ apis: ['setInterval'] });
  t.after(() => mock.timers.reset());
  const h = await createHarness();
  t.after(() => h.close());
  const { key, id } = await h.createKey({ tier: 'enterprise' });
  const writes = countWrites(h.stores.keys);
  for (let i = 0; i < 10; i += 1) {
    const response = await h.app.inject({ method: 'GET', url: TODAY, headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
  }
  assert.equal(writes.total(), 0, 'no write per request');

  mock.timers.tick(4_999);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(writes.counts.recordLastUsed, 0, 'not before 5 seconds');
  mock.timers.tick(1);
  await waitForBatches(writes.batches, 1);
  assert.equal((await h.stores.keys.get(id))?.lastUsedAt, h.clock.now, 'the time landed with the flush');

  mock.timers.tick(5_000);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(writes.counts.recordLastUsed, 1, 'an idle interval writes nothing');
  assert.equal(writes.total(), 1, `only the batch: ${JSON.stringify(writes.counts)}`);
});

/** The flush runs on promises after the timer fires; let them settle (no wall-clock wait). */
async function waitForBatches(batches: unknown[], count: number): Promise<void> {
  for (let i = 0; i < 100 && batches.length < count; i += 1) await new Promise((r) => setImmediate(r));
  assert.equal(batches.length, count, `${count} batch(es) written`);
}
