/**
 * The scale-out database: PostgreSQL through Kysely and a `pg` pool. The logical schema is the
 * embedded one (../sql/schema.ts): prices as the decimal text they arrived as, starts and times as
 * epoch milliseconds.
 *
 * Choices, and why:
 * - `bigint` columns come back as JS numbers through this pool's own type parser, never through
 *   `pg.types.setTypeParser`, which is process-wide and would change every other pool in the process.
 *   Every bigint here is an epoch-ms time or a count, far below 2^53.
 * - Text keys that are ordered (`series.symbol`, `api_keys.id`) use the "C" collation, so they sort
 *   by code point as SQLite's BINARY does, whatever the database's locale.
 * - Tables live in one schema (`schema` option, else the connection's current schema), set as the
 *   `search_path` of every pooled connection, so tests can each have their own.
 * - The database being away must be a rejected promise, never a crash or a hang: connecting and
 *   waiting for a free connection time out after `connectTimeoutMs`, statements after 10 s (server
 *   side) and 15 s (client side, for a server that answers nothing), and every client carries an
 *   'error' listener, because `pg` emits 'error' on a client that loses its connection even while it
 *   is checked out. The stores add shorter deadlines and a circuit breaker (./guarded-pool.ts).
 */
import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  Kysely,
  type Migration,
  Migrator,
  PostgresDialect,
  type PostgresPool,
  sql,
  type TableMetadata,
} from 'kysely';
import pg from 'pg';
import type { SqlTables } from '../sql/schema.js';
import { createUsageHours } from '../sql/usage-schema.js';
import type { GuardedPool } from './guarded-pool.js';

/** The shared tables (../sql/schema.ts), nothing more. */
export type Database = SqlTables;

const CODE_POINT_TEXT = sql`text collate "C"`;

const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('series')
        .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
        .addColumn('symbol', CODE_POINT_TEXT, (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('unit', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('resolution', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      // Prices are kept as the decimal text they arrived as, so they come back exactly.
      await db.schema
        .createTable('prices')
        .addColumn('series_id', 'integer', (c) => c.notNull().references('series.id').onDelete('cascade'))
        .addColumn('start_ms', 'bigint', (c) => c.notNull())
        .addColumn('price', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('prices_pk', ['series_id', 'start_ms'])
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', CODE_POINT_TEXT, (c) => c.primaryKey())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .addColumn('last_used_at', 'bigint')
        .execute();
    },
  },
  // Where each stored day of a series came from and whether it is whole (docs/sources.md). Days
  // written before this migration have no row: they are served as of unknown source.
  '0002_day_provenance': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('day_provenance')
        .addColumn('series_id', 'integer', (c) => c.notNull().references('series.id').onDelete('cascade'))
        .addColumn('date', CODE_POINT_TEXT, (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('fetched_at', 'bigint', (c) => c.notNull())
        .addColumn('complete', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('day_provenance_pk', ['series_id', 'date'])
        .execute();
    },
  },
  // The outbox of price events, written with the prices that caused them (docs/events.md).
  '0003_events': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('events')
        .addColumn('seq', 'bigserial', (c) => c.primaryKey())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('time', 'bigint', (c) => c.notNull())
        .addColumn('series_id', 'integer', (c) => c.notNull())
        .addColumn('symbol', 'text', (c) => c.notNull())
        .addColumn('date', CODE_POINT_TEXT, (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('intervals', 'integer', (c) => c.notNull())
        .addColumn('etag', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_day').on('events').columns(['series_id', 'date', 'seq']).execute();
    },
  },
  // Webhook endpoints, each with its cursor in the event log, and one delivery row per (endpoint,
  // event): its state, attempts and last outcome (docs/webhooks.md).
  '0004_webhooks': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', CODE_POINT_TEXT, (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('symbols', 'text')
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('disabled_reason', 'text')
        .addColumn('cursor', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('endpoint_id', CODE_POINT_TEXT, (c) =>
          c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
        )
        .addColumn('event_id', CODE_POINT_TEXT, (c) => c.notNull())
        .addColumn('event_seq', 'bigint', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint')
        .addColumn('last_attempt_at', 'bigint')
        .addColumn('last_status', 'integer')
        .addColumn('last_latency_ms', 'integer')
        .addColumn('last_error', 'text')
        .addPrimaryKeyConstraint('webhook_deliveries_pk', ['endpoint_id', 'event_id'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_due')
        .on('webhook_deliveries')
        .columns(['state', 'next_attempt_at'])
        .execute();
    },
  },
  // The due deliveries of given endpoints, a few each, without reading every other endpoint's
  // backlog (src/webhooks/lanes.ts, docs/webhooks.md "Endpoints that do not answer").
  '0005_webhook_endpoint_due': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('webhook_deliveries_endpoint_due')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'state', 'next_attempt_at'])
        .execute();
    },
  },
  // Per-key limits, allowed addresses and owner fields (docs/keys-and-tiers.md), and the audit log
  // (docs/audit.md).
  '0006_key_fields_and_audit': {
    async up(db: Kysely<unknown>) {
      for (const column of ['limits', 'allowed_addresses', 'customer_ref', 'contact']) {
        await db.schema.alterTable('api_keys').addColumn(column, 'text').execute();
      }
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'bigserial', (c) => c.primaryKey())
        .addColumn('time', 'bigint', (c) => c.notNull())
        .addColumn('actor', CODE_POINT_TEXT, (c) => c.notNull())
        .addColumn('address', 'text')
        .addColumn('action', CODE_POINT_TEXT, (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('status', 'integer')
        .addColumn('code', 'text')
        .execute();
      await db.schema.createIndex('audit_log_time').on('audit_log').columns(['time']).execute();
    },
  },
  // Counted requests per key and UTC hour, added to by every instance (docs/usage-history.md).
  '0007_usage_history': { up: (db: Kysely<unknown>) => createUsageHours(db, CODE_POINT_TEXT, 'bigint') },
  // One counter that every price and series write moves in its own transaction, so an instance
  // learns from one small read that something changed, even when the change notice was lost
  // (./price-store.ts).
  '0008_price_changes': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('price_changes')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .execute();
      await sql`insert into price_changes (id, version) values (1, 0)`.execute(db);
    },
  },
  // Invitations to claim a key (docs/invitations.md), and the key a claim or sign-up made in its
  // audit entry (docs/audit.md).
  '0009_invitations': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('invitations')
        .addColumn('id', CODE_POINT_TEXT, (c) => c.primaryKey())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('uses', 'integer', (c) => c.notNull())
        .addColumn('claimed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('key_expires_at', 'bigint')
        .addColumn('note', 'text')
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.alterTable('audit_log').addColumn('key_id', 'text').execute();
    },
  },
};

