/**
 * One configured source on its schedule (docs/sources.md "Schedules"): each cron instant claims the
 * source's lease and runs it, unless a run is already going (a run never overlaps itself) or another
 * instance claimed that instant. A failed run is asked again after an exponential backoff with
 * jitter, never sooner than the upstream's `Retry-After`, until the next scheduled run takes over.
 * No run asks an upstream inside its `Retry-After`, and manual runs are spaced (./run-spacing.ts).
 */
import { localDate } from '../domain/time/days.js';
import type { PriceStore } from '../stores/types.js';
import { runSource, type SourceRun } from './run-source.js';
import { newestRun, type RunWait, runWait } from './run-spacing.js';
import { backoffMs, type ScheduledJob, type Scheduler, type Timer } from './scheduler.js';
import type { SourceConfig } from './source-config.js';
import { newestCompleteDay, scheduledWindow, tomorrowComplete } from './source-days.js';
import type { RecordedRun, SourceLease } from './source-lease.js';
import type { SourceConnector, SourceWindow, UpstreamOptions } from './types.js';

/** Failed runs in a row after which the source waits for its next scheduled run. */
const MAX_RETRIES = 5;

export interface SourceStatus {
  readonly name: string;
  readonly type: string;
  readonly schedule: SourceConfig['schedule'];
  /** As written in the config file: `${VAR}` stays a name, never a value. */
  readonly settings: SourceConfig['settings'];
  readonly running: boolean;
  /** Epoch ms of the last run's end, on this instance. */
  readonly lastRunAt: number | undefined;
  readonly lastSuccessAt: number | undefined;
  /** The last failure in plain words, until a run succeeds. */
  readonly lastError: { readonly at: number; readonly message: string } | undefined;
  /** The next scheduled run or retry. */
  readonly nextRunAt: number | undefined;
  /** Points written by the last successful run. */
  readonly pointsWritten: number | undefined;
  /** Epoch ms of the last run whose upstream had published nothing for its window. */
  readonly lastNotPublishedAt: number | undefined;
  readonly failuresInARow: number;
  /** The start of the newest local day complete in every series the source fills (epoch ms). */
  readonly newestCompleteDayAt: number | undefined;
  /** The zone whose local days a run asks for (and a backfill's dates are read in). */
  readonly windowZone: string;
  /** The upstream asked (`Retry-After`) not to be called before this instant (epoch ms). */
  readonly retryAfterUntil: number | undefined;
  /** The last scheduled run that did not ask the upstream, on this instance, and why. */
  readonly lastSkipped: { readonly at: number; readonly message: string } | undefined;
  /** The least time between a run and a manual run after it. */
  readonly minSpacingMs: number;
}

/** What a run request got: a run, or why none happened (`too-soon`: with the last run instead). */
export type RunOutcome =
  | { readonly ran: true; readonly run: SourceRun; readonly window: SourceWindow }
  | { readonly ran: false; readonly reason: 'running' | 'elsewhere' }
  | {
      readonly ran: false;
      readonly reason: 'too-soon';
      readonly wait: RunWait;
      readonly last: RecordedRun;
      readonly spacingMs: number;
    };

export interface SourceRunnerDeps {
  readonly prices: PriceStore;
  readonly scheduler: Scheduler;
  readonly lease: SourceLease;
  readonly random?: () => number;
  /** Told after every run, for metrics and logs. */
  readonly onRun?: (source: SourceConfig, run: SourceRun, upstreamMs: number) => void;
  readonly retry?: { readonly baseMs?: number; readonly maxMs?: number };
  /** Time and size limits of upstream requests (defaults in upstream-get.ts). */
  readonly upstream?: UpstreamOptions;
  /**
   * Every configured source, best first: the config file's order. Where two fill one series, a
   * source never overwrites a day an earlier one delivered complete (docs/sources.md).
   */
  readonly ranking?: readonly string[];
}

