/**
 * Secrets (SECURITY.md): keys are looked up without timing leaks, an optional server secret makes the
 * stored hashes HMACs, and no key reaches the metrics.
 *
 * Timing: a key is never compared with anything secret. The server computes the key's SHA-256 (or
 * HMAC) and asks the store for a record with that hash, so what an attacker could time is an index
 * lookup of a digest they cannot steer byte by byte; the in-process cache is a map keyed by another
 * digest. The test below holds the store to that: whatever the request, the key store is only
 * ever given digests, never a key or part of one. (How long an answer takes is not asserted here:
 * timings belong in benchmarks, and a lookup by digest has nothing for them to find.)
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { generateKey, keyFromRandom } from '../../src/domain/keys/key-format.js';
import { composeApp } from '../../src/server/compose.js';
import { createKeyService } from '../../src/services/key-service.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { KeyStore, Stores } from '../../src/stores/types.js';

const SECRET = 'the operator secret of this test';

/** The part of a key after `pp_<kind>_`: a copy of it anywhere is a leak. */
const secretOf = (key: string) => key.replace(/^pp_[a-z]+_/, '');

/** A key store that records every argument it is given. */
function recording(store: KeyStore, calls: unknown[]): KeyStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(...args);
        return value.apply(target, args);
      };
    },
  });
}

describe('keys and the server secret', () => {
  let dir: string;
  let stores: Stores;
  let app: FastifyInstance;
  let live: string;
  let admin: string;
  const calls: unknown[] = [];
  const logs: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pricepoint-secrets-'));
    stores = await openEmbeddedStores(join(dir, 'pricepoint.db'));
    const config = loadConfig(
      { PRICEPOINT_LOG_LEVEL: 'info', PRICEPOINT_KEY_SECRET: SECRET },
      { databasePath: join(dir, 'pricepoint.db'), devData: false },
    );
    const keys = createKeyService({
      keys: stores.keys,
      tiers: config.tiers,
      keySecret: config.keySecret,
      clock: Date.now,
    });
    live = (await keys.create({ name: 'client', tier: 'free' })).key;
    admin = (await keys.create({ name: 'operator', tier: 'pro', scopes: ['admin'] })).key;
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    });
    app = (
      await composeApp(config, { stores: { ...stores, keys: recording(stores.keys, calls) }, logStream })
    ).app;
    await app.ready();
  });
  after(async () => {
    await app.close();
    await stores.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the key store is given digests only, never a key or a piece of one', async () => {
    const unknown = generateKey('live');
    // A key one character off a real one, checksum fixed: the closest an attacker can come.
    const near = keyFromRandom(
      'live',
      `${secretOf(live).slice(0, 21)}${secretOf(live)[21] === 'a' ? 'b' : 'a'}`,
    );
    const sent = [live, admin, unknown, near, `${live}x`, live.slice(0, -1)];
    for (const key of sent) {
      await app.inject({ method: 'GET', url: '/api/v1/prices/today', headers: { 'x-api-key': key } });
      await app.inject({ method: 'GET', url: '/api/v1/keys', headers: { authorization: `Bearer ${key}` } });
    }
    const asked = JSON.stringify(calls);
    for (const key of sent) {
      assert.equal(
        asked.includes(secretOf(key).slice(0, 12)),
        false,
        `the store never saw ${key.slice(0, 8)}…`,
      );
    }
    const hashes = calls.filter(
      (arg): arg is string => typeof arg === 'string' && /^[0-9a-f]{64}$/.test(arg),
    );
    for (const key of [live, unknown, near]) {
      const hmac = createHmac('sha256', SECRET).update(key).digest('hex');
      assert.ok(hashes.includes(hmac), `${key.slice(0, 8)}… was looked up by its HMAC`);
    }
  });

  test('the database holds HMACs of the keys, not SHA-256 digests and not the keys', () => {
    const db = new SQLite(join(dir, 'pricepoint.db'), { readonly: true });
    try {
      const tables = db
        .prepare("select name from sqlite_master where type = 'table'")
        .all()
        .map((row) => (row as { name: string }).name);
      const dump = tables
        .map((name) => JSON.stringify(db.prepare(`select * from "${name}"`).all()))
        .join('\n');
      for (const key of [live, admin]) {
        assert.equal(dump.includes(secretOf(key)), false, 'no key in clear in any table');
        const hmac = createHmac('sha256', SECRET).update(key).digest('hex');
        const sha = createHash('sha256').update(key).digest('hex');
        assert.ok(dump.includes(hmac), 'the stored hash is the HMAC under the server secret');
        assert.equal(dump.includes(sha), false, 'and not the plain SHA-256, which anyone could compute');
      }
    } finally {
      db.close();
    }
  });

  test('a key is refused by a server with another secret over the same database', async () => {
    const other = (
      await composeApp(
        loadConfig(
          { PRICEPOINT_LOG_LEVEL: 'silent', PRICEPOINT_KEY_SECRET: 'another secret of this test' },
          { databasePath: join(dir, 'pricepoint.db'), devData: false },
        ),
        { stores },
      )
    ).app;
    try {
      const here = await app.inject({ method: 'GET', url: '/api/v1/series', headers: { 'x-api-key': live } });
      const there = await other.inject({
        method: 'GET',
        url: '/api/v1/series',
        headers: { 'x-api-key': live },
      });
      assert.equal(here.statusCode, 200, 'the key works under its secret');
      assert.equal(there.statusCode, 401, 'and not under another one');
    } finally {
      await other.close();
    }
  });

  test('the metrics, the logs and every answer hold no key after requests that carry keys everywhere', async () => {
    const keys = [live, admin, generateKey('live'), generateKey('test')];
    const bodies: string[] = [];
    for (const key of keys) {
      for (const request of [
        { url: '/api/v1/prices/today', headers: { 'x-api-key': key } },
        { url: `/api/v1/prices/today?api_key=${key}`, headers: {} },
        { url: `/api/v1/series/${key}`, headers: { 'x-api-key': key } },
        { url: '/api/v1/keys', headers: { authorization: `Bearer ${key}` } },
        { url: '/metrics', headers: { 'x-api-key': key } },
      ]) {
        const answer = await app.inject({ method: 'GET', ...request });
        bodies.push(answer.body, JSON.stringify(answer.headers));
      }
    }
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200, 'the metrics are served');
    assert.match(metrics.body, /pricepoint_http_requests_total\{/, 'and count the requests just made');
    for (const key of keys) {
      const secret = secretOf(key);
      assert.equal(metrics.body.includes(secret), false, 'no key in the metrics');
      const leaked = logs.find((line) => line.includes(secret));
      assert.equal(leaked, undefined, `no key in the log: ${leaked}`);
      assert.equal(
        bodies.some((text) => text.includes(secret)),
        false,
        'no key in any answer',
      );
    }
  });
});
