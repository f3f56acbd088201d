/**
 * The behaviour every engine's `PriceStore` and `KeyStore` must show (docs/scale-out.md: one
 * behaviour suite for both storage engines). Not a test file itself: sqlite-stores.test.ts and
 * postgres-stores.test.ts run it, each against its engine. Every test opens fresh, empty stores.
 *
 * @example storeBehaviour('SQLite', () => openEmbeddedStores(':memory:'))
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dayBounds } from '../../src/domain/time/days.js';
import type {
  AuditStore,
  ImportPoint,
  InvitationStore,
  KeyRecord,
  KeyStore,
  PriceStore,
  Series,
  StoredPrice,
  WriteProvenance,
} from '../../src/stores/types.js';
import { invitationBehaviour } from './invitation-behaviour.js';

export interface OpenStores {
  readonly prices: PriceStore;
  readonly keys: KeyStore;
  readonly audit?: AuditStore;
  readonly invitations?: InvitationStore;
  close(): Promise<void>;
}

/** 2026-11-22T00:00:00Z: starts are real epoch ms, far past 2^31. */
const T0 = Date.parse('2026-11-22T00:00:00Z');
const Q = 15 * 60_000;
const at = (n: number): number => T0 + n * Q;

function series(symbol: string, overrides: Partial<Series> = {}): Series {
  return {
    symbol,
    name: `${symbol} day-ahead`,
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: 'Europe/Oslo',
    resolution: 'PT15M',
    ...overrides,
  };
}

function key(id: string, overrides: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id,
    hash: `hash-of-${id}`,
    last4: id.slice(-4).padStart(4, '0'),
    name: `key ${id}`,
    tier: 'free',
    scopes: ['read'],
    createdAt: T0,
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    limits: null,
    allowedAddresses: null,
    customerRef: null,
    contact: null,
    ...overrides,
  };
}

const points = (symbol: string, list: StoredPrice[]): ImportPoint[] => list.map((p) => ({ symbol, ...p }));

