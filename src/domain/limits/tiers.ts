/**
 * Access tiers (docs/keys-and-tiers.md): named limits, what they are counted per, which series kinds a
 * tier may read and how many days back. The operator's config is merged over the defaults by name.
 */

/** One limit: `limit` requests per fixed window of `windowSeconds`, aligned to the Unix epoch. */
export interface LimitRule {
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;
}

/** `key`: one counter per key; `key+ip`: one per key and client address (the shared demo key). */
export type CountPer = 'key' | 'key+ip';

export interface Tier {
  readonly name: string;
  readonly limits: readonly LimitRule[];
  readonly countPer: CountPer;
  /** Series kinds the tier may read; `null` means every kind. */
  readonly kinds: readonly string[] | null;
  /** How many days before today the tier may read; `null` means unlimited. */
  readonly historyDays: number | null;
}

export type TierOverride = Partial<Omit<Tier, 'name'>>;

const minute = (limit: number): LimitRule => ({ name: 'minute', limit, windowSeconds: 60 });
const day = (limit: number): LimitRule => ({ name: 'day', limit, windowSeconds: 86_400 });
const second = (limit: number): LimitRule => ({ name: 'second', limit, windowSeconds: 1 });

export const DEFAULT_TIERS: Readonly<Record<string, Tier>> = {
  demo: { name: 'demo', limits: [minute(30), day(1000)], countPer: 'key+ip', kinds: null, historyDays: 31 },
  free: { name: 'free', limits: [minute(60), day(5000)], countPer: 'key', kinds: null, historyDays: 31 },
  pro: { name: 'pro', limits: [second(20), minute(1200)], countPer: 'key', kinds: null, historyDays: 3653 },
  enterprise: { name: 'enterprise', limits: [second(200)], countPer: 'key', kinds: null, historyDays: null },
};

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
    };
  }
  return merged;
}
