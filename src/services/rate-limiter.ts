/**
 * Applies a key's tier limits (DESIGN section 4): one unit from every limit, or none when any is
 * used up. The demo tier counts per key and client address, so one noisy user of the shared demo
 * key does not lock everyone else out.
 */
import { ApiError } from '../domain/errors/api-error.js';
import { bindingLimit, type LimitDecision, rateLimitHeaders } from '../domain/limits/fixed-window.js';
import type { Tier } from '../domain/limits/tiers.js';
import { addressGroup } from '../domain/net/client-address.js';
import { andThen, type Maybe } from '../stores/maybe.js';
import type { KeyRecord, LimitGate, RateLimitStore } from '../stores/types.js';

export interface RateLimiterDeps {
  readonly store: RateLimitStore;
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly clock: () => number;
}

export function createRateLimiter({ store, tiers, clock }: RateLimiterDeps) {
  function tierOf(key: KeyRecord): Tier {
    const tier = Object.hasOwn(tiers, key.tier) ? tiers[key.tier] : undefined;
    // A key whose tier was removed from the config has no limits to apply: refuse rather than guess.
    if (tier === undefined)
      throw new ApiError('service_unavailable', 'The tier of this key is not configured.');
    return tier;
  }

  function subject(key: KeyRecord, tier: Tier, ip: string): string {
    return tier.countPer === 'key+ip' ? `key:${key.id}:${addressGroup(ip)}` : `key:${key.id}`;
  }

  return {
    tierOf,

    /**
     * Counts one request. Returns the headers for the answer; throws `rate_limited` (with the same
     * headers and `Retry-After`) when a limit is used up.
     */
    async take(key: KeyRecord, ip: string): Promise<Record<string, string>> {
      const tier = tierOf(key);
      const now = clock();
      const decision = await store.consume(subject(key, tier, ip), tier.limits, now);
      const headers = rateLimitHeaders(decision, now);
      if (!decision.allowed) throw refusal(decision, tier, headers);
      return headers;
    },

    /**
     * Counts one request if `gate` is open and every limit has a unit left, for the fast path: the
     * answer's headers, or `undefined` when the gate is shut or a limit used up (nothing is taken;
     * the full path then says why). An in-process store answers at once, Redis in one round trip;
     * a store error rejects, as in `take`.
     */
    takeIfAllowed(key: KeyRecord, ip: string, gate: LimitGate): Maybe<Record<string, string> | undefined> {
      const tier = tierOf(key);
      const now = clock();
      return andThen(store.consumeBehind(gate, subject(key, tier, ip), tier.limits, now), (decision) =>
        decision?.allowed ? rateLimitHeaders(decision, now) : undefined,
      );
    },

    /** What is left for the key, without counting (for `/usage`). */
    async peek(key: KeyRecord, ip: string): Promise<LimitDecision> {
      const tier = tierOf(key);
      return store.peek(subject(key, tier, ip), tier.limits, clock());
    },
  };
}

function refusal(decision: LimitDecision, tier: Tier, headers: Record<string, string>): ApiError {
  const binding = bindingLimit(decision);
  const violated = decision.states.filter((s) => s.remaining === 0).map((s) => s.rule.name);
  const seconds = headers['retry-after'] ?? '1';
  const detail = binding
    ? `The ${binding.rule.name} limit of tier ${tier.name} (${binding.rule.limit}) is used up; it resets in ${seconds} s.`
    : `A limit of tier ${tier.name} is used up.`;
  return new ApiError('rate_limited', detail, { headers, extra: { 'violated-policies': violated } });
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
