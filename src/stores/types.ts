/**
 * The I/O boundaries of Pricepoint. Each store has an embedded implementation (SQLite, in-memory)
 * and a scale-out one (PostgreSQL, Redis); both must pass the same behaviour tests.
 */
import type { LimitDecision } from '../domain/limits/fixed-window.js';
import type { LimitRule } from '../domain/limits/tiers.js';
import type { CalendarDate, Resolution } from '../domain/time/days.js';
import type { EventLog, WebhookStore } from './event-types.js';
import type { UsageStore } from './usage.js';

/** One priced thing (docs/data-model.md). */
export interface Series {
  readonly symbol: string;
  readonly name: string;
  readonly kind: string;
  readonly currency: string;
  readonly unit: string;
  readonly timezone: string;
  readonly resolution: Resolution;
}

/** One stored interval: its start (epoch ms) and the price exactly as ingested, as a decimal string. */
export interface StoredPrice {
  readonly start: number;
  readonly price: string;
}

/**
 * Where one stored day of a series (its local date in the series' zone) came from, and whether every
 * interval of that day is stored (docs/sources.md, "Provenance and completeness").
 */
export interface DayProvenance {
  readonly date: CalendarDate;
  /** The source's name, or `import` for files, the upload API and direct writes. */
  readonly source: string;
  /** When the day was last written (epoch ms). */
  readonly fetchedAt: number;
  readonly complete: boolean;
}

/** What an import records for every day it writes into (`PriceStore.beginPriceWrites`). */
export interface WriteProvenance {
  /** The source's name, or `import`. */
  readonly source: string;
  /** When the points were fetched (epoch ms). */
  readonly fetchedAt: number;
  /**
   * Sources ranked above `source` for these series: a day one of them wrote keeps its name when this
   * import fills its gaps (the import decides which points it writes: services/day-precedence.ts).
   */
  readonly keep?: readonly string[];
}

export interface PriceStore {
  listSeries(): Promise<Series[]>;
  /** `symbol` in its canonical upper-case spelling. */
  getSeries(symbol: string): Promise<Series | undefined>;
  upsertSeries(series: Series): Promise<void>;
  /** Points of one series with `from <= start < to`, ordered by start. */
  pricesBetween(symbol: string, from: number, to: number): Promise<StoredPrice[]>;
  /** The point of one series with the greatest start in `from <= start <= at`, if any. */
  latestPrice(symbol: string, at: number, from: number): Promise<StoredPrice | undefined>;
  /** Writes all points or none; a point for an existing interval replaces it. Returns the count. */
  upsertPrices(symbol: string, points: readonly StoredPrice[]): Promise<number>;
  /**
   * Opens an import: points written through the session are seen by readers only after `commit`,
   * and not at all after `rollback`. One session at a time per store (a second waits or fails).
   * `small`: the caller bounds the import (an HTTP body), so the store may hold the points until
   * `commit` instead of keeping a transaction open while the caller awaits more input.
   */
  beginPriceWrites(options?: {
    readonly small?: boolean;
    /** Recorded, with each day's completeness, in the same transaction as the points; default `import` now. */
    readonly provenance?: WriteProvenance;
  }): Promise<PriceWriteSession>;
  /**
   * The recorded days of a series with `from <= date <= to` (local dates in its zone), by date. A day
   * written before provenance was recorded has none. Absent on stores that keep no provenance.
   */
  dayProvenance?(symbol: string, from: CalendarDate, to: CalendarDate): Promise<DayProvenance[]>;
  /** The first and last stored start (epoch ms) of a series; `undefined` when it has no prices. */
  coverage(symbol: string): Promise<{ first: number; last: number } | undefined>;
  /** Throws when the store cannot be reached (readiness). */
  ping(): Promise<void>;
  /**
   * A value that changes whenever a series or price may have changed, by this process or any
   * other; cheap enough to ask on every request. SQLite's moves at once; PostgreSQL's within
   * `PRICEPOINT_CHANGE_CHECK_MS` (change notices tell sooner). Absent where the engine cannot tell.
   */
  changeToken?(): string;
}

/** One checked point of an import: canonical symbol of an existing series, start (epoch ms), price text. */
export interface ImportPoint {
  readonly symbol: string;
  readonly start: number;
  readonly price: string;
}

/** An open, all-or-nothing import (`PriceStore.beginPriceWrites`). A point for a stored interval replaces it. */
export interface PriceWriteSession {
  /** Writes a batch (the caller sends batches of a few thousand points, so memory stays bounded). */
  write(points: readonly ImportPoint[]): Promise<void>;
  commit(): Promise<void>;
  /** Safe to call after a failed `write` or `commit`, and more than once. */
  rollback(): Promise<void>;
}

/** Scopes in rising order: each covers the ones before it (an admin key may also write and read). */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** @example hasScope(['admin'], 'write') // true */
export function hasScope(scopes: readonly Scope[], needed: Scope): boolean {
  const rank = SCOPES.indexOf(needed);
  return scopes.some((s) => SCOPES.indexOf(s) >= rank);
}

