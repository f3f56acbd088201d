/**
 * Metrics per source (docs/sources.md "Watching sources"), in the app's registry. Labels are source
 * names from the config file and outcomes: never a setting's value.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SourceRun } from './run-source.js';

/** A source's newest complete day, as the metrics read it at each scrape. */
export interface CompleteDays {
  readonly name: string;
  readonly newestCompleteDayAt: number | undefined;
}

export function createSourceMetrics(
  registry: Registry,
  completeDays: () => Promise<readonly CompleteDays[]>,
  now: () => number = Date.now,
) {
  const registers = [registry];
  new Gauge({
    name: 'pricepoint_source_newest_complete_day_age_seconds',
    help: 'Time since the start of the newest local day complete in every series of the source (negative: a day ahead); absent until a run found one.',
    labelNames: ['source'] as const,
    registers,
    async collect() {
      this.reset();
      for (const { name, newestCompleteDayAt } of await completeDays()) {
        if (newestCompleteDayAt !== undefined)
          this.set({ source: name }, (now() - newestCompleteDayAt) / 1000);
      }
    },
  });
  const runs = new Counter({
    name: 'pricepoint_source_runs_total',
    help: 'Source runs on this instance, by source and outcome (ok, not_published, fetch, series, import).',
    labelNames: ['source', 'outcome'] as const,
    registers,
  });
  const failures = new Counter({
    name: 'pricepoint_source_failures_total',
    help: 'Source runs that failed on this instance, by source.',
    labelNames: ['source'] as const,
    registers,
  });
  const latency = new Histogram({
    name: 'pricepoint_source_upstream_duration_seconds',
    help: 'How long the upstream took to answer a run, by source.',
    labelNames: ['source'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const points = new Counter({
    name: 'pricepoint_source_points_written_total',
    help: 'Points written by source runs on this instance, by source.',
    labelNames: ['source'] as const,
    registers,
  });
  return {
    /** Counts one run of `source`. */
    observe(source: string, run: SourceRun, ms: number): void {
      runs.inc({ source, outcome: run.ok ? (run.notPublished ? 'not_published' : 'ok') : run.stage });
      latency.observe({ source }, ms / 1000);
      if (run.ok) points.inc({ source }, run.written);
      else failures.inc({ source });
    },
    /** Every series at 0, so a source that never ran is visible. */
    declare(source: string): void {
      failures.inc({ source }, 0);
      points.inc({ source }, 0);
    },
  };
}
