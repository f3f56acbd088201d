/**
 * How a rate-limit decision (../domain/limits/fixed-window.ts) is told to a client: the header
 * fields. The limiter decides; this file names the fields, for both entries of the request pipeline (src/http/README.md).
 */
import {
  bindingLimit,
  type LimitDecision,
  type LimitState,
  secondsUntil,
  unitsOf,
} from '../../domain/limits/fixed-window.js';

/** The fields that tell a client its limits, in their order (`Retry-After` follows on a refusal). */
export const RATE_LIMIT_FIELDS = [
  'ratelimit-policy',
  'ratelimit',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
] as const;

/**
 * The IETF draft `RateLimit-Policy` and `RateLimit` fields plus the legacy `X-RateLimit-*` ones,
 * and `Retry-After` on a refusal (`counted`: see `unitsStillOf`). For a request that weighs `cost` units (more than one), each
 * policy says what it took from that limit in a `pricepoint-cost` parameter (the draft's place for
 * a service's own parameters), e.g. `"minute";q=1200;w=60;pricepoint-cost=12`.
 * @example rateLimitHeaders(decision, now).ratelimit // '"minute";r=12;t=41'
 */
export function rateLimitHeaders(
  decision: LimitDecision,
  nowMs: number,
  cost = 1,
  counted = 0,
): Record<string, string> {
  const values: string[] = [];
  const reset = rateLimitValues(values, 0, decision, nowMs, cost, counted);
  const headers: Record<string, string> = {};
  if (reset < 0) return headers;
  RATE_LIMIT_FIELDS.forEach((name, i) => {
    headers[name] = values[i] as string;
  });
  if (!decision.allowed) headers['retry-after'] = String(reset);
  return headers;
}

/**
 * The values of `RATE_LIMIT_FIELDS` for a decision, written into `values` from `at`, for the fast
 * entry (src/speed/fast-entry.ts) as for `rateLimitHeaders`. Returns the seconds until the binding limit
 * resets (what `Retry-After` says on a refusal), or -1 when no limit binds (a tier without limits:
 * no fields at all).
 */
export function rateLimitValues(
  values: string[],
  at: number,
  decision: LimitDecision,
  nowMs: number,
  cost = 1,
  counted = 0,
): number {
  const binding = bindingLimit(decision, cost, counted);
  if (binding === undefined) return -1;
  const reset = secondsUntil(binding.resetAtMs, nowMs);
  values[at] = cost > 1 ? weightedPolicyOf(decision.states, cost) : policyOf(decision.states);
  values[at + 1] = `"${binding.rule.name}";r=${binding.remaining};t=${reset}`;
  values[at + 2] = String(binding.rule.limit);
  values[at + 3] = String(binding.remaining);
  values[at + 4] = String(Math.ceil(binding.resetAtMs / 1000));
  return reset;
}

/** `"minute";q=30;w=60, "day";q=1000;w=86400`: the limits of a decision, in their order. */
function policyOf(states: readonly LimitState[]): string {
  return states.map((s) => `"${s.rule.name}";q=${s.rule.limit};w=${s.rule.windowSeconds}`).join(', ');
}

/** `"minute";q=1200;w=60;pricepoint-cost=12`: the policy, with what a weighted request took from each. */
function weightedPolicyOf(states: readonly LimitState[], cost: number): string {
  return states
    .map(
      (s) =>
        `"${s.rule.name}";q=${s.rule.limit};w=${s.rule.windowSeconds};pricepoint-cost=${unitsOf(s.rule, cost)}`,
    )
    .join(', ');
}
