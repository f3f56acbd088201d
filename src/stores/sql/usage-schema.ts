/**
 * The `usage_hours` table of both engines (./usage-store.ts), made by each engine's migration with
 * its own types: SQLite `text` and `integer`, PostgreSQL code-point ordered text and `bigint`.
 */
import type { ColumnDataType, Expression, Kysely } from 'kysely';

type ColumnType = ColumnDataType | Expression<unknown>;

/** @example await createUsageHours(db, 'text', 'integer') */
export async function createUsageHours(db: Kysely<unknown>, text: ColumnType, integer: ColumnType) {
  let table = db.schema
    .createTable('usage_hours')
    .addColumn('key_id', text, (c) => c.notNull())
    .addColumn('hour_start', integer, (c) => c.notNull());
  for (const count of ['requests', 'served', 'not_modified', 'rate_limited', 'client_errors', 'units']) {
    table = table.addColumn(count, integer, (c) => c.notNull());
  }
  await table.addPrimaryKeyConstraint('usage_hours_pk', ['key_id', 'hour_start']).execute();
  // The export and the pruning read by time across every key.
  await db.schema.createIndex('usage_hours_time').on('usage_hours').column('hour_start').execute();
}
