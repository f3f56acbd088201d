/**
 * Pruning of the `events` table (docs/events.md, "How long events are kept"): events older than
 * `EVENT_HISTORY_MS` are deleted in small batches, except the newest event of each (series, date),
 * whose ETag the outbox reads to tell `day.published` from `day.revised` and an unchanged rewrite
 * from a change (./outbox.ts). Both engines, the same statements.
 *
 * On SQLite each batch is one short statement written with the busy timeout at 0: should another
 * process hold the write lock (`pricepoint import` on the same file), the run stops at once instead
 * of blocking the server's event loop, and the next run goes on.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

/** How long events are kept: a week, past the 24 hours a stream resumes from (./stream-limits.ts). */
export const EVENT_HISTORY_MS = 7 * 24 * 60 * 60_000;
/** How often a server prunes. */
export const PRUNE_EVERY_MS = 60 * 60_000;
/** The first run after a start: not during the start itself. */
const FIRST_RUN_MS = 60_000;
/** Events looked at per batch; each batch is one statement. */
const BATCH = 500;
/** Between batches, so imports and deliveries take the write lock in between. */
const PAUSE_MS = 20;

export interface PruneOptions {
  /** Epoch milliseconds; tests pass a fake clock. */
  readonly clock?: () => number;
  readonly historyMs?: number;
  readonly batch?: number;
  readonly pauseMs?: number;
  /** Stops the run before its next batch (the server is closing). */
  readonly signal?: AbortSignal;
}

export interface PruneResult {
  /** Events deleted. */
  readonly deleted: number;
  /** Batches written. */
  readonly batches: number;
  /** False when the run stopped early: another process held the SQLite write lock, or it was aborted. */
  readonly complete: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: the events table is read with plain SQL, over either engine's tables.
type AnyDb = Kysely<any>;

/** Deletes the events older than the history that a later event of the same day supersedes. */
export async function pruneEvents(db: AnyDb, options: PruneOptions = {}): Promise<PruneResult> {
  const before = (options.clock ?? Date.now)() - (options.historyMs ?? EVENT_HISTORY_MS);
  const batch = options.batch ?? BATCH;
  const embedded = db.getExecutor().adapter instanceof SqliteAdapter;
  let cursor = 0;
  let deleted = 0;
  let batches = 0;
  for (;;) {
    if (options.signal?.aborted) return { deleted, batches, complete: false };
    // Read first, so that the write holds the lock only for the rows of one batch.
    const { rows } = await sql<{ seq: number | string }>`select seq from events
      where seq > ${cursor} and time < ${before} order by seq limit ${batch}`.execute(db);
    const first = rows[0];
    const last = rows.at(-1);
    if (first === undefined || last === undefined) break;
    const from = Number(first.seq);
    const to = Number(last.seq);
    const count = await deleteBatch(db, embedded, from, to, before);
    if (count === undefined) return { deleted, batches, complete: false };
    deleted += count;
    batches += 1;
    cursor = to;
    if (rows.length < batch) break;
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? PAUSE_MS));
  }
  return { deleted, batches, complete: true };
}

/** Deletes the superseded events of `from..to`; undefined when SQLite's write lock was held elsewhere. */
async function deleteBatch(
  db: AnyDb,
  embedded: boolean,
  from: number,
  to: number,
  before: number,
): Promise<number | undefined> {
  const statement = sql`delete from events where seq >= ${from} and seq <= ${to} and time < ${before}
    and exists (select 1 from events later where later.series_id = events.series_id
      and later.date = events.date and later.seq > events.seq)`;
  if (!embedded) return Number((await statement.execute(db)).numAffectedRows ?? 0);
  // Kysely's hold on the one connection: nothing else runs on it while the timeout is 0.
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ timeout: number }>`pragma busy_timeout`.execute(conn);
    const waited = Number(rows[0]?.timeout ?? 5_000);
    await sql.raw('pragma busy_timeout = 0').execute(conn);
    try {
      return Number((await statement.execute(conn)).numAffectedRows ?? 0);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
      throw error;
    } finally {
      await sql.raw(`pragma busy_timeout = ${waited}`).execute(conn);
    }
  });
}

/**
 * Prunes a minute after the start and then every `PRUNE_EVERY_MS`, beside serving; several instances
 * on one PostgreSQL may prune at once, harmlessly (a row is deleted once).
 * @example const pruning = startEventPruning((o) => log.prune(o), (e) => logger.warn(e)); await pruning.stop();
 */
export function startEventPruning(
  prune: (options: PruneOptions) => Promise<PruneResult>,
  onError: (error: unknown) => void,
): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const stopping = new AbortController();
  const run = () => {
    if (stopping.signal.aborted || running) return;
    running = prune({ signal: stopping.signal })
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(run, FIRST_RUN_MS);
  const every = setInterval(run, PRUNE_EVERY_MS);
  first.unref();
  every.unref();
  return {
    async stop() {
      stopping.abort();
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
