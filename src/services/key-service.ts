/**
 * Creating, listing, revoking, rotating and re-tiering keys: one service behind both the CLI and the admin API. A new key
 * is returned once, at creation; afterwards only its id and last four characters are ever shown.
 */
import { ApiError } from '../domain/errors/api-error.js';
import {
  generateKey,
  holdsKey,
  type KeyKind,
  keyHash,
  keyLast4,
  randomBase62,
} from '../domain/keys/key-format.js';
import { limitRulesProblem } from '../domain/limits/key-limits.js';
import type { LimitRule, Tier } from '../domain/limits/tiers.js';
import { canonicalCidr, MAX_ALLOWED_ADDRESSES } from '../domain/net/allowed-addresses.js';
import { isPlainText, PLAIN_TEXT_RULE } from '../domain/text/plain-text.js';
import { type KeyChanges, type KeyRecord, type KeyStore, SCOPES, type Scope } from '../stores/types.js';

/** A key as shown to operators: everything but the hash. */
export type KeyView = Omit<KeyRecord, 'hash'>;

export function keyView(record: KeyRecord): KeyView {
  const { hash: _hash, ...view } = record;
  return view;
}

/** What a key carries besides its name, tier, scopes and expiry; each may be set at creation or later. */
export interface KeyExtras {
  readonly limits?: readonly LimitRule[] | null;
  readonly allowedAddresses?: readonly string[] | null;
  readonly customerRef?: string | null;
  readonly contact?: string | null;
}

export interface NewKey extends KeyExtras {
  readonly name: string;
  readonly tier: string;
  readonly scopes?: readonly Scope[];
  readonly expiresAt?: number | null;
  readonly kind?: KeyKind;
}

/** A key as a client or an operator asked for it, not yet checked: `create` names every bad field. */
export interface KeyDraft {
  readonly name?: string;
  readonly tier?: string;
  readonly scopes?: readonly string[];
  readonly expiresAt?: number | null;
  readonly kind?: KeyKind;
  readonly limits?: readonly unknown[] | null;
  readonly allowedAddresses?: readonly string[] | null;
  readonly customerRef?: string | null;
  readonly contact?: string | null;
}

/** A change to a key as asked for, not yet checked: `update` names every bad field; a field left out stays. */
export interface KeyPatch {
  readonly name?: string;
  readonly tier?: string;
  readonly expiresAt?: number | null;
  readonly limits?: readonly unknown[] | null;
  readonly allowedAddresses?: readonly string[] | null;
  readonly customerRef?: string | null;
  readonly contact?: string | null;
}

/** The longest customer reference or contact: a reference or an e-mail address, not a file. */
export const MAX_OWNER_FIELD = 200;

/** One bad field of a key draft, as the 400 lists it in `errors`. */
export interface KeyFieldProblem {
  readonly field: string;
  readonly detail: string;
}

/** A rotation's answer: the new key (shown this once), its view, and the old key with its new expiry. */
export interface Rotation {
  readonly key: string;
  readonly record: KeyView;
  readonly previous: KeyView;
}

/** How long a rotated key keeps working when the caller names no grace period. */
export const DEFAULT_ROTATION_GRACE_MS = 86_400_000;

/** The longest grace period a rotated key may keep working: long enough for any planned roll-out. */
export const MAX_GRACE_MS = 30 * 86_400_000;

export interface KeyServiceDeps {
  readonly keys: KeyStore;
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly keySecret: string | undefined;
  readonly clock: () => number;
}

/** API keys for operators, behind the CLI and the admin API alike; only a new key's answer holds it in clear. */
export interface KeyService {
  /**
   * Creates a key; the clear key is in the answer and nowhere else. A bad field throws one
   * `invalid_parameter` naming every bad field, `known` (problems the caller found first) among them.
   */
  create(draft: KeyDraft, known?: readonly KeyFieldProblem[]): Promise<{ key: string; record: KeyView }>;
  /**
   * A new key checked as `create` checks it, but not stored: for a caller that stores it in a
   * transaction of its own (a claimed invitation). The record holds the key's hash, never the key.
   */
  prepare(draft: KeyDraft): { key: string; record: KeyRecord };
  /** Stores a key whose value is already known (the documented demo key), once. */
  ensure(key: string, spec: NewKey): Promise<KeyView>;
  /** Every key, without its hash. */
  list(): Promise<KeyView[]>;
  /** One key; throws `not_found` when there is none. */
  get(id: string): Promise<KeyView>;
  /** Revokes a key at once (revoking twice keeps the first time); throws `not_found` when there is none. */
  revoke(id: string): Promise<KeyView>;
  /**
   * Issues a new key with the old one's name, tier, scopes and expiry, and lets the old one live
   * for `graceMs` more (default a day, or until its own, earlier expiry). The new key is in the
   * answer, once. A revoked or expired key is not rotated: its replacement would be born dead or
   * resurrect it.
   */
  rotate(id: string, graceMs?: number): Promise<Rotation>;
  /** Moves a key to another configured tier; servers see it within their key cache time. */
  setTier(id: string, tier: string): Promise<KeyView>;
  /**
   * Changes the fields `patch` names (`null` clears limits, allow-list, owner fields and expiry),
   * or refuses them all with one `invalid_parameter` naming every bad field (`known` among them).
   */
  update(id: string, patch: KeyPatch, known?: readonly KeyFieldProblem[]): Promise<KeyView>;
}

