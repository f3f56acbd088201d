/**
 * A scheduler on a fake clock: cron instants computed by croner, as in production, but fired when
 * a test moves the clock, so no test waits on wall time.
 */
import { Cron } from 'croner';
import type { ScheduledJob, Scheduler, Timer } from '../../src/sources/scheduler.js';

interface Due {
  at: number;
  fire(): Promise<void> | void;
  kind: 'cron' | 'timer';
}

export class FakeScheduler implements Scheduler {
  private readonly crons = new Set<{
    cron: Cron;
    fire: (slot: number) => Promise<void>;
    next: number | undefined;
  }>();
  private readonly timers = new Set<Due>();

  constructor(private time: number) {}

  now = (): number => this.time;

  every(cron: string, zone: string, fire: (slot: number) => Promise<void>): ScheduledJob {
    const job = {
      cron: new Cron(cron, { timezone: zone, paused: true }),
      fire,
      next: undefined as number | undefined,
    };
    job.next = job.cron.nextRun(new Date(this.time))?.getTime();
    this.crons.add(job);
    return { next: () => job.next, stop: () => this.crons.delete(job) };
  }

  after(ms: number, fire: () => Promise<void>): Timer {
    const due: Due = { at: this.time + ms, fire, kind: 'timer' };
    this.timers.add(due);
    return { cancel: () => this.timers.delete(due) };
  }

  /**
   * Moves the clock to `to`, firing every cron instant and timer on the way in order; what is due at
   * the same instant fires at once (as on several instances), and is awaited before the clock moves on.
   */
  async advanceTo(to: number): Promise<void> {
    for (;;) {
      const due = this.due(to);
      if (due.length === 0) break;
      this.time = due[0]?.at ?? this.time;
      await Promise.all(due.map((d) => d.fire()));
    }
    this.time = to;
  }

  async advanceBy(ms: number): Promise<void> {
    await this.advanceTo(this.time + ms);
  }

  /** Everything due first, at or before `limit`. */
  private due(limit: number): Due[] {
    const all: Due[] = [];
    for (const job of this.crons) {
      const at = job.next;
      if (at === undefined || at > limit) continue;
      all.push({
        at,
        kind: 'cron',
        fire: () => {
          job.next = job.cron.nextRun(new Date(at))?.getTime();
          return job.fire(at);
        },
      });
    }
    for (const timer of this.timers) {
      if (timer.at > limit) continue;
      all.push({
        ...timer,
        fire: () => {
          this.timers.delete(timer);
          return timer.fire();
        },
      });
    }
    const first = Math.min(...all.map((d) => d.at));
    return all.filter((d) => d.at === first);
  }
}
