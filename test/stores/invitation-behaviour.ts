/**
 * What every engine's `InvitationStore` must do (docs/invitations.md), run by store-behaviour.ts on
 * SQLite and PostgreSQL: only hashes stored, newest first, revocation keeps its first time, and a
 * claim takes a use and stores its key in one transaction, exactly once for the last use however
 * many claims race for it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InvitationRecord, InvitationStore, KeyRecord, KeyStore } from '../../src/stores/types.js';

export interface InvitationStores {
  readonly keys: KeyStore;
  readonly invitations?: InvitationStore;
  close(): Promise<void>;
}

const T0 = Date.parse('2026-11-22T00:00:00Z');
const DAY = 86_400_000;

function invitation(id: string, overrides: Partial<InvitationRecord> = {}): InvitationRecord {
  return {
    id,
    hash: `hash-of-${id}`,
    tier: 'free',
    scopes: ['read'],
    createdAt: T0,
    expiresAt: T0 + 7 * DAY,
    uses: 1,
    claimed: 0,
    keyExpiresAt: null,
    note: null,
    revokedAt: null,
    ...overrides,
  };
}

function key(id: string): KeyRecord {
  return {
    id,
    hash: `key-hash-of-${id}`,
    last4: id.slice(-4).padStart(4, '0'),
    name: `claimed ${id}`,
    tier: 'free',
    scopes: ['read'],
    createdAt: T0 + 1,
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    limits: null,
    allowedAddresses: null,
    customerRef: null,
    contact: null,
  };
}

export function invitationBehaviour(name: string, open: () => Promise<InvitationStores>): void {
  async function withStores(body: (keys: KeyStore, invitations: InvitationStore) => Promise<void>) {
    const stores = await open();
    try {
      assert.ok(stores.invitations, 'the stores keep invitations');
      await body(stores.keys, stores.invitations);
    } finally {
      await stores.close();
    }
  }

  describe(`${name}: invitations`, () => {
    test('an invitation comes back as stored, by id and by hash; list is newest first', () =>
      withStores(async (_keys, invitations) => {
        const first = invitation('inv_a', {
          scopes: ['read', 'write'],
          keyExpiresAt: T0 + 30 * DAY,
          note: 'Acme',
        });
        await invitations.insert(first);
        await invitations.insert(invitation('inv_b', { createdAt: T0 + 1000, uses: 5 }));
        assert.deepEqual(await invitations.get('inv_a'), first);
        assert.deepEqual(await invitations.findByHash('hash-of-inv_a'), first);
        assert.equal(await invitations.get('inv_none'), undefined);
        assert.equal(await invitations.findByHash('no-such-hash'), undefined);
        assert.deepEqual(
          (await invitations.list()).map((i) => i.id),
          ['inv_b', 'inv_a'],
        );
      }));

    test('revoke keeps its first time; an unknown id is false', () =>
      withStores(async (_keys, invitations) => {
        await invitations.insert(invitation('inv_r'));
        assert.equal(await invitations.revoke('inv_r', T0 + 10), true);
        assert.equal(await invitations.revoke('inv_r', T0 + 20), true);
        assert.equal((await invitations.get('inv_r'))?.revokedAt, T0 + 10);
        assert.equal(await invitations.revoke('inv_none', T0), false);
      }));

    test('a claim takes a use and stores its key; with no use left it stores nothing', () =>
      withStores(async (keys, invitations) => {
        await invitations.insert(invitation('inv_c', { uses: 2 }));
        assert.equal(await invitations.claim('inv_c', T0 + 5, key('key_c1')), 'claimed');
        assert.equal(await invitations.claim('inv_c', T0 + 6, key('key_c2')), 'claimed');
        assert.equal(await invitations.claim('inv_c', T0 + 7, key('key_c3')), 'refused');
        assert.equal((await invitations.get('inv_c'))?.claimed, 2);
        assert.deepEqual(await keys.get('key_c1'), key('key_c1'));
        assert.ok(await keys.get('key_c2'));
        assert.equal(await keys.get('key_c3'), undefined, 'a refused claim stores no key');
      }));

    test('an expired, revoked or unknown invitation refuses a claim and stores no key', () =>
      withStores(async (keys, invitations) => {
        await invitations.insert(invitation('inv_e', { expiresAt: T0 + 100 }));
        assert.equal(await invitations.claim('inv_e', T0 + 100, key('key_e')), 'refused');
        await invitations.insert(invitation('inv_v'));
        await invitations.revoke('inv_v', T0 + 1);
        assert.equal(await invitations.claim('inv_v', T0 + 2, key('key_v')), 'refused');
        assert.equal(await invitations.claim('inv_none', T0, key('key_n')), 'refused');
        for (const id of ['key_e', 'key_v', 'key_n']) assert.equal(await keys.get(id), undefined, id);
        assert.equal((await invitations.get('inv_e'))?.claimed, 0);
      }));

    test('of many claims at once of the last two uses, exactly two store a key', () =>
      withStores(async (keys, invitations) => {
        await invitations.insert(invitation('inv_race', { uses: 2 }));
        const ids = Array.from({ length: 12 }, (_, n) => `key_race${n}`);
        const results = await Promise.all(ids.map((id) => invitations.claim('inv_race', T0 + 1, key(id))));
        assert.equal(results.filter((r) => r === 'claimed').length, 2, results.join(','));
        const stored = (await keys.list()).filter((k) => k.id.startsWith('key_race'));
        assert.deepEqual(
          stored.map((k) => k.id).sort(),
          ids.filter((_, n) => results[n] === 'claimed').sort(),
        );
        assert.equal((await invitations.get('inv_race'))?.claimed, 2);
      }));
  });
}