/** A stored key: never the key itself, only its hash and last four characters. */
export interface KeyRecord {
  readonly id: string;
  readonly hash: string;
  readonly last4: string;
  readonly name: string;
  readonly tier: string;
  readonly scopes: readonly Scope[];
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  readonly lastUsedAt: number | null;
  /** The key's own limits, replacing its tier's (docs/keys-and-tiers.md); absent or null: the tier's. */
  readonly limits?: readonly LimitRule[] | null;
  /** CIDRs the key may be used from; absent or null: any address. */
  readonly allowedAddresses?: readonly string[] | null;
  /** The operator's customer reference, for their books; shown to admin views only. */
  readonly customerRef?: string | null;
  /** Who to contact about the key (an e-mail address, a name); shown to admin views only. */
  readonly contact?: string | null;
}

/** What an update of a key may change (`KeyStore.update`); a field left out stays as it is. */
export type KeyChanges = Partial<
  Pick<KeyRecord, 'name' | 'tier' | 'expiresAt' | 'limits' | 'allowedAddresses' | 'customerRef' | 'contact'>
>;

export interface KeyStore {
  insert(record: KeyRecord): Promise<void>;
  findByHash(hash: string): Promise<KeyRecord | undefined>;
  get(id: string): Promise<KeyRecord | undefined>;
  list(): Promise<KeyRecord[]>;
  /** Marks a key revoked at `at`; false when there is no such key. Revoking twice keeps the first time. */
  revoke(id: string, at: number): Promise<boolean>;
  /** Moves a key to another tier; false when there is no such key. */
  setTier(id: string, tier: string): Promise<boolean>;
  /** Changes the named fields of a key in one statement; false when there is no such key. */
  update(id: string, changes: KeyChanges): Promise<boolean>;
  /**
   * Stores `replacement` and makes the key `id` expire at `expiresBy` (or keep an earlier expiry), in
   * one transaction: a rotation. Does nothing and answers false when `id` is missing or revoked.
   */
  rotate(id: string, replacement: KeyRecord, expiresBy: number): Promise<boolean>;
  /**
   * Writes last-used times (key id to epoch ms) in one statement or transaction; a time never moves
   * a key's last use backwards, so instances may flush in any order. Unknown ids are skipped.
   */
  recordLastUsed(batch: ReadonlyMap<string, number>): Promise<void>;
  ping(): Promise<void>;
}

export interface RateLimitStore {
  /**
   * Takes `cost` units (default 1) from every limit of `subject` if each has that many left, else
   * takes nothing: all or nothing, atomically, also under concurrency. A cost above a limit takes
   * the whole of that limit (so a heavy request fits a fresh window instead of never passing).
   * `cost` is a positive safe integer.
   */
  consume(
    subject: string,
    limits: readonly LimitRule[],
    nowMs: number,
    cost?: number,
  ): Promise<LimitDecision>;
  /** What is left, without taking anything; `allowed` says whether one unit is left in every limit. */
  peek(subject: string, limits: readonly LimitRule[], nowMs: number): Promise<LimitDecision>;
  /**
   * Admits a request: `consume` for `subject`, but only while every limit of `gate` (the failed-login
   * budget of the caller's address) has a unit left. The gate is read, never taken from, in the same
   * atomic step, so an address past its budget is refused however many instances count it, and a
   * counted request costs one store call. `undefined` when the gate is shut (and nothing was taken).
   */
  consumeWithin(
    gate: LimitGate,
    subject: string,
    limits: readonly LimitRule[],
    nowMs: number,
    cost?: number,
  ): Promise<LimitDecision | undefined>;
  /**
   * Gives back the `cost` units an allowed `consume` of `subject` took (`taken` is its decision), to
   * the windows they were taken from: a unit reserved before a lookup whose outcome turned out not
   * to count. A window that has ended since is not touched, and no counter goes below zero.
   */
  giveBack(subject: string, taken: LimitDecision, cost?: number): Promise<void>;
}

/** Limits a request must be within without being counted in them (the failed-login budget). */
export interface LimitGate {
  readonly subject: string;
  readonly limits: readonly LimitRule[];
}

/** One admin action as the audit log keeps it (docs/audit.md): never a key or a secret. */
export interface AuditEntry {
  /** Rises with every entry written, so a page of entries ends where the next begins. */
  readonly id: number;
  /** Epoch ms. */
  readonly time: number;
  /** The acting key's id; `cli` for the `pricepoint` command; `anonymous` where no key was known (claims, sign-ups, refused console sign-ins). */
  readonly actor: string;
  /** The client address, `null` for the command line. */
  readonly address: string | null;
  /** What was done: `keys.create`, `series.upsert`, ... (docs/audit.md has the list). */
  readonly action: string;
  /** What it was done to: a key id, a symbol, a webhook id, a source name; `null` when nothing was made. */
  readonly target: string | null;
  /** The HTTP status answered (`null` from the command line) and the problem code of a refusal. */
  readonly status: number | null;
  readonly code: string | null;
  /** The id of the key a claim or sign-up made (docs/invitations.md); absent or `null` otherwise. */
  readonly keyId?: string | null;
}

