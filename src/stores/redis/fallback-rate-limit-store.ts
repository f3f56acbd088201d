/**
 * Rate limits when Redis may be away (DESIGN section 7): the shared counters while Redis answers,
 * the operator's policy while it does not, and shared counting again as soon as it answers again.
 *
 * - `local`: each instance counts on its own (`MemoryRateLimitStore`), so a client may get up to
 *   one limit per instance; answers stay fast and limits still bite.
 * - `open`: every request is allowed and nothing is counted.
 * - `closed`: every counted request is refused with 503.
 *
 * After a failure the primary is left alone for `backoffMs`, so a dead or hanging Redis costs one
 * request per back-off, not every request its command timeout. Then one request probes it (the
 * others keep using the policy meanwhile); when the probe answers, counting is shared again.
 */
import { ApiError } from '../../domain/errors/api-error.js';
import { type LimitDecision, windowOf } from '../../domain/limits/fixed-window.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import type { MemoryRateLimitStore } from '../memory/rate-limit-store.js';
import type { RateLimitStore } from '../types.js';

export type FallbackPolicy = 'local' | 'open' | 'closed';

export interface FallbackOptions {
  readonly policy: FallbackPolicy;
  /** How long to leave the primary alone after it failed (default 500 ms). */
  readonly backoffMs?: number;
  /**
   * Called for every decision made without the primary, with the error that started the current
   * back-off (the same object for the whole back-off, so a logger can log each error once).
   */
  readonly onFallback?: (decision: FallbackPolicy, error: unknown) => void;
  /** A monotonic clock in ms for the back-off; tests may replace it. */
  readonly monotonicMs?: () => number;
}

export class FallbackRateLimitStore implements RateLimitStore {
  private readonly backoffMs: number;
  private readonly monotonicMs: () => number;
  private lastError: unknown;
  private failed = false;
  private retryAtMs = 0;
  private probing = false;

  /** @example new FallbackRateLimitStore(new RedisRateLimitStore(client, 'pp:'), new MemoryRateLimitStore(), { policy: 'local' }) */
  constructor(
    private readonly primary: RateLimitStore,
    private readonly local: MemoryRateLimitStore,
    private readonly options: FallbackOptions,
  ) {
    this.backoffMs = options.backoffMs ?? 500;
    this.monotonicMs = options.monotonicMs ?? (() => performance.now());
  }

  /** `shared` while the primary answers (or has not failed yet); `degraded` since its last failure. */
  state(): 'shared' | 'degraded' {
    return this.failed ? 'degraded' : 'shared';
  }

  consume(subject: string, limits: readonly LimitRule[], nowMs: number): Promise<LimitDecision> {
    return this.decide((store) => store.consume(subject, limits, nowMs), limits, nowMs);
  }

  peek(subject: string, limits: readonly LimitRule[], nowMs: number): Promise<LimitDecision> {
    return this.decide((store) => store.peek(subject, limits, nowMs), limits, nowMs);
  }

  private async decide(
    ask: (store: RateLimitStore) => Promise<LimitDecision>,
    limits: readonly LimitRule[],
    nowMs: number,
  ): Promise<LimitDecision> {
    if (this.shouldTryPrimary()) {
      const probe = this.failed;
      if (probe) this.probing = true;
      try {
        const decision = await ask(this.primary);
        this.failed = false;
        return decision;
      } catch (error) {
        this.failed = true;
        this.lastError = error;
        this.retryAtMs = this.monotonicMs() + this.backoffMs;
      } finally {
        if (probe) this.probing = false;
      }
    }
    const { policy, onFallback } = this.options;
    onFallback?.(policy, this.lastError);
    if (policy === 'local') return ask(this.local);
    if (policy === 'open') return openDecision(limits, nowMs);
    throw new ApiError(
      'service_unavailable',
      'Rate limiting is unavailable for a moment; try again shortly.',
      {
        headers: { 'retry-after': '1' },
      },
    );
  }

  /** While healthy, always; while failed, only one probe at a time, once the back-off is over. */
  private shouldTryPrimary(): boolean {
    if (!this.failed) return true;
    return !this.probing && this.monotonicMs() >= this.retryAtMs;
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
