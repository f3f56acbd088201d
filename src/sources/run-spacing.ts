/**
 * When a source may ask its upstream again (docs/sources.md "Schedules"): upstream quotas are the
 * operator's, so manual runs of one source are spaced by its `minSpacingSeconds`, and no run,
 * scheduled or manual, asks an upstream before the instant its last `Retry-After` named. The runs
 * this reads are the newest any instance recorded (the lease table on PostgreSQL).
 */
import type { RecordedRun } from './source-lease.js';

/** Why a run may not ask the upstream now, and from when it may. */
export interface RunWait {
  /** `spacing`: a manual run too soon after the last run; `retry-after`: the upstream asked to wait. */
  readonly why: 'spacing' | 'retry-after';
  /** Epoch ms from which a run may ask again. */
  readonly until: number;
}

/**
 * Whether a run at `now` must wait, given the newest `last` run; `spacingMs` is the source's
 * spacing for a manual run, 0 for a scheduled one.
 * @example runWait(now, { lastRunAt: now - 10_000, failuresInARow: 0 }, 60_000) // { why: 'spacing', until: now + 50_000 }
 */
export function runWait(now: number, last: RecordedRun | undefined, spacingMs: number): RunWait | undefined {
  const retryAfter = last?.retryAfterUntil;
  if (retryAfter !== undefined && now < retryAfter) return { why: 'retry-after', until: retryAfter };
  const spaced = last?.lastRunAt === undefined ? undefined : last.lastRunAt + spacingMs;
  if (spaced !== undefined && now < spaced) return { why: 'spacing', until: spaced };
  return undefined;
}

/**
 * This instance's runs and those another instance recorded, as one: the newer run's fields, and
 * the later `Retry-After` of the two.
 */
export function newestRun(own: RecordedRun, shared: RecordedRun | undefined): RecordedRun {
  if (shared === undefined) return own;
  const newer = (shared.lastRunAt ?? 0) > (own.lastRunAt ?? 0) ? shared : own;
  const until = Math.max(own.retryAfterUntil ?? 0, shared.retryAfterUntil ?? 0);
  return { ...newer, retryAfterUntil: until === 0 ? undefined : until };
}

/** What the last run of a source did (docs/sources.md "Not published"). */
export type LastOutcome = 'written' | 'not_published' | 'failed';

/** Said of a run whose upstream had nothing for its window. */
export const NOT_PUBLISHED = 'the upstream has published nothing for the window yet';

/** The outcome of the newest of a source's last write, last failure and last empty answer. */
export function lastOutcome(last: RecordedRun): LastOutcome | undefined {
  const times: [LastOutcome, number | undefined][] = [
    ['written', last.lastSuccessAt],
    ['not_published', last.lastNotPublishedAt],
    ['failed', last.lastError?.at],
  ];
  let newest: [LastOutcome, number] | undefined;
  for (const [outcome, at] of times) {
    if (at !== undefined && (newest === undefined || at >= newest[1])) newest = [outcome, at];
  }
  return newest?.[0];
}

/** The last run in plain words, for an answer that did not run again. */
export function lastRunWords(last: RecordedRun): {
  readonly outcome: LastOutcome;
  readonly message: string;
} {
  const outcome = lastOutcome(last);
  if (outcome === 'failed') return { outcome, message: last.lastError?.message ?? '' };
  if (outcome === 'not_published') return { outcome, message: NOT_PUBLISHED };
  const n = last.pointsWritten ?? 0;
  return { outcome: 'written', message: `wrote ${n} point${n === 1 ? '' : 's'}` };
}
