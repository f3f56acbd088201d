/**
 * Price imports (docs/operating.md "Importing prices"): every row is checked (known series, RFC 3339 start on the series' grid,
 * an interval of the series' own resolution where the row gives an `end` or the file states one,
 * a plain decimal price, no interval twice in one import), valid points are written in batches into
 * one all-or-nothing store session, and the first bad row stops the writing but not the checking,
 * so the answer names every bad row (the first 100 of them). Memory stays flat: rows stream through,
 * and the duplicate check keeps one bit per quarter hour of the time span each series touches.
 */
import { checkNumberPrice, checkPrice } from '../domain/prices/decimal.js';
import { formatInstant, intervalEnd, isOnGrid, RESOLUTIONS } from '../domain/time/days.js';
import { parseRfc3339 } from '../domain/time/rfc3339.js';
import { offsetMinutes } from '../domain/time/zone.js';
import type { ImportPoint, PriceStore, PriceWriteSession, Series } from '../stores/types.js';
import { pointsToWrite, rankedAbove } from './day-precedence.js';
import { FormatError, type RawRow, type RowBatches } from './import-formats.js';

export const MAX_REPORTED_ERRORS = 100;
const BATCH = 4096;
const QUARTER_HOUR_MS = 900_000;
/** 2^15 quarter hours (341 days) per bitset chunk: 4 KiB. */
const CHUNK_BITS = 15;

export interface RowError {
  readonly line: number;
  readonly reason: string;
}

export type ImportResult =
  | { readonly ok: true; readonly written: number; readonly series: readonly string[] }
  | { readonly ok: false; readonly errors: readonly RowError[]; readonly errorCount: number };

export interface ImportOptions {
  /** Check only: nothing is written. */
  readonly dryRun?: boolean;
  /** The import is for this series (the HTTP path): rows may omit the symbol, and must not name another. */
  readonly symbol?: string;
  /** The caller bounds the input (an HTTP body): see `PriceStore.beginPriceWrites`. */
  readonly small?: boolean;
  /** Where the points come from, recorded for every day written: a source's name; default `import`. */
  readonly source?: string;
  /** When they were fetched (epoch ms); default now. */
  readonly fetchedAt?: number;
  /**
   * The sources of these series, best first: an import from a lower-ranked one only fills what the
   * ones above did not deliver complete (./day-precedence.ts). Its points are then held until every
   * row is checked, so a ranked import should be bounded (a source's window).
   */
  readonly ranking?: readonly string[];
}

const DAY_MS = 86_400_000;
/**
 * Starts from here on are refused: the day arithmetic of `days.ts` writes four-digit years, and a
 * later start can have a local date past 9999-12-31 (UTC+14 is the easternmost offset).
 */
const START_LIMIT = Date.UTC(9999, 11, 31);

/**
 * `isOnGrid` for one series, fast on the hot path: per UTC day it asks the zone's offset at the
 * day's start, middle and end, and when the three agree (no DST change that day) an instant is on
 * the grid when its local minute of the day is a multiple of the resolution. Days with a change,
 * and `P1D` series, go to `isOnGrid` itself.
 */
class GridCheck {
  private day = Number.NaN;
  private offset = 0;
  private steady = false;
  private readonly minutes: number;

  constructor(private readonly series: Series) {
    this.minutes = RESOLUTIONS[series.resolution];
  }

  onGrid(start: number): boolean {
    const { timezone, resolution } = this.series;
    if (resolution === 'P1D') return isOnGrid(start, timezone, resolution);
    const day = Math.floor(start / DAY_MS);
    if (day !== this.day) {
      const from = day * DAY_MS;
      this.day = day;
      this.offset = offsetMinutes(from, timezone);
      this.steady =
        offsetMinutes(from + DAY_MS / 2, timezone) === this.offset &&
        offsetMinutes(from + DAY_MS, timezone) === this.offset;
    }
    if (!this.steady) return isOnGrid(start, timezone, resolution);
    if (start % QUARTER_HOUR_MS !== 0) return false;
    const local = (start - day * DAY_MS) / 60_000 + this.offset;
    return (((local % 1440) + 1440) % 1440) % this.minutes === 0;
  }

