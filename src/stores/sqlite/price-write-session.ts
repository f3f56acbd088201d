/**
 * Imports into SQLite, all or nothing, without holding the write lock while the points arrive.
 *
 * `pricepoint import` (a large file) stages its points on a connection of its own, in a private
 * temporary database (`ATTACH ''`: a file in the system's temporary folder that SQLite deletes as
 * it opens it, so nothing is left behind even after SIGKILL). Only when every row has been read and
 * checked does it take the write lock of the real database, copy the staged points in with one
 * `INSERT ... SELECT` in key order, and commit: one transaction, so the import is whole or absent,
 * and the lock is held for the copy alone (about a second per 3 million points, bench/README.md)
 * instead of for the whole read of the file. The server's writes wait for that copy without blocking
 * its event loop (write-lock.ts), and its readers keep reading the last committed state (WAL).
 *
 * The server's own imports (HTTP bodies, bounded) hold the points until `commit`: a transaction
 * held open across network reads would hold the lock for as long as a slow client takes. Then they
 * are written in one transaction on a connection of their own, in chunks with a turn of the event
 * loop between them, so a large upload does not stall other requests either (on the server's
 * connection, those would run inside its transaction). An in-memory database cannot be opened
 * twice: there the points are written in one synchronous transaction on the one connection. *
 * Every session also records, in the transaction that writes its points, the provenance of each
 * local day it wrote into and whether that day is now complete (../sql/day-marks.ts), and the price
 * events those days call for (docs/events.md).
 */
import SQLite from 'better-sqlite3';
import type { Resolution } from '../../domain/time/days.js';
import { DayMarks, type SeriesGrid } from '../sql/day-marks.js';
import type { ImportPoint, PriceWriteSession, WriteProvenance } from '../types.js';
import { writeSqliteEvents } from './outbox.js';
import type { SqliteWriter } from './write-lock.js';

const UPSERT =
  'INSERT INTO prices (series_id, start_ms, price) VALUES (?, ?, ?) ' +
  'ON CONFLICT (series_id, start_ms) DO UPDATE SET price = excluded.price';

/** The staging table: keyed as `prices` is, so the copy reads it in the order `prices` is stored in. */
const STAGING_TABLE =
  'CREATE TABLE staging.points (series_id INTEGER NOT NULL, start_ms INTEGER NOT NULL, ' +
  'price TEXT NOT NULL, PRIMARY KEY (series_id, start_ms)) WITHOUT ROWID';
const STAGE = 'INSERT INTO staging.points (series_id, start_ms, price) VALUES (?, ?, ?)';
/** `WHERE true` tells SQLite's parser that ON CONFLICT belongs to the INSERT, not to a join. */
const COPY =
  'INSERT INTO main.prices (series_id, start_ms, price) ' +
  'SELECT series_id, start_ms, price FROM staging.points WHERE true ORDER BY series_id, start_ms ' +
  'ON CONFLICT (series_id, start_ms) DO UPDATE SET price = excluded.price';
/** How long the final copy waits for the lock: the server holds it for milliseconds at a time. */
const COPY_WAIT_MS = 60_000;

/** Writes points with `sql` on `conn`, looking series up once per symbol and noting their days in `marks`. */
function pointWriter(
  conn: SQLite.Database,
  sql: string,
  marks: DayMarks,
): (points: readonly ImportPoint[]) => void {
  const insert = conn.prepare<[number, number, string]>(sql);
  const seriesOf = conn.prepare<[string], { id: number; timezone: string; resolution: Resolution }>(
    'SELECT id, timezone, resolution FROM main.series WHERE symbol = ?',
  );
  const grids = new Map<string, SeriesGrid>();
  return (points) => {
    for (const point of points) {
      let grid = grids.get(point.symbol);
      if (grid === undefined) {
        grid = seriesOf.get(point.symbol);
        if (grid === undefined) throw new Error(`no series ${point.symbol}`);
        grids.set(point.symbol, grid);
      }
      insert.run(grid.id, point.start, point.price);
      marks.add(grid, point.start);
    }
  };
}

/**
 * Records each marked day: its source (kept where a higher-ranked one wrote it, `keep`), when, and
 * whether every interval of it is now stored, counted in the same transaction.
 */
const RECORD_DAY =
  'INSERT INTO main.day_provenance (series_id, date, source, fetched_at, complete) ' +
  'VALUES (@id, @date, @source, @at, (SELECT count(*) FROM main.prices ' +
  'WHERE series_id = @id AND start_ms >= @start AND start_ms < @end) >= @intervals) ' +
  'ON CONFLICT (series_id, date) DO UPDATE SET ' +
  'source = CASE WHEN day_provenance.source IN (SELECT value FROM json_each(@keep)) THEN day_provenance.source ELSE excluded.source END, ' +
  'fetched_at = excluded.fetched_at, complete = excluded.complete';

