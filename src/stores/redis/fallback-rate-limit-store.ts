/**
 * Rate limits when Redis may be away (docs/scale-out.md): the shared counters while Redis answers,
 * the operator's policy while it does not, and shared counting again as soon as it answers again.
 *
 * - `local`: each instance counts on its own (`MemoryRateLimitStore`), so a client may get up to
 *   one limit per instance; answers stay fast and limits still bite.
 * - `open`: every request is allowed and nothing is counted.
 * - `closed`: every counted request is refused with 503.
 *
 * After a failure no request asks the primary again: a dead or hanging Redis costs only the requests
 * that were waiting on it when it went away, never one command timeout per request. Instead a probe
 * (Redis: PING) runs in the background, at once and then every `backoffMs`, traffic or not; when it
 * answers, counting is shared again, and `state()` (which /readyz reports) says so without waiting
 * for a request. The same circuit breaker guards PostgreSQL (../circuit-breaker.ts).
 */
import { ApiError } from '../../domain/errors/api-error.js';
import { type LimitDecision, windowOf } from '../../domain/limits/fixed-window.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import { CircuitBreaker } from '../circuit-breaker.js';
import type { MemoryRateLimitStore } from '../memory/rate-limit-store.js';
import type { LimitGate, RateLimitStore } from '../types.js';

export type FallbackPolicy = 'local' | 'open' | 'closed';

export interface FallbackOptions {
  readonly policy: FallbackPolicy;
  /** How long between probes of the primary while it is away (default 500 ms: twice a second). */
  readonly backoffMs?: number;
  /**
   * Called for every decision made without the primary, with the error that made it degraded (the
   * same object until it answers again, so a logger can log each outage once).
   */
  readonly onFallback?: (decision: FallbackPolicy, error: unknown) => void;
  /** Called for every failed call of the primary, a request's or a probe's (errors and timeouts): for metrics. */
  readonly onError?: (error: unknown) => void;
  /**
   * Resolves when the primary answers again, rejects while it does not (Redis: PING). Default: a
   * peek at a subject of its own, which counts nothing.
   */
  readonly probe?: () => Promise<unknown>;
}

/** The subject and limit the default probe peeks at: peeking takes nothing. */
const PROBE_SUBJECT = 'fallback-probe';
const PROBE_LIMITS: readonly LimitRule[] = [{ name: 'probe', limit: 1, windowSeconds: 1 }];

export class FallbackRateLimitStore implements RateLimitStore {
  private readonly breaker: CircuitBreaker;

  /** @example new FallbackRateLimitStore(new RedisRateLimitStore(client, 'pp:'), new MemoryRateLimitStore(), { policy: 'local', probe: () => client.ping() }) */
  constructor(
    private readonly primary: RateLimitStore,
    private readonly local: MemoryRateLimitStore,
    private readonly options: FallbackOptions,
  ) {
    const probe = options.probe ?? (async () => primary.peek(PROBE_SUBJECT, PROBE_LIMITS, Date.now()));
    this.breaker = new CircuitBreaker({
      name: 'Redis',
      probeEveryMs: options.backoffMs ?? 500,
      probe: async () => {
        try {
          await probe();
        } catch (error) {
          this.report(error);
          throw error;
        }
      },
    });
  }

  /** `shared` while the primary answers (or has not failed yet); `degraded` from a failure until a probe answers. */
  state(): 'shared' | 'degraded' {
    return this.breaker.open ? 'degraded' : 'shared';
  }

  consume(subject: string, limits: readonly LimitRule[], nowMs: number, cost = 1): Promise<LimitDecision> {
    return this.decide((store) => store.consume(subject, limits, nowMs, cost), limits, nowMs);
  }

  /**
   * Best effort, never throws: to the store that answers now. Across the start or end of an outage
   * the units may go back to the other store than took them: at most that many units more or less
   * for that subject in that window. A unit not given back costs its caller that unit.
   */
  async giveBack(subject: string, taken: LimitDecision, cost = 1): Promise<void> {
    try {
      if (!this.breaker.open) await this.primary.giveBack(subject, taken, cost);
      else if (this.options.policy === 'local') await this.local.giveBack(subject, taken, cost);
    } catch (error) {
      this.fail(error);
    }
  }

  peek(subject: string, limits: readonly LimitRule[], nowMs: number): Promise<LimitDecision> {
    return this.decide((store) => store.peek(subject, limits, nowMs), limits, nowMs);
  }

  consumeWithin(
    gate: LimitGate,
    subject: string,
    limits: readonly LimitRule[],
    nowMs: number,
    cost = 1,
  ): Promise<LimitDecision | undefined> {
    return this.decide((store) => store.consumeWithin(gate, subject, limits, nowMs, cost), limits, nowMs);
  }

  /** Stops probing, so the process can exit; decisions keep following the policy while degraded. */
  close(): void {
    this.breaker.stop();
  }

  private async decide<T extends LimitDecision | undefined>(
    ask: (store: RateLimitStore) => Promise<T>,
    limits: readonly LimitRule[],
    nowMs: number,
  ): Promise<T | LimitDecision> {
    if (!this.breaker.open) {
      try {
        return await ask(this.primary);
      } catch (error) {
        this.fail(error);
      }
    }
    const { policy, onFallback } = this.options;
    onFallback?.(policy, this.breaker.cause);
    if (policy === 'local') return ask(this.local);
    if (policy === 'open') return openDecision(limits, nowMs);
    throw new ApiError(
      'service_unavailable',
      'Rate limiting is unavailable for a moment; try again shortly.',
      { retryAfterSeconds: 1 },
    );
  }

  /** Requests that were waiting together fail together: the first trips the breaker, one outage. */
  private fail(error: unknown): void {
    this.report(error);
    this.breaker.trip(error);
  }

  private report(error: unknown): void {
    try {
      this.options.onError?.(error);
    } catch {
      // A failing reporter must not change a rate-limit decision.
    }
  }
}

/** Allowed, nothing counted: every limit reports its full quota for the current app-clock window. */
function openDecision(limits: readonly LimitRule[], nowMs: number): LimitDecision {
  return {
    allowed: true,
    states: limits.map((rule) => ({
      rule,
      remaining: rule.limit,
      resetAtMs: windowOf(nowMs, rule.windowSeconds).resetAtMs,
    })),
  };
}
