/**
 * Usage history in a store (docs/usage-history.md): per key and UTC hour, how many counted
 * requests each outcome had and how many rate-limit units they took. Instances add their totals;
 * nothing is ever overwritten, so several instances sum exactly.
 */

/** What is counted of a key's requests in a span of time. */
export interface UsageCounts {
  /** Every counted request, whatever its outcome (server errors and redirects included). */
  readonly requests: number;
  /** Answered 2xx. */
  readonly served: number;
  /** Answered 304. */
  readonly notModified: number;
  /** Refused by a limit of the tier (429 `rate_limited`). */
  readonly rateLimited: number;
  /** Any other 4xx. */
  readonly clientErrors: number;
  /** Rate-limit units taken (a heavy read weighs several; a refused request takes none). */
  readonly units: number;
}

/** The counts of one key in one UTC hour. */
export interface UsageHour extends UsageCounts {
  readonly keyId: string;
  /** Epoch ms of the hour's start (a whole UTC hour). */
  readonly hourStart: number;
}

/** The counts of one key in one UTC day. */
export interface UsageDay extends UsageCounts {
  readonly keyId: string;
  /** Epoch ms of the day's start (00:00 UTC). */
  readonly dayStart: number;
}

/** The counts of every key of one tier in one bucket of a read (`UsageStore.tierBuckets`). */
export interface TierBucket extends UsageCounts {
  /** The bucket's index in the list asked for. */
  readonly bucket: number;
  /** The tier its keys are in now: a key's hours follow it when it moves to another tier. */
  readonly tier: string;
  /** How many keys of the tier made any counted request in the bucket. */
  readonly keys: number;
}

export const NO_USAGE: UsageCounts = {
  requests: 0,
  served: 0,
  notModified: 0,
  rateLimited: 0,
  clientErrors: 0,
  units: 0,
};

export interface UsageStore {
  /**
   * Adds each row's counts to what is stored for its key and hour (a row not stored yet is made),
   * all rows in one transaction: all are added or none.
   */
  add(rows: readonly UsageHour[]): Promise<void>;
  /**
   * The totals of each hour with `from <= hourStart < to` that has any, by hour: of one key, or summed
   * over every key without `keyId`.
   */
  hours(from: number, to: number, keyId?: string): Promise<(UsageCounts & { readonly hourStart: number })[]>;
  /**
   * The totals per bucket and tier of the keys' current tiers, with the number of keys that made any
   * request in the bucket; only buckets and tiers with any. Buckets are spans of whole UTC hours and
   * may overlap (a whole range beside its parts).
   */
  tierBuckets(buckets: readonly { readonly start: number; readonly end: number }[]): Promise<TierBucket[]>;
  /** The totals of each key and UTC day with any in `from <= hourStart < to`, by key id and day. */
  keyDays(from: number, to: number): Promise<UsageDay[]>;
  /** Removes the hours that start before `before`. */
  prune(before: number): Promise<void>;
}
