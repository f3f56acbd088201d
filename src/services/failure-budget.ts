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

/** Failed logins per client address, counted where the rate limits are (shared between instances on Redis). */
export interface FailureBudget {
  /**
   * Takes one unit of `subject`'s budget, atomically: a failure, or a reservation for a lookup
   * whose outcome is not known yet. Throws the 429 (taking nothing) when none is left.
   */
  take(subject: string, now: number): Promise<LimitDecision>;
  /** Throws the 429 when `subject`'s budget is used up; takes nothing. */
  check(subject: string, now: number): Promise<void>;
  /** Gives a reserved unit back. Should that fail, the address has one failure too many, nothing worse. */
  giveBack(subject: string, reservation: LimitDecision): Promise<void>;
  /** The budget of `ip` as a gate the admit step checks in the same store call that counts a request. */
  gate(ip: string): LimitGate;
  /** Where failed logins from `ip` (and its neighbours) are counted. */
  subject(ip: string): string;
}

/** @example const budget = createFailureBudget(stores.rateLimits, 20) */
export function createFailureBudget(store: RateLimitStore, perMinute: number): FailureBudget {
  const rule: LimitRule[] = [{ name: 'auth-failures', limit: perMinute, windowSeconds: 60 }];
  // Every request looks its address' budget up, and an address comes back with every request of its
  // connections: its subject is worked out once, and kept in a bounded memo like every cache here.
  const subjects = boundedCache<string, string>({ maxEntries: 4_096 });
  const subjectOf = (ip: string): string => {
    let subject = subjects.get(ip);
    if (subject === undefined) {
      subject = `auth-failures:${addressGroup(ip)}`;
      subjects.set(ip, subject);
    }
    return subject;
  };

  return {
    async take(subject: string, now: number): Promise<LimitDecision> {
      const decision = await store.consume(subject, rule, now);
      if (!decision.allowed) throw budgetUsedUp(decision, now);
      return decision;
    },

    async check(subject: string, now: number): Promise<void> {
      const decision = await store.peek(subject, rule, now);
      if (!decision.allowed) throw budgetUsedUp(decision, now);
    },

    async giveBack(subject: string, reservation: LimitDecision): Promise<void> {
      try {
        await store.giveBack(subject, reservation);
      } catch {
        // The unit stays taken until its minute is over.
      }
    },

    gate(ip: string): LimitGate {
      return { subject: subjectOf(ip), limits: rule };
    },

    subject: subjectOf,
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
