/**
 * Fixed windows aligned to the Unix epoch (DESIGN section 4): a 60 s window resets at every whole
 * UTC minute, a day window at 00:00 UTC. This file holds the arithmetic and the response headers;
 * the counting itself lives in a `RateLimitStore`.
 */
import type { LimitRule } from './tiers.js';

/** The window `nowMs` falls in: its number since the epoch and when it ends (epoch ms). */
export function windowOf(nowMs: number, windowSeconds: number): { id: number; resetAtMs: number } {
  const length = windowSeconds * 1000;
  const id = Math.floor(nowMs / length);
  return { id, resetAtMs: (id + 1) * length };
}

/** What one limit has left after a request. */
export interface LimitState {
  readonly rule: LimitRule;
  readonly remaining: number;
  readonly resetAtMs: number;
}

/** The answer of a rate-limit store: allowed only if every limit had a unit left. */
export interface LimitDecision {
  readonly allowed: boolean;
  readonly states: readonly LimitState[];
}

/**
 * The limit a client should watch: on a refusal, the used-up limit that resets last (retrying
 * earlier cannot succeed); otherwise the one with the fewest requests left.
 */
export function bindingLimit(decision: LimitDecision): LimitState | undefined {
  let chosen: LimitState | undefined;
  for (const state of decision.states) {
    if (!decision.allowed && state.remaining > 0) continue;
    if (
      chosen === undefined ||
      state.remaining < chosen.remaining ||
      (state.remaining === chosen.remaining && state.resetAtMs > chosen.resetAtMs)
    ) {
      chosen = state;
    }
  }
  return chosen;
}

/** Whole seconds until `resetAtMs`, at least 1, rounded up so a client never retries too early. */
export function secondsUntil(resetAtMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000));
}

/**
 * The IETF draft `RateLimit-Policy` and `RateLimit` fields plus the legacy `X-RateLimit-*` ones,
 * and `Retry-After` on a refusal.
 * @example rateLimitHeaders(decision, now)['RateLimit'] // '"minute";r=12;t=41'
 */
export function rateLimitHeaders(decision: LimitDecision, nowMs: number): Record<string, string> {
  const binding = bindingLimit(decision);
  if (binding === undefined) return {};
  const reset = secondsUntil(binding.resetAtMs, nowMs);
  const headers: Record<string, string> = {
    'ratelimit-policy': policyOf(decision.states),
    ratelimit: `"${binding.rule.name}";r=${binding.remaining};t=${reset}`,
    'x-ratelimit-limit': String(binding.rule.limit),
    'x-ratelimit-remaining': String(binding.remaining),
    'x-ratelimit-reset': String(Math.ceil(binding.resetAtMs / 1000)),
  };
  if (!decision.allowed) headers['retry-after'] = String(reset);
  return headers;
}

// A tier's rules are the same objects for the life of the process: its policy text is written once,
// kept under its first rule and checked against all of them.
const policies = new WeakMap<LimitRule, { rules: readonly LimitRule[]; text: string }>();

/** `"minute";q=30;w=60, "day";q=1000;w=86400`: the limits of a decision, in their order. */
function policyOf(states: readonly LimitState[]): string {
  const first = states[0]?.rule;
  const known = first && policies.get(first);
  if (known && known.rules.length === states.length && known.rules.every((r, i) => states[i]?.rule === r)) {
    return known.text;
  }
  const text = states.map((s) => `"${s.rule.name}";q=${s.rule.limit};w=${s.rule.windowSeconds}`).join(', ');
  if (first) policies.set(first, { rules: states.map((s) => s.rule), text });
  return text;
}
