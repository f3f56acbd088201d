/**
 * Access tiers (docs/keys-and-tiers.md): named limits, what they are counted per, which series kinds a
 * tier may read and how many days back, how many event streams it may hold open. The operator's
 * config is merged over the defaults by name.
 */
import { addressGroup } from '../net/client-address.js';

/** One limit: `limit` requests per fixed window of `windowSeconds`, aligned to the Unix epoch. */
export interface LimitRule {
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;
}

/**
 * `key`: one counter per key; `key+ip`: one per key and client address group (an IPv4 address, an
 * IPv6 /64), for the shared demo key. Requests and open event streams are both counted so.
 */
export type CountPer = 'key' | 'key+ip';

export interface Tier {
  readonly name: string;
  readonly limits: readonly LimitRule[];
  readonly countPer: CountPer;
  /** Series kinds the tier may read; `null` means every kind. */
  readonly kinds: readonly string[] | null;
  /** How many days before today the tier may read; `null` means unlimited. */
  readonly historyDays: number | null;
  /** Open event streams (`GET /api/v1/events`) per instance, counted per `countPer` (docs/events.md). */
  readonly streams: number;
  /** Whether a key of the tier may rotate itself (`POST /api/v1/key/rotate`); absent: no. */
  readonly selfRotate?: boolean;
}

export type TierOverride = Partial<Omit<Tier, 'name'>>;

const minute = (limit: number): LimitRule => ({ name: 'minute', limit, windowSeconds: 60 });
const day = (limit: number): LimitRule => ({ name: 'day', limit, windowSeconds: 86_400 });
const second = (limit: number): LimitRule => ({ name: 'second', limit, windowSeconds: 1 });

/** Open event streams of a tier that does not name its own: a household needs one or two. */
export const DEFAULT_STREAMS = 3;

export const DEFAULT_TIERS: Readonly<Record<string, Tier>> = {
  demo: {
    name: 'demo',
    limits: [minute(30), day(1000)],
    countPer: 'key+ip',
    kinds: null,
    historyDays: 31,
    streams: 50,
    // One key shared by everyone: rotating it would lock out every other user.
    selfRotate: false,
  },
  free: {
    name: 'free',
    limits: [minute(60), day(5000)],
    countPer: 'key',
    kinds: null,
    historyDays: 31,
    streams: DEFAULT_STREAMS,
    selfRotate: false,
  },
  pro: {
    name: 'pro',
    limits: [second(20), minute(1200)],
    countPer: 'key',
    kinds: null,
    historyDays: 3653,
    streams: 20,
    selfRotate: false,
  },
  enterprise: {
    name: 'enterprise',
    limits: [second(200)],
    countPer: 'key',
    kinds: null,
    historyDays: null,
    streams: 200,
    selfRotate: false,
  },
};

/**
 * What a tier counts a key's use by, from the client `address`: the key, or with `key+ip` the key
 * and the address' group (src/domain/net/client-address.ts).
 * @example countedAs(DEFAULT_TIERS.demo, 'k1', '192.0.2.7') // 'key:k1:192.0.2.7'
 */
export function countedAs(tier: Tier, keyId: string, address: string): string {
  return tier.countPer === 'key+ip' ? `key:${keyId}:${addressGroup(address)}` : `key:${keyId}`;
}

/**
 * The defaults with the operator's tiers merged over them by name: a named field replaces the
 * default's, a new name must bring its limits.
 * @example mergeTiers(DEFAULT_TIERS, { demo: { limits: [{ name: 'minute', limit: 5, windowSeconds: 60 }] } })
 */
export function mergeTiers(
  defaults: Readonly<Record<string, Tier>>,
  overrides: Readonly<Record<string, TierOverride>>,
): Record<string, Tier> {
  const merged: Record<string, Tier> = { ...defaults };
  for (const [name, override] of Object.entries(overrides)) {
    const base = defaults[name];
    const limits = override.limits ?? base?.limits;
    if (limits === undefined) throw new Error(`tiers.${name}.limits is required for a new tier`);
    merged[name] = {
      name,
      limits,
      countPer: override.countPer ?? base?.countPer ?? 'key',
      kinds: override.kinds === undefined ? (base?.kinds ?? null) : override.kinds,
      historyDays: override.historyDays === undefined ? (base?.historyDays ?? null) : override.historyDays,
      streams: override.streams ?? base?.streams ?? DEFAULT_STREAMS,
      selfRotate: override.selfRotate ?? base?.selfRotate ?? false,
    };
  }
  return merged;
}
