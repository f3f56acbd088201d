import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createReadCache } from './read-cache.js';
import type { SeriesDay } from './served-days.js';
import { quarterHours } from './served-days-fixtures.js';

describe('read cache', () => {
  let now = 0;
  const cache = () =>
    createReadCache<string>({ freshMs: 5_000, staleMs: 60_000, maxEntries: 4, now: () => now });
  const failing = () => Promise.reject(new Error('database away'));

  test('serves a fresh entry without loading, loads again once it is old', async () => {
    now = 0;
    const c = cache();
    let loads = 0;
    const load = async () => `v${++loads}`;
    assert.equal(await c.read('a', ['NO1'], load), 'v1');
    now = 4_999;
    assert.equal(await c.read('a', ['NO1'], load), 'v1');
    now = 5_000;
    assert.equal(await c.read('a', ['NO1'], load), 'v2');
  });

  test('serves a stale entry while the store fails, and fails once it is too old or was never read', async () => {
    now = 0;
    const c = cache();
    await c.read('a', ['NO1'], async () => 'kept');
    now = 30_000;
    assert.equal(await c.read('a', ['NO1'], failing), 'kept');
    await assert.rejects(c.read('b', ['NO1'], failing), /database away/);
    now = 60_000;
    await assert.rejects(c.read('a', ['NO1'], failing), /database away/);
  });

  test('forget drops every entry tagged with a changed series, and only those', async () => {
    now = 0;
    const c = cache();
    await c.read('a', ['NO1'], async () => 'no1');
    await c.read('b', ['DE-LU'], async () => 'de');
    c.forget(['NO1']);
    assert.equal(await c.read('a', ['NO1'], async () => 'new'), 'new');
    assert.equal(await c.read('b', ['DE-LU'], async () => 'other'), 'de');
  });

  test('stays bounded: past maxEntries the least recently read entry goes', async () => {
    now = 0;
    const c = cache();
    for (const k of ['a', 'b', 'c', 'd']) await c.read(k, [], async () => k);
    await c.read('a', [], failing); // read again: now the most recent
    await c.read('e', [], async () => 'e');
    assert.equal(c.size, 4);
    assert.equal(await c.read('a', [], failing), 'a', 'a recently read entry is kept');
    assert.equal(await c.read('e', [], failing), 'e', 'the newest entry is kept');
    await assert.rejects(c.read('b', [], failing), /database away/, 'the least recently read one went');
  });

  test('stays bounded by weight: heavy values push out others, one heavier than all is not kept', async () => {
    now = 0;
    const c = createReadCache<string>({
      freshMs: 5_000,
      staleMs: 60_000,
      maxEntries: 1_000,
      maxWeight: 10,
      weigh: (value) => value.length,
      now: () => now,
    });
    for (const k of ['aaaa', 'bbbb', 'cccc']) await c.read(k, [], async () => k);
    assert.ok(c.weight <= 10, `weight ${c.weight}`);
    assert.equal(c.size, 2);
    await assert.rejects(c.read('aaaa', [], failing), /database away/);
    assert.equal(await c.read('x', [], async () => 'x'.repeat(11)), 'x'.repeat(11), 'served all the same');
    await assert.rejects(c.read('x', [], failing), /database away/, 'but not kept');
    assert.equal(await c.read('cccc', [], failing), 'cccc');
  });

  test('20,000 distinct keys hold no more than maxEntries', async () => {
    now = 0;
    const c = cache();
    for (let i = 0; i < 20_000; i++) await c.read(`day ${i}`, ['NO1'], async () => String(i));
    assert.equal(c.size, 4);
  });

  test('with a change token, an entry is fresh only while the token is the one it was stored under', async () => {
    now = 0;
    let token = 'v1';
    const c = createReadCache<string>({
      freshMs: 3_600_000,
      staleMs: 60_000,
      maxEntries: 4,
      now: () => now,
      token: () => token,
    });
    await c.read('a', [], async () => 'first');
    assert.equal(await c.read('a', [], async () => 'second'), 'first');
    token = 'v2'; // another process wrote
    assert.equal(await c.read('a', [], async () => 'second'), 'second');
  });

  test('freshMs 0 turns it off', async () => {
    const off = createReadCache<string>({ freshMs: 0, staleMs: 60_000, maxEntries: 4, now: () => 0 });
    await off.read('a', [], async () => 'x');
    await assert.rejects(off.read('a', [], failing), /database away/);
    assert.equal(off.size, 0);
  });
});

describe('read cache: days', () => {
  let now = 0;
  const dayCache = () =>
    createReadCache<SeriesDay[]>({
      freshMs: 5_000,
      staleMs: 60_000,
      maxEntries: 1_000,
      maxWeight: 1_000_000,
      weigh: (days) => days.reduce((points, day) => points + 1 + day.prices.length, 0),
      now: () => now,
    });
  const loaded = (date: string) => async () => [quarterHours(date, 96)];

  test('a day asked again and again is handed out as the same objects', async () => {
    now = 0;
    const c = dayCache();
    const first = await c.read('NO1|2026-11-22', ['NO1'], loaded('2026-11-22'));
    assert.equal(await c.read('NO1|2026-11-22', ['NO1'], loaded('2026-11-22')), first);
    assert.equal(c.weight, 97);
  });

  test('a day read long after, past many others, comes back exact without loading again', async () => {
    now = 0;
    const c = dayCache();
    const first = await c.read('NO1|2026-01-01', ['NO1'], loaded('2026-01-01'));
    for (let d = 2; d <= 28; d++) {
      await c.read(`NO1|2026-02-${d}`, ['NO1'], loaded(`2026-02-${String(d).padStart(2, '0')}`));
      await c.read(`SE3|2026-02-${d}`, ['SE3'], loaded(`2026-02-${String(d).padStart(2, '0')}`));
    }
    const again = await c.read('NO1|2026-01-01', ['NO1'], () => Promise.reject(new Error('loaded again')));
    assert.deepEqual(again, first);
    assert.deepEqual(again, [quarterHours('2026-01-01', 96)]);
  });

  test('packed days are served stale while the store fails, and forgotten with their series', async () => {
    now = 0;
    const c = dayCache();
    await c.read('NO1|2026-01-01', ['NO1'], loaded('2026-01-01'));
    for (let d = 0; d < 40; d++) await c.read(`SE3|${d}`, ['SE3'], loaded('2026-02-01'));
    now = 30_000;
    const failing = () => Promise.reject(new Error('database away'));
    assert.deepEqual(await c.read('NO1|2026-01-01', ['NO1'], failing), [quarterHours('2026-01-01', 96)]);
    c.forget(['NO1']);
    await assert.rejects(c.read('NO1|2026-01-01', ['NO1'], failing), /database away/);
    assert.equal(c.size, 40);
  });
});
