/**
 * Imports into SQLite: one transaction for the whole import, so a file with a bad row leaves nothing
 * behind, and prepared statements on the hot path.
 *
 * A file database gets its own connection for the import. The server's connection runs other
 * requests between the import's batches (they `await`), and on a shared connection those would run
 * inside the open import transaction: a reader would see uncommitted points and a key write would be
 * rolled back with a bad import. In WAL mode readers on other connections keep reading the last
 * committed state meanwhile. An in-memory database cannot be opened twice, so there the points are
 * held until `commit` and written in one synchronous transaction, which nothing can interleave with.
 * The server does the same with its bounded HTTP bodies: better-sqlite3 is synchronous, so a
 * transaction held open across network reads would make the server's own writes (last-used times,
 * key changes) wait on the lock with the event loop blocked, unable to receive the rest of the body.
 */
import SQLite from 'better-sqlite3';
import type { ImportPoint, PriceWriteSession } from '../types.js';

const UPSERT =
  'INSERT INTO prices (series_id, start_ms, price) VALUES (?, ?, ?) ' +
  'ON CONFLICT (series_id, start_ms) DO UPDATE SET price = excluded.price';

/** Writes points on `conn`, looking series ids up once per symbol. */
function pointWriter(conn: SQLite.Database): (points: readonly ImportPoint[]) => void {
  const insert = conn.prepare<[number, number, string]>(UPSERT);
  const seriesId = conn.prepare<[string], { id: number }>('SELECT id FROM series WHERE symbol = ?');
  const ids = new Map<string, number>();
  return (points) => {
    for (const point of points) {
      let id = ids.get(point.symbol);
      if (id === undefined) {
        const row = seriesId.get(point.symbol);
        if (row === undefined) throw new Error(`no series ${point.symbol}`);
        id = row.id;
        ids.set(point.symbol, id);
      }
      insert.run(id, point.start, point.price);
    }
  };
}

/** Opens an import session on the database behind `raw` (see the file comment for why two kinds). */
export function openSqliteWriteSession(raw: SQLite.Database, small: boolean): PriceWriteSession {
  return raw.memory || small ? bufferedSession(raw) : connectionSession(raw.name);
}

function bufferedSession(raw: SQLite.Database): PriceWriteSession {
  let held: ImportPoint[][] = [];
  return {
    async write(points) {
      held.push(points.slice());
    },
    async commit() {
      const write = pointWriter(raw);
      raw.transaction(() => {
        for (const batch of held) write(batch);
      })();
      held = [];
    },
    async rollback() {
      held = [];
    },
  };
}

function connectionSession(file: string): PriceWriteSession {
  const conn = new SQLite(file);
  let open = true;
  try {
    conn.pragma('busy_timeout = 5000');
    conn.pragma('synchronous = NORMAL');
    conn.pragma('foreign_keys = ON');
    // A page cache of a fixed 16 MiB for the import, whatever the file's size.
    conn.pragma('cache_size = -16384');
    // IMMEDIATE takes the write lock now, so a second import waits (busy_timeout) instead of
    // failing half-way with SQLITE_BUSY when it first writes.
    conn.exec('BEGIN IMMEDIATE');
  } catch (error) {
    conn.close();
    throw error;
  }
  const write = pointWriter(conn);
  const close = () => {
    if (!open) return;
    open = false;
    if (conn.inTransaction) conn.exec('ROLLBACK');
    conn.close();
  };
  return {
    async write(points) {
      write(points);
    },
    async commit() {
      try {
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