export function storeBehaviour(name: string, open: () => Promise<OpenStores>): void {
  /** Runs `body` on fresh stores and closes them whatever happens. */
  async function withStores(body: (stores: OpenStores) => Promise<void>): Promise<void> {
    const stores = await open();
    try {
      await body(stores);
    } finally {
      await stores.close();
    }
  }

  /** Fresh stores with the series NO1 and SE3. */
  function withSeries(body: (prices: PriceStore) => Promise<void>): Promise<void> {
    return withStores(async ({ prices }) => {
      await prices.upsertSeries(series('NO1'));
      await prices.upsertSeries(series('SE3', { timezone: 'Europe/Stockholm' }));
      await body(prices);
    });
  }

  describe(`${name}: series`, () => {
    test('upsertSeries stores a series that getSeries returns; an unknown symbol is undefined', () =>
      withStores(async ({ prices }) => {
        await prices.upsertSeries(series('NO1'));
        assert.deepEqual(await prices.getSeries('NO1'), series('NO1'));
        assert.equal(await prices.getSeries('NO2'), undefined);
      }));

    test('upsertSeries of an existing symbol replaces its metadata and keeps its prices', () =>
      withStores(async ({ prices }) => {
        await prices.upsertSeries(series('NO1'));
        await prices.upsertPrices('NO1', [{ start: at(0), price: '1.5' }]);
        await prices.upsertSeries(series('NO1', { name: 'Oslo', unit: 'kWh', resolution: 'PT1H' }));
        assert.deepEqual(
          await prices.getSeries('NO1'),
          series('NO1', { name: 'Oslo', unit: 'kWh', resolution: 'PT1H' }),
        );
        assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(1)), [{ start: at(0), price: '1.5' }]);
      }));

    test('listSeries orders by symbol in code-point order, whatever the database locale', () =>
      withStores(async ({ prices }) => {
        for (const symbol of ['NO_4', 'NO1', 'NO.3', 'B', 'NO-2', 'A9'])
          await prices.upsertSeries(series(symbol));
        const listed = await prices.listSeries();
        assert.deepEqual(
          listed.map((s) => s.symbol),
          ['A9', 'B', 'NO-2', 'NO.3', 'NO1', 'NO_4'],
        );
        assert.deepEqual(listed[0], series('A9'));
      }));

    test('symbols are stored as given: lookups are exact (callers canonicalise)', () =>
      withStores(async ({ prices }) => {
        await prices.upsertSeries(series('NO1'));
        assert.equal(await prices.getSeries('no1'), undefined);
      }));
  });

  describe(`${name}: prices`, () => {
    test('prices come back exactly as ingested, as text, with starts as numbers', () =>
      withSeries(async (prices) => {
        const stored = ['41.270', '-0.5', '123456789012345', '0', '-0.000001', '1e3'].map((price, n) => ({
          start: at(n),
          price,
        }));
        assert.equal(await prices.upsertPrices('NO1', stored), stored.length);
        const read = await prices.pricesBetween('NO1', at(0), at(100));
        assert.deepEqual(read, stored);
        for (const point of read) {
          assert.equal(typeof point.start, 'number', 'start is a JS number');
          assert.equal(typeof point.price, 'string', 'price is text');
        }
      }));

    test('pricesBetween is half-open [from, to), ordered by start, and only of its series', () =>
      withSeries(async (prices) => {
        await prices.upsertPrices(
          'NO1',
          [3, 0, 2, 1, 4].map((n) => ({ start: at(n), price: String(n) })),
        );
        await prices.upsertPrices('SE3', [{ start: at(2), price: '99' }]);
        assert.deepEqual(await prices.pricesBetween('NO1', at(1), at(4)), [
          { start: at(1), price: '1' },
          { start: at(2), price: '2' },
          { start: at(3), price: '3' },
        ]);
        assert.deepEqual(await prices.pricesBetween('NO1', at(1), at(1)), []);
        assert.deepEqual(await prices.pricesBetween('NO1', at(5), at(9)), []);
        assert.deepEqual(await prices.pricesBetween('XX', at(0), at(9)), []);
      }));

    test('latestPrice is the greatest start in [from, at], both ends included', () =>
      withSeries(async (prices) => {
        await prices.upsertPrices(
          'NO1',
          [0, 2, 4].map((n) => ({ start: at(n), price: String(n) })),
        );
        await prices.upsertPrices('SE3', [{ start: at(3), price: '99' }]);
        assert.deepEqual(await prices.latestPrice('NO1', at(3), at(0)), { start: at(2), price: '2' });
        assert.deepEqual(
          await prices.latestPrice('NO1', at(4), at(0)),
          { start: at(4), price: '4' },
          'at included',
        );
        assert.deepEqual(
          await prices.latestPrice('NO1', at(9), at(4)),
          { start: at(4), price: '4' },
          'from included',
        );
        assert.equal(await prices.latestPrice('NO1', at(3), at(3)), undefined, 'nothing in [from, at]');
        assert.equal(await prices.latestPrice('NO1', at(-1), at(-9)), undefined, 'nothing before the first');
        assert.equal(await prices.latestPrice('XX', at(9), at(0)), undefined, 'unknown series');
      }));

    test('coverage is the first and last start, undefined without prices', () =>
      withSeries(async (prices) => {
        assert.equal(await prices.coverage('NO1'), undefined);
        assert.equal(await prices.coverage('XX'), undefined);
        await prices.upsertPrices(
          'NO1',
          [7, 2, 5].map((n) => ({ start: at(n), price: '1' })),
        );
        await prices.upsertPrices('SE3', [{ start: at(1), price: '1' }]);
        assert.deepEqual(await prices.coverage('NO1'), { first: at(2), last: at(7) });
      }));

    test('upsertPrices replaces a stored interval, keeps the others, and returns the count', () =>
      withSeries(async (prices) => {
        await prices.upsertPrices('NO1', [
          { start: at(0), price: '1' },
          { start: at(1), price: '2' },
        ]);
        assert.equal(await prices.upsertPrices('NO1', [{ start: at(1), price: '2.50' }]), 1);
        assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(9)), [
          { start: at(0), price: '1' },
          { start: at(1), price: '2.50' },
        ]);
      }));

    test('upsertPrices of an unknown series rejects and writes nothing', () =>
      withSeries(async (prices) => {
        await assert.rejects(prices.upsertPrices('XX', [{ start: at(0), price: '1' }]));
        assert.equal(await prices.coverage('XX'), undefined);
      }));

    test('upsertPrices with the same interval twice keeps the last point', () =>
      withSeries(async (prices) => {
        await prices.upsertPrices('NO1', [
          { start: at(0), price: '1' },
          { start: at(0), price: '3' },
        ]);
        assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(9)), [{ start: at(0), price: '3' }]);
      }));
  });

  describe(`${name}: import sessions`, () => {
    for (const small of [false, true]) {
      const kind = small ? 'a small import' : 'an import';

      test(`${kind}: points are seen only after commit`, () =>
        withSeries(async (prices) => {
          const session = await prices.beginPriceWrites({ small });
          await session.write(points('NO1', [{ start: at(0), price: '1.10' }]));
          await session.write([
            { symbol: 'NO1', start: at(1), price: '2' },
            { symbol: 'SE3', start: at(1), price: '3' },
          ]);
          assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(9)), [], 'nothing before commit');
          await session.commit();
          assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(9)), [
            { start: at(0), price: '1.10' },
            { start: at(1), price: '2' },
          ]);
          assert.deepEqual(await prices.pricesBetween('SE3', at(0), at(9)), [{ start: at(1), price: '3' }]);
        }));

      test(`${kind}: rollback leaves nothing, and may be called twice`, () =>
        withSeries(async (prices) => {
          await prices.upsertPrices('NO1', [{ start: at(0), price: '1' }]);
          const session = await prices.beginPriceWrites({ small });
          await session.write(
            points('NO1', [
              { start: at(0), price: '5' },
              { start: at(1), price: '6' },
            ]),
          );
          await session.rollback();
          await session.rollback();
          assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(9)), [{ start: at(0), price: '1' }]);
        }));

      test(`${kind}: a batch with an unknown series fails, and rollback leaves nothing`, () =>
        withSeries(async (prices) => {
          const session = await prices.beginPriceWrites({ small });
          await session.write(points('NO1', [{ start: at(0), price: '1' }]));
          // A session may report the bad batch when it is written or when it is committed.
          await assert.rejects(async () => {
            await session.write([
              { symbol: 'NO1', start: at(1), price: '2' },
              { symbol: 'XX', start: at(2), price: '3' },
            ]);
            await session.commit();
          });
          await session.rollback();
          assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(9)), []);
          // The store is still usable afterwards.
          assert.equal(await prices.upsertPrices('NO1', [{ start: at(3), price: '4' }]), 1);
        }));

      test(`${kind}: two imports in sequence both land; the second replaces shared intervals`, () =>
        withSeries(async (prices) => {
          const first = await prices.beginPriceWrites({ small });
          await first.write(
            points('NO1', [
              { start: at(0), price: '1' },
              { start: at(1), price: '2' },
            ]),
          );
          await first.commit();
          const second = await prices.beginPriceWrites({ small });
          await second.write(
            points('NO1', [
              { start: at(1), price: '20' },
              { start: at(2), price: '30' },
            ]),
          );
          await second.commit();
          assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(9)), [
            { start: at(0), price: '1' },
            { start: at(1), price: '20' },
            { start: at(2), price: '30' },
          ]);
        }));

      test(`${kind}: an interval written twice keeps the later point, within and across batches`, () =>
        withSeries(async (prices) => {
          const session = await prices.beginPriceWrites({ small });
          await session.write(
            points('NO1', [
              { start: at(0), price: '1' },
              { start: at(0), price: '2' },
            ]),
          );
          await session.write(points('NO1', [{ start: at(0), price: '3' }]));
          await session.commit();
          assert.deepEqual(await prices.pricesBetween('NO1', at(0), at(9)), [{ start: at(0), price: '3' }]);
        }));
    }

    test('one batch larger than a statement may bind (30,000 points) is written whole', () =>
      withSeries(async (prices) => {
        const many = Array.from({ length: 30_000 }, (_, n) => ({ start: at(n), price: `${n}.5` }));
        const session = await prices.beginPriceWrites();
        await session.write(points('NO1', many));
        await session.commit();
        assert.deepEqual(await prices.coverage('NO1'), { first: at(0), last: at(29_999) });
        assert.equal((await prices.pricesBetween('NO1', at(0), at(30_000))).length, 30_000);
        assert.deepEqual(await prices.latestPrice('NO1', at(12_345), at(0)), {
          start: at(12_345),
          price: '12345.5',
        });
      }));
  });

  describe(`${name}: day provenance`, () => {
    /** Every quarter hour of a local day in Oslo, or all but the last `short` of them. */
    const osloDay = (date: string, short = 0): ImportPoint[] => {
      const from = dayBounds(date, 'Europe/Oslo');
      const list: ImportPoint[] = [];
      for (let t = from.start; t < from.end; t += Q) list.push({ symbol: 'NO1', start: t, price: '1.5' });
      return list.slice(0, list.length - short);
    };
    const written = async (prices: PriceStore, list: ImportPoint[], provenance?: WriteProvenance) => {
      const session = await prices.beginPriceWrites(provenance && { provenance });
      await session.write(list);
      await session.commit();
    };
    const provenanceOf = (prices: PriceStore, from: string, to: string) => {
      assert.ok(prices.dayProvenance, 'the store records provenance');
      return prices.dayProvenance('NO1', from, to);
    };

    test('an import records each local day it wrote into, its source and time, and whether it is complete', () =>
      withSeries(async (prices) => {
        await written(prices, [...osloDay('2026-11-20'), ...osloDay('2026-11-21', 1)], {
          source: 'entsoe',
          fetchedAt: T0,
        });
        assert.deepEqual(await provenanceOf(prices, '2026-11-19', '2026-11-22'), [
          { date: '2026-11-20', source: 'entsoe', fetchedAt: T0, complete: true },
          { date: '2026-11-21', source: 'entsoe', fetchedAt: T0, complete: false },
        ]);
        // The missing quarter hour, written later by another source, completes the stored day.
        await written(prices, osloDay('2026-11-21').slice(-1), { source: 'backup', fetchedAt: T0 + 1 });
        assert.deepEqual(await provenanceOf(prices, '2026-11-21', '2026-11-21'), [
          { date: '2026-11-21', source: 'backup', fetchedAt: T0 + 1, complete: true },
        ]);
      }));

    test('completeness counts the intervals of DST days: 92 and 100 quarter hours', () =>
      withSeries(async (prices) => {
        const spring = osloDay('2026-03-29');
        const autumn = osloDay('2026-10-25');
        assert.equal(spring.length, 92);
        assert.equal(autumn.length, 100);
        await written(prices, [...spring, ...autumn.slice(0, 96)], { source: 'entsoe', fetchedAt: T0 });
        const days = await provenanceOf(prices, '2026-03-01', '2026-10-31');
        assert.deepEqual(
          days.map((d) => [d.date, d.complete]),
          [
            ['2026-03-29', true],
            ['2026-10-25', false],
          ],
          '96 of 100 quarter hours is not the whole autumn day',
        );
        await written(prices, autumn.slice(96), { source: 'entsoe', fetchedAt: T0 });
        assert.equal((await provenanceOf(prices, '2026-10-25', '2026-10-25'))[0]?.complete, true);
      }));

    test('a day a higher-ranked source wrote keeps its name when a lower one fills its gaps', () =>
      withSeries(async (prices) => {
        await written(prices, osloDay('2026-11-21', 4), { source: 'entsoe', fetchedAt: T0 });
        await written(prices, osloDay('2026-11-21').slice(-4), {
          source: 'backup',
          fetchedAt: T0 + 5,
          keep: ['entsoe'],
        });
        assert.deepEqual(await provenanceOf(prices, '2026-11-21', '2026-11-21'), [
          { date: '2026-11-21', source: 'entsoe', fetchedAt: T0 + 5, complete: true },
        ]);
      }));

    test('writes without a source are imports; a rolled-back import records nothing', () =>
      withSeries(async (prices) => {
        const before = Date.now();
        await prices.upsertPrices('NO1', osloDay('2026-11-20'));
        const [day] = await provenanceOf(prices, '2026-11-20', '2026-11-20');
        assert.equal(day?.source, 'import');
        assert.equal(day?.complete, true);
        assert.ok((day?.fetchedAt ?? 0) >= before);
        const session = await prices.beginPriceWrites({ provenance: { source: 'entsoe', fetchedAt: T0 } });
        await session.write(osloDay('2026-11-22'));
        await session.rollback();
        assert.deepEqual(await provenanceOf(prices, '2026-11-22', '2026-11-22'), []);
        assert.deepEqual(await prices.dayProvenance?.('SE3', '2026-11-01', '2026-11-30'), []);
      }));
  });

  describe(`${name}: keys`, () => {
    test('insert stores a record that findByHash and get return whole', () =>
      withStores(async ({ keys }) => {
        const record = key('k1', {
          scopes: ['read', 'write', 'admin'],
          tier: 'pro',
          expiresAt: T0 + 86_400_000,
          lastUsedAt: T0 + 1,
        });
        await keys.insert(record);
        assert.deepEqual(await keys.findByHash('hash-of-k1'), record);
        assert.deepEqual(await keys.get('k1'), record);
        assert.equal(await keys.findByHash('hash-of-k2'), undefined);
        assert.equal(await keys.get('k2'), undefined);
      }));

    test('insert of a second key with the same id or hash rejects', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('k1'));
        await assert.rejects(keys.insert(key('k1', { hash: 'other' })));
        await assert.rejects(keys.insert(key('k2', { hash: 'hash-of-k1' })));
        assert.equal((await keys.list()).length, 1);
      }));

    test('list orders by creation time, then by id in code-point order', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('kb', { createdAt: T0 + 2 }));
        await keys.insert(key('k_a', { createdAt: T0 + 1 }));
        await keys.insert(key('kA', { createdAt: T0 + 1 }));
        await keys.insert(key('k-c', { createdAt: T0 }));
        assert.deepEqual(
          (await keys.list()).map((k) => k.id),
          ['k-c', 'kA', 'k_a', 'kb'],
        );
      }));

    test('revoke marks a key revoked; revoking again keeps the first time; an unknown id is false', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('k1'));
        assert.equal(await keys.revoke('k1', T0 + 10), true);
        assert.equal(await keys.revoke('k1', T0 + 20), true);
        assert.equal((await keys.get('k1'))?.revokedAt, T0 + 10);
        assert.equal(await keys.revoke('nope', T0), false);
      }));

    test('setTier moves a key to another tier; an unknown id is false', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('k1'));
        assert.equal(await keys.setTier('k1', 'enterprise'), true);
        assert.equal((await keys.get('k1'))?.tier, 'enterprise');
        assert.equal(await keys.setTier('nope', 'pro'), false);
      }));

    test('update changes the named fields only, round-trips limits and addresses, and null clears them', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('key_u', { customerRef: 'C-1', contact: 'ops@example.com' }));
        const limits = [
          { name: 'minute', limit: 600, windowSeconds: 60 },
          { name: 'day', limit: 100_000, windowSeconds: 86_400 },
        ];
        assert.equal(
          await keys.update('key_u', { limits, allowedAddresses: ['192.0.2.0/24', '2001:db8::/32'] }),
          true,
        );
        assert.deepEqual(
          await keys.get('key_u'),
          key('key_u', {
            customerRef: 'C-1',
            contact: 'ops@example.com',
            limits,
            allowedAddresses: ['192.0.2.0/24', '2001:db8::/32'],
          }),
        );
        assert.equal(
          await keys.update('key_u', { limits: null, customerRef: null, expiresAt: T0 + 1, name: 'renamed' }),
          true,
        );
        assert.deepEqual(
          await keys.get('key_u'),
          key('key_u', {
            name: 'renamed',
            expiresAt: T0 + 1,
            contact: 'ops@example.com',
            allowedAddresses: ['192.0.2.0/24', '2001:db8::/32'],
          }),
        );
        assert.equal(await keys.update('key_missing', { name: 'x' }), false);
        assert.equal(await keys.update('key_missing', {}), false);
        assert.equal(await keys.update('key_u', {}), true);
      }));

    test('rotate stores the replacement and caps the old expiry at expiresBy, keeping an earlier one', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('open'));
        await keys.insert(key('early', { expiresAt: T0 + 100 }));
        await keys.insert(key('late', { expiresAt: T0 + 10_000 }));
        assert.equal(await keys.rotate('open', key('open2'), T0 + 500), true);
        assert.equal(await keys.rotate('early', key('early2'), T0 + 500), true);
        assert.equal(await keys.rotate('late', key('late2'), T0 + 500), true);
        assert.equal((await keys.get('open'))?.expiresAt, T0 + 500);
        assert.equal((await keys.get('early'))?.expiresAt, T0 + 100);
        assert.equal((await keys.get('late'))?.expiresAt, T0 + 500);
        assert.deepEqual(await keys.findByHash('hash-of-open2'), key('open2'));
      }));

    test('rotate of a missing or revoked key answers false and stores nothing', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('gone', { revokedAt: T0 }));
        assert.equal(await keys.rotate('missing', key('r1'), T0 + 500), false);
        assert.equal(await keys.rotate('gone', key('r2'), T0 + 500), false);
        assert.equal(await keys.get('r1'), undefined);
        assert.equal(await keys.get('r2'), undefined);
        assert.equal((await keys.get('gone'))?.expiresAt, null);
      }));

    test('rotate is one transaction: a replacement that cannot be stored leaves the old key as it was', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('k1'));
        await keys.insert(key('k2'));
        // The replacement's hash is taken, so its insert fails after the expiry update.
        await assert.rejects(keys.rotate('k1', key('k3', { hash: 'hash-of-k2' }), T0 + 500));
        assert.equal((await keys.get('k1'))?.expiresAt, null);
        assert.equal(await keys.get('k3'), undefined);
      }));

    test('recordLastUsed never moves a last use backwards and skips unknown ids', () =>
      withStores(async ({ keys }) => {
        await keys.insert(key('k1'));
        await keys.insert(key('k2', { lastUsedAt: T0 + 50 }));
        await keys.recordLastUsed(new Map());
        await keys.recordLastUsed(
          new Map([
            ['k1', T0 + 100],
            ['k2', T0 + 10],
            ['unknown', T0 + 1],
          ]),
        );
        assert.equal((await keys.get('k1'))?.lastUsedAt, T0 + 100);
        assert.equal((await keys.get('k2'))?.lastUsedAt, T0 + 50, 'an older time does not win');
        await keys.recordLastUsed(new Map([['k1', T0 + 90]]));
        assert.equal((await keys.get('k1'))?.lastUsedAt, T0 + 100, 'a late flush does not go back');
        await keys.recordLastUsed(new Map([['k1', T0 + 200]]));
        assert.equal((await keys.get('k1'))?.lastUsedAt, T0 + 200);
        assert.equal(await keys.get('unknown'), undefined);
        assert.equal((await keys.list()).length, 2);
      }));
  });

  describe(`${name}: audit log`, () => {
    const entry = (time: number, overrides: Partial<Parameters<AuditStore['append']>[0]> = {}) => ({
      time,
      actor: 'key_a',
      address: '192.0.2.7',
      action: 'keys.create',
      target: 'key_t',
      status: 201,
      code: null,
      keyId: null,
      ...overrides,
    });

    test('entries come back newest first with rising ids, filtered by time, action and actor, paged by id', () =>
      withStores(async ({ audit }) => {
        assert.ok(audit, 'the store keeps an audit log');
        await audit.append(entry(T0));
        await audit.append(entry(T0 + 1000, { action: 'keys.revoke', status: 404, code: 'not_found' }));
        await audit.append(entry(T0 + 2000, { actor: 'cli', address: null, status: null, target: null }));
        const all = await audit.list({ limit: 10 });
        assert.deepEqual(
          all.map((e) => e.time),
          [T0 + 2000, T0 + 1000, T0],
        );
        assert.ok((all[0]?.id ?? 0) > (all[1]?.id ?? 0) && (all[1]?.id ?? 0) > (all[2]?.id ?? 0));
        assert.deepEqual(all[1], {
          id: all[1]?.id,
          ...entry(T0 + 1000, { action: 'keys.revoke', status: 404, code: 'not_found' }),
        });
        assert.deepEqual(all[0], {
          id: all[0]?.id,
          ...entry(T0 + 2000, { actor: 'cli', address: null, status: null, target: null }),
        });
        const times = async (query: Parameters<AuditStore['list']>[0]) =>
          (await audit.list(query)).map((e) => e.time);
        assert.deepEqual(await times({ limit: 10, from: T0 + 1000 }), [T0 + 2000, T0 + 1000]);
        assert.deepEqual(await times({ limit: 10, to: T0 + 1000 }), [T0]);
        assert.deepEqual(await times({ limit: 10, action: 'keys.revoke' }), [T0 + 1000]);
        assert.deepEqual(await times({ limit: 10, actor: 'cli' }), [T0 + 2000]);
        assert.deepEqual(await times({ limit: 2 }), [T0 + 2000, T0 + 1000]);
        assert.deepEqual(await times({ limit: 2, before: all[1]?.id ?? 0 }), [T0]);
      }));

    test('the key a claim made is kept with its entry', () =>
      withStores(async ({ audit }) => {
        assert.ok(audit, 'the store keeps an audit log');
        const claim = entry(T0, {
          actor: 'anonymous',
          action: 'invitations.claim',
          target: 'inv_a',
          keyId: 'key_n',
        });
        await audit.append(claim);
        const [only] = await audit.list({ limit: 10 });
        assert.deepEqual(only, { id: only?.id, ...claim });
      }));

    test('prune deletes entries older than its time, and only those', () =>
      withStores(async ({ audit }) => {
        assert.ok(audit, 'the store keeps an audit log');
        for (const t of [T0, T0 + 1, T0 + 2]) await audit.append(entry(t));
        await audit.prune(T0 + 2);
        assert.deepEqual(
          (await audit.list({ limit: 10 })).map((e) => e.time),
          [T0 + 2],
        );
        await audit.prune(T0);
        assert.equal((await audit.list({ limit: 10 })).length, 1);
      }));
  });

  invitationBehaviour(name, open);

  describe(`${name}: ping`, () => {
    test('both stores answer ping while open', () =>
      withStores(async ({ prices, keys }) => {
        await prices.ping();
        await keys.ping();
      }));
  });
}
