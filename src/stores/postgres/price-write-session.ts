/**
 * Imports into PostgreSQL: one transaction on one pooled client for the whole import, so a file
 * with a bad row leaves nothing behind, and multi-row upserts on the hot path.
 *
 * A session first takes a transaction-scoped advisory lock for its schema, so imports into one
 * store run one at a time (the interface's "a second waits or fails": it waits up to the statement
 * timeout). Readers keep seeing the last committed state meanwhile. A `small` session (a bounded
 * HTTP body) holds its points until `commit` and writes them in one short transaction, so no
 * connection sits in an open transaction while the caller waits for more input.
 */
import type pg from 'pg';
import type { ImportPoint, PriceWriteSession } from '../types.js';

/** Rows per INSERT: 3 parameters each, well under PostgreSQL's 65535 bind parameters. */
const ROWS_PER_STATEMENT = 5_000;

const LOCK = "select pg_advisory_xact_lock(hashtext(current_schema() || '.price_writes'))";

/** Writes points on `client` (inside its transaction), looking series ids up once per symbol. */
function pointWriter(client: pg.PoolClient): (points: readonly ImportPoint[]) => Promise<void> {
  const ids = new Map<string, number>();
  return async (points) => {
    const missing = [...new Set(points.map((p) => p.symbol).filter((s) => !ids.has(s)))];
    if (missing.length > 0) {
      const { rows } = await client.query<{ id: number; symbol: string }>(
        'select id, symbol from series where symbol = any($1::text[])',
        [missing],
      );
      for (const row of rows) ids.set(row.symbol, row.id);
      const unknown = missing.find((s) => !ids.has(s));
      if (unknown !== undefined) throw new Error(`no series ${unknown}`);
    }
    // One statement may not update a row twice (ON CONFLICT), so a repeated interval keeps its last
    // point, as the one-row-at-a-time embedded import does.
    const rows = new Map<string, [number, number, string]>();
    for (const point of points) {
      const id = ids.get(point.symbol)!;
      rows.set(`${id}:${point.start}`, [id, point.start, point.price]);
    }
    const all = [...rows.values()];
    for (let i = 0; i < all.length; i += ROWS_PER_STATEMENT) {
      const chunk = all.slice(i, i + ROWS_PER_STATEMENT);
      const values = chunk.map((_, n) => `($${n * 3 + 1}, $${n * 3 + 2}, $${n * 3 + 3})`).join(', ');
      await client.query(
        `insert into prices (series_id, start_ms, price) values ${values} ` +
          'on conflict (series_id, start_ms) do update set price = excluded.price',
        chunk.flat(),
      );
    }
  };
}

/** An open transaction on its own client; `finish` releases the client whatever happens. */
interface Transaction {
  readonly write: (points: readonly ImportPoint[]) => Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

async function beginTransaction(pool: pg.Pool): Promise<Transaction> {
  const client = await pool.connect();
  let open = true;
  /** Returns the client to the pool once; a client in doubt is destroyed rather than reused. */
  const release = (error?: unknown) => {
    if (!open) return;
    open = false;
    client.release(error instanceof Error ? error : error === undefined ? undefined : true);
  };
  try {
    await client.query('begin');
    await client.query(LOCK);
  } catch (error) {
    release(error);
    throw error;
  }
  const write = pointWriter(client);
  return {
    write,
    async commit() {
      try {
        const result = await client.query('commit');
        // COMMIT of a transaction that already failed answers ROLLBACK instead of an error.
        if (result.command !== 'COMMIT') throw new Error('the import failed and was rolled back');
        release();
      } catch (error) {
        release(error);
        throw error;
      }
    },
    async rollback() {
      if (!open) return;
      try {
        await client.query('rollback');
        release();
      } catch (error) {
        release(error);
      }
    },
  };
}

/** Opens an import session on `pool` (see the file comment for why two kinds). */
export async function openPostgresWriteSession(pool: pg.Pool, small: boolean): Promise<PriceWriteSession> {
  return small ? bufferedSession(pool) : transactionSession(await beginTransaction(pool));
}

function bufferedSession(pool: pg.Pool): PriceWriteSession {
  let held: ImportPoint[][] = [];
  return {
    async write(points) {
      held.push(points.slice());
    },
    async commit() {
      const transaction = await beginTransaction(pool);
      try {
        for (const batch of held) await transaction.write(batch);
      } catch (error) {
        await transaction.rollback();
        throw error;
      }
      await transaction.commit();
      held = [];
    },
    async rollback() {
      held = [];
    },
  };
}

function transactionSession(transaction: Transaction): PriceWriteSession {
  let failed: unknown;
  return {
    async write(points) {
      if (failed !== undefined) throw new Error('the import already failed; roll it back');
      try {
        await transaction.write(points);
      } catch (error) {
        failed = error;
        throw error;
      }
    },
    async commit() {
      if (failed !== undefined) {
        await transaction.rollback();
        throw new Error('the import failed and was rolled back', { cause: failed });
      }
      await transaction.commit();
    },
    rollback: () => transaction.rollback(),
  };
}
