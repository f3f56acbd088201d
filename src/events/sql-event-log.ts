/**
 * The event log over the `events` table, for both SQL engines (docs/events.md).
 *
 * New events are noticed by looking at the highest sequence number every `pollMs` while anyone
 * listens: one primary-key lookup, cheap on both engines, and it hears every writer of the same
 * database, whichever process or instance committed (a `pricepoint import` beside a server, or
 * another instance on PostgreSQL). Listeners then read what they missed with `after`. Where the
 * store has a change token (SQLite's, which moves with every commit of any connection), the table
 * is looked at only when the token has moved since the last look.
 */
import { type Kysely, sql } from 'kysely';
import { type EventRow, toEvent } from './outbox.js';
import { type PruneOptions, type PruneResult, pruneEvents } from './prune.js';
import type { EventLog, PriceEvent } from './types.js';

/** How often an embedded store looks for new events while a stream or webhook waits for them. */
export const EMBEDDED_POLL_MS = 200;
/** The same, per instance, on PostgreSQL: one small query a half second while anyone listens. */
export const SHARED_POLL_MS = 500;

export class SqlEventLog implements EventLog {
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private seen: number | undefined;
  /** The change token at the last look that succeeded. */
  private lookedAt: string | undefined;
  private polling = false;

  constructor(
    /** Either engine's database: the events table is read with plain SQL. */
    // biome-ignore lint/suspicious/noExplicitAny: over either engine's tables.
    private readonly db: Kysely<any>,
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

  /** Deletes the events past the history (./prune.ts). */
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
