/**
 * The fuzz tests of hostile import files (SECURITY.md), `import-fuzz-*.test.ts`: the CSV and JSON
 * readers and the import behind them, fuzzed with fast-check. Three kinds of input: random bytes and
 * soups of the tokens the formats care about (`import-fuzz-values.ts`); valid files built from a model
 * of points, written every way the formats allow (`import-fuzz-files.ts`, `-csv-files.ts`,
 * `-json-files.ts`: quoting, padding, column order, letter case, blank lines, CRLF, BOM, JSON arrays,
 * duplicate keys, any UTC offset); and those files broken on purpose, so that the test knows which
 * lines are bad (`-csv-breaks.ts`, `-json-breaks.ts`). Every input arrives through a stream cut at
 * random places: mid-character, mid-quote, mid-line.
 *
 * What must hold: the readers throw nothing but `FormatError` and read the same rows however the
 * stream is cut; the import never rejects, and names real, non-blank lines (exactly the broken
 * ones, where the test knows them); a failed import leaves the stored prices exactly as they were
 * and a good one leaves them as they were plus the file. The store is a SQLite file
 * (`import-fuzz-store.ts`), so the transaction of `pricepoint import` is what gets rolled back; the
 * HTTP path (points held until commit) runs too.
 *
 * This file: the series, the streams cut at random places, and the checks of what a reader read and
 * of what the import answered.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before } from 'node:test';
import fc from 'fast-check';
import { dayIntervals, type Resolution } from '../../src/domain/time/days.js';
import {
  FormatError,
  type ImportFormat,
  type KNOWN_COLUMNS,
  type RawRow,
  readRows,
} from '../../src/services/import-formats.js';
import { type ImportResult, MAX_REPORTED_ERRORS } from '../../src/services/import-service.js';
import type { Series } from '../../src/stores/types.js';

export type Column = (typeof KNOWN_COLUMNS)[number];
/** `cli`: `pricepoint import` (a symbol column, SQLite's own transaction); `http`: `PUT /series/NO1/prices`. */
export type Mode = 'cli' | 'http';

export const MINUTE = 60_000;
/** The CSV reader's longest record: inputs below it must read the same however they are cut. */
export const MAX_RECORD = 1 << 20;
/** fast-check settings: the failed assertion's message in the report, where node:test prints it. */
export const runs = (numRuns: number) => ({ numRuns, includeErrorInReport: true });

export function series(
  symbol: string,
  timezone: string,
  resolution: Resolution,
  currency: string,
  unit: string,
): Series {
  return { symbol, name: `${symbol} (fuzz)`, kind: 'test', currency, unit, timezone, resolution };
}

/** Zones with DST gaps and repeats, a +05:45 offset, Lord Howe's 30-minute shift, a skipped midnight. */
export const SERIES: readonly Series[] = [
  series('NO1', 'Europe/Oslo', 'PT15M', 'EUR', 'MWh'),
  series('NYC', 'America/New_York', 'PT1H', 'USD', 'MWh'),
  series('TYO', 'Asia/Tokyo', 'PT30M', 'JPY', 'kWh'),
  series('KTM', 'Asia/Kathmandu', 'PT15M', 'NPR', 'kWh'),
  series('LHI', 'Australia/Lord_Howe', 'PT1H', 'AUD', 'MWh'),
  series('SCL', 'America/Santiago', 'P1D', 'CLP', 'MWh'),
  series('XAU', 'Asia/Tokyo', 'P1D', 'USD', 'troy_oz'),
];
const SYMBOLS = new Set(SERIES.map((s) => s.symbol));
export const HTTP_SERIES = SERIES[0]!;
/** DST days of Europe, the US, Lord Howe and Chile in 2026, and one plain day. */
const DATES = [
  '2026-03-08',
  '2026-03-29',
  '2026-04-05',
  '2026-09-06',
  '2026-10-04',
  '2026-10-25',
  '2026-11-01',
  '2026-11-22',
];
const POOL = new Map(
  SERIES.map((s) => [
    s.symbol,
    DATES.flatMap((d) => dayIntervals(d, s.timezone, s.resolution).map((i) => i.start)),
  ]),
);
export const poolOf = (s: Series): number[] => POOL.get(s.symbol) ?? [];

export const pad2 = (n: number): string => String(n).padStart(2, '0');
export const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');
export const decode = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');
export const count = (text: string, pattern: RegExp): number => text.match(pattern)?.length ?? 0;
/** What the store keeps of a valid price text: a minus on zero is dropped. */
export const storedPrice = (text: string): string => (/^-0(\.0+)?$/.test(text) ? text.slice(1) : text);

// ---------------------------------------------------------------------------------------------
// Streams and reading

/** Cuts before every byte; past 600 bytes, into 600 even pieces (each costs a turn of the event loop). */
const EVERY_BYTE = [-1];
export const cutsArb = fc.oneof(
  { arbitrary: fc.array(fc.nat(), { maxLength: 24 }), weight: 4 },
  { arbitrary: fc.constant(EVERY_BYTE), weight: 1 },
);

/**
 * `bytes` as a byte stream cut before each offset in `cuts`, one piece per turn of the event loop so
 * that the reader sees every boundary. `failure`: the stream then fails instead of ending.
 */
