/**
 * The configured sources of one instance (docs/sources.md): a runner per source on its schedule,
 * one lease table for all instances on PostgreSQL, metrics and log lines per run. `pricepoint
 * serve` starts them beside the API; the CLI and the admin route ask them for a run or a status.
 */
import type { Registry } from 'prom-client';
import { createPool } from '../stores/postgres/database.js';
import type { PriceStore } from '../stores/types.js';
import type { SourceRun } from './run-source.js';
import { cronScheduler, type Scheduler } from './scheduler.js';
import type { SourceConfig } from './source-config.js';
import {
  memoryLease,
  migrateLeases,
  postgresLease,
  type RecordedRun,
  type SourceLease,
} from './source-lease.js';
import { createSourceMetrics } from './source-metrics.js';
import { type RunOutcome, SourceRunner, type SourceStatus } from './source-runner.js';
import { sqliteLease } from './sqlite-lease.js';
import type { SourceWindow, UpstreamOptions } from './types.js';

export type { RunOutcome, SourceStatus } from './source-runner.js';

/** What sources log: a line per run, with the failure in the upstream's words (never a secret). */
export interface SourceLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface Sources {
  /** Starts every schedule (`pricepoint serve`, once it listens). */
  start(): void;
  /** Every source, with the newest run any instance recorded. */
  list(): Promise<SourceStatus[]>;
  /** A run of `name` now (a backfill when `window` is given); undefined when no source has that name. */
  run(name: string, window?: SourceWindow): Promise<RunOutcome | undefined>;
  /** Stops every schedule, waits for runs in progress, gives up the leases. */
  close(): Promise<void>;
}

export interface SourcesDeps {
  readonly prices: PriceStore;
  /** The lease table's database; without it, leases live in this process. */
  readonly databaseUrl?: string | undefined;
  /**
   * Without `databaseUrl`, the embedded database file, whose lease table the server and the
   * `pricepoint sources` commands share (`:memory:` or none: leases live in this process).
   */
  readonly databasePath?: string | undefined;
  readonly lease?: SourceLease;
  readonly scheduler?: Scheduler;
  readonly registry?: Registry;
  readonly log?: SourceLog;
  readonly random?: () => number;
  readonly retry?: { readonly baseMs?: number; readonly maxMs?: number };
  readonly upstream?: UpstreamOptions;
}

/**
 * Runners for `sources`; they run when asked, and on their schedules once started.
 * @example const sources = await openSources(config.sources, { prices: stores.prices }); sources.start()
 */
export async function openSources(sources: readonly SourceConfig[], deps: SourcesDeps): Promise<Sources> {
  const scheduler = deps.scheduler ?? cronScheduler();
  const lease =
    deps.lease ??
    (sources.length === 0 ? memoryLease() : await openLease(deps.databaseUrl, deps.databasePath));
  // The list is read at each scrape; `opened` is assigned before any scrape can come.
  let opened: Sources | undefined;
  const metrics = deps.registry
    ? createSourceMetrics(deps.registry, async () => (await opened?.list()) ?? [], scheduler.now)
    : undefined;
  const onRun = (source: SourceConfig, run: SourceRun, ms: number) => {
    metrics?.observe(source.name, run, ms);
    if (run.ok)
      deps.log?.info(
        { source: source.name, written: run.written },
        `source ${source.name} wrote ${run.written} points`,
      );
    else
      deps.log?.warn(
        { source: source.name, stage: run.stage },
        `source ${source.name} failed: ${run.message}`,
      );
  };
  const runners = new Map(
    sources.map((source) => [
      source.name,
      new SourceRunner(source, {
        prices: deps.prices,
        scheduler,
        lease,
        onRun,
        ...(deps.random && { random: deps.random }),
        ...(deps.retry && { retry: deps.retry }),
        ...(deps.upstream && { upstream: deps.upstream }),
        ranking: sources.map((s) => s.name),
      }),
    ]),
  );
  for (const name of runners.keys()) metrics?.declare(name);
  opened = {
    start() {
      for (const runner of runners.values()) runner.start();
    },
    async list() {
      const shared = await lease.recorded().catch(() => new Map<string, RecordedRun>());
      return [...runners.values()].map((runner) => runner.status(shared.get(runner.source.name)));
    },
    run: async (name, window) => runners.get(name)?.run(window),
    async close() {
      await Promise.all([...runners.values()].map((runner) => runner.stop()));
      if (deps.lease === undefined) await lease.close();
    },
  };
  return opened;
}

/**
 * The lease the configured database keeps (docs/scale-out.md): PostgreSQL's table, the SQLite
 * file's, or in memory; shared by the sources and the MQTT publisher.
 */
export async function openLease(
  databaseUrl: string | undefined,
  databasePath: string | undefined,
): Promise<SourceLease> {
  if (databaseUrl === undefined) {
    return databasePath === undefined || databasePath === ':memory:'
      ? memoryLease()
      : sqliteLease(databasePath);
  }
  const pool = createPool(databaseUrl, { max: 2 });
  try {
    await migrateLeases(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return postgresLease(pool);
}
