/** The store behaviour suite (store-behaviour.ts) on the embedded engine: SQLite in memory. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { storeBehaviour } from './store-behaviour.js';

storeBehaviour('SQLite', () => openEmbeddedStores(':memory:'));

describe('SQLite: last-used times while another process holds the write lock', () => {
  test('are kept, not waited for (which would block every request), and written with the next batch', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pricepoint-lock-'));
    const file = join(dir, 'pricepoint.db');
    const stores = await openEmbeddedStores(file);
    // Another connection to the file, as `pricepoint import` in another process holds it.
    const other = new SQLite(file);
    try {
      const record = {
        id: 'key_lock',
        hash: 'a'.repeat(64),
        last4: 'abcd',
        name: 'locked',
        tier: 'free',
        scopes: ['read' as const],
        createdAt: 1,
        expiresAt: null,
        revokedAt: null,
        lastUsedAt: null,
      };
      await stores.keys.insert(record);
      other.exec('begin immediate');
      // Were it to wait, this thread would sit in the busy timeout (5 s) and then fail: the lock
      // holder is this same thread and cannot let go meanwhile.
      await stores.keys.recordLastUsed(new Map([['key_lock', 1_000]]));
      assert.equal((await stores.keys.get('key_lock'))?.lastUsedAt, null, 'nothing written under the lock');
      other.exec('commit');
      await stores.keys.recordLastUsed(new Map([['key_lock', 500]]));
      assert.equal(
        (await stores.keys.get('key_lock'))?.lastUsedAt,
        1_000,
        'the kept time is written with the next batch (the later of the two)',
      );
    } finally {
      other.close();
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