export function streamOf(bytes: Uint8Array, cuts: readonly number[] = [], failure?: Error): Readable {
  const step = Math.ceil(bytes.length / 600);
  const ends =
    cuts === EVERY_BYTE
      ? Array.from({ length: Math.ceil(bytes.length / step) }, (_, i) => (i + 1) * step)
      : [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  ends.push(bytes.length);
  async function* pieces() {
    let from = 0;
    for (const end of ends) {
      if (end <= from) continue;
      yield Buffer.from(bytes.subarray(from, end));
      from = end;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (failure !== undefined) throw failure;
  }
  return Readable.from(pieces(), { objectMode: false });
}

interface Reading {
  readonly rows: RawRow[];
  readonly failure: { readonly line: number; readonly message: string } | undefined;
}

/** Every row a reader yields, and the format error it ends with, if any (nothing else may escape). */
export async function read(
  format: ImportFormat,
  bytes: Uint8Array,
  cuts: readonly number[],
  needSymbol: boolean,
): Promise<Reading> {
  const rows: RawRow[] = [];
  try {
    for await (const batch of readRows(streamOf(bytes, cuts), format, needSymbol)) {
      for (const row of batch) rows.push(row);
    }
  } catch (error) {
    assert.ok(
      error instanceof FormatError,
      `only a FormatError may leave the ${format} reader: ${String(error)}`,
    );
    assert.equal(format, 'csv', 'the JSON reader reports every bad line as a row and never throws');
    return { rows, failure: { line: error.line, message: error.message } };
  }
  return { rows, failure: undefined };
}

/** Lines as the reader counts them: CSV breaks at LF (CR LF is LF), JSON Lines at LF, CR LF or CR. */
function linesOf(text: string, format: ImportFormat): string[] {
  return text.split(format === 'csv' ? '\n' : /\r\n|\r|\n/);
}

const escaped: unknown[] = [];
const onEscape = (error: unknown): void => {
  escaped.push(error);
};

/** Collects unhandled rejections and uncaught exceptions during the tests of the calling file. */
export function catchEscapes(): void {
  before(() => {
    process.on('unhandledRejection', onEscape);
    process.on('uncaughtException', onEscape);
  });
  after(() => {
    process.off('unhandledRejection', onEscape);
    process.off('uncaughtException', onEscape);
  });
}

/** Taken and cleared at each check, so that fast-check can shrink to the input that caused it. */
export async function nothingEscaped(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(escaped.splice(0), [], 'no unhandled rejection and no uncaught exception');
}

/** Rows in line order, on real non-blank lines, well formed; a format error after them, at a real line. */
export function checkReading(format: ImportFormat, text: string, reading: Reading): void {
  const lines = linesOf(text, format);
  let previous = 0;
  for (const row of reading.rows) {
    assert.ok(
      Number.isInteger(row.line) && row.line > previous,
      `rows in line order: ${row.line} after ${previous}`,
    );
    previous = row.line;
    assert.ok(row.line <= lines.length, `row line ${row.line} is one of the ${lines.length} lines`);
    assert.notEqual(lines[row.line - 1]?.trim(), '', `row line ${row.line} is not blank`);
    if (row.error !== undefined) {
      assert.notEqual(row.error.trim(), '', `the bad row at line ${row.line} says why`);
      assert.deepEqual(
        [row.symbol, row.start, row.price, row.currency, row.unit],
        [undefined, undefined, undefined, undefined, undefined],
        `a row that could not be read (line ${row.line}) carries no fields`,
      );
      continue;
    }
    for (const value of [row.symbol, row.start, row.currency, row.unit]) {
      assert.ok(value === undefined || typeof value === 'string', `line ${row.line}: fields are text`);
    }
    assert.ok(['undefined', 'string', 'number'].includes(typeof row.price), `line ${row.line}: price type`);
    if (format === 'csv') {
      assert.equal(typeof row.start, 'string', `CSV line ${row.line} always has a start`);
      assert.equal(typeof row.price, 'string', `CSV line ${row.line} always has a price text`);
    }
  }
  if (reading.failure === undefined) return;
  const { line, message } = reading.failure;
  assert.notEqual(message.trim(), '', 'a format error says why');
  assert.ok(Number.isInteger(line) && line >= 1 && line <= lines.length, `format error line ${line} is real`);
  assert.ok(line >= previous, `the format error (line ${line}) comes after the rows read (line ${previous})`);
  if (/file is empty/.test(message))
    assert.equal(text.trim(), '', `only a blank file is called empty: ${message}`);
  else assert.notEqual(lines[line - 1]?.trim(), '', `format error line ${line} is not blank: ${message}`);
}

/** An answer of the import: counts add up, and every error names a real, non-blank line, in order. */
export function checkAnswer(format: ImportFormat, text: string, result: ImportResult): void {
  if (result.ok) {
    assert.ok(Number.isInteger(result.written) && result.written >= 0, 'written is a count');
    assert.deepEqual(result.series, [...new Set(result.series)].sort(), 'series listed once each, sorted');
    for (const symbol of result.series) assert.ok(SYMBOLS.has(symbol), `${symbol} is a known series`);
    return;
  }
  const lines = linesOf(text, format);
  assert.ok(result.errorCount >= 1, 'a failed import counts its errors');
  assert.equal(
    result.errors.length,
    Math.min(result.errorCount, MAX_REPORTED_ERRORS),
    'the first 100 are listed',
  );
  let previous = 0;
  for (const { line, reason } of result.errors) {
    assert.ok(typeof reason === 'string' && reason.trim() !== '', `the error at line ${line} says why`);
    assert.ok(Number.isInteger(line) && line >= 1 && line <= lines.length, `line ${line} is real: ${reason}`);
    assert.ok(line >= previous, `errors in line order: ${line} after ${previous}`);
    previous = line;
    if (/file is empty/.test(reason))
      assert.equal(text.trim(), '', `only a blank file is called empty: ${reason}`);
    else assert.notEqual(lines[line - 1]?.trim(), '', `error line ${line} is not blank: ${reason}`);
  }
}
