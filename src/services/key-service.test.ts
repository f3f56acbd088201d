import assert from 'node:assert/strict';
import { after, beforeEach, describe, test } from 'node:test';
import { isWellFormedKey, keyHash } from '../domain/keys/key-format.js';
import { DEFAULT_TIERS } from '../domain/limits/tiers.js';
import { openEmbeddedStores } from '../stores/sqlite/index.js';
import type { Stores } from '../stores/types.js';
import { createKeyService, type KeyService, MAX_GRACE_MS } from './key-service.js';

const HOUR = 3_600_000;
let stores: Stores;
let service: KeyService;
let now: number;

beforeEach(async () => {
  await stores?.close();
  stores = await openEmbeddedStores(':memory:');
  now = Date.UTC(2026, 10, 22, 10);
  service = createKeyService({
    keys: stores.keys,
    tiers: DEFAULT_TIERS,
    keySecret: undefined,
    clock: () => now,
  });
});
after(() => stores.close());

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return `${(error as { code?: string }).code}:${(error as { options?: { extra?: { parameter?: string } } }).options?.extra?.parameter ?? ''}`;
  }
  return 'no error';
}

describe('rotate', () => {
  test('issues a new, well-formed key with the same name, tier, scopes and expiry; the old one expires after the grace', async () => {
    const { key: oldKey, record: old } = await service.create({
      name: 'importer',
      tier: 'pro',
      scopes: ['read', 'write'],
      expiresAt: now + 100 * HOUR,
    });
    now += HOUR;
    const { key, record, previous } = await service.rotate(old.id, 2 * HOUR);
    assert.ok(isWellFormedKey(key), 'the new key is well formed');
    assert.notEqual(key, oldKey);
    assert.notEqual(record.id, old.id);
    assert.deepEqual(
      { name: record.name, tier: record.tier, scopes: record.scopes, expiresAt: record.expiresAt },
      { name: 'importer', tier: 'pro', scopes: ['read', 'write'], expiresAt: now + 99 * HOUR },
    );
    assert.equal(record.createdAt, now);
    assert.equal(previous.id, old.id);
    assert.equal(previous.expiresAt, now + 2 * HOUR);
    assert.equal(previous.revokedAt, null);
    const stored = await stores.keys.findByHash(keyHash(key, undefined));
    assert.equal(stored?.id, record.id, 'the store finds the new key by its hash');
    assert.equal('hash' in record, false, 'the view carries no hash');
  });

  test('keeps an earlier expiry of the old key, and a grace of 0 ends it now', async () => {
    const { record: brief } = await service.create({ name: 'brief', tier: 'free', expiresAt: now + HOUR });
    assert.equal((await service.rotate(brief.id, 24 * HOUR)).previous.expiresAt, now + HOUR);
    const { record: plain } = await service.create({ name: 'plain', tier: 'free' });
    assert.equal((await service.rotate(plain.id, 0)).previous.expiresAt, now);
  });

  test('a key is rotated once: in its grace it makes no second successor, and the successor rotates', async () => {
    const { record } = await service.create({ name: 'twice', tier: 'free' });
    const first = await service.rotate(record.id, 10 * HOUR);
    const before = (await service.list()).length;
    assert.equal(await code(service.rotate(record.id, 20 * HOUR)), 'invalid_parameter:id');
    assert.equal((await service.list()).length, before, 'no second successor');
    assert.equal((await service.get(record.id)).expiresAt, now + 10 * HOUR, 'the grace stays as it was');
    assert.notEqual((await service.rotate(first.record.id, HOUR)).record.id, first.record.id);
  });

  test('refuses revoked, expired and unknown keys and out-of-range graces, and issues nothing', async () => {
    const { record: revoked } = await service.create({ name: 'revoked', tier: 'free' });
    await service.revoke(revoked.id);
    const { record: expired } = await service.create({
      name: 'expired',
      tier: 'free',
      expiresAt: now + HOUR,
    });
    const { record: live } = await service.create({ name: 'live', tier: 'free' });
    const before = (await service.list()).length;
    now += HOUR;
    assert.equal(await code(service.rotate(revoked.id, HOUR)), 'invalid_parameter:id');
    assert.equal(await code(service.rotate(expired.id, HOUR)), 'invalid_parameter:id');
    assert.equal(await code(service.rotate('key_unknown', HOUR)), 'not_found:');
    for (const grace of [-1, 0.5, MAX_GRACE_MS + 1, Number.NaN]) {
      assert.equal(await code(service.rotate(live.id, grace)), 'invalid_parameter:grace', `grace ${grace}`);
    }
    assert.equal((await service.list()).length, before, 'no key was issued');
  });

  test('the store refuses a rotation when the key was revoked in between (the revocation wins)', async () => {
    const { record } = await service.create({ name: 'race', tier: 'free' });
    const real = stores.keys.get.bind(stores.keys);
    // The service reads the key as live, then it is revoked before the store's transaction runs.
    stores.keys.get = async (id) => {
      const found = await real(id);
      await stores.keys.revoke(id, now);
      stores.keys.get = real;
      return found;
    };
    assert.equal(await code(service.rotate(record.id, HOUR)), 'invalid_parameter:id');
    assert.equal((await service.list()).length, 1, 'no replacement was stored');
  });
});

describe('setTier', () => {
  test('moves a key to a configured tier and keeps everything else', async () => {
    const { record } = await service.create({ name: 'customer', tier: 'free', scopes: ['read'] });
    const moved = await service.setTier(record.id, 'enterprise');
    assert.deepEqual(moved, { ...record, tier: 'enterprise' });
    assert.equal((await service.get(record.id)).tier, 'enterprise');
  });

  test('refuses an unknown tier (naming tier) and an unknown key', async () => {
    const { record } = await service.create({ name: 'customer', tier: 'free' });
    assert.equal(await code(service.setTier(record.id, 'gold')), 'invalid_parameter:tier');
    assert.equal((await service.get(record.id)).tier, 'free', 'unchanged');
    assert.equal(await code(service.setTier('key_unknown', 'pro')), 'not_found:');
  });
});

describe('create and expiry', () => {
  test('an expiry must lie in the future: now itself is refused', async () => {
    assert.equal(
      await code(service.create({ name: 'x', tier: 'free', expiresAt: now })),
      'invalid_parameter:expires',
    );
    const { record } = await service.create({ name: 'x', tier: 'free', expiresAt: now + 1 });
    assert.equal(record.expiresAt, now + 1);
  });
});

describe('recordLastUsed in the store', () => {
  test('writes a batch, skips unknown ids and never moves a last use backwards', async () => {
    const { record: a } = await service.create({ name: 'a', tier: 'free' });
    const { record: b } = await service.create({ name: 'b', tier: 'free' });
    await stores.keys.recordLastUsed(
      new Map([
        [a.id, now],
        [b.id, now + 5],
        ['key_unknown', now],
      ]),
    );
    assert.equal((await service.get(a.id)).lastUsedAt, now);
    assert.equal((await service.get(b.id)).lastUsedAt, now + 5);
    await stores.keys.recordLastUsed(new Map([[b.id, now + 1]]));
    assert.equal(
      (await service.get(b.id)).lastUsedAt,
      now + 5,
      'an older time from a slower instance is ignored',
    );
  });
});
