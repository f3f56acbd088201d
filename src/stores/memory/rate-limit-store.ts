/**
 * In-process fixed-window counters: the embedded default, and the fallback when Redis is away.
 *
 * Counters of one window length live in one map that is dropped whole when the window rolls over,
 * or, for a length nobody uses any more, at the first request after its window ended. So memory is
 * bounded by the callers of the current windows, never by history, and cleanup costs one look at
 * each window length per request (a handful: windows are kept in a list, not hashed by length).
 * JavaScript runs one request's check-and-take without interruption (each method decides before it
 * returns its promise), which makes all-or-nothing exact under any concurrency within the process.
 */
import {
  checkCost,
  type LimitDecision,
  type LimitState,
  unitsOf,
  windowOf,
} from '../../domain/limits/fixed-window.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import type { LimitGate, RateLimitStore } from '../types.js';

/** Units used per subject, then per limit name: no counter name is joined or hashed per request. */
type Counts = Map<string, Map<string, number>>;

interface WindowCounters {
  readonly seconds: number;
  readonly resetAtMs: number;
  readonly counts: Counts;
}

export class MemoryRateLimitStore implements RateLimitStore {
  /** The current window of each length in use: a handful, found by a look along the list. */
  private windows: WindowCounters[] = [];

  /** Counters held now, across every window length: what the boundedness test watches. */
  get size(): number {
    let total = 0;
    for (const window of this.windows) {
      for (const counters of window.counts.values()) total += counters.size;
    }
    return total;
  }

  /** The window of `seconds` kept now, whether or not it has ended. */
  private kept(seconds: number): WindowCounters | undefined {
    for (const window of this.windows) if (window.seconds === seconds) return window;
    return undefined;
  }

  /** The current window of `seconds`, begun afresh when the last one has ended. */
  private window(seconds: number, nowMs: number): WindowCounters {
    const kept = this.kept(seconds);
    if (kept !== undefined && kept.resetAtMs > nowMs) return kept;
    const window = { seconds, resetAtMs: windowOf(nowMs, seconds).resetAtMs, counts: new Map() };
    this.windows = [...this.windows.filter((w) => w !== kept), window];
    return window;
  }

  /**
   * Drops every window that has ended: one of a length this request does not use would otherwise
   * stay until the next request that does, which may never come (a tier removed, a day limit
   * nobody calls tomorrow).
   */
  private dropEnded(nowMs: number): void {
    for (const window of this.windows) {
      if (window.resetAtMs <= nowMs) {
        this.windows = this.windows.filter((w) => w.resetAtMs > nowMs);
        return;
      }
    }
  }

  /** Whether `subject` has a unit left of every one of `limits`: a gate's check, taking nothing. */
  private admits(subject: string, limits: readonly LimitRule[], nowMs: number): boolean {
    this.dropEnded(nowMs);
    for (const rule of limits) {
      const used = this.window(rule.windowSeconds, nowMs).counts.get(subject)?.get(rule.name) ?? 0;
      if (used >= rule.limit) return false;
    }
    return true;
  }

  private read(subject: string, limits: readonly LimitRule[], nowMs: number) {
    this.dropEnded(nowMs);
    return limits.map((rule) => {
      const { counts, resetAtMs } = this.window(rule.windowSeconds, nowMs);
      const counters = counts.get(subject);
      return { rule, counts, counters, used: counters?.get(rule.name) ?? 0, resetAtMs };
    });
  }

  async consume(
    subject: string,
    limits: readonly LimitRule[],
    nowMs: number,
    cost = 1,
  ): Promise<LimitDecision> {
    return this.take(subject, limits, nowMs, cost);
  }

  async consumeWithin(
    gate: LimitGate,
    subject: string,
    limits: readonly LimitRule[],
    nowMs: number,
    cost = 1,
  ): Promise<LimitDecision | undefined> {
    if (!this.admits(gate.subject, gate.limits, nowMs)) return undefined;
    return this.take(subject, limits, nowMs, cost);
  }

  async giveBack(subject: string, taken: LimitDecision, cost = 1): Promise<void> {
    this.putBack(subject, taken, cost);
  }

  async peek(subject: string, limits: readonly LimitRule[], nowMs: number): Promise<LimitDecision> {
    return this.look(subject, limits, nowMs);
  }

  private take(subject: string, limits: readonly LimitRule[], nowMs: number, cost: number): LimitDecision {
    checkCost(cost);
    const current = this.read(subject, limits, nowMs);
    const allowed = current.every((c) => c.used + unitsOf(c.rule, cost) <= c.rule.limit);
    const states: LimitState[] = current.map((c) => {
      const used = allowed ? c.used + unitsOf(c.rule, cost) : c.used;
      if (allowed) {
        if (c.counters !== undefined) c.counters.set(c.rule.name, used);
        // Two limits of one length share the subject's map: the first one made it.
        else countersOf(c.counts, subject).set(c.rule.name, used);
      }
      return { rule: c.rule, remaining: Math.max(0, c.rule.limit - used), resetAtMs: c.resetAtMs };
    });
    return { allowed, states };
  }

  private putBack(subject: string, taken: LimitDecision, cost: number): void {
    checkCost(cost);
    if (!taken.allowed) return;
    for (const state of taken.states) {
      const window = this.kept(state.rule.windowSeconds);
      // The units went to the window that ends at `resetAtMs`; once it has rolled over, they are gone.
      if (window === undefined || window.resetAtMs !== state.resetAtMs) continue;
      const counters = window.counts.get(subject);
      if (counters === undefined) continue;
      const left = (counters.get(state.rule.name) ?? 0) - unitsOf(state.rule, cost);
      if (left > 0) counters.set(state.rule.name, left);
      else {
        counters.delete(state.rule.name);
        if (counters.size === 0) window.counts.delete(subject);
      }
    }
  }

  private look(subject: string, limits: readonly LimitRule[], nowMs: number): LimitDecision {
    const current = this.read(subject, limits, nowMs);
    return {
      allowed: current.every((c) => c.used < c.rule.limit),
      states: current.map((c) => ({
        rule: c.rule,
        remaining: Math.max(0, c.rule.limit - c.used),
        resetAtMs: c.resetAtMs,
      })),
    };
  }
}

/** The counters of `subject` in `counts`, made empty the first time. */
function countersOf(counts: Counts, subject: string): Map<string, number> {
  let counters = counts.get(subject);
  if (counters === undefined) {
    counters = new Map();
    counts.set(subject, counters);
  }
  return counters;
}