  /**
   * Where the interval from `start` (just found on the grid by `onGrid`) ends: on a day without a
   * DST change one resolution of elapsed time later, else as `intervalEnd` finds it.
   */
  endOf(start: number): number {
    const { timezone, resolution } = this.series;
    if (resolution !== 'P1D' && this.steady && Math.floor(start / DAY_MS) === this.day) {
      return start + this.minutes * 60_000;
    }
    return intervalEnd(start, timezone, resolution);
  }
}

/** Which intervals of each series one import has seen: a bit per UTC quarter hour, in 4 KiB chunks. */
class SeenIntervals {
  private readonly chunks = new Map<number, Uint32Array>();
  private readonly odd = new Set<number>();

  /** Marks `start`; false when it was marked already. */
  mark(start: number): boolean {
    if (start % QUARTER_HOUR_MS !== 0) {
      // Only P1D days of zones with historic, non-quarter-hour offsets start off the quarter hours.
      if (this.odd.has(start)) return false;
      this.odd.add(start);
      return true;
    }
    const quarter = start / QUARTER_HOUR_MS;
    const key = Math.floor(quarter / 2 ** CHUNK_BITS);
    let chunk = this.chunks.get(key);
    if (chunk === undefined) {
      chunk = new Uint32Array(2 ** CHUNK_BITS / 32);
      this.chunks.set(key, chunk);
    }
    const bit = quarter - key * 2 ** CHUNK_BITS;
    const word = bit >>> 5;
    const mask = 1 << (bit & 31);
    const current = chunk[word] ?? 0;
    if ((current & mask) !== 0) return false;
    chunk[word] = current | mask;
    return true;
  }
}

interface SeriesState {
  readonly series: Series;
  readonly seen: SeenIntervals;
  readonly grid: GridCheck;
}

/** Price imports (files, the upload API, sources): every row checked, then all written or none. */
export interface ImportService {
  /**
   * Checks and writes `batches` all or nothing: a bad row is reported (with its line) in the result,
   * never thrown; a store that fails throws.
   * @example await imports.run(readRows(createReadStream('prices.csv'), 'csv', true), { dryRun: true })
   */
  run(batches: RowBatches, options?: ImportOptions): Promise<ImportResult>;
}

