/**
 * The event log over the `events` table, for both SQL engines (docs/events.md).
 *
 * New events are noticed by looking at the highest sequence number every `pollMs` while anyone
 * listens: one primary-key lookup, cheap on both engines, and it hears every writer of the same
 * database, whichever process or instance committed (a `pricepoint import` beside a server, or
 * another instance on PostgreSQL). Listeners then read what they missed with `after`. Where the
 * store has a change token (SQLite's, which moves with every commit of any connection), the table
 * is looked at only when the token has moved since the last look.
 *
 * Pruning (docs/events.md, "How long events are kept"): events older than `EVENT_HISTORY_MS` are
 * deleted in small batches, except the newest event of each (series, date), whose ETag the outbox
 * reads to tell `day.published` from `day.revised` and an unchanged rewrite from a change
 * (./outbox.ts). On SQLite each batch is one short statement written with the busy timeout at 0:
 * should another process hold the write lock (`pricepoint import` on the same file), the run stops
 * at once instead of blocking the server's event loop, and the next run goes on.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';
import type { EventLog, PriceEvent, PruneOptions, PruneResult } from '../event-types.js';
import { type EventRow, toEvent } from './outbox.js';

/** How often an embedded store looks for new events while a stream or webhook waits for them. */
export const EMBEDDED_POLL_MS = 200;
/** The same, per instance, on PostgreSQL: one small query a half second while anyone listens. */
export const SHARED_POLL_MS = 500;
/** How long events are kept: a week, past the 24 hours a stream resumes from (src/events/stream-limits.ts). */
export const EVENT_HISTORY_MS = 7 * 24 * 60 * 60_000;
/** Events looked at per pruning batch; each batch is one statement. */
const BATCH = 500;
/** Between batches, so imports and deliveries take the write lock in between. */
const PAUSE_MS = 20;

// biome-ignore lint/suspicious/noExplicitAny: the events table is read with plain SQL, over either engine's tables.
type AnyDb = Kysely<any>;

export class SqlEventLog implements EventLog {
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private seen: number | undefined;
  /** The change token at the last look that succeeded. */
  private lookedAt: string | undefined;
  private polling = false;

  constructor(
    /** Either engine's database: the events table is read with plain SQL. */
    private readonly db: AnyDb,
    private readonly pollMs: number,
    /** A token that moves whenever any connection commits (`PriceStore.changeToken`), if there is one. */
    private readonly changeToken?: () => string,
  ) {}

  async after(after: number, limit: number): Promise<PriceEvent[]> {
    const { rows } = await sql<EventRow>`select seq, type, time, symbol, date, timezone, intervals, etag
      from events where seq > ${after} order by seq limit ${limit}`.execute(this.db);
    return rows.map(toEvent);
  }

  async latestSeq(): Promise<number> {
    const { rows } = await sql<{ seq: number | null }>`select max(seq) as seq from events`.execute(this.db);
    return Number(rows[0]?.seq ?? 0);
  }

  /** Deletes the events older than the history that a later event of the same day supersedes. */
  prune(options: PruneOptions = {}): Promise<PruneResult> {
    return pruneEvents(this.db, options);
  }

  onAppended(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.timer === undefined) {
      // Not unref'd: a listener waits for events, as a socket waits for data.
      this.timer = setInterval(() => void this.poll(), this.pollMs);
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Stops looking for new events (the store is closing). */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.seen = undefined;
    this.lookedAt = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    const token = this.changeToken?.();
    // Nothing committed since the last look: no event can have come.
    if (token !== undefined && token === this.lookedAt) return;
    this.polling = true;
    try {
      const latest = await this.latestSeq();
      this.lookedAt = token;
      const before = this.seen;
      this.seen = latest;
      // The first look tells too: an event may have come between a listener's first read and it.
      if (latest === before) return;
      for (const listener of [...this.listeners]) listener();
    } catch {
      // The database is away for a moment: the next look tries again, and nothing is skipped,
      // since listeners read from their own cursors.
    } finally {
      this.polling = false;
    }
  }
}

async function pruneEvents(db: AnyDb, options: PruneOptions): Promise<PruneResult> {
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
