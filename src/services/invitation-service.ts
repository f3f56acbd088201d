/**
 * Invitations and open sign-up (docs/invitations.md): an operator makes an invitation (tier, scopes,
 * expiry, uses), and its one-time token lets a customer claim a key without the operator in between.
 * The token is shown once and stored as a hash, like a key. A claim takes a use and stores its key in
 * one transaction, so the last use makes one key however many claims race for it. A token no
 * invitation has counts against the client address' failed-login budget, as an unknown key does.
 * Open sign-up, when the config turns it on, makes keys of one tier, so many per address and window,
 * counted in the rate-limit store (Redis when scaled out) so the limit holds across instances.
 */
import { ApiError } from '../domain/errors/api-error.js';
import { keyHash, randomBase62 } from '../domain/keys/key-format.js';
import type { SignupRules } from '../domain/keys/signup-rules.js';
import { secondsUntil } from '../domain/limits/fixed-window.js';
import type { LimitRule, Tier } from '../domain/limits/tiers.js';
import { addressGroup } from '../domain/net/client-address.js';
import { isPlainText, PLAIN_TEXT_RULE } from '../domain/text/plain-text.js';
import {
  type InvitationRecord,
  type InvitationStore,
  type KeyStore,
  type RateLimitStore,
  SCOPES,
  type Scope,
} from '../stores/types.js';
import { createFailureBudget } from './failure-budget.js';
import { type KeyFieldProblem, type KeyService, type KeyView, keyView } from './key-service.js';

const DAY_MS = 86_400_000;
/** How long an invitation works when the operator names no expiry. */
export const DEFAULT_INVITATION_MS = 7 * DAY_MS;
/** The longest an invitation may work: a link is a credential, and an old one is best made again. */
export const MAX_INVITATION_MS = 90 * DAY_MS;
export const MAX_USES = 1000;
export const MAX_NOTE = 200;
/** `ppi_` and 32 base62 characters (190 bits): not guessable, and not mistaken for a key. */
const TOKEN = /^ppi_[0-9A-Za-z]{32}$/;

export type InvitationState = 'active' | 'expired' | 'used_up' | 'revoked';

/** An invitation as operators see it: everything but the token's hash, and its state now. */
export type InvitationView = Omit<InvitationRecord, 'hash'> & { readonly state: InvitationState };

/** An invitation as asked for, not yet checked: `create` names every bad field. */
export interface InvitationDraft {
  readonly tier?: string;
  readonly scopes?: readonly string[];
  /** Epoch ms; default 7 days from now. */
  readonly expiresAt?: number;
  readonly uses?: number;
  readonly keyExpiresAt?: number | null;
  readonly note?: string | null;
}

/** A key made by a claim or sign-up: the key itself (shown this once) and its view. */
export interface ClaimedKey {
  readonly key: string;
  readonly record: KeyView;
}

export interface InvitationService {
  /** Makes an invitation; its token is in the answer and nowhere else. Bad fields: one `invalid_parameter`. */
  create(
    draft: InvitationDraft,
    known?: readonly KeyFieldProblem[],
  ): Promise<{ token: string; record: InvitationView }>;
  /** Every invitation, newest first. */
  list(): Promise<InvitationView[]>;
  /** One invitation; `not_found` when there is none. */
  get(id: string): Promise<InvitationView>;
  /** Revokes it at once (twice keeps the first time); `not_found` when there is none. */
  revoke(id: string): Promise<InvitationView>;
  /**
   * Makes a key named `name` from the invitation `token` belongs to, or throws its refusal: 404
   * `invitation_not_found` (counted against `ip`'s failed-login budget), 410 `invitation_expired`,
   * `invitation_used_up`, `invitation_revoked`, 400 for a bad name, 429 past the budget. `found` is
   * told the invitation's id as soon as it is known, refused or not (for the audit log).
   */
  claim(token: string, name: string, ip: string, found?: (id: string) => void): Promise<ClaimedKey>;
  /** Whether open sign-up is on. */
  readonly signupOpen: boolean;
  /** A key by open sign-up: 403 `signup_closed` when off, 429 `rate_limited` past the address' limit. */
  signup(name: string, ip: string): Promise<ClaimedKey>;
}

