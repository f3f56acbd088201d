/**
 * One run of a source: fetch a window through its connector, create the series it fills when they
 * do not exist yet, and import every point through the same all-or-nothing import as files. A
 * failed fetch writes nothing; a rerun of the same window writes the same points again, so it is
 * idempotent. Every day written records the source's name and when it was fetched; where a series
 * names several sources in order, a lower-ranked one only fills what the ones above did not deliver
 * complete. Scheduling, retries and leases are the caller's (docs/sources.md).
 */
import { ApiError } from '../domain/errors/api-error.js';
import { decimalMean } from '../domain/prices/aggregate.js';
import { dayIntervals, localDate, RESOLUTIONS } from '../domain/time/days.js';
import type { RawRow } from '../services/import-formats.js';
import { createImportService } from '../services/import-service.js';
import { createSeriesService } from '../services/series-service.js';
import type { PriceStore, Series } from '../stores/types.js';
import type { SourceConnector, SourceFailure, SourcePoint, SourceSeries, SourceWindow } from './types.js';

export interface SourceRunSeries {
  readonly symbol: string;
  readonly points: number;
  /** The run created the series. */
  readonly created: boolean;
}

export type SourceRun =
  | {
      readonly ok: true;
      readonly written: number;
      readonly series: readonly SourceRunSeries[];
      /**
       * The upstream answered with no price for the window (docs/sources.md "Not published"):
       * neither a failure nor a run that wrote something.
       */
      readonly notPublished: boolean;
    }
  | {
      readonly ok: false;
      /** `fetch`: the upstream; `series`: a series cannot take these points; `import`: a point was refused. */
      readonly stage: 'fetch' | 'series' | 'import';
      readonly message: string;
      /** The fetch failure, with its `retryAfterMs`. */
      readonly failure?: SourceFailure;
    };

export interface SourceRunOptions {
  /** The source's name, recorded for every day it writes; default the connector's type. */
  readonly name?: string;
  /** The sources of the series this one fills, best first (docs/sources.md, "Several sources for one series"). */
  readonly ranking?: readonly string[];
  /** The clock that dates the fetch; default `Date.now`. */
  readonly now?: () => number;
}

/** Series fields that fix which prices a series can hold. */
const FIXED = ['currency', 'unit', 'timezone', 'resolution'] as const;

/**
 * @example await runSource(createConnector('ecb', { currencies: ['NOK'] }), { from, to }, { prices })
 */
export async function runSource(
  connector: SourceConnector,
  window: SourceWindow,
  deps: { readonly prices: PriceStore },
  options: SourceRunOptions = {},
): Promise<SourceRun> {
  const fetched = await connector.fetchWindow(window);
  const fetchedAt = (options.now ?? Date.now)();
  if (!fetched.ok)
    return { ok: false, stage: 'fetch', message: fetched.failure.message, failure: fetched.failure };
  // Every series is checked before any is created, so a refused run leaves the catalogue as it was.
  const missing: Series[] = [];
  const delivered: SourceSeries[] = [];
  for (const one of fetched.series) {
    const { series } = one;
    const existing = await deps.prices.getSeries(series.symbol);
    if (existing === undefined) {
      missing.push(series);
      delivered.push(one);
      continue;
    }
    const differ = FIXED.filter((field) => existing[field] !== series[field]);
    // A series made before its market went finer keeps its grid: it takes the means of whole intervals.
    const coarser = differ.length === 1 && differ[0] === 'resolution' ? meansFor(existing, one) : undefined;
    if (coarser !== undefined) delivered.push(coarser);
    else if (differ.length > 0)
      return { ok: false, stage: 'series', message: mismatch(existing, series, differ) };
    else delivered.push(one);
  }
  for (const series of missing) {
    const refused = await createSeries(deps.prices, series);
    if (refused !== undefined) return { ok: false, stage: 'series', message: refused };
  }
  const results: SourceRunSeries[] = delivered.map(({ series, points }) => ({
    symbol: series.symbol,
    points: points.length,
    created: missing.includes(series),
  }));
  // A window is bounded: its points may be held until the import commits (`small`).
  const imported = await createImportService(deps).run(rowsOf(delivered), {
    small: true,
    source: options.name ?? connector.type,
    fetchedAt,
    ...(options.ranking !== undefined && { ranking: options.ranking }),
  });
  if (!imported.ok) {
    const first = imported.errors.map((e) => e.reason).slice(0, 3);
    return {
      ok: false,
      stage: 'import',
      message: `${imported.errorCount} point${imported.errorCount === 1 ? ' was' : 's were'} refused, nothing was written: ${first.join('; ')}`,
    };
  }
  const notPublished = delivered.every(({ points }) => points.length === 0);
  return { ok: true, written: imported.written, series: results, notPublished };
}

/**
 * `delivered` on the coarser grid of `existing` (hours of quarter hours, say), where that grid holds
 * whole intervals of the delivered one: each coarse interval the mean of its fine ones, exact and
 * rounded as a coarse read is (docs/sources.md "A series older than its market's grid"), and only
 * where every fine interval inside it has a price, so a coarse price is never the mean of a part.
 * Undefined where the grids do not nest (the series is finer, or a day series).
 */
function meansFor(existing: Series, delivered: SourceSeries): SourceSeries | undefined {
  const fine = RESOLUTIONS[delivered.series.resolution];
  const coarse = RESOLUTIONS[existing.resolution];
  if (existing.resolution === 'P1D' || coarse <= fine || coarse % fine !== 0) return undefined;
  const { points } = delivered;
  const dates = new Set(points.map((point) => localDate(point.start, existing.timezone)));
  const means: SourcePoint[] = [];
  let i = 0;
  for (const date of [...dates].sort()) {
    for (const interval of dayIntervals(date, existing.timezone, existing.resolution)) {
      while (i < points.length && (points[i] as SourcePoint).start < interval.start) i++;
      const inside: string[] = [];
      for (let next = interval.start; i < points.length; next += fine * 60_000, i++) {
        const point = points[i] as SourcePoint;
        if (point.start >= interval.end || point.start !== next) break;
        inside.push(point.price);
      }
      if (inside.length === (interval.end - interval.start) / (fine * 60_000)) {
        means.push({ start: interval.start, price: decimalMean(inside) });
      }
    }
  }
  return { series: { ...delivered.series, resolution: existing.resolution }, points: means };
}

/** Why the series could not be created, or nothing. */
async function createSeries(prices: PriceStore, series: Series): Promise<string | undefined> {
  try {
    const { symbol, ...fields } = series;
    await createSeriesService({ prices }).upsert(symbol, fields);
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return `series ${series.symbol} cannot be created: ${error.message}`;
    throw error;
  }
}

function mismatch(existing: Series, series: Series, differ: readonly (typeof FIXED)[number][]): string {
  const theirs = differ.map((f) => `${f} ${series[f]}`).join(', ');
  const ours = differ.map((f) => `${f} ${existing[f]}`).join(', ');
  return `the source gives ${series.symbol} prices in ${theirs}, but the series has ${ours}`;
}

/** The points as import rows, one batch per series, carrying currency and unit for the import's check. */
async function* rowsOf(all: readonly SourceSeries[]): AsyncGenerator<readonly RawRow[]> {
  let line = 0;
  for (const { series, points } of all) {
    yield points.map((point) => ({
      line: ++line,
      path: `${series.symbol} ${new Date(point.start).toISOString()}`,
      symbol: series.symbol,
      start: new Date(point.start).toISOString(),
      price: point.price,
      currency: series.currency,
      unit: series.unit,
      error: undefined,
    }));
  }
}
