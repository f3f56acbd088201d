/** The SQLite file store the import fuzz tests write to, and the checks of what an import left in it. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach } from 'node:test';
import { parseRfc3339 } from '../../src/domain/time/rfc3339.js';
import { type ImportFormat, readRows } from '../../src/services/import-formats.js';
import {
  createImportService,
  type ImportResult,
  type ImportService,
} from '../../src/services/import-service.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import {
  catchEscapes,
  checkAnswer,
  decode,
  HTTP_SERIES,
  type Mode,
  nothingEscaped,
  poolOf,
  read,
  SERIES,
  storedPrice,
  streamOf,
} from './import-fuzz-basics.js';

/**
 * The stored prices as last read. Each import reads the store once, after itself, and that is the
 * next one's "before": every path that writes must end with `storedNow`.
 */
let lastRead: Map<string, string> | undefined;

/** The open store and its import service, from the `before` hook of `useFuzzStore` on. */
export const fuzz = {} as { stores: Stores; imports: ImportService };

/**
 * Opens a SQLite file store with a few prices in each series before the tests of the calling file,
 * watches for errors that escape, and removes the store after them.
 */
export function useFuzzStore(): void {
  let dir: string | undefined;
  catchEscapes();
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pricepoint-import-fuzz-'));
    fuzz.stores = await openEmbeddedStores(join(dir, 'pricepoint.db'));
    fuzz.imports = createImportService({ prices: fuzz.stores.prices });
    for (const s of SERIES) {
      await fuzz.stores.prices.upsertSeries(s);
      const points = poolOf(s)
        .filter((_, i) => i % 3 === 0)
        .map((start, i) => ({ start, price: `${i}.25` }));
      await fuzz.stores.prices.upsertPrices(s.symbol, points);
    }
  });
  after(async () => {
    await fuzz.stores?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  // Each test reads the store afresh, so that one test's failure does not fail the next ones too.
  beforeEach(() => {
    lastRead = undefined;
  });
}

/** Every stored price, `SYMBOL@start` to price text. */
async function snapshot(): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for (const s of SERIES) {
    for (const p of await fuzz.stores.prices.pricesBetween(s.symbol, -8.64e15, 8.64e15)) {
      all.set(`${s.symbol}@${p.start}`, p.price);
    }
  }
  return all;
}

export async function storedNow(): Promise<Map<string, string>> {
  lastRead = await snapshot();
  return lastRead;
}
export const storedBefore = async (): Promise<Map<string, string>> => lastRead ?? storedNow();

export const listed = (prices: ReadonlyMap<string, string>): string[] =>
  [...prices].map(([key, price]) => `${key}=${price}`).sort();

export function plus(
  prices: ReadonlyMap<string, string>,
  points: readonly { symbol: string; start: number; price: string }[],
): Map<string, string> {
  const all = new Map(prices);
  for (const p of points) all.set(`${p.symbol}@${p.start}`, p.price);
  return all;
}

export const optionsOf = (mode: Mode) => (mode === 'cli' ? {} : { symbol: HTTP_SERIES.symbol, small: true });

interface Outcome {
  readonly result: ImportResult;
  readonly before: Map<string, string>;
  readonly after: Map<string, string>;
}

/** Imports `bytes` cut at `cuts`: it must answer, sensibly, and a failure must leave the store as it was. */
export async function importFile(
  format: ImportFormat,
  bytes: Uint8Array,
  cuts: readonly number[],
  mode: Mode,
): Promise<Outcome> {
  const before = await storedBefore();
  let result: ImportResult;
  try {
    result = await fuzz.imports.run(readRows(streamOf(bytes, cuts), format, mode === 'cli'), optionsOf(mode));
  } catch (error) {
    assert.fail(`the import rejected instead of answering: ${(error as Error)?.stack ?? String(error)}`);
  }
  await nothingEscaped();
  checkAnswer(format, decode(bytes), result);
  const after = await storedNow();
  if (!result.ok) assert.deepEqual(listed(after), listed(before), 'a failed import writes nothing');
  return { result, before, after };
}

/** After a successful import of arbitrary input: the store is what it was plus the rows read. */
export async function checkWritten(
  format: ImportFormat,
  bytes: Uint8Array,
  mode: Mode,
  outcome: Outcome,
): Promise<void> {
  const { result, before, after } = outcome;
  if (!result.ok) return;
  const reading = await read(format, bytes, [], mode === 'cli');
  assert.equal(result.written, reading.rows.length, 'an import that succeeds writes every row');
  const points = reading.rows.map((row) => {
    assert.equal(row.error, undefined, `line ${row.line} was readable`);
    const start = parseRfc3339(row.start ?? '');
    assert.ok(start !== undefined, `line ${row.line}: an accepted start is RFC 3339 (${row.start})`);
    const price = typeof row.price === 'number' ? String(row.price) : (row.price ?? '');
    return {
      symbol: mode === 'http' ? HTTP_SERIES.symbol : (row.symbol ?? '').toUpperCase(),
      start,
      price: storedPrice(price),
    };
  });
  assert.deepEqual(listed(after), listed(plus(before, points)), 'the store holds what it held plus the file');
}
