/** The store behaviour suite (store-behaviour.ts) on the embedded engine: SQLite in memory; then what only SQLite does. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { dayBounds } from '../../src/domain/time/days.js';
import { migrateSqlite, openSqlite } from '../../src/stores/sqlite/database.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { SqliteKeyStore } from '../../src/stores/sqlite/key-store.js';
import { sqliteEngine } from '../../src/stores/sqlite/sql-engine.js';
import { sqliteWriter } from '../../src/stores/sqlite/write-lock.js';
import type { KeyRecord } from '../../src/stores/types.js';
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

describe('SQLite: a revocation accepted while another process holds the write lock', () => {
  const key = (id: string, hash: string): KeyRecord => ({
    id,
    hash: hash.repeat(64),
    last4: 'abcd',
    name: id,
    tier: 'free',
    scopes: ['read'],
    createdAt: 1,
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
  });

  test('is in force at once, wins over a rotation that comes before it is written, and is written later', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pricepoint-revoking-'));
    const file = join(dir, 'pricepoint.db');
    const { db, raw } = openSqlite(file);
    await migrateSqlite(db);
    // A writer that gives up on the lock after 50 ms instead of 30 s, so the revocation's first write fails.
    const writer = sqliteWriter(raw, 50);
    const keys = new SqliteKeyStore(db, sqliteEngine(raw, writer));
    const other = new SQLite(file);
    const written = () =>
      (
        other.prepare('select revoked_at from api_keys where id = ?').get('key_old') as {
          revoked_at: number | null;
        }
      ).revoked_at;
    try {
      await keys.insert(key('key_old', 'a'));
      other.exec('begin immediate');
      await assert.rejects(keys.revoke('key_old', 1_000), /locked/, 'not confirmed while the lock is held');
      assert.equal((await keys.get('key_old'))?.revokedAt, 1_000, 'yet refused from now on');
      other.exec('commit');
      // The lock is free, and the revocation is not written yet (it is tried again every second).
      assert.equal(written(), null);
      assert.equal(
        await keys.rotate('key_old', key('key_new', 'b'), 5_000),
        false,
        'no rotation of a revoked key',
      );
      assert.equal(await keys.get('key_new'), undefined, 'and no successor stored');
      assert.equal((await keys.get('key_old'))?.expiresAt, null, 'nor the old expiry touched');
      while (written() === null) await sleep(50);
      assert.equal(written(), 1_000, 'written in the background, with the time it was asked');
    } finally {
      other.close();
      await db.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite: day provenance from a file database', () => {
  test('a staged import (a large file) and a bounded one (an upload) record their days as they commit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pricepoint-provenance-'));
    const stores = await openEmbeddedStores(join(dir, 'pricepoint.db'));
    try {
      await stores.prices.upsertSeries({
        symbol: 'NO1',
        name: 'Oslo',
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: 'Europe/Oslo',
        resolution: 'PT1H',
      });
      const hours = (date: string) => {
        const { start, end } = dayBounds(date, 'Europe/Oslo');
        const out = [];
        for (let t = start; t < end; t += 3_600_000) out.push({ symbol: 'NO1', start: t, price: '1' });
        return out;
      };
      const spring = hours('2026-03-29');
      assert.equal(spring.length, 23);
      const staged = await stores.prices.beginPriceWrites({ provenance: { source: 'file', fetchedAt: 7 } });
      await staged.write(spring);
      await staged.write(hours('2026-03-30').slice(1));
      await staged.commit();
      const bounded = await stores.prices.beginPriceWrites({
        small: true,
        provenance: { source: 'upload', fetchedAt: 8 },
      });
      await bounded.write(hours('2026-03-31'));
      await bounded.commit();
      assert.deepEqual(await stores.prices.dayProvenance?.('NO1', '2026-03-01', '2026-03-31'), [
        { date: '2026-03-29', source: 'file', fetchedAt: 7, complete: true },
        { date: '2026-03-30', source: 'file', fetchedAt: 7, complete: false },
        { date: '2026-03-31', source: 'upload', fetchedAt: 8, complete: true },
      ]);
    } finally {
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite: a full disk, as /readyz reports it', () => {
  test('stays reported after a failed upload while only bookkeeping writes succeed, until a price write does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pricepoint-full-'));
    const raw = new SQLite(join(dir, 'full.db'));
    const apart = new SQLite(join(dir, 'full.db'));
    try {
      raw.pragma('journal_mode = WAL');
      raw.exec(
        'create table prices (v text); create table api_keys (id text primary key, last_used_at integer)',
      );
      raw.prepare('insert into api_keys values (?, null)').run('key_a');
      // A database that may not grow past its pages: SQLite answers SQLITE_FULL, as on a full disk.
      const pages = raw.pragma('page_count', { simple: true }) as number;
      apart.pragma(`max_page_count = ${pages + 2}`);
      const writer = sqliteWriter(raw, 50);
      const upload = (rows: number) =>
        writer.runApart(apart, async () => {
          const insert = apart.prepare('insert into prices values (?)');
          for (let i = 0; i < rows; i++) insert.run('x'.repeat(500));
        });
      await assert.rejects(upload(2_000), { code: 'SQLITE_FULL' });
      assert.equal(writer.diskFull(), true, 'the failed upload is reported');
      // What a running server writes on its own meanwhile: last-used times (no new page needed).
      assert.ok(
        writer.tryRun(() => raw.prepare('update api_keys set last_used_at = 1 where id = ?').run('key_a')),
      );
      await writer.run(() => raw.prepare('update api_keys set last_used_at = 2 where id = ?').run('key_a'));
      assert.equal(writer.diskFull(), true, 'a small write that fits says nothing of room for prices');
      apart.pragma('max_page_count = 1000000');
      await upload(2_000);
      assert.equal(writer.diskFull(), false, 'a price write that succeeds clears it');
    } finally {
      raw.close();
      apart.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite: a database an older release left', () => {
  test('gains the key fields and the audit log, keeps its keys, and a changed limit moves the key-change counter', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pricepoint-old-'));
    const file = join(dir, 'pricepoint.db');
    try {
      // The schema as it was before per-key limits, with a key in it.
      const old = openSqlite(file);
      await migrateSqlite(old.db, '0006_webhook_endpoint_due');
      old.raw
        .prepare(
          "insert into api_keys (id, hash, last4, name, tier, scopes, created_at) values ('key_old', 'h', 'abcd', 'old', 'free', 'read', 1)",
        )
        .run();
      await old.db.destroy();

      const stores = await openEmbeddedStores(file);
      try {
        const record = await stores.keys.get('key_old');
        assert.equal(record?.name, 'old');
        assert.equal(record?.limits, null);
        assert.equal(record?.allowedAddresses, null);
        assert.equal(record?.customerRef, null);
        const raw = new SQLite(file);
        const version = () =>
          raw.prepare('select version from key_changes where id = 1').pluck().get() as number;
        const before = version();
        await stores.keys.update('key_old', { limits: [{ name: 'minute', limit: 5, windowSeconds: 60 }] });
        assert.equal(version(), before + 1, 'servers polling the counter forget the cached key');
        await stores.keys.update('key_old', { allowedAddresses: ['192.0.2.0/24'] });
        assert.equal(version(), before + 2);
        await stores.keys.update('key_old', { customerRef: 'C-1' });
        assert.equal(version(), before + 2, 'owner fields are not in the cached check');
        raw.close();
        await stores.audit.append({
          time: 2,
          actor: 'cli',
          address: null,
          action: 'keys.update',
          target: 'key_old',
          status: null,
          code: null,
        });
        assert.equal((await stores.audit.list({ limit: 5 })).length, 1);
      } finally {
        await stores.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