export interface InvitationServiceDeps {
  /** Absent where the stores keep no invitations: every call answers 503. */
  readonly store: InvitationStore | undefined;
  readonly keys: KeyService;
  readonly keyStore: KeyStore;
  readonly rateLimits: RateLimitStore;
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly keySecret: string | undefined;
  readonly failuresPerMinute: number;
  readonly signup: SignupRules | undefined;
  readonly clock: () => number;
}

/** @example const invitations = createInvitationService({ store: stores.invitations, keys, ... }) */
export function createInvitationService(deps: InvitationServiceDeps): InvitationService {
  const { keys, tiers, keySecret, clock } = deps;
  const budget = createFailureBudget(deps.rateLimits, deps.failuresPerMinute);

  function store(): InvitationStore {
    if (deps.store === undefined) {
      throw new ApiError('service_unavailable', 'This server keeps no invitations.');
    }
    return deps.store;
  }

  function stateOf(record: InvitationRecord, now: number): InvitationState {
    if (record.revokedAt !== null) return 'revoked';
    if (record.claimed >= record.uses) return 'used_up';
    if (record.expiresAt <= now) return 'expired';
    return 'active';
  }

  function view(record: InvitationRecord): InvitationView {
    const { hash: _hash, ...rest } = record;
    return { ...rest, state: stateOf(record, clock()) };
  }

  function problems(draft: InvitationDraft, now: number): (KeyFieldProblem | undefined)[] {
    const { tier, scopes, expiresAt, uses, keyExpiresAt, note } = draft;
    return [
      tier === undefined
        ? { field: 'tier', detail: 'tier is missing' }
        : Object.hasOwn(tiers, tier)
          ? undefined
          : { field: 'tier', detail: `tier must be one of ${Object.keys(tiers).join(', ')}` },
      scopes === undefined ||
      (scopes.length > 0 && scopes.every((s) => (SCOPES as readonly string[]).includes(s)))
        ? undefined
        : { field: 'scopes', detail: `scopes must name at least one of ${SCOPES.join(', ')}` },
      expiresAt === undefined || (expiresAt > now && expiresAt <= now + MAX_INVITATION_MS)
        ? undefined
        : {
            field: 'expiresAt',
            detail: `expiresAt must lie in the future, at most ${MAX_INVITATION_MS / DAY_MS} days from now`,
          },
      uses === undefined || (Number.isInteger(uses) && uses >= 1 && uses <= MAX_USES)
        ? undefined
        : { field: 'uses', detail: `uses must be a whole number from 1 to ${MAX_USES}` },
      keyExpiresAt == null || keyExpiresAt > now
        ? undefined
        : { field: 'keyExpiresAt', detail: 'keyExpiresAt must lie in the future (null: keys never expire)' },
      note == null ||
      (isPlainText(note) && note.trim() !== '' && note.length <= MAX_NOTE && !/pp_|ppi_/.test(note))
        ? undefined
        : {
            field: 'note',
            detail: `note must be 1 to ${MAX_NOTE} characters of plain text, without a key or token (${PLAIN_TEXT_RULE})`,
          },
    ];
  }

  function refuse(found: readonly (KeyFieldProblem | undefined)[]): void {
    const all = found.filter((p): p is KeyFieldProblem => p !== undefined);
    const first = all[0];
    if (first !== undefined) {
      throw new ApiError('invalid_parameter', all.map((p) => `${p.detail}.`).join(' '), {
        extra: { parameter: first.field, errors: all },
      });
    }
  }

  async function getRecord(id: string): Promise<InvitationRecord> {
    const record = await store().get(id);
    if (record === undefined) throw new ApiError('not_found', `There is no invitation with id ${id}.`);
    return record;
  }

  /** The 410 of an invitation that can no longer be claimed. */
  function gone(state: Exclude<InvitationState, 'active'>): ApiError {
    const detail = {
      expired: 'This invitation has expired; ask for a new one.',
      used_up: 'Every use of this invitation is claimed; ask for a new one.',
      revoked: 'This invitation was revoked; ask for a new one.',
    }[state];
    return new ApiError(`invitation_${state}`, detail);
  }

  /** The tier a key of `tier` is made in, or a 503 when the config no longer has it. */
  function checkTier(tier: string): void {
    if (!Object.hasOwn(tiers, tier)) {
      throw new ApiError('service_unavailable', 'The tier of this invitation is not configured.');
    }
  }

  return {
    async create(draft, known = []) {
      const now = clock();
      refuse([...known, ...problems(draft, now)]);
      const token = `ppi_${randomBase62(32)}`;
      const record: InvitationRecord = {
        id: `inv_${randomBase62(16)}`,
        hash: keyHash(token, keySecret),
        tier: draft.tier as string,
        scopes:
          draft.scopes && draft.scopes.length > 0 ? [...new Set(draft.scopes as readonly Scope[])] : ['read'],
        createdAt: now,
        expiresAt: draft.expiresAt ?? now + DEFAULT_INVITATION_MS,
        uses: draft.uses ?? 1,
        claimed: 0,
        keyExpiresAt: draft.keyExpiresAt ?? null,
        note: draft.note?.trim() ?? null,
        revokedAt: null,
      };
      await store().insert(record);
      return { token, record: view(record) };
    },

    async list() {
      return (await store().list()).map(view);
    },

    async get(id) {
      return view(await getRecord(id));
    },

    async revoke(id) {
      if (!(await store().revoke(id, clock()))) {
        throw new ApiError('not_found', `There is no invitation with id ${id}.`);
      }
      return view(await getRecord(id));
    },

    async claim(token, name, ip, found) {
      const invitations = store();
      const now = clock();
      const subject = budget.subject(ip);
      // Reserved before the lookup, as for a key: past the budget nothing is looked up, on any instance.
      const reserved = await budget.take(subject, now);
      const record = TOKEN.test(token) ? await invitations.findByHash(keyHash(token, keySecret)) : undefined;
      if (record === undefined) {
        throw new ApiError('invitation_not_found', 'No invitation has this token; check the link.');
      }
      found?.(record.id);
      const state = stateOf(record, now);
      // A refused claim of a real invitation keeps its unit too: it bounds how often one address may
      // retry a dead link (each refusal is an audit entry).
      if (state !== 'active') throw gone(state);
      await budget.giveBack(subject, reserved);
      // Its keys would be born expired.
      if (record.keyExpiresAt !== null && record.keyExpiresAt <= now) throw gone('expired');
      checkTier(record.tier);
      const { key, record: made } = keys.prepare({
        name,
        tier: record.tier,
        scopes: record.scopes,
        expiresAt: record.keyExpiresAt,
      });
      if ((await invitations.claim(record.id, now, made)) === 'claimed') {
        return { key, record: keyView(made) };
      }
      // Another claim took the last use, or the invitation was revoked or expired meanwhile.
      const after = await invitations.get(record.id);
      const why = after === undefined ? 'revoked' : stateOf(after, clock());
      throw gone(why === 'active' ? 'used_up' : why);
    },

    signupOpen: deps.signup !== undefined,

    async signup(name, ip) {
      const rules = deps.signup;
      if (rules === undefined) {
        throw new ApiError(
          'signup_closed',
          'Open sign-up is off on this server; ask its operator for an invitation.',
        );
      }
      checkTier(rules.tier);
      const now = clock();
      const { key, record } = keys.prepare({
        name,
        tier: rules.tier,
        scopes: rules.scopes,
        expiresAt: rules.keyExpiresInMs === null ? null : now + rules.keyExpiresInMs,
      });
      const limit: LimitRule[] = [{ name: 'signup', ...rules.perAddress }];
      const subject = `signup:${addressGroup(ip)}`;
      const decision = await deps.rateLimits.consume(subject, limit, now);
      if (!decision.allowed) {
        const seconds = secondsUntil(decision.states[0]?.resetAtMs ?? now + 1_000, now);
        throw new ApiError(
          'rate_limited',
          `This address made as many keys by sign-up as it may (${rules.perAddress.limit}); try again in ${seconds} s.`,
          { retryAfterSeconds: seconds, extra: { 'violated-policies': ['signup'] } },
        );
      }
      try {
        await deps.keyStore.insert(record);
      } catch (error) {
        await deps.rateLimits.giveBack(subject, decision).catch(() => {});
        throw error;
      }
      return { key, record: keyView(record) };
    },
  };
}
