/**
 * Crash safety (SECURITY.md), crash-safety-sqlite.test.ts and crash-safety-postgres.test.ts: a
 * process killed with SIGKILL in the middle of an import, on SQLite and on PostgreSQL. After a
 * restart the import is there whole or not at all, and every key and price written before it is
 * intact.
 *
 * One deployment per engine (a data folder, or a schema) goes through ten imports of the same
 * points (300,000 quarter hours on SQLite, 96,000 on PostgreSQL), each into a series of its own, and
 * a SIGKILL in each:
 * - the server's import, `PUT /api/v1/series/{symbol}/prices` with a streamed CSV body (9 MB on
 *   SQLite; the limit is 16 MiB). The server holds the points until the body has ended and then
 *   writes them in one transaction. Killed: right after it answered (the control), right after it
 *   refused an import for its last row, while it reads the body, as the transaction begins, half-way
 *   through it, and near its end, where it commits.
 * - the operator's import, `pricepoint import FILE`, which streams a file into one open transaction
 *   (on SQLite into a private staging database, copied into the real one in one transaction at the end).
 *   The file is a FIFO this test feeds, so the kill comes after an exact number of rows (10 %, 50 %,
 *   95 %), and once more after the file ended, in the COMMIT (SQLite: half-way through what it writes
 *   into the WAL; PostgreSQL: as its backend runs it). The server on the same data is killed with it.
 * After each kill the server starts again, and then: the import is whole or absent (as the kill point
 * decides, where it does), every earlier import is as it was, every key authenticates as before, the
 * prices written at the start are served byte for byte as before, and a new write works.
 *
 * Kill points are progress, never time: bytes the server process has read (`/proc/PID/io`), rows fed
 * into the FIFO, and how far the database has grown (SQLite: the WAL, truncated before each import;
 * a transaction larger than the page cache spills into it before it commits. PostgreSQL: the heap of
 * the prices table, which uncommitted rows extend too). The control import measures how far a whole
 * import grows the database.
 *
 * This file: the imports and kill points of the plan, and what a site (a data folder or a schema)
 * must tell of its database. The sites are crash-safety-sqlite-site.ts and -postgres-site.ts, the
 * deployment and its checks crash-safety-deployment.ts, the steps crash-safety-steps.ts.
 */
import type { Settings } from '../helpers/process.js';

const QUARTER_HOUR_MS = 900_000;
/** Imported points: every quarter hour (UTC) from here on, decades before the points written first. */
const IMPORT_FROM = Date.parse('2000-01-01T00:00:00Z');
const ROWS_PER_CHUNK = 2_000;
/** What every import series is created as. */
export const IMPORT_SERIES = {
  name: 'Crash test day-ahead',
  kind: 'electricity',
  currency: 'EUR',
  unit: 'MWh',
  timezone: 'UTC',
  resolution: 'PT15M',
} as const;
/** A series no import touches. */
export const KEEP_SERIES = {
  name: 'Kept FX',
  kind: 'fx',
  currency: 'USD',
  unit: 'EUR',
  timezone: 'Europe/Berlin',
  resolution: 'PT1H',
} as const;
/** The first day written through the API, on every series: it must come back byte for byte. */
export const FIRST_DAY = '2024-03-01';

// ---------------------------------------------------------------------------------------------------
// The kill points, each with the series its import goes into.

export type Outcome = 'whole' | 'none';

export interface HttpKill {
  readonly symbol: string;
  readonly name: string;
  /** Whether `reached` reads the bytes the server has read (Linux only). */
  readonly readsBody?: true;
  /** Whether it has come: bytes the server read since the body began; database growth; both of a whole import. */
  reached(progress: { read: number; grown: number; body: number; whole: number }): boolean;
}

export const HTTP_KILLS: readonly HttpKill[] = [
  {
    symbol: 'HTTP-BODY',
    name: 'while it reads the body (a quarter of it read)',
    readsBody: true,
    reached: ({ read, body }) => read >= body / 4,
  },
  {
    symbol: 'HTTP-BEGIN',
    name: 'as its transaction starts to reach the database (2 % there)',
    reached: ({ grown, whole }) => grown >= whole * 0.02,
  },
  {
    symbol: 'HTTP-HALF',
    name: 'half-way through its transaction',
    reached: ({ grown, whole }) => grown >= whole * 0.5,
  },
  {
    // Either outcome may follow. On SQLite the last 2 MB (the server's page cache) reach the WAL only
    // in the COMMIT, and the checkpoint after it keeps the server from answering: the kill lands in
    // the commit or just after it. On PostgreSQL it lands in the last inserts.
    symbol: 'HTTP-COMMIT',
    name: 'near the end of its transaction, where it commits (90 % there)',
    reached: ({ grown, whole }) => grown >= whole * 0.9,
  },
];

export interface CliKill {
  readonly symbol: string;
  readonly name: string;
  /** The share of the rows fed before the kill; 1: all of them, and the end of the file. */
  readonly fed: number;
}

