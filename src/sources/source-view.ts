/**
 * Sources as operators see them, the same in `pricepoint sources` and `GET /api/v1/sources`: times
 * as ISO 8601, nothing left undefined, settings as written in the config file (a `${VAR}` stays a
 * name). And the window of a backfill, from local dates.
 */
import { dayBounds, isCalendarDate } from '../domain/time/days.js';
import { type LastOutcome, lastOutcome, lastRunWords, NOT_PUBLISHED } from './run-spacing.js';
import type { RunOutcome, SourceStatus } from './source-runner.js';
import { termsOfSource } from './source-terms.js';
import type { SourceWindow, UpstreamTerms } from './types.js';

export interface SourceView {
  readonly name: string;
  readonly type: string;
  readonly schedule: {
    readonly cron: string;
    readonly zone: string;
    readonly untilTomorrowComplete: boolean;
  }[];
  readonly settings: Readonly<Record<string, unknown>>;
  readonly running: boolean;
  readonly lastRun: string | null;
  readonly lastSuccess: string | null;
  /** What the last run did: wrote points, found nothing published yet, or failed (docs/sources.md). */
  readonly lastOutcome: LastOutcome | null;
  /** The last run whose upstream had published nothing for its window. */
  readonly lastNotPublished: string | null;
  readonly lastError: { readonly at: string; readonly message: string } | null;
  readonly failuresInARow: number;
  readonly nextRun: string | null;
  readonly pointsWritten: number | null;
  /** The upstream asked (`Retry-After`) not to be called before then: runs wait until it. */
  readonly retryAfterUntil: string | null;
  /** The last scheduled run that did not ask the upstream, and why. */
  readonly lastSkipped: { readonly at: string; readonly message: string } | null;
  readonly minSpacingSeconds: number;
  /** The upstream's terms for what this source fetches (docs/sources.md "Terms of each upstream"). */
  readonly terms: UpstreamTerms | null;
}

const iso = (at: number | undefined) => (at === undefined ? null : new Date(at).toISOString());

export function sourceView(status: SourceStatus): SourceView {
  return {
    name: status.name,
    type: status.type,
    schedule: status.schedule.map(({ cron, zone, untilTomorrowComplete }) => ({
      cron,
      zone,
      untilTomorrowComplete: untilTomorrowComplete === true,
    })),
    settings: status.settings,
    running: status.running,
    lastRun: iso(status.lastRunAt),
    lastSuccess: iso(status.lastSuccessAt),
    lastOutcome: lastOutcome(status) ?? null,
    lastNotPublished: iso(status.lastNotPublishedAt),
    lastError: status.lastError
      ? { at: iso(status.lastError.at) ?? '', message: status.lastError.message }
      : null,
    failuresInARow: status.failuresInARow,
    nextRun: iso(status.nextRunAt),
    pointsWritten: status.pointsWritten ?? null,
    retryAfterUntil: iso(status.retryAfterUntil),
    lastSkipped: status.lastSkipped
      ? { at: iso(status.lastSkipped.at) ?? '', message: status.lastSkipped.message }
      : null,
    minSpacingSeconds: status.minSpacingMs / 1000,
    terms: termsOfSource(status.type, status.settings) ?? null,
  };
}

export interface RunView {
  readonly source: string;
  /**
   * `written`: the run stored its points; `failed`: it stored nothing; `busy`: no run happened, one
   * is going; `too_soon`: no run happened, the upstream may not be asked yet (`lastRun` says what
   * the last run did, `nextRunAllowedAt` from when it may).
   */
  readonly outcome: 'written' | 'not_published' | 'failed' | 'busy' | 'too_soon';
  readonly message: string;
  readonly from: string | null;
  readonly to: string | null;
  readonly pointsWritten: number;
  readonly series: { readonly symbol: string; readonly points: number; readonly created: boolean }[];
  readonly nextRunAllowedAt: string | null;
  readonly lastRun: {
    readonly at: string;
    readonly outcome: LastOutcome;
    readonly message: string;
    readonly pointsWritten: number;
  } | null;
}

/** What a run request got, in plain words. */
export function runView(source: string, outcome: RunOutcome): RunView {
  const none = { from: null, to: null, pointsWritten: 0, series: [], nextRunAllowedAt: null, lastRun: null };
  if (!outcome.ran && outcome.reason === 'too-soon') return tooSoonView(source, outcome);
  if (!outcome.ran) {
    const message =
      outcome.reason === 'running'
        ? `${source} is running already; ask again when it is done`
        : `${source} is running on another instance; ask again when it is done`;
    return { ...none, source, outcome: 'busy', message };
  }
  const { run, window } = outcome;
  const from = new Date(window.from).toISOString();
  const to = new Date(window.to).toISOString();
  const more = { nextRunAllowedAt: null, lastRun: null };
  if (!run.ok)
    return {
      source,
      outcome: 'failed',
      message: run.message,
      from,
      to,
      pointsWritten: 0,
      series: [],
      ...more,
    };
  const message = run.notPublished
    ? `${source}: ${NOT_PUBLISHED}`
    : `${source} wrote ${run.written} point${run.written === 1 ? '' : 's'}`;
  return {
    source,
    outcome: run.notPublished ? 'not_published' : 'written',
    message,
    from,
    to,
    pointsWritten: run.written,
    series: [...run.series],
    ...more,
  };
}

/** No new run: the last one's result instead, and from when the upstream may be asked again. */
function tooSoonView(source: string, outcome: Extract<RunOutcome, { reason: 'too-soon' }>): RunView {
  const { wait, last } = outcome;
  const until = new Date(wait.until).toISOString();
  const why =
    wait.why === 'retry-after'
      ? `the upstream asked not to be called before ${until} (Retry-After)`
      : `runs of ${source} are at least ${outcome.spacingMs / 1000} s apart (minSpacingSeconds); the next may start at ${until}`;
  const words = last.lastRunAt === undefined ? undefined : lastRunWords(last);
  const lastRun =
    last.lastRunAt === undefined || words === undefined
      ? null
      : {
          at: new Date(last.lastRunAt).toISOString(),
          ...words,
          pointsWritten: words.outcome === 'written' ? (last.pointsWritten ?? 0) : 0,
        };
  const said =
    lastRun === null
      ? ''
      : `; its last run (${lastRun.at}) ${lastRun.outcome === 'failed' ? `failed: ${lastRun.message}` : lastRun.message}`;
  return {
    source,
    outcome: 'too_soon',
    message: `${source} was not run again: ${why}${said}`,
    from: null,
    to: null,
    pointsWritten: 0,
    series: [],
    nextRunAllowedAt: until,
    lastRun,
  };
}

/**
 * The instants of the local days `from` through `to` (YYYY-MM-DD) in `zone`; a string naming what is wrong otherwise.
 * @example backfillWindow('2026-01-01', '2026-01-31', 'Europe/Brussels')
 */
export function backfillWindow(from: string, to: string, zone: string): SourceWindow | string {
  if (!isCalendarDate(from)) return `from: "${from}" is not a date as YYYY-MM-DD`;
  if (!isCalendarDate(to)) return `to: "${to}" is not a date as YYYY-MM-DD`;
  if (to < from) return `to: ${to} is before from ${from}`;
  return { from: dayBounds(from, zone).start, to: dayBounds(to, zone).end };
}