function recordDays(conn: SQLite.Database, marks: DayMarks, provenance: WriteProvenance): void {
  const record = conn.prepare(RECORD_DAY);
  const keep = JSON.stringify(provenance.keep ?? []);
  for (const day of marks.list()) {
    const { seriesId: id, date, start, end, intervals } = day;
    record.run({
      id,
      date,
      source: provenance.source,
      at: provenance.fetchedAt,
      start,
      end,
      intervals,
      keep,
    });
  }
  writeSqliteEvents(conn, marks.list(), Date.now());
}

/** Opens an import session on the database behind `raw` (see the file comment for why two kinds). */
export function openSqliteWriteSession(
  raw: SQLite.Database,
  writer: SqliteWriter,
  small: boolean,
  provenance: WriteProvenance,
): PriceWriteSession {
  if (raw.memory) return bufferedSession((batches) => writer.run(() => writeAll(raw, batches, provenance)));
  return small
    ? bufferedSession((batches) => writeApart(raw.name, writer, batches, provenance))
    : stagedSession(raw.name, provenance);
}

function writeAll(
  conn: SQLite.Database,
  batches: readonly (readonly ImportPoint[])[],
  provenance: WriteProvenance,
): void {
  const marks = new DayMarks();
  const write = pointWriter(conn, UPSERT, marks);
  for (const batch of batches) write(batch);
  recordDays(conn, marks, provenance);
}

/** Points written between two turns of the event loop: a few milliseconds of work. */
const CHUNK = 2_048;

/** Writes `batches` in one transaction on a connection of its own, yielding between chunks. */
async function writeApart(
  file: string,
  writer: SqliteWriter,
  batches: readonly (readonly ImportPoint[])[],
  provenance: WriteProvenance,
): Promise<void> {
  const conn = new SQLite(file);
  try {
    conn.pragma('synchronous = NORMAL');
    conn.pragma('foreign_keys = ON');
    await writer.runApart(conn, async () => {
      const marks = new DayMarks();
      const write = pointWriter(conn, UPSERT, marks);
      for (const batch of batches) {
        for (let from = 0; from < batch.length; from += CHUNK) {
          write(batch.slice(from, from + CHUNK));
          await new Promise(setImmediate);
        }
      }
      recordDays(conn, marks, provenance);
    });
  } finally {
    conn.close();
  }
}

function bufferedSession(
  writeBatches: (batches: readonly (readonly ImportPoint[])[]) => Promise<void>,
): PriceWriteSession {
  let held: ImportPoint[][] = [];
  return {
    async write(points) {
      held.push(points.slice());
    },
    async commit() {
      const batches = held;
      held = [];
      await writeBatches(batches);
    },
    async rollback() {
      held = [];
    },
  };
}

function stagedSession(file: string, provenance: WriteProvenance): PriceWriteSession {
  const conn = new SQLite(file);
  let open = true;
  try {
    conn.pragma('synchronous = NORMAL');
    conn.pragma('foreign_keys = ON');
    // Page caches of a fixed 16 MiB each for the import, whatever the sizes of the files.
    conn.pragma('cache_size = -16384');
    conn.exec("ATTACH '' AS staging");
    // The staged copy is thrown away on any failure: it needs no journal and no syncs.
    conn.pragma('staging.journal_mode = OFF');
    conn.pragma('staging.synchronous = OFF');
    conn.pragma('staging.cache_size = -16384');
    conn.exec(STAGING_TABLE);
  } catch (error) {
    conn.close();
    throw error;
  }
  const marks = new DayMarks();
  const stage = pointWriter(conn, STAGE, marks);
  // One short transaction per batch: it reads a series id from the real database at most, so no
  // read snapshot is held open there while the file is read.
  const stageBatch = conn.transaction((points: readonly ImportPoint[]) => stage(points));
  const close = () => {
    if (!open) return;
    open = false;
    if (conn.inTransaction) conn.exec('ROLLBACK');
    conn.close();
  };
  return {
    async write(points) {
      stageBatch(points);
    },
    async commit() {
      try {
        conn.pragma(`busy_timeout = ${COPY_WAIT_MS}`);
        conn.exec('BEGIN IMMEDIATE');
        conn.exec(COPY);
        recordDays(conn, marks, provenance);
        conn.exec('COMMIT');
      } finally {
        close();
      }
    },
    async rollback() {
      close();
    },
  };
}