export function createKeyService({ keys, tiers, keySecret, clock }: KeyServiceDeps): KeyService {
  function checkTier(tier: string): void {
    const problem = tierProblem(tier);
    if (problem) throw new ApiError('invalid_parameter', problem.detail, { extra: { parameter: 'tier' } });
  }

  function tierProblem(tier: string | undefined): KeyFieldProblem | undefined {
    if (tier === undefined) return { field: 'tier', detail: 'tier is missing' };
    // Own names only: `constructor` or `__proto__` must not pass as a tier.
    if (Object.hasOwn(tiers, tier)) return undefined;
    return { field: 'tier', detail: `tier must be one of ${Object.keys(tiers).join(', ')}` };
  }

  function nameProblem(name: string | undefined): KeyFieldProblem | undefined {
    if (name === undefined) return { field: 'name', detail: 'name is missing' };
    // It is printed in listings and terminals (docs/decisions.md): a line feed would forge a row.
    if (!isPlainText(name)) return { field: 'name', detail: `name ${PLAIN_TEXT_RULE}` };
    if (name.trim() === '' || name.length > 200) {
      return { field: 'name', detail: 'name must be 1 to 200 characters' };
    }
    if (holdsKey(name)) return { field: 'name', detail: 'name must not hold an API key' };
    return undefined;
  }

  function scopesProblem(scopes: readonly string[] | undefined): KeyFieldProblem | undefined {
    if (scopes === undefined) return undefined;
    const unknown = scopes.find((s) => !(SCOPES as readonly string[]).includes(s));
    if (scopes.length > 0 && unknown === undefined) return undefined;
    return {
      field: 'scopes',
      detail: `scopes must name at least one of ${SCOPES.join(', ')}${unknown === undefined ? '' : ` (not ${unknown})`}`,
    };
  }

  function limitsProblem(limits: readonly unknown[] | null | undefined): KeyFieldProblem | undefined {
    if (limits == null) return undefined;
    const detail = limitRulesProblem(limits);
    return detail === undefined ? undefined : { field: 'limits', detail };
  }

  /** The allow-list as stored (canonical CIDRs, each once), or the problem with it. */
  function addressesOf(
    list: readonly string[] | null | undefined,
  ): { value: readonly string[] | null | undefined } | KeyFieldProblem {
    if (list == null) return { value: list };
    if (list.length < 1 || list.length > MAX_ALLOWED_ADDRESSES) {
      return {
        field: 'allowedAddresses',
        detail: `allowedAddresses must list 1 to ${MAX_ALLOWED_ADDRESSES} CIDRs (null allows every address)`,
      };
    }
    const value: string[] = [];
    for (const entry of list) {
      const cidr = typeof entry === 'string' ? canonicalCidr(entry) : undefined;
      if (cidr === undefined) {
        const shown = typeof entry === 'string' && isPlainText(entry) ? ` (not ${entry.slice(0, 60)})` : '';
        return {
          field: 'allowedAddresses',
          detail: `allowedAddresses must hold IPv4 or IPv6 CIDRs such as 192.0.2.0/24 or 2001:db8::/32${shown}`,
        };
      }
      if (!value.includes(cidr)) value.push(cidr);
    }
    return { value };
  }

  function ownerProblem(
    field: 'customerRef' | 'contact',
    value: string | null | undefined,
  ): KeyFieldProblem | undefined {
    if (value == null) return undefined;
    if (!isPlainText(value)) return { field, detail: `${field} ${PLAIN_TEXT_RULE}` };
    if (value.trim() === '' || value.length > MAX_OWNER_FIELD) {
      return { field, detail: `${field} must be 1 to ${MAX_OWNER_FIELD} characters (null clears it)` };
    }
    if (holdsKey(value)) return { field, detail: `${field} must not hold an API key` };
    return undefined;
  }

  function expiryProblem(expiresAt: number | null | undefined, field: string): KeyFieldProblem | undefined {
    return expiresAt != null && expiresAt <= clock()
      ? { field, detail: `${field} must lie in the future` }
      : undefined;
  }

  /** Throws one `invalid_parameter` naming every problem (`errors`), the first in `parameter`. */
  function refuse(problems: readonly (KeyFieldProblem | undefined)[]): void {
    const found = problems.filter((p): p is KeyFieldProblem => p !== undefined);
    const first = found[0];
    if (first !== undefined) {
      throw new ApiError('invalid_parameter', found.map((p) => `${p.detail}.`).join(' '), {
        extra: { parameter: first.field, errors: found },
      });
    }
  }

  /** The checked extras of a draft or patch, with the allow-list in canonical form. */
  function extrasOf(draft: KeyDraft | KeyPatch): {
    extras: KeyExtras;
    problems: (KeyFieldProblem | undefined)[];
  } {
    const addresses = addressesOf(draft.allowedAddresses);
    const extras: KeyExtras = {
      ...(draft.limits !== undefined && { limits: draft.limits as readonly LimitRule[] | null }),
      ...('value' in addresses && addresses.value !== undefined && { allowedAddresses: addresses.value }),
      ...(draft.customerRef !== undefined && { customerRef: draft.customerRef?.trim() ?? null }),
      ...(draft.contact !== undefined && { contact: draft.contact?.trim() ?? null }),
    };
    return {
      extras,
      problems: [
        limitsProblem(draft.limits),
        'value' in addresses ? undefined : addresses,
        ownerProblem('customerRef', draft.customerRef),
        ownerProblem('contact', draft.contact),
      ],
    };
  }

  /**
   * The draft as a new key, or one `invalid_parameter` naming every bad field (`errors`), the
   * problems the caller found first (`known`, such as a timestamp it could not read) among them.
   */
  function validate(draft: KeyDraft, known: readonly KeyFieldProblem[]): NewKey {
    const { extras, problems } = extrasOf(draft);
    refuse([
      nameProblem(draft.name),
      tierProblem(draft.tier),
      scopesProblem(draft.scopes),
      ...known,
      expiryProblem(draft.expiresAt, 'expires'),
      ...problems,
    ]);
    return { ...(draft as NewKey), ...extras };
  }

  function newRecord(key: string, spec: NewKey): KeyRecord {
    return {
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
      limits: spec.limits ?? null,
      allowedAddresses: spec.allowedAddresses ?? null,
      customerRef: spec.customerRef ?? null,
      contact: spec.contact ?? null,
    };
  }

  async function store(key: string, spec: NewKey): Promise<KeyRecord> {
    const record = newRecord(key, spec);
    await keys.insert(record);
    return record;
  }

  return {
    async create(
      draft: KeyDraft,
      known: readonly KeyFieldProblem[] = [],
    ): Promise<{ key: string; record: KeyView }> {
      const spec = validate(draft, known);
      const key = generateKey(spec.kind ?? 'live');
      return { key, record: keyView(await store(key, spec)) };
    },

    prepare(draft: KeyDraft): { key: string; record: KeyRecord } {
      const spec = validate(draft, []);
      const key = generateKey(spec.kind ?? 'live');
      return { key, record: newRecord(key, spec) };
    },

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

    async rotate(id: string, graceMs: number = DEFAULT_ROTATION_GRACE_MS): Promise<Rotation> {
      if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > MAX_GRACE_MS) {
        throw new ApiError('invalid_parameter', `grace must be 0 to ${MAX_GRACE_MS / 86_400_000} days`, {
          extra: { parameter: 'grace' },
        });
      }
      const old = await keys.get(id);
      if (old === undefined) throw new ApiError('not_found', `There is no key with id ${id}.`);
      const now = clock();
      if (old.revokedAt !== null || (old.expiresAt !== null && old.expiresAt <= now)) {
        throw new ApiError(
          'invalid_parameter',
          `The key ${id} is ${old.revokedAt !== null ? 'revoked' : 'expired'}; only a live key can be rotated.`,
          { extra: { parameter: 'id' } },
        );
      }
      // The kind of the old key is not stored (only its hash); a replacement is a live key.
      const key = generateKey('live');
      const record = newRecord(key, old);
      // The store re-checks in its transaction: a revocation racing this rotation wins.
      if (!(await keys.rotate(id, record, now + graceMs))) {
        throw new ApiError('invalid_parameter', `The key ${id} is revoked; only a live key can be rotated.`, {
          extra: { parameter: 'id' },
        });
      }
      return { key, record: keyView(record), previous: await this.get(id) };
    },

    /**
     * Changes the fields `patch` names (`null` clears limits, allow-list, owner fields and expiry),
     * or refuses them all with one `invalid_parameter` naming every bad field. A revoked key may
     * still be changed (its owner fields are the operator's books); servers see a change within
     * their key cache time, at once where the caller publishes a key notice.
     */
    async update(id: string, patch: KeyPatch, known: readonly KeyFieldProblem[] = []): Promise<KeyView> {
      const { extras, problems } = extrasOf(patch);
      refuse([
        patch.name === undefined ? undefined : nameProblem(patch.name),
        patch.tier === undefined ? undefined : tierProblem(patch.tier),
        ...known,
        expiryProblem(patch.expiresAt, 'expiresAt'),
        ...problems,
      ]);
      const changes: KeyChanges = {
        ...(patch.name !== undefined && { name: patch.name.trim() }),
        ...(patch.tier !== undefined && { tier: patch.tier }),
        ...(patch.expiresAt !== undefined && { expiresAt: patch.expiresAt }),
        ...extras,
      };
      if (!(await keys.update(id, changes)))
        throw new ApiError('not_found', `There is no key with id ${id}.`);
      return this.get(id);
    },

    async setTier(id: string, tier: string): Promise<KeyView> {
      checkTier(tier);
      if (!(await keys.setTier(id, tier))) throw new ApiError('not_found', `There is no key with id ${id}.`);
      return this.get(id);
    },
  };
}