/** Which entries to read: `from <= time < to`, newest first, ids below `before`, at most `limit`. */
export interface AuditQuery {
  readonly from?: number;
  readonly to?: number;
  readonly action?: string;
  readonly actor?: string;
  readonly before?: number;
  readonly limit: number;
}

/** Append-only: entries are written and read, and only whole entries past their keeping time deleted. */
export interface AuditStore {
  append(entry: Omit<AuditEntry, 'id'>): Promise<void>;
  list(query: AuditQuery): Promise<AuditEntry[]>;
  /** Deletes entries with `time < before`. */
  prune(before: number): Promise<void>;
}

/* Invitations (docs/invitations.md): a one-time link that lets a customer claim a key without the
 * operator in between. Only the token's hash is stored, as with keys (./sql/invitation-store.ts). */
/** A stored invitation: never its token, only the token's hash. */
export interface InvitationRecord {
  /** `inv_` and 16 base62 characters. */
  readonly id: string;
  /** SHA-256 (or HMAC with the server's key secret) of the token. */
  readonly hash: string;
  /** The tier and scopes of every key it makes. */
  readonly tier: string;
  readonly scopes: readonly Scope[];
  /** Epoch ms. */
  readonly createdAt: number;
  /** When it stops working (epoch ms). */
  readonly expiresAt: number;
  /** How many keys it may make, and how many it has made. */
  readonly uses: number;
  readonly claimed: number;
  /** The expiry of each key it makes (epoch ms), `null`: none. */
  readonly keyExpiresAt: number | null;
  /** The operator's note, never shown to the customer. */
  readonly note: string | null;
  readonly revokedAt: number | null;
}

/** Whether a claim took a use and stored its key; a refused one changed nothing. */
export type ClaimResult = 'claimed' | 'refused';

export interface InvitationStore {
  insert(record: InvitationRecord): Promise<void>;
  get(id: string): Promise<InvitationRecord | undefined>;
  findByHash(hash: string): Promise<InvitationRecord | undefined>;
  /** Every invitation, newest first. */
  list(): Promise<InvitationRecord[]>;
  /** Marks it revoked at `at` (revoking twice keeps the first time); false when there is no such invitation. */
  revoke(id: string, at: number): Promise<boolean>;
  /**
   * Takes one use of invitation `id` and stores `key`, in one transaction: only while the invitation
   * is unrevoked, unexpired at `now` and has a use left. Of concurrent claims of its last use, on any
   * number of instances, exactly one is `claimed`; the others are `refused` and store nothing.
   */
  claim(id: string, now: number, key: KeyRecord): Promise<ClaimResult>;
}

/**
 * A change every instance must hear about (docs/scale-out.md): keys whose cached verification must
 * be forgotten (revoked, rotated, moved to another tier), and series whose days must be read again.
 */
export type Notice =
  | { readonly kind: 'keys'; readonly keyIds: readonly string[] }
  | { readonly kind: 'prices'; readonly symbols: readonly string[] };

/**
 * Carries notices between instances: in process for the embedded default, Redis pub/sub when
 * scaled out. Delivery is best effort; caches stay bounded by their own lifetimes when a notice
 * is lost (Redis away), so a lost notice delays a change but never keeps it out for good.
 */
export interface NoticeBus {
  /** Sends a notice to every subscriber of every instance, this one included. */
  publish(notice: Notice): Promise<void>;
  /** Calls `listener` for every notice that arrives from now on. */
  subscribe(listener: (notice: Notice) => void): void;
}

/** Everything `buildApp` needs from the outside world: swapped for other engines or for tests. */
export interface Stores {
  readonly prices: PriceStore;
  readonly keys: KeyStore;
  readonly rateLimits: RateLimitStore;
  readonly notices: NoticeBus;
  /** The price events written with the prices (docs/events.md); absent on stores that keep none. */
  readonly events?: EventLog;
  /** Webhook endpoints and deliveries (docs/webhooks.md), beside the events; absent on stores that keep none. */
  readonly webhooks?: WebhookStore;
  /** Requests per key and hour (docs/usage-history.md); absent on stores that keep none. */
  readonly usage?: UsageStore;
  /** The audit log of admin actions (docs/audit.md); absent on stores that keep none. */
  readonly audit?: AuditStore;
  /** Invitations to claim a key (docs/invitations.md), beside the keys; absent on stores that keep none. */
  readonly invitations?: InvitationStore;
  /** The shared counters' engine when scaled out (Redis), for readiness; absent on the embedded default. */
  readonly shared?: {
    /** What limits do while it is away. */
    readonly fallback: 'local' | 'open' | 'closed';
    /** True from a failed call until the next one that succeeds. */
    degraded(): boolean;
    ping(): Promise<void>;
  };
  close(): Promise<void>;
}
