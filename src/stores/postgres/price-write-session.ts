/**
 * Imports into PostgreSQL: one transaction on one pooled client for the whole import, so a file
 * with a bad row leaves nothing behind, and multi-row upserts on the hot path.
 *
 * A session first takes a transaction-scoped advisory lock for its schema, so imports into one
 * store run one at a time (the interface's "a second waits or fails": it waits up to the statement
 * timeout). Readers keep seeing the last committed state meanwhile. A `small` session (a bounded
 * HTTP body) holds its points until `commit` and writes them in one short transaction, so no
 * connection sits in an open transaction while the caller waits for more input.
 *
 * Deadlines (./guarded-pool.ts): `begin` and the series lookups have the short one of every query;
 * the lock wait, the batches and the commit may rightly take longer, so they get the server's
 * statement timeout plus the short deadline: past that, the server would have cancelled them itself.
 *
 * Before its commit, a session records the provenance of each local day it wrote into and whether
 * that day is now complete, and the price events those days call for, in the same transaction
 * (../sql/day-marks.ts, docs/events.md).
 */
import { DayMarks, type SeriesGrid } from '../sql/day-marks.js';
import type { ImportPoint, PriceWriteSession, WriteProvenance } from '../types.js';
import type { GuardedClient, GuardedPool } from './guarded-pool.js';
import { writePostgresEvents } from './outbox.js';

/** Rows per INSERT: 3 parameters each, well under PostgreSQL's 65535 bind parameters. */
const ROWS_PER_STATEMENT = 5_000;

const LOCK = "select pg_advisory_xact_lock(hashtext(current_schema() || '.price_writes'))";

/** The server-side statement timeout of the stores' pool (./database.ts). */
const STATEMENT_TIMEOUT_MS = 10_000;

/** Writes points on `client` (inside its transaction), looking series up once per symbol and noting their days in `marks`. */
function pointWriter(
  client: GuardedClient,
  longMs: number,
  marks: DayMarks,
): (points: readonly ImportPoint[]) => Promise<void> {
  const grids = new Map<string, SeriesGrid>();
  return async (points) => {
    const missing = [...new Set(points.map((p) => p.symbol).filter((s) => !grids.has(s)))];
    if (missing.length > 0) {
      const { rows } = await client.query<SeriesGrid & { symbol: string }>(
        'select id, symbol, timezone, resolution from series where symbol = any($1::text[])',
        [missing],
      );
      for (const row of rows) grids.set(row.symbol, row);
      const unknown = missing.find((s) => !grids.has(s));
      if (unknown !== undefined) throw new Error(`no series ${unknown}`);
    }
    // One statement may not update a row twice (ON CONFLICT), so a repeated interval keeps its last
    // point, as the one-row-at-a-time embedded import does.
    const rows = new Map<string, [number, number, string]>();
    for (const point of points) {
      const grid = grids.get(point.symbol)!;
      rows.set(`${grid.id}:${point.start}`, [grid.id, point.start, point.price]);
      marks.add(grid, point.start);
    }
    const all = [...rows.values()];
    for (let i = 0; i < all.length; i += ROWS_PER_STATEMENT) {
      const chunk = all.slice(i, i + ROWS_PER_STATEMENT);
      const values = chunk.map((_, n) => `($${n * 3 + 1}, $${n * 3 + 2}, $${n * 3 + 3})`).join(', ');
      await client.query(
        `insert into prices (series_id, start_ms, price) values ${values} ` +
          'on conflict (series_id, start_ms) do update set price = excluded.price',
        chunk.flat(),
        longMs,
      );
    }
  };
}

/** Days recorded per statement (five arrays of this length). */
const DAYS_PER_STATEMENT = 10_000;

/**
 * Records marked days: their source (kept where a higher-ranked one wrote them, `$3`), when, and
 * whether every interval of each is now stored, counted in the same transaction.
 */
const RECORD_DAYS =
  'insert into day_provenance (series_id, date, source, fetched_at, complete) ' +
  'select d.series_id, d.date, $1, $2, case when (select count(*) from prices p where p.series_id = d.series_id ' +
  'and p.start_ms >= d.start_ms and p.start_ms < d.end_ms) >= d.intervals then 1 else 0 end ' +
  'from unnest($4::int[], $5::text[], $6::bigint[], $7::bigint[], $8::int[]) as d(series_id, date, start_ms, end_ms, intervals) ' +
  'on conflict (series_id, date) do update set ' +
  'source = case when day_provenance.source = any($3::text[]) then day_provenance.source else excluded.source end, ' +
  'fetched_at = excluded.fetched_at, complete = excluded.complete';

async function recordDays(
  client: GuardedClient,
  longMs: number,
  marks: DayMarks,
  provenance: WriteProvenance,
): Promise<void> {
  const days = marks.list();
  for (let i = 0; i < days.length; i += DAYS_PER_STATEMENT) {
    const chunk = days.slice(i, i + DAYS_PER_STATEMENT);
    await client.query(
      RECORD_DAYS,
      [
        provenance.source,
        provenance.fetchedAt,
        provenance.keep ?? [],
        chunk.map((d) => d.seriesId),
        chunk.map((d) => d.date),
        chunk.map((d) => d.start),
        chunk.map((d) => d.end),
        chunk.map((d) => d.intervals),
      ],
      longMs,
    );
  }
}

/** An open transaction on its own client; `finish` releases the client whatever happens. */
interface Transaction {
  readonly write: (points: readonly ImportPoint[]) => Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

async function beginTransaction(pool: GuardedPool, provenance: WriteProvenance): Promise<Transaction> {
  const client = await pool.connect();
  const longMs = STATEMENT_TIMEOUT_MS + pool.timeoutMs;
  let open = true;
  /** Returns the client to the pool once; a client in doubt is destroyed rather than reused. */
  const release = (error?: unknown) => {
    if (!open) return;
    open = false;
    client.release(error);
  };
  try {
    await client.query('begin');
    await client.query(LOCK, [], longMs);
  } catch (error) {
    release(error);
    throw error;
  }
  const marks = new DayMarks();
  const write = pointWriter(client, longMs, marks);
  return {
    write,
    async commit() {
      try {
        await recordDays(client, longMs, marks, provenance);
        await writePostgresEvents(client, longMs, marks.list(), Date.now());
        const result = await client.query('commit', [], longMs);
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
export async function openPostgresWriteSession(
  pool: GuardedPool,
  small: boolean,
  provenance: WriteProvenance,
): Promise<PriceWriteSession> {
  return small
    ? bufferedSession(pool, provenance)
    : transactionSession(await beginTransaction(pool, provenance));
}

function bufferedSession(pool: GuardedPool, provenance: WriteProvenance): PriceWriteSession {
  let held: ImportPoint[][] = [];
  return {
    async write(points) {
      held.push(points.slice());
    },
    async commit() {
      const transaction = await beginTransaction(pool, provenance);
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
