/**
 * The webhook tables (migrations `0005_webhooks` on SQLite, `0004_webhooks` on PostgreSQL) through
 * Kysely, the same queries on both engines. Every step that more than one instance may take at once
 * is written so that only one of them wins: new deliveries are inserted once per (endpoint, event)
 * whoever inserts them, and a due delivery is claimed by moving its `next_attempt_at` only if it still
 * holds the value read (docs/webhooks.md).
 *
 * Every write is a list of Kysely statements handed to `WriteStatements`, run in order in one
 * transaction. On PostgreSQL that is a Kysely transaction (`kyselyWrites`). On SQLite the server
 * passes the engine's writer (../sqlite/sql-engine.ts, `sqliteStatementWrites`): the statements
 * are compiled and run synchronously once it holds the write lock, which it waits for on a timer.
 * Through Kysely, better-sqlite3 would wait for a lock held by another process (`pricepoint import`
 * committing) inside SQLite for the busy timeout, 5 s with every request of the server stopped; and
 * a Kysely transaction stays open on the server's one connection across awaits, where the writer's
 * `BEGIN IMMEDIATE` for a key or price write would fail. The statements are the same on both
 * engines, so the guarantees above hold on both.
 */
import type { Compilable, Kysely } from 'kysely';
import type { DeliveryOutcome, DeliveryRow, EndpointRow, WebhookStore } from '../event-types.js';

/** The webhook tables as Kysely sees them; their rows are the store's (../event-types.ts). */
interface WebhookTables {
  webhook_endpoints: EndpointRow;
  webhook_deliveries: DeliveryRow;
}

/** Runs `statements` in order in one transaction; resolves to the rows each changed. */
export type WriteStatements = (statements: readonly Compilable[]) => Promise<number[]>;

/** Writes through Kysely: one statement as it is, several in a Kysely transaction. */
export function kyselyWrites<Tables>(db: Kysely<Tables>): WriteStatements {
  const changed = (result: { numAffectedRows?: bigint }) => Number(result.numAffectedRows ?? 0n);
  return async (statements) => {
    const [only] = statements;
    if (statements.length === 1 && only !== undefined) return [changed(await db.executeQuery(only))];
    return db.transaction().execute(async (tx) => {
      const counts: number[] = [];
      for (const statement of statements) counts.push(changed(await tx.executeQuery(statement)));
      return counts;
    });
  };
}

/** Rows in one insert: 11 parameters each stays within SQLite's and PostgreSQL's parameter limits. */
const INSERT_ROWS = 2_000;

export class SqlWebhookStore implements WebhookStore {
  private readonly dueListeners = new Set<() => void>();

  private readonly write: WriteStatements;

  /** `write`: how the writes reach the database (default: through `db`, see the top of this file). */
  constructor(
    private readonly db: Kysely<WebhookTables>,
    write?: WriteStatements,
  ) {
    this.write = write ?? kyselyWrites(db);
  }

  /**
   * Calls `listener` when a call through this store made deliveries due now (an endpoint enabled, a
   * redelivery): the delivery worker of this process, idle otherwise, wakes for them.
   */
  onDue(listener: () => void): () => void {
    this.dueListeners.add(listener);
    return () => this.dueListeners.delete(listener);
  }

  private madeDue(): void {
    for (const listener of [...this.dueListeners]) listener();
  }

  /**
   * Over a database of the stores (whose type does not name these tables; their migrations create
   * them); on SQLite with the engine's `write`, so that no write waits for the lock synchronously.
   */
  static over<Tables>(db: Kysely<Tables>, write?: WriteStatements): SqlWebhookStore {
    return new SqlWebhookStore(db as unknown as Kysely<WebhookTables>, write);
  }

  /** Runs one statement (in a transaction of its own): the rows it changed. */
  private async writeOne(statement: Compilable): Promise<number> {
    const [changed] = await this.write([statement]);
    return changed ?? 0;
  }

  async insertEndpoint(row: EndpointRow): Promise<void> {
    await this.writeOne(this.db.insertInto('webhook_endpoints').values(row));
  }

  async endpoints(): Promise<EndpointRow[]> {
    return this.db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  async endpoint(id: string): Promise<EndpointRow | undefined> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** False when there was no such endpoint. Its deliveries go with it. */
  async deleteEndpoint(id: string): Promise<boolean> {
    const [, endpoints] = await this.write([
      this.db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id),
      this.db.deleteFrom('webhook_endpoints').where('id', '=', id),
    ]);
    return (endpoints ?? 0) > 0;
  }

  async setEnabled(id: string, enabled: boolean, reason: string | null): Promise<boolean> {
    const changed = await this.writeOne(
      this.db
        .updateTable('webhook_endpoints')
        .set({ enabled: enabled ? 1 : 0, disabled_reason: enabled ? null : reason })
        .where('id', '=', id),
    );
    const updated = changed > 0;
    if (updated && enabled) this.madeDue();
    return updated;
  }

