import type { PruneOptions, PruneResult } from './prune.js';

/** What happened to a day of a series (docs/events.md). */
export type PriceEventType = 'day.published' | 'day.revised';

export interface PriceEvent {
  /** Unique and ordered: `evt_` + a zero-padded sequence number is fine; clients treat it as opaque. */
  readonly id: string;
  /** Monotonic per store: the order events were committed in; the cursor of readers. */
  readonly seq: number;
  readonly type: PriceEventType;
  /** When the prices were committed, RFC 3339 UTC. */
  readonly time: string;
  readonly data: {
    readonly symbol: string;
    /** The series' local date, YYYY-MM-DD. */
    readonly date: string;
    readonly timezone: string;
    /** How many intervals the day has. */
    readonly intervals: number;
    /** The ETag of the day's answer for this series (as the read endpoints send it). */
    readonly etag: string;
  };
}

/** The outbox, read in commit order; shared by every instance on PostgreSQL. */
export interface EventLog {
  /** Up to `limit` events with `seq > after`, oldest first. */
  after(after: number, limit: number): Promise<PriceEvent[]>;
  /** The highest seq written so far (0 when none). */
  latestSeq(): Promise<number>;
  /** Calls `listener` soon after new events are committed (on this or, with Redis/PostgreSQL, any instance); returns an unsubscribe. Listeners then read with `after`. */
  onAppended(listener: () => void): () => void;
  /** Deletes the events past the kept history (docs/events.md); absent where nothing is kept long. */
  prune?(options?: PruneOptions): Promise<PruneResult>;
}
