/**
 * Writes on the server's SQLite connection that never block the event loop on the write lock.
 *
 * better-sqlite3 is synchronous: a write that finds another process holding the lock (a
 * `pricepoint import` committing into the same file) waits inside SQLite for the busy timeout, and
 * every request waits with it. Here a write asks for the lock with `BEGIN IMMEDIATE` and a busy
 * timeout of 0; while it is held elsewhere the write waits on a timer, with a short backoff, so the
 * event loop serves other requests between tries. Once the lock is taken the write runs and commits
 * in one synchronous step: nothing else on this connection can run inside its transaction. A
 * large write that should yield to other requests (a price upload) runs on a connection of its own
 * (`runApart`), where other requests cannot land inside its transaction.
 *
 * It also remembers whether writes fail for a full disk (SQLITE_FULL), for `/readyz` (README
 * "Health"): from such a failure until a write succeeds with more room on the disk than there was
 * at the failure. A small write that fits where the refused one was rolled back (the server's
 * last-used times, every 5 s) shows no room for prices, so it does not end the report.
 */
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type SQLite from 'better-sqlite3';

/** How long a write waits for the lock before it fails (503): longer than an import's final copy. */
export const WRITE_WAIT_MS = 30_000;
const FIRST_PAUSE_MS = 2;
const LONGEST_PAUSE_MS = 50;

export interface SqliteWriter {
  /** Runs `write` in one transaction once the write lock is free, waiting asynchronously for it. */
  run<T>(write: () => T): Promise<T>;
  /** Runs `write` in one transaction if the lock is free now; `undefined` when it is not. */
  tryRun<T>(write: () => T): { readonly value: T } | undefined;
  /**
   * Runs `write` in one transaction on `conn`, another connection to the same file, taking the lock
   * as `run` does. `write` may await between its steps (a large upload written in chunks, other
   * requests served in between); readers on other connections see none of it until it commits.
   */
  runApart<T>(conn: SQLite.Database, write: () => Promise<T>): Promise<T>;
  /**
   * True from a write that failed for a full disk until a write succeeds with more free space on
   * the disk than at that failure (or, where free space cannot be read, any write that succeeds).
   */
  diskFull(): boolean;
}

/** Bytes free to this process on the file system holding `file`; undefined where that cannot be read. */
function freeBytes(file: string): number | undefined {
  try {
    const { bavail, bsize } = statfsSync(dirname(file));
    return bavail * bsize;
  } catch {
    return undefined;
  }
}

/** The error a write gets when the lock stayed taken for `waitMs`: the guard answers it with a 503. */
function lockTimeout(waitMs: number): Error {
  return Object.assign(
    new Error(`the database stayed locked by another writer for ${waitMs} ms (an import committing?)`),
    { code: 'SQLITE_BUSY' },
  );
}

/** @example const writer = sqliteWriter(raw); await writer.run(() => raw.prepare(sql).run(id)) */
export function sqliteWriter(raw: SQLite.Database, waitMs: number = WRITE_WAIT_MS): SqliteWriter {
  let queue: Promise<unknown> = Promise.resolve();
  /** Set by a write that failed for lack of space: the free space then (undefined: unknown). */
  let full: { readonly freeThen: number | undefined } | undefined;
  const free = () => (raw.memory ? undefined : freeBytes(raw.name));

  /** Takes the write lock on `conn` if it is free now. */
  function begin(conn: SQLite.Database): boolean {
    const waited = conn.pragma('busy_timeout', { simple: true }) as number;
    conn.pragma('busy_timeout = 0');
    try {
      conn.exec('BEGIN IMMEDIATE');
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
      throw error;
    } finally {
      conn.pragma(`busy_timeout = ${waited}`);
    }
  }

  /** Takes the write lock on `conn`, waiting on a timer while another connection holds it. */
  async function acquire(conn: SQLite.Database): Promise<void> {
    const deadline = performance.now() + waitMs;
    let pause = FIRST_PAUSE_MS;
    while (!begin(conn)) {
      if (performance.now() >= deadline) throw lockTimeout(waitMs);
      await sleep(pause);
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    }
  }

  function committed(conn: SQLite.Database): void {
    conn.exec('COMMIT');
    if (full === undefined) return;
    const freeThen = full.freeThen;
    const freeNow = freeThen === undefined ? undefined : free();
    if (freeThen === undefined || freeNow === undefined || freeNow > freeThen) full = undefined;
  }

  function failed(conn: SQLite.Database, error: unknown): never {
    // A failed COMMIT (SQLITE_FULL) may leave the transaction open.
    if (conn.inTransaction) conn.exec('ROLLBACK');
    if ((error as { code?: string }).code === 'SQLITE_FULL') full = { freeThen: free() };
    throw error;
  }

  /** Runs `write` in the transaction `begin` opened on `raw`, and commits it or rolls it back. */
  function finish<T>(write: () => T): T {
    try {
      const value = write();
      committed(raw);
      return value;
    } catch (error) {
      return failed(raw, error);
    }
  }

  async function acquireAndRun<T>(write: () => T): Promise<T> {
    await acquire(raw);
    return finish(write);
  }

  return {
    run(write) {
      // One write of this process at a time: each waits its turn, then for the lock.
      const attempt = queue.then(() => acquireAndRun(write));
      queue = attempt.catch(() => {});
      return attempt;
    },
    tryRun(write) {
      if (!begin(raw)) return undefined;
      return { value: finish(write) };
    },
    async runApart(conn, write) {
      await acquire(conn);
      try {
        const value = await write();
        committed(conn);
        return value;
      } catch (error) {
        return failed(conn, error);
      }
    },
    diskFull: () => full !== undefined,
  };
}
