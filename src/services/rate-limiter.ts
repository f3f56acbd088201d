/**
 * Applies a key's tier limits (docs/keys-and-tiers.md): one unit from every limit, or none when any is
 * used up. The demo tier counts per key and client address, so one noisy user of the shared demo
 * key does not lock everyone else out.
 *
 * A request that costs more than an ordinary one to answer (a long range of a fine series) weighs
 * several units, so a tier's limits bound the work a key can ask for, not only its request count:
 * the key guard works out the weight from the URL and calls `take` with it (docs/using-the-api.md "Rate limits").
 */
import { ApiError } from '../domain/errors/api-error.js';
import {
  bindingLimit,
  checkCost,
  type LimitDecision,
  type LimitReport,
  secondsUntil,
  shortLimits,
} from '../domain/limits/fixed-window.js';
import { withKeyLimits } from '../domain/limits/key-limits.js';
import { countedAs, type Tier } from '../domain/limits/tiers.js';
import type { KeyRecord, LimitGate, RateLimitStore } from '../stores/types.js';
import { budgetUsedUp } from './failure-budget.js';

export interface RateLimiterDeps {
  readonly store: RateLimitStore;
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly clock: () => number;
}

/** A key's tier limits, counted in the rate-limit store (docs/keys-and-tiers.md). */
export interface RateLimiter {
  /** The key's tier; throws `service_unavailable` when the tier is no longer configured. */
  tierOf(key: KeyRecord): Tier;
  /**
   * Counts one request, or `cost` units of every limit for a heavy one (all or nothing). Returns
   * the decision to tell the client; throws `rate_limited` (carrying the same report) when a limit
   * has fewer units left than the request takes. With `gate` (the address' failed-login budget)
   * it is checked in the same store call, and a shut gate throws its 429, taking nothing.
   */
  take(key: KeyRecord, ip: string, cost?: number, gate?: LimitGate): Promise<LimitReport>;
  /** What is left for the key, without counting (for `/usage`). */
  peek(key: KeyRecord, ip: string): Promise<LimitDecision>;
}

export function createRateLimiter({ store, tiers, clock }: RateLimiterDeps): RateLimiter {
  // The tier of a key with limits of its own, made once per key record (as its subject below).
  const ownTiers = new WeakMap<KeyRecord, Tier>();

  /** The key's tier, with the key's own limits in place of the tier's when it has them. */
  function tierOf(key: KeyRecord): Tier {
    const tier = Object.hasOwn(tiers, key.tier) ? tiers[key.tier] : undefined;
    // A key whose tier was removed from the config has no limits to apply: refuse rather than guess.
    if (tier === undefined)
      throw new ApiError('service_unavailable', 'The tier of this key is not configured.');
    if (key.limits == null) return tier;
    let own = ownTiers.get(key);
    if (own === undefined || own.name !== tier.name) {
      own = withKeyLimits(tier, key.limits);
      ownTiers.set(key, own);
    }
    return own;
  }

  // A key's own subject, made once per key record (the authenticator hands out the same record while
  // it holds the key): counters are found by it on every request.
  const ownSubjects = new WeakMap<KeyRecord, string>();

  function subject(key: KeyRecord, tier: Tier, ip: string): string {
    if (tier.countPer === 'key+ip') return countedAs(tier, key.id, ip);
    let own = ownSubjects.get(key);
    if (own === undefined) {
      own = `key:${key.id}`;
      ownSubjects.set(key, own);
    }
    return own;
  }

  return {
    tierOf,
    async take(key: KeyRecord, ip: string, cost = 1, gate?: LimitGate): Promise<LimitReport> {
      checkCost(cost);
      const tier = tierOf(key);
      const nowMs = clock();
      const counted = subject(key, tier, ip);
      let decision: LimitDecision;
      if (gate === undefined) decision = await store.consume(counted, tier.limits, nowMs, cost);
      else {
        const admitted = await store.consumeWithin(gate, counted, tier.limits, nowMs, cost);
        // Only a shut gate gives no decision; its 429 says when the budget has room again.
        if (admitted === undefined)
          throw budgetUsedUp(await store.peek(gate.subject, gate.limits, nowMs), nowMs);
        decision = admitted;
      }
      const report = { decision, nowMs, cost };
      if (!decision.allowed) throw refusal(report, key.limits == null ? `tier ${tier.name}` : 'this key');
      return report;
    },

    async peek(key: KeyRecord, ip: string): Promise<LimitDecision> {
      const tier = tierOf(key);
      return store.peek(subject(key, tier, ip), tier.limits, clock());
    },
  };
}

/** The 429 of a request of `report.cost` units that a limit of `owner` (the tier, or the key) could not pay. */
function refusal(report: LimitReport, owner: string): ApiError {
  const { decision, nowMs, cost } = report;
  const binding = bindingLimit(decision, cost);
  const violated = shortLimits(decision, cost).map((s) => s.rule.name);
  const seconds = binding ? secondsUntil(binding.resetAtMs, nowMs) : 1;
  const what = cost > 1 ? `has fewer units left than this request weighs (${cost})` : 'is used up';
  const detail = binding
    ? `The ${binding.rule.name} limit of ${owner} (${binding.rule.limit}) ${what}; it resets in ${seconds} s.`
    : `A limit of ${owner} ${what}.`;
  return new ApiError('rate_limited', detail, {
    limits: report,
    retryAfterSeconds: seconds,
    extra: { 'violated-policies': violated },
  });
}
