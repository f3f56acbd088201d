/**
 * The scale-out database: PostgreSQL through Kysely and a `pg` pool. The logical schema is the
 * embedded one (src/stores/sqlite/database.ts): prices as the decimal text they arrived as, starts
 * and times as epoch milliseconds.
 *
 * Choices, and why:
 * - `bigint` columns come back as JS numbers through this pool's own type parser, never through
 *   `pg.types.setTypeParser`, which is process-wide and would change every other pool in the process.
 *   Every bigint here is an epoch-ms time or a count, far below 2^53.
 * - Text keys that are ordered (`series.symbol`, `api_keys.id`) use the "C" collation, so they sort
 *   by code point as SQLite's BINARY does, whatever the database's locale.
 * - Tables live in one schema (`schema` option, else the connection's current schema), set as the
 *   `search_path` of every pooled connection, so tests can each have their own.
 * - The database being away must be a rejected promise, never a crash or a hang: connections time
 *   out after 2 s, statements after 10 s (server side), and every client carries an 'error' listener,
 *   because `pg` emits 'error' on a client that loses its connection even while it is checked out.
 */
import { type Generated, Kysely, type Migration, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

export interface SeriesTable {
  id: Generated<number>;
  symbol: string;
  name: string;
  kind: string;
  currency: string;
  unit: string;
  timezone: string;
  resolution: string;
  updated_at: number;
}

export interface PricesTable {
  series_id: number;
  start_ms: number;
  price: string;
}

export interface ApiKeysTable {
  id: string;
  hash: string;
  last4: string;
  name: string;
  tier: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface Database {
  series: SeriesTable;
  prices: PricesTable;
  api_keys: ApiKeysTable;
}

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
    connectionTimeoutMillis: 2_000,
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

export function createDb(pool: pg.Pool): Kysely<Database> {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Creates the schema if need be and brings it up to date; returns the names of the migrations it
 * applied. Safe when several instances start at once: Kysely's migrator holds a PostgreSQL advisory
 * lock (`pg_advisory_lock`) around reading and applying migrations, which run in one transaction, so a
 * second instance waits and then finds nothing left to do. The lock is held by a session, so it
 * goes away with a crashed instance's connection.
 */
export async function migratePostgres(db: Kysely<Database>, schema?: string): Promise<string[]> {
  const target = schema ?? (await currentSchema(db));
  await ensureSchema(db, target);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Named explicitly: without it Kysely finds a migration table in any schema and skips creating ours.
    migrationTableSchema: target,
  });
  const { error, results } = await migrator.migrateToLatest();
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
