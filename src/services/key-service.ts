/**
 * Creating, listing and revoking keys: one service behind both the CLI and the admin API. A new key
 * is returned once, at creation; afterwards only its id and last four characters are ever shown.
 */
import { ApiError } from '../domain/errors/api-error.js';
import { generateKey, type KeyKind, keyHash, keyLast4, randomBase62 } from '../domain/keys/key-format.js';
import type { Tier } from '../domain/limits/tiers.js';
import type { KeyRecord, KeyStore, Scope } from '../stores/types.js';

/** A key as shown to operators: everything but the hash. */
export type KeyView = Omit<KeyRecord, 'hash'>;

export function keyView(record: KeyRecord): KeyView {
  const { hash: _hash, ...view } = record;
  return view;
}

export interface NewKey {
  readonly name: string;
  readonly tier: string;
  readonly scopes?: readonly Scope[];
  readonly expiresAt?: number | null;
  readonly kind?: KeyKind;
}

export interface KeyServiceDeps {
  readonly keys: KeyStore;
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly keySecret: string | undefined;
  readonly clock: () => number;
}

export function createKeyService({ keys, tiers, keySecret, clock }: KeyServiceDeps) {
  function validate(spec: NewKey): void {
    if (tiers[spec.tier] === undefined) {
      throw new ApiError('invalid_parameter', `tier must be one of ${Object.keys(tiers).join(', ')}`, {
        extra: { parameter: 'tier' },
      });
    }
    if (spec.name.trim() === '' || spec.name.length > 200) {
      throw new ApiError('invalid_parameter', 'name must be 1 to 200 characters', {
        extra: { parameter: 'name' },
      });
    }
    if (spec.expiresAt != null && spec.expiresAt <= clock()) {
      throw new ApiError('invalid_parameter', 'expires must lie in the future', {
        extra: { parameter: 'expires' },
      });
    }
  }

  async function store(key: string, spec: NewKey): Promise<KeyRecord> {
    const record: KeyRecord = {
      id: `key_${randomBase62(16)}`,
      hash: keyHash(key, keySecret),
      last4: keyLast4(key),
      name: spec.name.trim(),
      tier: spec.tier,
      scopes: spec.scopes && spec.scopes.length > 0 ? [...new Set(spec.scopes)] : ['read'],
      createdAt: clock(),
      expiresAt: spec.expiresAt ?? null,
      revokedAt: null,
      lastUsedAt: null,
    };
    await keys.insert(record);
    return record;
  }

  return {
    /** Creates a key; the clear key is in the answer and nowhere else. */
    async create(spec: NewKey): Promise<{ key: string; record: KeyView }> {
      validate(spec);
      const key = generateKey(spec.kind ?? 'live');
      return { key, record: keyView(await store(key, spec)) };
    },

    /** Stores a key whose value is already known (the documented demo key), once. */
    async ensure(key: string, spec: NewKey): Promise<KeyView> {
      const existing = await keys.findByHash(keyHash(key, keySecret));
      return keyView(existing ?? (await store(key, spec)));
    },

    async list(): Promise<KeyView[]> {
      return (await keys.list()).map(keyView);
    },

    async get(id: string): Promise<KeyView> {
      const record = await keys.get(id);
      if (record === undefined) throw new ApiError('not_found', `There is no key with id ${id}.`);
      return keyView(record);
    },

    async revoke(id: string): Promise<KeyView> {
      if (!(await keys.revoke(id, clock())))
        throw new ApiError('not_found', `There is no key with id ${id}.`);
      return this.get(id);
    },
  };
}

export type KeyService = ReturnType<typeof createKeyService>;
