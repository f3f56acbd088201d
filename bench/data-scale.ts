/**
 * Data-scale benchmark, not a test: with about 10 million points stored, a
 * one-series day query stays under 2 ms at p99 on both engines.
 *
 * Generates one year of 15-minute prices for 300 series (10,512,000 points) as CSV, loads it with the
 * compiled `pricepoint import` in a child process into (1) a fresh SQLite file and (2) a fresh
 * PostgreSQL database (created and dropped here), then, per engine, times one-series day queries
 * at random (series, day) pairs, each asked once, through the real store opener (`openStores`) and
 * the price service as the server configures it, so every day is read from the store and kept. Next
 * to it the same with every cache off, with the series list held, and the store's own
 * `pricesBetween` and `listSeries` alone; the query plan of the day read is printed, so a p99 over
 * the goal says where the time goes. Beside each timing, the garbage collector's pauses in this
 * process while it ran (`gc` performance entries).
 *
 * Each timing follows as many untimed queries as it times (BENCH_WARMUP_QUERIES): a service in use
 * has compiled its code. In the first couple of thousand queries of a fresh process V8 is still
 * compiling this code and the pg driver's on the machine's two cores, beside the database server,
 * and PostgreSQL's p99 then was 3 to 4 ms against about 1 ms once they had run (bench/README.md).
 * Prints a Markdown section and writes it to bench/results-data-scale.md.
 *
 * Run with `npm run bench:data-scale` (it builds the CLI it runs). Settings:
 * BENCH_SERIES (300), BENCH_DAYS (365), BENCH_QUERIES (2000), BENCH_WARMUP_QUERIES (2000),
 * BENCH_ENGINES (sqlite,postgres), BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/test, the
 * server on which the database is created and dropped).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../src/config/config.js';
import type { Tier } from '../src/domain/limits/tiers.js';
import { addDays, type CalendarDate, dayBounds } from '../src/domain/time/days.js';
import { openStores } from '../src/server/serve.js';
import { createPriceService } from '../src/services/price-service.js';
import type { PriceStore, Stores } from '../src/stores/types.js';
import {
  CLI,
  cleanups,
  envWith,
  freshDatabase,
  lastJsonLine,
  REPO,
  runBench,
  symbolOf,
  writePricesCsv,
} from './lib.js';

const SERIES = Number(process.env.BENCH_SERIES ?? 300);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 2000);
const WARMUP_QUERIES = Number(process.env.BENCH_WARMUP_QUERIES ?? 2000);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((e) => e.trim());
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const GOAL_MS = 2;
const QUARTER_HOUR_MS = 900_000;
// Points are written from 00:00 UTC; the series' market days are Berlin days, so the first one is
// an hour short and queries start on the second.
const FROM = Date.UTC(2025, 0, 1);
const ZONE = 'Europe/Berlin';
const FIRST_DAY: CalendarDate = '2025-01-02';

/** `pricepoint import FILE --json` in a child process; resolves the points written and the seconds taken. */
async function importFile(file: string, settings: Record<string, string>) {
  const started = performance.now();
  const { written } = await lastJsonLine<{ written: number }>(
    [CLI, 'import', file, '--json'],
    envWith(settings),
  );
  return { written, seconds: (performance.now() - started) / 1000 };
}

/** The settings of one engine: a data folder for SQLite, a fresh database for PostgreSQL (or why not). */
async function engineSettings(engine: string, dir: string): Promise<Record<string, string> | string> {
  const dataDir = join(dir, `data-${engine}`);
  if (engine === 'sqlite') return { PRICEPOINT_DATA_DIR: dataDir };
  if (engine !== 'postgres') throw new Error(`BENCH_ENGINES: unknown engine "${engine}"`);
  const database = await freshDatabase(DATABASE_URL, 'pp_bench_scale');
  if ('why' in database) return database.why;
  return { PRICEPOINT_DATA_DIR: dataDir, PRICEPOINT_DATABASE_URL: database.url };
}

/** A small seeded generator, so every run asks the same (series, day) pairs. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** The garbage collector's pauses in this process over one timing. */
interface GcPauses {
  readonly count: number;
  readonly totalMs: number;
  readonly longestMs: number;
  /** Of `totalMs`, in minor collections (scavenges of the young generation). */
  readonly scavengeMs: number;
}

interface Timing {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly gc: GcPauses;
}

