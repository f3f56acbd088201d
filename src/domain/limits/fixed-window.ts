/**
 * Fixed windows aligned to the Unix epoch (docs/keys-and-tiers.md): a 60 s window resets at every whole
 * UTC minute, a day window at 00:00 UTC. This file holds the arithmetic; the counting itself lives
 * in a `RateLimitStore`, and the HTTP layer tells the client a decision in its rate-limit header
 * fields (docs/using-the-api.md "Rate limits").
 */
import type { LimitRule } from './tiers.js';

/** The window `nowMs` falls in: its number since the epoch and when it ends (epoch ms). */
export function windowOf(nowMs: number, windowSeconds: number): { id: number; resetAtMs: number } {
  const length = windowSeconds * 1000;
  const id = Math.floor(nowMs / length);
  return { id, resetAtMs: (id + 1) * length };
}

/**
 * What a request that weighs `cost` units takes from `rule`: a cost above the limit takes the whole
 * limit, so a request heavier than a limit waits for a fresh window instead of never passing.
 */
export function unitsOf(rule: LimitRule, cost: number): number {
  return Math.min(cost, rule.limit);
}

/**
 * What a request that weighs `cost` units still takes from `rule` when `counted` of them were taken
 * for it already: in all it takes `unitsOf(rule, cost)`, so also a limit smaller than the weight can
 * be paid in one window. Every route works out its weight before it is counted and takes it in one
 * step, so callers leave `counted` at 0.
 */
export function unitsStillOf(rule: LimitRule, cost: number, counted = 0): number {
  return unitsOf(rule, cost) - unitsOf(rule, counted);
}

/**
 * A cost is a whole number of units, at least one, and what was counted of it already a whole
 * number from 0 to the cost; anything else is a caller's bug.
 */
export function checkCost(cost: number, counted = 0): void {
  if (!Number.isSafeInteger(cost) || cost < 1) {
    throw new RangeError(`a rate-limit cost must be a positive integer, not ${cost}`);
  }
  if (!Number.isSafeInteger(counted) || counted < 0 || counted > cost) {
    throw new RangeError(
      `the units counted already must be a whole number from 0 to ${cost}, not ${counted}`,
    );
  }
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

/** The limits that refused a request of `cost` (`counted` of it taken before): fewer units left than it needed. */
export function shortLimits(decision: LimitDecision, cost = 1, counted = 0): LimitState[] {
  return decision.states.filter((state) => state.remaining < unitsStillOf(state.rule, cost, counted));
}

/**
 * The limit a client should watch: on a refusal of a request of `cost`, the limit it was short of
 * that resets last (retrying earlier cannot succeed); otherwise the one with the fewest units left.
 */
export function bindingLimit(decision: LimitDecision, cost = 1, counted = 0): LimitState | undefined {
  let chosen: LimitState | undefined;
  for (const state of decision.states) {
    if (!decision.allowed && state.remaining >= unitsStillOf(state.rule, cost, counted)) continue;
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
 * A decision as the caller is told of it: what was decided, when, and what the request weighed,
 * from which the HTTP layer writes the rate-limit header fields of the answer or the refusal.
 */
export interface LimitReport {
  readonly decision: LimitDecision;
  readonly nowMs: number;
  readonly cost: number;
}
