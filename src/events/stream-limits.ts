/**
 * How the event stream behaves (docs/events.md): how often a quiet stream sends a heartbeat, how far
 * back `Last-Event-ID` resumes. How many streams a key holds open is its tier's `streams`
 * (src/domain/limits/tiers.ts).
 */

export interface EventStreamOptions {
  /** A comment line this often keeps proxies from closing a quiet stream (default 15 s). */
  readonly heartbeatMs?: number;
}

export const HEARTBEAT_MS = 15_000;

/** How far back a stream resumes from `Last-Event-ID`; an older id starts from now. */
export const RESUME_WINDOW_MS = 24 * 60 * 60_000;

/** What a client waits before reconnecting, sent as `retry:` (EventSource reads it). */
export const RETRY_MS = 5_000;