export class SourceRunner {
  private running: Promise<unknown> | undefined;
  private jobs: { entry: SourceConfig['schedule'][number]; job: ScheduledJob }[] = [];
  private retry: { timer: Timer; at: number } | undefined;
  private completeDate: string | undefined;
  private lastSlot: number | undefined;
  private sharing: Promise<void> | undefined;
  private state: Omit<
    SourceStatus,
    'name' | 'type' | 'schedule' | 'settings' | 'running' | 'nextRunAt' | 'windowZone' | 'minSpacingMs'
  > = {
    lastRunAt: undefined,
    lastSuccessAt: undefined,
    lastError: undefined,
    pointsWritten: undefined,
    lastNotPublishedAt: undefined,
    failuresInARow: 0,
    newestCompleteDayAt: undefined,
    retryAfterUntil: undefined,
    lastSkipped: undefined,
  };
  private readonly connector: SourceConnector;

  constructor(
    readonly source: SourceConfig,
    private readonly deps: SourceRunnerDeps,
  ) {
    this.connector = source.connect({ now: deps.scheduler.now, ...deps.upstream });
  }

  start(): void {
    this.jobs = this.source.schedule.map((entry) => ({
      entry,
      job: this.deps.scheduler.every(entry.cron, entry.zone, (slot) => this.scheduled(entry, slot)),
    }));
  }

  /** Stops the schedule and waits for a run in progress. */
  async stop(): Promise<void> {
    for (const { job } of this.jobs) job.stop();
    this.jobs = [];
    this.retry?.timer.cancel();
    this.retry = undefined;
    await this.running;
    await this.sharing;
  }

  /** What this instance knows, or `shared` (another instance's runs) when that is newer. */
  status(shared?: RecordedRun): SourceStatus {
    const { name, type, schedule, settings } = this.source;
    const next = this.jobs
      .filter(({ entry }) => !(entry.untilTomorrowComplete && this.tomorrowComplete()))
      .map(({ job }) => job.next())
      .concat(this.retry?.at)
      .filter((at): at is number => at !== undefined);
    return {
      name,
      type,
      schedule,
      settings,
      running: this.running !== undefined,
      nextRunAt: next.length === 0 ? undefined : Math.min(...next),
      windowZone: this.source.plan.window.zone,
      minSpacingMs: this.source.minSpacingMs,
      ...this.state,
      ...newestRun(this.state, shared),
    };
  }

  /** A run now, of `window` or of the scheduled window; `slot` is the cron instant when scheduled. */
  async run(window?: SourceWindow, slot?: number): Promise<RunOutcome> {
    if (this.running !== undefined) return { ran: false, reason: 'running' };
    const running = this.waitedOrRun(window, slot);
    this.running = running;
    try {
      return await running;
    } finally {
      this.running = undefined;
    }
  }

  /** The run, unless the upstream may not be asked yet: then the newest run any instance recorded. */
  private async waitedOrRun(window: SourceWindow | undefined, slot: number | undefined): Promise<RunOutcome> {
    const last = await this.lastRun();
    const spacingMs = slot === undefined ? this.source.minSpacingMs : 0;
    const wait = runWait(this.deps.scheduler.now(), last, spacingMs);
    if (wait !== undefined) return { ran: false, reason: 'too-soon', wait, last, spacingMs };
    return this.claimAndRun(window, slot);
  }

  /** This instance's last run, or another instance's when newer (a failure to read is no run). */
  private async lastRun(): Promise<RecordedRun> {
    const shared = await this.deps.lease.recorded().catch(() => new Map<string, RecordedRun>());
    return newestRun(this.state, shared.get(this.source.name));
  }

  private async claimAndRun(window: SourceWindow | undefined, slot: number | undefined): Promise<RunOutcome> {
    const { lease } = this.deps;
    const name = this.source.name;
    if (!(await lease.claim(name, slot))) return { ran: false, reason: 'elsewhere' };
    const renewing = setInterval(() => lease.renew(name).catch(() => {}), lease.ttlMs / 3);
    renewing.unref();
    try {
      const asked = window ?? this.scheduledWindow();
      // The upstream's time alone, without the import that follows.
      let upstreamMs = 0;
      const timed: SourceConnector = {
        type: this.connector.type,
        fetchWindow: async (w) => {
          const started = performance.now();
          try {
            return await this.connector.fetchWindow(w);
          } finally {
            upstreamMs = performance.now() - started;
          }
        },
      };
      const run = await runSource(
        timed,
        asked,
        { prices: this.deps.prices },
        {
          name: this.source.name,
          now: this.deps.scheduler.now,
          ...(this.deps.ranking && { ranking: this.deps.ranking }),
        },
      );
      this.deps.onRun?.(this.source, run, upstreamMs);
      await this.record(run, slot);
      return { ran: true, run, window: asked };
    } finally {
      clearInterval(renewing);
      await lease.release(name).catch(() => {});
    }
  }

