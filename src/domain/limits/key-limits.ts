/**
 * A key's own limits (docs/keys-and-tiers.md "Per-key limits"): the same shape as a tier's, and when a
 * key has them they replace its tier's limits whole. Counters are kept per key and limit name, so a
 * limit raised or lowered mid-window goes on counting what the window took so far.
 */
import type { LimitRule, Tier } from './tiers.js';

/** The rules of a limit, as the config file holds them for tiers (src/config/config-file.ts). */
export const LIMIT_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
export const MAX_LIMITS = 8;
export const MAX_WINDOW_SECONDS = 31_536_000;
/** Far above any real quota, and well inside what a counter holds exactly. */
export const MAX_LIMIT = 1_000_000_000;

/**
 * What is wrong with `rules` as a key's limits, or `undefined` when nothing is.
 * @example limitRulesProblem([{ name: 'minute', limit: 0, windowSeconds: 60 }]) // 'limits[0].limit must be ...'
 */
export function limitRulesProblem(rules: readonly unknown[]): string | undefined {
  if (rules.length < 1 || rules.length > MAX_LIMITS) return `limits must list 1 to ${MAX_LIMITS} limits`;
  const names = new Set<string>();
  for (const [i, rule] of rules.entries()) {
    const at = `limits[${i}]`;
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) {
      return `${at} must be an object with name, limit and windowSeconds`;
    }
    const { name, limit, windowSeconds, ...rest } = rule as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) return `${at} has an unknown field "${unknown}"`;
    if (typeof name !== 'string' || !LIMIT_NAME.test(name)) {
      return `${at}.name must be 1 to 32 of a-z, 0-9, _ and -, starting with a letter`;
    }
    if (names.has(name)) return `limits has two limits named "${name}"`;
    names.add(name);
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_LIMIT) {
      return `${at}.limit must be a whole number from 1 to ${MAX_LIMIT}`;
    }
    const seconds = windowSeconds as number;
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_WINDOW_SECONDS) {
      return `${at}.windowSeconds must be a whole number from 1 to ${MAX_WINDOW_SECONDS}`;
    }
  }
  return undefined;
}

/**
 * The tier a key is counted by: its tier, with the key's own limits in place of the tier's when it
 * has them. The name stays the tier's (cached answers and the tier's other rules go by it).
 * @example withKeyLimits(DEFAULT_TIERS.free, [{ name: 'minute', limit: 600, windowSeconds: 60 }]).limits[0].limit // 600
 */
export function withKeyLimits(tier: Tier, limits: readonly LimitRule[] | null | undefined): Tier {
  if (limits === null || limits === undefined) return tier;
  return { ...tier, limits };
}