/** Watches `gc` performance entries until `stop`, which resolves their totals. */
function watchGc(): { stop(): Promise<GcPauses> } {
  const entries: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      // Entries are handed to observers a turn later: let the last ones arrive.
      await new Promise(setImmediate);
      entries.push(...observer.takeRecords());
      observer.disconnect();
      const minor = (e: PerformanceEntry) =>
        (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ===
        constants.NODE_PERFORMANCE_GC_MINOR;
      return {
        count: entries.length,
        totalMs: entries.reduce((sum, e) => sum + e.duration, 0),
        longestMs: entries.reduce((longest, e) => Math.max(longest, e.duration), 0),
        scavengeMs: entries.filter(minor).reduce((sum, e) => sum + e.duration, 0),
      };
    },
  };
}

/** Runs `query` for `WARMUP_QUERIES` untimed pairs, then `QUERIES` timed ones, one at a time. */
async function time(run: (symbol: string, date: CalendarDate) => Promise<void>): Promise<Timing> {
  const next = random(42);
  // Every pair once: a repeated pair would be answered from a cache and flatter the figures.
  const seen = new Set<string>();
  const pair = (): { symbol: string; date: CalendarDate } => {
    const symbol = symbolOf(Math.floor(next() * SERIES));
    const date = addDays(FIRST_DAY, Math.floor(next() * (DAYS - 1)));
    if (seen.has(`${symbol} ${date}`)) return pair();
    seen.add(`${symbol} ${date}`);
    return { symbol, date };
  };
  for (let i = 0; i < WARMUP_QUERIES; i++) {
    const { symbol, date } = pair();
    await run(symbol, date);
  }
  const ms: number[] = [];
  const gc = watchGc();
  for (let i = 0; i < QUERIES; i++) {
    const { symbol, date } = pair();
    const started = performance.now();
    await run(symbol, date);
    ms.push(performance.now() - started);
  }
  const pauses = await gc.stop();
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.ceil(q * ms.length) - 1)]!;
  return { count: ms.length, p50: at(0.5), p99: at(0.99), max: ms[ms.length - 1]!, gc: pauses };
}

// The day read of the price stores (src/stores/sql/price-store.ts `pricesBetween`), as Kysely compiles it.
const DAY_SQL =
  'select "prices"."start_ms" as "start", "prices"."price" from "prices" inner join "series" on ' +
  '"series"."id" = "prices"."series_id" where "series"."symbol" = $1 and "prices"."start_ms" >= $2 ' +
  'and "prices"."start_ms" < $3 order by "prices"."start_ms"';

