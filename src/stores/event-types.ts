/**
 * What the stores keep of price events and their webhook deliveries (docs/events.md,
 * docs/webhooks.md): the event log and the webhook tables, as the services above them see them.
 * The SQL behind both is in ./sql/event-log.ts and ./sql/webhook-store.ts.
 */

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

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** A row of `webhook_endpoints`. */
export interface EndpointRow {
  id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  /** JSON array of symbols; null: every symbol. */
  symbols: string | null;
  /** As src/webhooks/secrets.ts seals it (sealed when `PRICEPOINT_KEY_SECRET` is set). */
  secret: string;
  enabled: number;
  disabled_reason: string | null;
  /** The highest event seq already turned into deliveries (or skipped by the filter). */
  cursor: number;
  created_at: number;
}

/** A row of `webhook_deliveries`: one event for one endpoint. */
export interface DeliveryRow {
  endpoint_id: string;
  event_id: string;
  event_seq: number;
  payload: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
}

/** What an attempt changes of its delivery (`WebhookStore.record`). */
export type DeliveryOutcome = Pick<
  DeliveryRow,
  | 'state'
  | 'attempts'
  | 'next_attempt_at'
  | 'last_attempt_at'
  | 'last_status'
  | 'last_latency_ms'
  | 'last_error'
>;

/**
 * Webhook endpoints and their deliveries. Every step more than one instance may take at once has one
 * winner: a delivery is added once per (endpoint, event), and claimed by one caller (docs/webhooks.md).
 */
export interface WebhookStore {
  /** Calls `listener` when a call through this store made deliveries due now (an endpoint enabled, a redelivery); returns an unsubscribe. */
  onDue(listener: () => void): () => void;
  /** Adds an endpoint (its id is new). */
  insertEndpoint(row: EndpointRow): Promise<void>;
  /** Every endpoint, oldest first. */
  endpoints(): Promise<EndpointRow[]>;
  /** One endpoint; undefined when there is none. */
  endpoint(id: string): Promise<EndpointRow | undefined>;
  /** False when there was no such endpoint. Its deliveries go with it. */
  deleteEndpoint(id: string): Promise<boolean>;
  /** False when there was no such endpoint; `reason` is kept while it is disabled. */
  setEnabled(id: string, enabled: boolean, reason: string | null): Promise<boolean>;
  /** Adds `rows` (once per endpoint and event) and moves each endpoint's cursor up to `cursor`, in one transaction. */
  enqueue(endpointIds: readonly string[], cursor: number, rows: readonly DeliveryRow[]): Promise<void>;
  /** Pending deliveries of enabled `endpointIds` due by `now`, at most `perEndpoint` of each, most retried first. */
  due(now: number, endpointIds: readonly string[], perEndpoint: number): Promise<DeliveryRow[]>;
  /** When the next pending delivery of an enabled endpoint falls due; undefined when none waits. */
  nextDue(): Promise<number | undefined>;
  /** Takes due deliveries until `leaseUntil`: true for each this caller won (its endpoint still enabled). */
  claim(rows: readonly DeliveryRow[], leaseUntil: number): Promise<boolean[]>;
  /** Writes an attempt's outcome; with `holdUntil`, the endpoint's other pending deliveries wait until then. */
  record(endpointId: string, eventId: string, outcome: DeliveryOutcome, holdUntil?: number): Promise<void>;
  /** The endpoint's deliveries, newest event first. */
  deliveries(endpointId: string, limit: number): Promise<DeliveryRow[]>;
  /** One delivery; undefined when there is none. */
  delivery(endpointId: string, eventId: string): Promise<DeliveryRow | undefined>;
  /** Sends a delivery again from its first attempt; false when there is no such delivery. */
  redeliver(endpointId: string, eventId: string, now: number): Promise<boolean>;
}