  /**
   * Adds deliveries (once per endpoint and event, whoever else adds them) and moves the cursor of
   * each of `endpointIds` to `cursor`, in one transaction: a page of the log for every endpoint.
   */
  async enqueue(endpointIds: readonly string[], cursor: number, rows: readonly DeliveryRow[]): Promise<void> {
    if (endpointIds.length === 0) return;
    const statements: Compilable[] = [];
    for (let start = 0; start < rows.length; start += INSERT_ROWS) {
      statements.push(
        this.db
          .insertInto('webhook_deliveries')
          .values(rows.slice(start, start + INSERT_ROWS))
          .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing()),
      );
    }
    statements.push(
      this.db
        .updateTable('webhook_endpoints')
        .set({ cursor })
        .where('id', 'in', [...endpointIds])
        .where('cursor', '<', cursor),
    );
    await this.write(statements);
  }

  /**
   * Pending deliveries of `endpointIds` whose time has come, at most `perEndpoint` of each (so one
   * endpoint's backlog does not crowd out the others): of each endpoint the ones furthest along
   * their retries first, then the oldest event. Only of enabled endpoints.
   */
  async due(now: number, endpointIds: readonly string[], perEndpoint: number): Promise<DeliveryRow[]> {
    if (endpointIds.length === 0) return [];
    const ranked = this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .selectAll('d')
      .select((eb) =>
        eb.fn
          .agg<number>('row_number')
          .over((ob) => ob.partitionBy('d.endpoint_id').orderBy('d.attempts', 'desc').orderBy('d.event_seq'))
          .as('place'),
      )
      .where('d.endpoint_id', 'in', [...endpointIds])
      .where('e.enabled', '=', 1)
      .where('d.state', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .as('ranked');
    const rows = await this.db
      .selectFrom(ranked)
      .selectAll()
      .where('place', '<=', perEndpoint)
      .orderBy('endpoint_id')
      .orderBy('place')
      .execute();
    return rows.map(({ place: _place, ...row }) => row);
  }

  /** When the next pending delivery of an enabled endpoint falls due (or its lease ends); undefined when none waits. */
  async nextDue(): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select((eb) => eb.fn.min('d.next_attempt_at').as('at'))
      .where('e.enabled', '=', 1)
      .where('d.state', '=', 'pending')
      .executeTakeFirst();
    return row?.at == null ? undefined : Number(row.at);
  }

  /**
   * Takes due deliveries for `leaseUntil`, in one transaction: true for each that this caller moved
   * from the `next_attempt_at` it read (so one caller wins it), and only while its endpoint is enabled
   * (a worker may hold rows fetched before a disabling).
   */
  async claim(rows: readonly DeliveryRow[], leaseUntil: number): Promise<boolean[]> {
    const claimable = rows.filter((row) => row.next_attempt_at !== null);
    const changed =
      claimable.length === 0 ? [] : await this.write(claimable.map((row) => this.claimOne(row, leaseUntil)));
    const won = new Set(claimable.filter((_row, i) => (changed[i] ?? 0) > 0));
    return rows.map((row) => won.has(row));
  }

  private claimOne(row: DeliveryRow, leaseUntil: number): Compilable {
    return this.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: leaseUntil })
      .where('endpoint_id', '=', row.endpoint_id)
      .where('event_id', '=', row.event_id)
      .where('state', '=', 'pending')
      .where('next_attempt_at', '=', row.next_attempt_at)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('webhook_endpoints')
            .select('id')
            .where('id', '=', row.endpoint_id)
            .where('enabled', '=', 1),
        ),
      );
  }

  /**
   * Writes the outcome of an attempt. With `holdUntil`, in the same transaction, the endpoint's other
   * pending deliveries due before then wait until then (docs/webhooks.md, "Endpoints that do not
   * answer").
   */
  async record(
    endpointId: string,
    eventId: string,
    outcome: DeliveryOutcome,
    holdUntil?: number,
  ): Promise<void> {
    const statements: Compilable[] = [
      this.db
        .updateTable('webhook_deliveries')
        .set(outcome)
        .where('endpoint_id', '=', endpointId)
        .where('event_id', '=', eventId),
    ];
    if (holdUntil !== undefined) {
      statements.push(
        this.db
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: holdUntil })
          .where('endpoint_id', '=', endpointId)
          .where('state', '=', 'pending')
          .where('next_attempt_at', '<', holdUntil),
      );
    }
    await this.write(statements);
  }

  /** The endpoint's deliveries, newest event first. */
  async deliveries(endpointId: string, limit: number): Promise<DeliveryRow[]> {
    return this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .orderBy('event_seq', 'desc')
      .limit(limit)
      .execute();
  }

  async delivery(endpointId: string, eventId: string): Promise<DeliveryRow | undefined> {
    return this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
  }

  /** Sends a delivery again from its first attempt; false when there is no such delivery. */
  async redeliver(endpointId: string, eventId: string, now: number): Promise<boolean> {
    const changed = await this.writeOne(
      this.db
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', attempts: 0, next_attempt_at: now })
        .where('endpoint_id', '=', endpointId)
        .where('event_id', '=', eventId),
    );
    const updated = changed > 0;
    if (updated) this.madeDue();
    return updated;
  }
}
