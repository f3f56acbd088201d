import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createReadCache } from './read-cache.js';

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

  test('stays bounded: past maxEntries the oldest half goes', async () => {
    now = 0;
    const c = cache();
    for (const k of ['a', 'b', 'c', 'd', 'e']) await c.read(k, [], async () => k);
    assert.ok(c.size <= 4, `size ${c.size}`);
    assert.equal(await c.read('e', [], failing), 'e', 'the newest entry is kept');
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
