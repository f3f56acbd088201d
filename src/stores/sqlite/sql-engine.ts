/**
 * What SQLite does its own way for the shared SQL stores (../sql/engine.ts): every write runs on
 * the server's one connection, synchronously once `writer` has the write lock (./write-lock.ts), so
 * no other request lands inside its transaction and none waits on the lock in the event loop.
 * Imports go through ./price-write-session.ts; last-used times are written only when the lock is
 * free at once, and kept for the next batch otherwise.
 */
import type SQLite from 'better-sqlite3';
import type { Compilable } from 'kysely';
import { RolledBack, type SqlEngine } from '../sql/engine.js';
import { openSqliteWriteSession } from './price-write-session.js';
import type { SqliteWriter } from './write-lock.js';

/**
 * Runs Kysely statements in order in one `writer` transaction on `raw`, synchronously once it holds
 * the lock: the rows each changed. The webhook store writes through it (../sql/webhook-store.ts).
 */
export function sqliteStatementWrites(
  raw: SQLite.Database,
  writer: SqliteWriter,
): (statements: readonly Compilable[]) => Promise<number[]> {
  return (statements) =>
    writer.run(() =>
      statements.map((statement) => {
        const { sql: text, parameters } = statement.compile();
        return raw.prepare(text).run(...(parameters as unknown[])).changes;
      }),
    );
}

/** `raw`: the connection the stores' Kysely instance uses, on which `writer` takes the lock. */
export function sqliteEngine(raw: SQLite.Database, writer: SqliteWriter): SqlEngine {
  /** Runs a Kysely statement on the raw connection (inside a `writer` transaction): rows changed. */
  const execute = (statement: Compilable): number => {
    const { sql: text, parameters } = statement.compile();
    return raw.prepare(text).run(...(parameters as unknown[])).changes;
  };
  /** Last-used times not written yet because another process held the write lock. */
  let pending = new Map<string, number>();
  return {
    writeAll(statements, stillWanted) {
      return writer
        .run(() => {
          for (const statement of statements) {
            if (execute(statement) === 0 || stillWanted?.() === false) throw new RolledBack();
          }
          return true;
        })
        .catch((error: unknown) => {
          if (error instanceof RolledBack) return false;
          throw error;
        });
    },

    openPriceWrites: async (small, provenance) => openSqliteWriteSession(raw, writer, small, provenance),

    /**
     * Writes the times at once or not now: they are never worth a wait for the lock another process
     * holds (`pricepoint import` committing). The times are then kept and written with the next batch.
     */
    async recordLastUsed(batch) {
      const all = pending;
      for (const [id, at] of batch) all.set(id, Math.max(at, all.get(id) ?? at));
      if (all.size === 0) return;
      const update = raw.prepare(
        'update api_keys set last_used_at = max(coalesce(last_used_at, ?), ?) where id = ?',
      );
      const done = writer.tryRun(() => {
        for (const [id, at] of all) update.run(at, at, id);
      });
      if (done !== undefined) pending = new Map();
    },
  };
}