/** A schema name we can put in a connection option and in SQL without quoting. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** `int8` as a JS number for this pool only (see the file comment). */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 && format !== 'binary'
      ? Number
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PostgresPoolOptions {
  /** Tables live in this schema (lower-case letters, digits, `_`); created if missing. */
  readonly schema?: string;
  /** Server-side limit of one statement, ms (default 10 s). */
  readonly statementTimeoutMs?: number;
  /** Pool size (default 10). */
  readonly max?: number;
  /** How long making a connection, or waiting for a free one, may take (default 2 s). */
  readonly connectTimeoutMs?: number;
}

/** A pool whose connections all use `schema`, with the timeouts and error listeners described above. */
export function createPool(url: string, options: PostgresPoolOptions = {}): pg.Pool {
  const { schema } = options;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name ${JSON.stringify(schema)}: use a-z, 0-9 and _`);
  }
  const statementTimeout = options.statementTimeoutMs ?? 10_000;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeout,
    // A client-side stop for a server that no longer answers at all (statement_timeout needs one that does).
    query_timeout: statementTimeout + 5_000,
    keepAlive: true,
    types,
    ...(schema !== undefined && { options: `-c search_path=${schema}` }),
  });
  // Idle clients that lose their connection: the pool drops them; the next query reconnects.
  pool.on('error', () => {});
  // Checked-out clients: their queries reject with the error, and this keeps the event from crashing us.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/** Kysely over `pool`: a plain one (migrations) or one with deadlines and a breaker (the stores). */
export function createDb(pool: pg.Pool | GuardedPool): Kysely<Database> {
  // A guarded client has Kysely's `query(sql, parameters)`; Kysely's cursor overload is never used.
  return new Kysely<Database>({ dialect: new OneSchemaPostgresDialect({ pool: pool as PostgresPool }) });
}

/**
 * PostgreSQL as Kysely speaks it, except for introspection, which the migrator uses to ask whether
 * its own two tables exist. Kysely's own introspector reads every column of every table in the whole
 * database and calls `pg_get_serial_sequence` on each; when another instance (or another test) drops
 * a schema at that moment, the call fails with "schema … does not exist" and so would our migration.
 * This one reads table names in the current schema only, from the catalog, which cannot fail so.
 */
class OneSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OneSchemaIntrospector(db);
  }
}

class OneSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;

  constructor(db: Kysely<unknown>) {
    this.#db = db;
  }

  async getSchemas(): Promise<{ name: string }[]> {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.#db);
    return rows.filter((row) => row.name !== null);
  }

  /** Tables and views of the current schema, by name; columns are not read (nothing here needs them). */
  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, n.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname`.execute(this.#db);
    return rows.map((row) => ({ name: row.name, schema: row.schema, isView: row.kind === 'v', columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}

/**
 * Creates the schema if need be and brings it up to date; returns the names of the migrations it
 * applied. Safe when several instances start at once: Kysely's migrator holds a PostgreSQL advisory
 * lock (`pg_advisory_lock`) around reading and applying migrations, which run in one transaction, so a
 * second instance waits and then finds nothing left to do. The lock is held by a session, so it
 * goes away with a crashed instance's connection.
 */
export async function migratePostgres(
  db: Kysely<Database>,
  schema?: string,
  /** Stop after this migration (tests build a database as an older release left it). */
  upTo?: string,
): Promise<string[]> {
  const target = schema ?? (await currentSchema(db));
  await ensureSchema(db, target);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Named explicitly: without it Kysely finds a migration table in any schema and skips creating ours.
    migrationTableSchema: target,
  });
  const { error, results } = await (upTo === undefined
    ? migrator.migrateToLatest()
    : migrator.migrateTo(upTo));
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

async function currentSchema(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL has no current schema: set search_path or the schema option');
  return schema;
}

async function schemaExists(db: Kysely<Database>, schema: string): Promise<boolean> {
  const { rows } = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
  return rows.length > 0;
}

async function ensureSchema(db: Kysely<Database>, schema: string): Promise<void> {
  if (await schemaExists(db, schema)) return;
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (error) {
    // Two instances creating it at once: `if not exists` can still fail with a unique violation.
    if (!(await schemaExists(db, schema))) throw error;
  }
}
