/**
 * The failed-login budget of client addresses (docs/decisions.md): so many failed authentications a
 * minute per address (IPv6 per /64), counted in the rate-limit store, so that instances sharing Redis
 * share it. Past it, every request from the address is refused with 429 before any key lookup.
 */
import { boundedCache } from '../cache/bounded-cache.js';
import { ApiError } from '../domain/errors/api-error.js';
import { type LimitDecision, secondsUntil } from '../domain/limits/fixed-window.js';
import type { LimitRule } from '../domain/limits/tiers.js';
import { addressGroup } from '../domain/net/client-address.js';
import type { LimitGate, RateLimitStore } from '../stores/types.js';

// Every request looks its address' budget up, and an address comes back with every request of its
// connections: its subject is worked out once, and kept in a bounded memo like every cache here.
const subjects = boundedCache<string, string>({ maxEntries: 4_096 });

/** Where failed logins from `ip` (and its neighbours) are counted. */
export function failureSubject(ip: string): string {
  let subject = subjects.get(ip);
  if (subject === undefined) {
    subject = `auth-failures:${addressGroup(ip)}`;
    subjects.set(ip, subject);
  }
  return subject;
}

/** @example const budget = createFailureBudget(stores.rateLimits, 20) */
export function createFailureBudget(store: RateLimitStore, perMinute: number) {
  const rule: LimitRule[] = [{ name: 'auth-failures', limit: perMinute, windowSeconds: 60 }];

  return {
    /**
     * Takes one unit of `subject`'s budget, atomically: a failure, or a reservation for a lookup
     * whose outcome is not known yet. Throws the 429 (taking nothing) when none is left.
     */
    async take(subject: string, now: number): Promise<LimitDecision> {
      const decision = await store.consume(subject, rule, now);
      if (!decision.allowed) throw budgetUsedUp(decision, now);
      return decision;
    },

    /** Throws the 429 when `subject`'s budget is used up; takes nothing. */
    async check(subject: string, now: number): Promise<void> {
      const decision = await store.peek(subject, rule, now);
      if (!decision.allowed) throw budgetUsedUp(decision, now);
    },

    /** Gives a reserved unit back. Should that fail, the address has one failure too many, nothing worse. */
    async giveBack(subject: string, reservation: LimitDecision): Promise<void> {
      try {
        await store.giveBack(subject, reservation);
      } catch {
        // The unit stays taken until its minute is over.
      }
    },

    /** The budget of `ip` as a gate the admit step checks in the same store call that counts a request. */
    gate(ip: string): LimitGate {
      return { subject: failureSubject(ip), limits: rule };
    },
  };
}

/** The 429 of an address whose budget is used up (`decision`: a peek at it). */
export function budgetUsedUp(decision: LimitDecision, now: number): ApiError {
  const seconds = secondsUntil(decision.states[0]?.resetAtMs ?? now + 60_000, now);
  return new ApiError(
    'too_many_auth_failures',
    `Too many failed authentications from this address; try again in ${seconds} s.`,
    { retryAfterSeconds: seconds },
  );
}

export type FailureBudget = ReturnType<typeof createFailureBudget>;