export function createImportService({ prices }: { prices: PriceStore }): ImportService {
  return {
    async run(batches: RowBatches, options: ImportOptions = {}): Promise<ImportResult> {
      const catalogue = new Map((await prices.listSeries()).map((s) => [s.symbol, s]));
      const states = new Map<string, SeriesState>();
      const errors: RowError[] = [];
      let errorCount = 0;
      let written = 0;
      let batch: ImportPoint[] = [];
      const source = options.source ?? 'import';
      const ranking = options.ranking;
      let session: PriceWriteSession | undefined = options.dryRun
        ? undefined
        : await prices.beginPriceWrites({
            small: options.small === true,
            provenance: {
              source,
              fetchedAt: options.fetchedAt ?? Date.now(),
              ...(ranking !== undefined && { keep: rankedAbove(source, ranking) }),
            },
          });

      const fail = async (line: number, reason: string) => {
        errorCount++;
        if (errors.length < MAX_REPORTED_ERRORS) errors.push({ line, reason });
        if (session !== undefined) {
          const open = session;
          session = undefined;
          batch = [];
          await open.rollback();
        }
      };

      const stateOf = (symbol: string): SeriesState | undefined => {
        let state = states.get(symbol);
        if (state === undefined) {
          const series = catalogue.get(symbol);
          if (series === undefined) return undefined;
          state = { series, seen: new SeenIntervals(), grid: new GridCheck(series) };
          states.set(symbol, state);
        }
        return state;
      };

      try {
        for await (const rows of batches) {
          for (const row of rows) {
            const point = checkRow(row);
            if (point === undefined) continue;
            if (typeof point === 'string') {
              await fail(row.line, row.path === undefined ? point : `${row.path}: ${point}`);
              continue;
            }
            if (errorCount > 0) continue;
            written++;
            if (session !== undefined) batch.push(point);
          }
          if (session !== undefined && ranking === undefined && batch.length >= BATCH) {
            await session.write(batch);
            batch = [];
          }
        }
        if (errorCount > 0) return { ok: false, errors, errorCount };
        if (session !== undefined) {
          if (ranking !== undefined) {
            const series = (symbol: string) => (states.get(symbol) as SeriesState).series;
            batch = await pointsToWrite(prices, batch, series, source, ranking);
            written = batch.length;
          }
          for (let from = 0; from < batch.length; from += BATCH)
            await session.write(batch.slice(from, from + BATCH));
          await session.commit();
          session = undefined;
        }
        return { ok: true, written, series: [...states.keys()].sort() };
      } catch (error) {
        if (error instanceof FormatError) {
          await fail(error.line, error.message);
          return { ok: false, errors, errorCount };
        }
        throw error;
      } finally {
        await session?.rollback();
      }

      /** The point of a good row, why the row is bad, or nothing for a good row that is no point. */
      function checkRow(row: RawRow): ImportPoint | string | undefined {
        if (row.error !== undefined) return row.error;
        let symbol = row.symbol === undefined || row.symbol === '' ? undefined : row.symbol.toUpperCase();
        if (options.symbol !== undefined) {
          if (symbol !== undefined && symbol !== options.symbol) {
            return `symbol ${clip(symbol)} is not the series of this request (${options.symbol})`;
          }
          symbol = options.symbol;
        }
        if (symbol === undefined) return 'symbol is missing';
        const state = stateOf(symbol);
        if (state === undefined) return `unknown series ${clip(symbol)}`;
        const { series } = state;
        if (row.resolution !== undefined && row.resolution !== series.resolution) {
          return `the file states resolution ${clip(row.resolution)}, but ${series.symbol} is ${series.resolution}: upload it to a series of that resolution`;
        }
        if (row.statesOnly === true) return undefined;
        if (row.start === undefined || row.start === '') return 'start is missing';
        const start = parseRfc3339(row.start);
        if (start === undefined) {
          return `start "${clip(row.start)}" is not an RFC 3339 timestamp with Z or an offset`;
        }
        if (start >= START_LIMIT)
          return `start ${clip(row.start)} is out of range: it must be before 9999-12-31T00:00:00Z`;
        if (!state.grid.onGrid(start)) {
          return `start ${clip(row.start)} is not on the ${series.resolution} grid of ${series.symbol} in ${series.timezone}`;
        }
        if (row.end !== undefined && row.end !== '') {
          const wrongEnd = checkEnd(row.end, start, state);
          if (wrongEnd !== undefined) return wrongEnd;
        }
        if (row.price === undefined) return 'price is missing';
        const price = typeof row.price === 'number' ? checkNumberPrice(row.price) : checkPrice(row.price);
        if (!price.ok) return price.reason;
        if (row.currency !== undefined && row.currency !== '' && row.currency !== series.currency) {
          return `currency ${clip(row.currency)} is not the currency of ${series.symbol} (${series.currency})`;
        }
        if (row.unit !== undefined && row.unit !== '' && row.unit !== series.unit) {
          return `unit ${clip(row.unit)} is not the unit of ${series.symbol} (${series.unit})`;
        }
        if (!state.seen.mark(start))
          return `start ${clip(row.start)} names an interval of ${series.symbol} already in this import`;
        return { symbol: series.symbol, start, price: price.text };
      }
    },
  };
}

/**
 * Why `endText` does not end the series' own interval from `start`, or nothing when it does: an
 * interval of another resolution (an hourly export sent to a quarter-hour series) would otherwise
 * replace the points it does not describe.
 */
function checkEnd(endText: string, start: number, state: SeriesState): string | undefined {
  const end = parseRfc3339(endText);
  if (end === undefined) return `end "${clip(endText)}" is not an RFC 3339 timestamp with Z or an offset`;
  const expected = state.grid.endOf(start);
  if (end === expected) return undefined;
  const { symbol, resolution, timezone } = state.series;
  return `end ${clip(endText)} makes an interval of ${elapsed(end - start)}, not one of the ${resolution} intervals of ${symbol} (from this start it ends at ${formatInstant(expected, timezone)}): upload it to a series of that resolution`;
}

/** An elapsed time in words: `60 minutes`, `-15 minutes`. */
function elapsed(ms: number): string {
  const minutes = ms / 60_000;
  return `${Number.isInteger(minutes) ? minutes : minutes.toFixed(3)} minute${minutes === 1 ? '' : 's'}`;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
