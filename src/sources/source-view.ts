/**
 * Sources as operators see them, the same in `pricepoint sources` and `GET /api/v1/sources`: times
 * as ISO 8601, nothing left undefined, settings as written in the config file (a `${VAR}` stays a
 * name). And the window of a backfill, from local dates.
 */
import { dayBounds, isCalendarDate } from '../domain/time/days.js';
import type { RunOutcome, SourceStatus } from './source-runner.js';
import type { SourceWindow } from './types.js';

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
  readonly lastError: { readonly at: string; readonly message: string } | null;
  readonly failuresInARow: number;
  readonly nextRun: string | null;
  readonly pointsWritten: number | null;
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
    lastError: status.lastError
      ? { at: iso(status.lastError.at) ?? '', message: status.lastError.message }
      : null,
    failuresInARow: status.failuresInARow,
    nextRun: iso(status.nextRunAt),
    pointsWritten: status.pointsWritten ?? null,
  };
}

export interface RunView {
  readonly source: string;
  /** `written`: the run stored its points; `failed`: it stored nothing; `busy`: no run happened. */
  readonly outcome: 'written' | 'failed' | 'busy';
  readonly message: string;
  readonly from: string | null;
  readonly to: string | null;
  readonly pointsWritten: number;
  readonly series: { readonly symbol: string; readonly points: number; readonly created: boolean }[];
}

/** What a run request got, in plain words. */
export function runView(source: string, outcome: RunOutcome): RunView {
  if (!outcome.ran) {
    const message =
      outcome.reason === 'running'
        ? `${source} is running already; ask again when it is done`
        : `${source} is running on another instance; ask again when it is done`;
    return { source, outcome: 'busy', message, from: null, to: null, pointsWritten: 0, series: [] };
  }
  const { run, window } = outcome;
  const from = new Date(window.from).toISOString();
  const to = new Date(window.to).toISOString();
  if (!run.ok)
    return { source, outcome: 'failed', message: run.message, from, to, pointsWritten: 0, series: [] };
  const message = `${source} wrote ${run.written} point${run.written === 1 ? '' : 's'}`;
  return {
    source,
    outcome: 'written',
    message,
    from,
    to,
    pointsWritten: run.written,
    series: [...run.series],
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
