/**
 * Usage history in SQL (table `usage_hours`, docs/usage-history.md): the same queries on SQLite and
 * PostgreSQL. Writes are additive upserts (`... DO UPDATE SET served = served + excluded.served`),
 * so instances that flush the same key and hour sum exactly, whatever their order. Rows are sorted
 * before they are written, so two instances lock them in the same order and never deadlock.
 */
import { type Kysely, sql } from 'kysely';
import type { TierBucket, UsageCounts, UsageDay, UsageHour, UsageStore } from '../usage.js';
import type { SqlEngine } from './engine.js';

export interface UsageTables {
  usage_hours: {
    key_id: string;
    /** Epoch ms of a whole UTC hour. */
    hour_start: number;
    requests: number;
    served: number;
    not_modified: number;
    rate_limited: number;
    client_errors: number;
    units: number;
  };
}

/** Rows per insert: 8 parameters each stays far within both engines' parameter limits. */
const INSERT_ROWS = 1_000;
const DAY_MS = 86_400_000;

/** Sums as integers on both engines (PostgreSQL's `sum` of a bigint is a numeric, read as text). */
const SUMS = sql`cast(sum(requests) as bigint) as requests,
  cast(sum(served) as bigint) as served,
  cast(sum(not_modified) as bigint) as "notModified",
  cast(sum(rate_limited) as bigint) as "rateLimited",
  cast(sum(client_errors) as bigint) as "clientErrors",
  cast(sum(units) as bigint) as units`;

/** @example const usage = SqlUsageStore.over(db, engine) */
export class SqlUsageStore implements UsageStore {
  constructor(
    private readonly db: Kysely<UsageTables>,
    private readonly engine: SqlEngine,
  ) {}

  /** Over a database of the stores, whose type does not name this table (its migration makes it). */
  static over<Tables>(db: Kysely<Tables>, engine: SqlEngine): SqlUsageStore {
    return new SqlUsageStore(db as unknown as Kysely<UsageTables>, engine);
  }

  async add(rows: readonly UsageHour[]): Promise<void> {
    if (rows.length === 0) return;
    const sorted = [...rows].sort((a, b) =>
      a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : a.hourStart - b.hourStart,
    );
    const statements = [];
    for (let i = 0; i < sorted.length; i += INSERT_ROWS) {
      const values = sorted.slice(i, i + INSERT_ROWS).map((row) => ({
        key_id: row.keyId,
        hour_start: row.hourStart,
        requests: row.requests,
        served: row.served,
        not_modified: row.notModified,
        rate_limited: row.rateLimited,
        client_errors: row.clientErrors,
        units: row.units,
      }));
      statements.push(
        this.db
          .insertInto('usage_hours')
          .values(values)
          .onConflict((conflict) =>
            conflict.columns(['key_id', 'hour_start']).doUpdateSet((eb) => ({
              requests: eb('usage_hours.requests', '+', eb.ref('excluded.requests')),
              served: eb('usage_hours.served', '+', eb.ref('excluded.served')),
              not_modified: eb('usage_hours.not_modified', '+', eb.ref('excluded.not_modified')),
              rate_limited: eb('usage_hours.rate_limited', '+', eb.ref('excluded.rate_limited')),
              client_errors: eb('usage_hours.client_errors', '+', eb.ref('excluded.client_errors')),
              units: eb('usage_hours.units', '+', eb.ref('excluded.units')),
            })),
          ),
      );
    }
    // An upsert always changes its rows, so `writeAll` keeps every statement.
    if (!(await this.engine.writeAll(statements))) throw new Error('usage rows were not written');
  }

  async hours(from: number, to: number, keyId?: string) {
    const ofKey = keyId === undefined ? sql`` : sql`and key_id = ${keyId}`;
    const { rows } = await sql<UsageCounts & { hourStart: number }>`
      select hour_start as "hourStart", ${SUMS} from usage_hours
      where hour_start >= ${from} and hour_start < ${to} ${ofKey}
      group by hour_start order by hour_start`.execute(this.db);
    return rows.map((row) => ({ ...numbers(row), hourStart: Number(row.hourStart) }));
  }

  async tierBuckets(buckets: readonly { readonly start: number; readonly end: number }[]) {
    if (buckets.length === 0) return [];
    for (const { start, end } of buckets) {
      if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end))
        throw new Error('bucket bounds must be integers');
    }
    const from = Math.min(...buckets.map((b) => b.start));
    const to = Math.max(...buckets.map((b) => b.end));
    // The buckets as a VALUES table of literals (checked integers above): both engines name its
    // columns column1..3, and literals keep PostgreSQL from reading the bounds as text.
    const rows = sql.join(
      buckets.map(({ start, end }, n) => sql`(${sql.lit(n)}, ${sql.lit(start)}, ${sql.lit(end)})`),
    );
    const { rows: found } = await sql<UsageCounts & { bucket: number; tier: string; keys: number }>`
      select b.column1 as bucket, k.tier as tier, ${SUMS},
        cast(count(distinct case when u.requests > 0 then u.key_id end) as bigint) as keys
      from usage_hours u
      join (values ${rows}) as b on u.hour_start >= b.column2 and u.hour_start < b.column3
      join api_keys k on k.id = u.key_id
      where u.hour_start >= ${from} and u.hour_start < ${to}
      group by b.column1, k.tier
      order by b.column1, k.tier`.execute(this.db);
    return found.map(
      (row): TierBucket => ({
        ...numbers(row),
        bucket: Number(row.bucket),
        tier: row.tier,
        keys: Number(row.keys),
      }),
    );
  }

  async keyDays(from: number, to: number): Promise<UsageDay[]> {
    const day = sql`hour_start - hour_start % ${sql.lit(DAY_MS)}`;
    const { rows } = await sql<UsageCounts & { keyId: string; dayStart: number }>`
      select key_id as "keyId", ${day} as "dayStart", ${SUMS} from usage_hours
      where hour_start >= ${from} and hour_start < ${to}
      group by key_id, ${day} order by key_id, ${day}`.execute(this.db);
    return rows.map((row) => ({ ...numbers(row), keyId: row.keyId, dayStart: Number(row.dayStart) }));
  }

  async prune(before: number): Promise<void> {
    // No hour that old: `writeAll` answers false for a statement that changed nothing, which is fine.
    await this.engine.writeAll([this.db.deleteFrom('usage_hours').where('hour_start', '<', before)]);
  }
}

/** The counts of a row as numbers, whatever type the driver gave them. */
function numbers(row: UsageCounts): UsageCounts {
  return {
    requests: Number(row.requests),
    served: Number(row.served),
    notModified: Number(row.notModified),
    rateLimited: Number(row.rateLimited),
    clientErrors: Number(row.clientErrors),
    units: Number(row.units),
  };
}