export const CLI_KILLS: readonly CliKill[] = [
  { symbol: 'CLI-EARLY', name: 'early (10 % of the rows fed)', fed: 0.1 },
  { symbol: 'CLI-HALF', name: 'half-way (50 % of the rows fed)', fed: 0.5 },
  { symbol: 'CLI-LATE', name: 'near the end (95 % of the rows fed)', fed: 0.95 },
  { symbol: 'CLI-COMMIT', name: 'while it commits (every row fed, the file ended)', fed: 1 },
];

export const CONTROL = 'HTTP-WHOLE';
export const REFUSED = 'HTTP-REFUSED';
export const IMPORT_SYMBOLS = [
  CONTROL,
  REFUSED,
  ...HTTP_KILLS.map((k) => k.symbol),
  ...CLI_KILLS.map((k) => k.symbol),
];

// ---------------------------------------------------------------------------------------------------
// The import: the same points every time, as chunks of CSV built once per symbol column.

/** The price of imported point `i`, as text: distinct, some negative, trailing zeros that must stay. */
export function importedPrice(i: number): string {
  return `${(i % 9973) - 4000}.${String(i % 1000).padStart(3, '0')}`;
}

export function importedStart(i: number): number {
  return IMPORT_FROM + i * QUARTER_HOUR_MS;
}

interface ImportText {
  readonly header: Buffer;
  /** `ROWS_PER_CHUNK` rows each. */
  readonly chunks: readonly Buffer[];
  readonly bytes: number;
}

const importTexts = new Map<string, ImportText>();

/**
 * The first `rows` points as CSV: with a symbol column for the CLI, without one (`''`) for the
 * series' own endpoint.
 */
export function importText(symbol: string, rows: number): ImportText {
  let text = importTexts.get(`${symbol}:${rows}`);
  if (text === undefined) {
    const chunks: Buffer[] = [];
    const prefix = symbol === '' ? '' : `${symbol},`;
    for (let from = 0; from < rows; from += ROWS_PER_CHUNK) {
      let chunk = '';
      for (let i = from; i < from + ROWS_PER_CHUNK; i++) {
        chunk += `${prefix}${new Date(importedStart(i)).toISOString().slice(0, 19)}Z,${importedPrice(i)}\n`;
      }
      chunks.push(Buffer.from(chunk));
    }
    const header = Buffer.from(symbol === '' ? 'start,price\n' : 'symbol,start,price\n');
    text = { header, chunks, bytes: chunks.reduce((sum, c) => sum + c.length, header.length) };
    importTexts.set(`${symbol}:${rows}`, text);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------
// Where the data lives, a data folder (SQLite) or a schema (PostgreSQL), and what can be seen of it.

export interface Site {
  readonly settings: Settings;
  readonly dir: string;
  readonly certFile: string;
  /** Called once the server has created the tables. */
  prepare(): Promise<void>;
  /** Takes the database's size now as the base of `grown()`. */
  mark(): Promise<void>;
  /** Bytes the database has grown by since `mark()`. */
  grown(): Promise<number>;
  /** Whether an import holds the write lock now, and whether it has written rows (PostgreSQL tells). */
  importer(): Promise<{ locked: boolean; wrote: boolean | undefined }>;
  /**
   * The CLI import stages its points outside the database and holds the write lock only to copy
   * them in at the end (SQLite: src/stores/sqlite/price-write-session.ts), so under way it holds none.
   */
  readonly stagesOutsideLock?: true;
  /**
   * Called while an import waits for more input, just before its input ends: how to tell that its
   * COMMIT is under way, and, once it was killed then, what that decided (undefined: not known).
   */
  aimAtCommit(
    whole: number,
  ): Promise<{ committing: () => Promise<boolean>; decided: () => Outcome | undefined }>;
  /** Waits until no import holds the write lock (a killed client's transaction is rolled back). */
  settle(): Promise<void>;
  /** Committed points of `symbol` in the imports' span, and anything wrong with the database itself. */
  inspect(symbol: string): Promise<{ points: number; problems: string[] }>;
}

export interface Engine {
  readonly name: string;
  /** Points of each import. */
  readonly rows: number;
  site(): Promise<Site>;
}

/**
 * A kill seen to come while the database had grown by less than this share of a whole import cannot
 * have let the import commit: SQLite writes the commit record last, PostgreSQL gets the COMMIT after
 * the last row. The margin is for the moment between seeing the growth and the kill.
 */
export const FAR_FROM_WHOLE = 0.75;

/** Where imported points lie: before the days written at the start. */
export const IMPORT_SPAN = [IMPORT_FROM, Date.parse(`${FIRST_DAY}T00:00:00Z`)] as const;
export const COUNT_SQL =
  'select count(*) as n from prices p join series s on s.id = p.series_id where s.symbol = ? and p.start_ms >= ? and p.start_ms < ?';
