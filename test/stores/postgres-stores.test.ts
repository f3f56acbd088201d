/**
 * The store behaviour suite (store-behaviour.ts) on the scale-out engine: every test opens stores
 * in a fresh schema `pp_test_<random>` and drops it with CASCADE when it closes them. Skipped with
 * the reason when PostgreSQL is unreachable, except on CI, where that fails (helpers/postgres.ts).
 */
import assert from 'node:assert/strict';
import { createConnection, createServer, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createDb, createPool, migratePostgres } from '../../src/stores/postgres/database.js';
import { openPostgresStores } from '../../src/stores/postgres/index.js';
import { openPostgresStoresInFreshSchema, postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';
import { storeBehaviour } from './store-behaviour.js';

const probe = await postgresSchemaUrl();
const skip = 'skip' in probe ? probe.skip : false;
const probeUrl = () => ('skip' in probe ? '' : probe.url);

describeOrSkip('PostgreSQL stores', { skip }, () => {
  storeBehaviour('PostgreSQL', openPostgresStoresInFreshSchema);

  describe('PostgreSQL specifics', () => {
    test('a schema an older release left gains the key fields and the audit log, and keeps its keys', async () => {
      const target = await postgresSchemaUrl();
      if ('skip' in target) throw new Error(target.skip);
      try {
        const db = createDb(createPool(target.url, { schema: target.schema, max: 1 }));
        try {
          await migratePostgres(db, target.schema, '0005_webhook_endpoint_due');
          await sql`insert into api_keys (id, hash, last4, name, tier, scopes, created_at) values ('key_old', 'h', 'abcd', 'old', 'free', 'read', 1)`.execute(
            db,
          );
        } finally {
          await db.destroy();
        }
        const stores = await openPostgresStores(target.url, { schema: target.schema });
        try {
          const record = await stores.keys.get('key_old');
          assert.equal(record?.name, 'old');
          assert.equal(record?.limits, null);
          assert.equal(record?.allowedAddresses, null);
          assert.equal(await stores.keys.update('key_old', { allowedAddresses: ['2001:db8::/32'] }), true);
          assert.deepEqual((await stores.keys.get('key_old'))?.allowedAddresses, ['2001:db8::/32']);
          await stores.audit.append({
            time: 2,
            actor: 'cli',
            address: null,
            action: 'keys.update',
            target: 'key_old',
            status: null,
            code: null,
          });
          assert.equal((await stores.audit.list({ limit: 5 }))[0]?.target, 'key_old');
        } finally {
          await stores.close();
        }
      } finally {
        await target.drop();
      }
    });

    test('migrations run once when several instances open one schema at the same time', async () => {
      const target = await postgresSchemaUrl();
      if ('skip' in target) throw new Error(target.skip);
      try {
        const opened = await Promise.all(
          Array.from({ length: 4 }, () => openPostgresStores(target.url, { schema: target.schema })),
        );
        await opened[0]!.prices.upsertSeries({
          symbol: 'NO1',
          name: 'Oslo',
          kind: 'electricity',
          currency: 'EUR',
          unit: 'MWh',
          timezone: 'Europe/Oslo',
          resolution: 'PT15M',
        });
        for (const stores of opened) assert.equal((await stores.prices.listSeries()).length, 1);
        await Promise.all(opened.map((s) => s.close()));
      } finally {
        await target.drop();
      }
    });

    test('opening stores succeeds while other schemas on the same database are being dropped', async () => {
      // Test files and instances share one database; a schema dropped by one of them while another
      // migrates must not fail that migration (it did when migrations read the whole catalog).
      const client = new pg.Client({ connectionString: probeUrl() });
      await client.connect();
      let churning = true;
      const churn = (async () => {
        for (let n = 0; churning; n++) {
          const doomed = `pp_test_churn_${process.pid}_${n}`;
          await client.query(`create schema ${doomed}`);
          await client.query(`create table ${doomed}.t (id serial primary key, a int, b text)`);
          await client.query(`drop schema ${doomed} cascade`);
        }
      })();
      try {
        for (let round = 0; round < 12; round++) {
          const stores = await openPostgresStoresInFreshSchema();
          await stores.close();
        }
      } finally {
        churning = false;
        await churn;
        await client.end();
      }
    });

    test('an unreachable database is a rejected promise, not a crash or a hang', async () => {
      // Port 1 on loopback: nothing listens, so the connection is refused at once.
      await assert.rejects(openPostgresStores('postgres://postgres@127.0.0.1:1/test'));
    });

    test('a connection lost mid-import or while idle is a rejected call, never a crash', async () => {
      const target = await postgresSchemaUrl();
      if ('skip' in target) throw new Error(target.skip);
      const proxy = await cuttableProxy(new URL(target.url));
      const url = new URL(target.url);
      url.host = `127.0.0.1:${proxy.port}`;
      const stores = await openPostgresStores(url.href, { schema: target.schema });
      try {
        await stores.prices.upsertSeries({
          symbol: 'NO1',
          name: 'Oslo',
          kind: 'electricity',
          currency: 'EUR',
          unit: 'MWh',
          timezone: 'Europe/Oslo',
          resolution: 'PT15M',
        });
        const session = await stores.prices.beginPriceWrites();
        await session.write([{ symbol: 'NO1', start: 0, price: '1' }]);
        await proxy.cut(); // the import's client is checked out; the pool's others sit idle
        await assert.rejects(session.write([{ symbol: 'NO1', start: 1, price: '2' }]));
        await session.rollback();
        await assert.rejects(stores.prices.ping(), 'nothing listens any more');
        await assert.rejects(stores.keys.get('k1'), 'nothing listens any more');
      } finally {
        await stores.close();
        await target.drop();
      }
    });
  });
});

/** A TCP proxy to PostgreSQL whose connections can all be cut at once, and which then refuses new ones. */
async function cuttableProxy(target: URL): Promise<{ port: number; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    cut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
