/**
 * The audit log of admin actions (docs/audit.md): who did what to which thing, from where, and how it
 * ended. The admin API records through the `onResponse` hook of routes that declare an action, the
 * `pricepoint` command with actor `cli`. Entries hold ids, names of actions and problem codes only,
 * never a key or a secret. Entries past the keeping time are deleted at most once an hour, after a
 * write, so an idle server does no work for it.
 */
import { ApiError } from '../domain/errors/api-error.js';
import { maskKeys } from '../domain/keys/key-format.js';
import type { AuditEntry, AuditQuery, AuditStore } from '../stores/types.js';

/** What a caller records; the time is the service's clock. */
export type AuditRecord = Omit<AuditEntry, 'id' | 'time'>;

/** Every action the log records, as `GET /api/v1/audit?action=` takes them (docs/audit.md). */
export const AUDIT_ACTIONS = [
  'keys.create',
  'keys.update',
  'keys.rotate',
  'keys.revoke',
  'series.upsert',
  'prices.write',
  'webhooks.create',
  'webhooks.delete',
  'webhooks.enable',
  'webhooks.disable',
  'webhooks.redeliver',
  'sources.run',
  'invitations.create',
  'invitations.revoke',
  'invitations.claim',
  'signup',
  'console.sign_in',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The actor of entries the `pricepoint` command writes. */
export const CLI_ACTOR = 'cli';
/** The actor of claims and sign-ups: no key made the request (docs/invitations.md). */
export const ANONYMOUS_ACTOR = 'anonymous';

const DAY_MS = 86_400_000;
/** Longer text (a hostile path parameter) is cut: an entry names a thing, it does not store input. */
const MAX_TEXT = 200;

/**
 * `text` as it may be stored: keys and webhook secrets masked (a path parameter is what a caller
 * typed, and one may paste a key there), cut to `MAX_TEXT`.
 * @example safeText('/x/pp_live_abc…') // '/x/pp_***'
 */
export function safeText(text: string): string {
  return maskKeys(text)
    .replace(/whsec_[A-Za-z0-9+/=_-]*/g, 'whsec_***')
    .slice(0, MAX_TEXT);
}
const PRUNE_EVERY_MS = 3_600_000;

export interface AuditService {
  /** Appends an entry; a store failure is reported to `onError`, never thrown at the action it records. */
  record(entry: AuditRecord): Promise<void>;
  /** Entries newest first (`AuditQuery`); 503 where the stores keep no audit log. */
  list(query: AuditQuery): Promise<AuditEntry[]>;
}

export interface AuditServiceDeps {
  /** Absent where the stores keep no audit log (a test's own stores): nothing is recorded. */
  readonly store: AuditStore | undefined;
  readonly clock: () => number;
  readonly retentionDays: number;
  readonly onError?: (error: unknown) => void;
}

/** @example const audit = createAuditService({ store: stores.audit, clock: Date.now, retentionDays: 400 }) */
export function createAuditService({ store, clock, retentionDays, onError }: AuditServiceDeps): AuditService {
  let prunedAt = Number.NEGATIVE_INFINITY;

  function report(error: unknown): void {
    try {
      onError?.(error);
    } catch {
      // A failing reporter must not fail the action.
    }
  }

  return {
    async record(entry) {
      if (store === undefined) return;
      const now = clock();
      try {
        await store.append({
          ...entry,
          actor: safeText(entry.actor),
          address: entry.address === null ? null : safeText(entry.address),
          target: entry.target === null ? null : safeText(entry.target),
          keyId: entry.keyId == null ? null : safeText(entry.keyId),
          time: now,
        });
        if (now - prunedAt >= PRUNE_EVERY_MS) {
          prunedAt = now;
          await store.prune(now - retentionDays * DAY_MS);
        }
      } catch (error) {
        report(error);
      }
    },

    async list(query) {
      if (store === undefined) throw new ApiError('service_unavailable', 'This server keeps no audit log.');
      return store.list(query);
    },
  };
}