  private async scheduled(entry: SourceConfig['schedule'][number], slot: number): Promise<void> {
    if (entry.untilTomorrowComplete && this.tomorrowComplete()) return;
    // Two crons of one schedule may name the same instant (12:00 is in both day-ahead ones).
    if (slot === this.lastSlot) return;
    this.lastSlot = slot;
    // Inside the upstream's Retry-After the instant is skipped, and a retry planned after it stays.
    const wait = runWait(this.deps.scheduler.now(), await this.lastRun(), 0);
    if (wait !== undefined) {
      const until = new Date(wait.until).toISOString();
      const message = `skipped: the upstream asked not to be called before ${until} (Retry-After)`;
      this.state = { ...this.state, lastSkipped: { at: this.deps.scheduler.now(), message } };
      return;
    }
    // A scheduled run replaces a pending retry.
    this.retry?.timer.cancel();
    this.retry = undefined;
    await this.run(undefined, slot).catch((error: unknown) => this.failed(String(error), undefined, slot));
  }

  private async record(run: SourceRun, slot: number | undefined): Promise<void> {
    const symbols = run.ok ? run.series.map((s) => s.symbol) : [];
    const at = this.deps.scheduler.now();
    this.state = { ...this.state, lastRunAt: at };
    if (!run.ok) {
      this.failed(run.message, run.failure?.retryAfterMs, slot);
      await this.sharing;
      return;
    }
    if (run.notPublished) {
      // The upstream answered, with nothing yet: no failure to back off from, no write to report.
      // The schedule asks again (docs/sources.md "Not published").
      this.state = { ...this.state, lastNotPublishedAt: at, retryAfterUntil: undefined, failuresInARow: 0 };
      await this.share();
      return;
    }
    this.state = {
      ...this.state,
      lastSuccessAt: at,
      lastError: undefined,
      retryAfterUntil: undefined,
      pointsWritten: run.written,
      failuresInARow: 0,
      newestCompleteDayAt: await newestCompleteDay(this.deps.prices, symbols, at),
    };
    await this.share();
    if (
      this.source.plan.dayAhead &&
      (await tomorrowComplete(
        this.deps.prices,
        run.series.map((s) => s.symbol),
        this.deps.scheduler.now(),
      ))
    ) {
      this.completeDate = this.today();
    }
  }

  private failed(message: string, retryAfterMs: number | undefined, slot: number | undefined): void {
    const failures = this.state.failuresInARow + 1;
    const now = this.deps.scheduler.now();
    this.state = {
      ...this.state,
      lastRunAt: now,
      lastError: { at: now, message },
      failuresInARow: failures,
      retryAfterUntil: retryAfterMs === undefined ? undefined : now + retryAfterMs,
    };
    void this.share();
    // Retries belong to scheduled runs; an operator's run reports its failure and is done.
    if (slot === undefined || failures > MAX_RETRIES || this.jobs.length === 0) return;
    const delay = backoffMs(failures, this.deps.random ?? Math.random, {
      ...this.deps.retry,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
    const at = this.deps.scheduler.now() + delay;
    const timer = this.deps.scheduler.after(delay, async () => {
      this.retry = undefined;
      await this.run(undefined, slot).catch((error: unknown) => this.failed(String(error), undefined, slot));
    });
    this.retry = { timer, at };
  }

  /** Tells the other instances (and the CLI) what this run did; a failure to tell is not the run's. */
  private share(): Promise<void> {
    this.sharing = this.deps.lease.record(this.source.name, this.state).catch(() => {});
    return this.sharing;
  }

  private scheduledWindow(): SourceWindow {
    return scheduledWindow(this.source.plan, this.deps.scheduler.now());
  }

  private today(): string {
    return localDate(this.deps.scheduler.now(), this.source.plan.window.zone);
  }

  private tomorrowComplete(): boolean {
    return this.completeDate === this.today();
  }
}
