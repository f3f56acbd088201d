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

/** The last run in plain words, for an answer that did not run again. */
export function lastRunWords(last: RecordedRun): {
  readonly outcome: 'written' | 'failed';
  readonly message: string;
} {
  const failed = last.lastError !== undefined && last.lastError.at >= (last.lastSuccessAt ?? 0);
  if (failed) return { outcome: 'failed', message: last.lastError?.message ?? '' };
  const n = last.pointsWritten ?? 0;
  return { outcome: 'written', message: `wrote ${n} point${n === 1 ? '' : 's'}` };
}
