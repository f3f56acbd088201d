/**
 * The embedded database: SQLite through Kysely, in WAL mode so that the CLI can write while the
 * server reads. Migrations are code, applied in order by Kysely's migrator.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { type Generated, Kysely, type Migration, Migrator, SqliteDialect, sql } from 'kysely';

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

const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('series')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('symbol', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('unit', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('resolution', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();
      // Prices are kept as the decimal text they arrived as, so they come back exactly.
      await db.schema
        .createTable('prices')
        .addColumn('series_id', 'integer', (c) => c.notNull().references('series.id').onDelete('cascade'))
        .addColumn('start_ms', 'integer', (c) => c.notNull())
        .addColumn('price', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('prices_pk', ['series_id', 'start_ms'])
        .modifyEnd(sql`without rowid`)
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'integer')
        .addColumn('revoked_at', 'integer')
        .addColumn('last_used_at', 'integer')
        .execute();
    },
  },
};

/** Opens (creating its folder if need be) the SQLite file at `path`, or `:memory:`. */
export function openSqlite(path: string): { db: Kysely<Database>; raw: SQLite.Database } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new SQLite(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('busy_timeout = 5000');
  raw.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) });
  return { db, raw };
}

/** Brings the schema up to date; returns the names of the migrations it applied. */
export async function migrateSqlite(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
