/**
 * How the event stream behaves (docs/events.md): how many streams a key may hold open per tier,
 * how often a quiet stream sends a heartbeat, how far back `Last-Event-ID` resumes.
 */
import type { Tier } from '../domain/limits/tiers.js';

export interface EventStreamOptions {
  /** A comment line this often keeps proxies from closing a quiet stream (default 15 s). */
  readonly heartbeatMs?: number;
  /** Open streams one key may hold on one instance (default: by tier, `STREAMS_PER_KEY`). */
  readonly streamsPerKey?: (tier: Tier) => number;
}

export const HEARTBEAT_MS = 15_000;

/** How far back a stream resumes from `Last-Event-ID`; an older id starts from now. */
export const RESUME_WINDOW_MS = 24 * 60 * 60_000;

/** What a client waits before reconnecting, sent as `retry:` (EventSource reads it). */
export const RETRY_MS = 5_000;

/**
 * Open streams per key by tier name: a household needs one or two; the shared demo key is held by
 * many clients at once. Tiers the operator adds get `DEFAULT_STREAMS`.
 */
export const STREAMS_PER_KEY: Readonly<Record<string, number>> = {
  demo: 50,
  free: 3,
  pro: 20,
  enterprise: 200,
};
export const DEFAULT_STREAMS = 3;

export function streamsPerKey(tier: Tier): number {
  return STREAMS_PER_KEY[tier.name] ?? DEFAULT_STREAMS;
}