/** How the engine runs the day read of one series, one line per plan step. */
async function queryPlan(engine: string, settings: Record<string, string>): Promise<string[]> {
  const { start, end } = dayBounds(addDays(FIRST_DAY, Math.floor(DAYS / 2)), ZONE);
  const symbol = symbolOf(Math.floor(SERIES / 2));
  if (engine === 'sqlite') {
    const raw = new SQLite(join(settings.PRICEPOINT_DATA_DIR!, 'pricepoint.db'), { readonly: true });
    try {
      const rows = raw
        .prepare(`explain query plan ${DAY_SQL.replaceAll(/\$\d/g, '?')}`)
        .all(symbol, start, end) as { detail: string }[];
      return rows.map((r) => r.detail);
    } finally {
      raw.close();
    }
  }
  const client = new pg.Client({ connectionString: settings.PRICEPOINT_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${DAY_SQL}`, [
      symbol,
      start,
      end,
    ]);
    return rows.map((r) => r['QUERY PLAN'].trim());
  } finally {
    await client.end();
  }
}

/**
 * Lets the import's aftermath finish before anything is timed, so the figures are those of a store
 * in service: SQLite's WAL is checkpointed into the file and the dirty pages written out; on
 * PostgreSQL, VACUUM ANALYZE does now what autovacuum would otherwise do on 10 million fresh rows
 * in the middle of the measurement, on one of the machine's two cores, and a CHECKPOINT writes out
 * the pages it dirtied, as the next timed checkpoint would: else a query that must evict a dirty
 * buffer first writes it (and flushes the WAL up to it), which a store in service rarely does.
 */
async function settle(engine: string, settings: Record<string, string>): Promise<void> {
  if (engine === 'sqlite') {
    const raw = new SQLite(join(settings.PRICEPOINT_DATA_DIR!, 'pricepoint.db'));
    try {
      raw.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      raw.close();
    }
  } else {
    const client = new pg.Client({ connectionString: settings.PRICEPOINT_DATABASE_URL });
    await client.connect();
    try {
      await client.query('vacuum analyze');
      await client.query('checkpoint');
    } finally {
      await client.end();
    }
  }
  await new Promise<void>((resolve, reject) =>
    execFile('sync', (error) => (error ? reject(error) : resolve())),
  );
}

/** Size of the stored data: the SQLite file (with its WAL) or the database. */
async function storedMiB(engine: string, settings: Record<string, string>): Promise<number> {
  if (engine === 'sqlite') {
    const db = join(settings.PRICEPOINT_DATA_DIR!, 'pricepoint.db');
    const wal = await stat(`${db}-wal`).then(
      (s) => s.size,
      () => 0,
    );
    return ((await stat(db)).size + wal) / 2 ** 20;
  }
  const client = new pg.Client({ connectionString: settings.PRICEPOINT_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ size: string }>(
      'select pg_database_size(current_database()) as size',
    );
    return Number(rows[0]!.size) / 2 ** 20;
  } finally {
    await client.end();
  }
}

interface EngineResult {
  readonly engine: string;
  readonly label: string;
  readonly seconds: number;
  readonly sizeMiB: number;
  readonly cold: Timing;
  readonly service: Timing;
  readonly held: Timing;
  readonly store: Timing;
  readonly list: Timing;
  readonly plan: string[];
}

async function runEngine(
  engine: string,
  settings: Record<string, string>,
  file: string,
  points: number,
): Promise<EngineResult> {
  const label = engine === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const config = loadConfig(settings);
  // The series first, as an operator would create them (`series upsert`) before importing prices.
  let stores: Stores = await openStores(config);
  try {
    for (let s = 0; s < SERIES; s++) {
      await stores.prices.upsertSeries({
        symbol: symbolOf(s),
        name: `Benchmark ${s}`,
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: ZONE,
        resolution: 'PT15M',
      });
    }
  } finally {
    await stores.close();
  }
  console.error(`${label}: importing ${points.toLocaleString('en')} points with pricepoint import`);
  const loaded = await importFile(file, settings);
  if (loaded.written !== points) throw new Error(`${label}: imported ${loaded.written} of ${points} points`);
  console.error(`${label}: imported in ${loaded.seconds.toFixed(1)} s; settling, then querying`);
  await settle(engine, settings);

  stores = await openStores(config);
  // Closed below; on Ctrl-C or a failure by the cleanup, before the database is dropped.
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= stores.close());
  cleanups.push(close);
  try {
    return await measure(engine, label, settings, stores, loaded.seconds);
  } finally {
    await close();
  }
}

async function measure(
  engine: string,
  label: string,
  settings: Record<string, string>,
  stores: Stores,
  seconds: number,
): Promise<EngineResult> {
  const prices = stores.prices;
  const tier: Tier = {
    name: 'bench',
    limits: [],
    countPer: 'key',
    kinds: null,
    historyDays: null,
    streams: 3,
  };
  const cacheOff = { freshMs: 0, staleMs: 0, now: () => performance.now() };
  const dayQuery =
    (service: ReturnType<typeof createPriceService>) => async (symbol: string, date: CalendarDate) => {
      const answer = await service.day(tier, { symbols: [symbol] }, { date });
      const n = answer.series[0]?.prices.length ?? 0;
      // 96 quarter hours, 92 or 100 on the days the clocks change.
      if (n < 92) throw new Error(`${label}: ${symbol} ${date} has ${n} points`);
    };
  // As the server runs it (src/http/app.ts): the series list reused as the engine's read cache
  // allows, and every (series, day) asked once, so each day is read from the store.
  const configured = {
    freshMs: loadConfig(settings).readCacheMs,
    staleMs: 15 * 60_000,
    now: () => performance.now(),
  };
  const coldTiming = await time(dayQuery(createPriceService({ prices, clock: Date.now, cache: configured })));
  const serviceTiming = await time(
    dayQuery(createPriceService({ prices, clock: Date.now, cache: cacheOff })),
  );
  // The same with the catalogue read once and held, as a service that cached only the series list
  // would: what is left is the day read and the formatting of its points.
  const catalogue = await prices.listSeries();
  const held: PriceStore = Object.create(prices, { listSeries: { value: async () => catalogue } });
  const heldTiming = await time(
    dayQuery(createPriceService({ prices: held, clock: Date.now, cache: cacheOff })),
  );
  const storeTiming = await time(async (symbol, date) => {
    const { start, end } = dayBounds(date, ZONE);
    await prices.pricesBetween(symbol, start, end);
  });
  const listTiming = await time(async () => {
    await prices.listSeries();
  });
  return {
    engine,
    label,
    seconds,
    sizeMiB: await storedMiB(engine, settings),
    cold: coldTiming,
    service: serviceTiming,
    held: heldTiming,
    store: storeTiming,
    list: listTiming,
    plan: await queryPlan(engine, settings),
  };
}

async function main(): Promise<void> {
  // Every timing asks each (series, day) pair at most once.
  if (SERIES * (DAYS - 1) < WARMUP_QUERIES + QUERIES) {
    throw new Error(
      `BENCH_SERIES x (BENCH_DAYS - 1) = ${SERIES * (DAYS - 1)} pairs, fewer than the ${WARMUP_QUERIES + QUERIES} queries of a timing: store more series or days`,
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-data-scale-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'prices.csv');
  console.error(`generating ${SERIES} series of ${DAYS} days of 15-minute prices`);
  let started = performance.now();
  const points = await writePricesCsv(file, SERIES, FROM, FROM + DAYS * 96 * QUARTER_HOUR_MS);
  const generated = (performance.now() - started) / 1000;
  const csvMiB = (await stat(file)).size / 2 ** 20;

  const results: EngineResult[] = [];
  const skipped: string[] = [];
  for (const engine of ENGINES) {
    const settings = await engineSettings(engine, dir);
    if (typeof settings === 'string') {
      skipped.push(`${engine}: ${settings}`);
      console.error(`skipping ${engine}: ${settings}`);
      continue;
    }
    started = performance.now();
    results.push(await runEngine(engine, settings, file, points));
    console.error(`${engine} done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }

  const ms = (value: number) => value.toFixed(2);
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}, ` +
      `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), on a machine shared with other work. ` +
      `${SERIES} series x ${DAYS} days of 15-minute prices: ${points.toLocaleString('en')} points ` +
      `(${csvMiB.toFixed(0)} MiB of CSV, generated in ${generated.toFixed(1)} s), loaded with the compiled ` +
      '`pricepoint import` into a fresh store per engine, then settled (WAL checkpoint, VACUUM ANALYZE) ' +
      'before anything is timed. Queries run in a process with the young generation `pricepoint serve` has.',
    '',
    '| engine | points | load s | points/s | stored MiB |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...results.map(
      (r) =>
        `| ${r.label} | ${points.toLocaleString('en')} | ${r.seconds.toFixed(1)} | ` +
        `${Math.round(points / r.seconds).toLocaleString('en')} | ${r.sizeMiB.toFixed(0)} |`,
    ),
    '',
    `One query at a time at random (series, Berlin day) pairs, each pair once, ${WARMUP_QUERIES} ` +
      'untimed first. The day query goes through `openStores` and `createPriceService` as the server ' +
      "sets it up (the series list reused for the engine's read-cache time, 1 h on SQLite and 5 s on " +
      'PostgreSQL), so every day is read from the store: the goal row. Under it: the same with every ' +
      'cache off (`freshMs: 0`: the series list is read again for every query), with only the series ' +
      'list held, and the two store calls alone. GC: the pauses of the garbage collector in the ' +
      'process over the timed queries (count, total ms of which in scavenges, the longest ms); the read ' +
      'cache keeps days packed in a few objects each, so that holding thousands costs the scavenger little.',
    '',
    '| engine | what | count | p50 ms | p99 ms | max ms | p99 < 2 ms | GC pauses | GC ms (scavenges) | longest GC ms |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    const rows: [string, Timing, boolean][] = [
      ['day query, price service as configured (every day cold)', r.cold, true],
      ['day query, price service, every cache off', r.service, false],
      ['same, series list held in memory', r.held, false],
      ['`pricesBetween` alone (one day)', r.store, false],
      ['`listSeries` alone', r.list, false],
    ];
    for (const [what, t, goal] of rows) {
      const verdict = goal ? (t.p99 < GOAL_MS ? 'met' : '**not met**') : '';
      lines.push(
        `| ${r.label} | ${what} | ${t.count.toLocaleString('en')} | ${ms(t.p50)} | ${ms(t.p99)} | ` +
          `${ms(t.max)} | ${verdict} | ${t.gc.count} | ${ms(t.gc.totalMs)} (${ms(t.gc.scavengeMs)}) | ` +
          `${ms(t.gc.longestMs)} |`,
      );
    }
  }
  if (skipped.length > 0) lines.push('', `Skipped: ${skipped.join('; ')}.`);
  for (const r of results) {
    lines.push('', `Plan of the day read on ${r.label}:`, '', '```', ...r.plan, '```');
  }
  lines.push('', 'Goal: a one-series day query under 2 ms at p99 with ~10 million points:', '');
  for (const r of results) {
    lines.push(
      `- ${r.label}: p99 ${ms(r.cold.p99)} ms: ${r.cold.p99 < GOAL_MS ? 'met' : '**not met**'} ` +
        `(GC paused ${ms(r.cold.gc.totalMs)} ms in ${r.cold.gc.count} pauses, the longest ${ms(r.cold.gc.longestMs)} ms)`,
    );
  }
  const section = lines.join('\n');
  console.log(`## Data scale\n\n${section}`);
  await writeFile(
    join(REPO, 'bench', 'results-data-scale.md'),
    '# Data scale: results\n\nWritten by bench/data-scale.ts; see bench/README.md.\n\n' + section + '\n',
  );
}

await runBench(main);
