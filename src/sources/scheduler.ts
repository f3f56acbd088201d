/**
 * When sources run: cron instants from croner in production, and a fake clock in tests (the runner
 * only sees this interface, so no test waits on wall time).
 */
import { Cron } from 'croner';

export interface ScheduledJob {
  /** The next instant, epoch ms, or undefined when the cron has none left. */
  next(): number | undefined;
  stop(): void;
}

export interface Timer {
  cancel(): void;
}

export interface Scheduler {
  now(): number;
  /**
   * Calls `fire(slot)` at every instant of `cron` read in `zone`; `slot` is the scheduled instant
   * (epoch ms), the same on every instance, so instances can agree on which run is which.
   */
  every(cron: string, zone: string, fire: (slot: number) => Promise<void>): ScheduledJob;
  /** Calls `fire` once, `ms` from now. */
  after(ms: number, fire: () => Promise<void>): Timer;
}

/**
 * Croner's timers: each job skips an instant while its previous call is still running
 * (`protect`), and its errors are caught so a failure never stops the schedule.
 */
export function cronScheduler(): Scheduler {
  return {
    now: Date.now,
    every(cron, zone, fire) {
      const job = new Cron(cron, { timezone: zone, protect: true, catch: true }, async (self: Cron) => {
        await fire(self.currentRun()?.getTime() ?? Date.now());
      });
      return { next: () => job.nextRun()?.getTime(), stop: () => job.stop() };
    },
    after(ms, fire) {
      const timer = setTimeout(fire, ms);
      timer.unref();
      return { cancel: () => clearTimeout(timer) };
    },
  };
}

/**
 * Instants without timers: a command that shows when sources will run next, and runs them only
 * when asked (`pricepoint sources`).
 */
export function plannedScheduler(): Scheduler {
  return {
    now: Date.now,
    every(cron, zone) {
      const job = new Cron(cron, { timezone: zone, paused: true });
      return { next: () => job.nextRun()?.getTime(), stop: () => job.stop() };
    },
    after() {
      return { cancel() {} };
    },
  };
}

/** When to ask again after `failures` failed runs in a row: exponential, with full jitter, capped. */
export function backoffMs(
  failures: number,
  random: () => number,
  options: { baseMs?: number; maxMs?: number; retryAfterMs?: number } = {},
): number {
  const base = options.baseMs ?? 60_000;
  const max = options.maxMs ?? 30 * 60_000;
  const ceiling = Math.min(max, base * 2 ** Math.max(0, failures - 1));
  // Half fixed, half random: never a burst of instances retrying at once, never much sooner than planned.
  const delay = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  return Math.max(delay, options.retryAfterMs ?? 0);
}
