/**
 * The embedded database: SQLite through Kysely, in WAL mode so that the CLI can write while the
 * server reads. Migrations are code, applied in order by Kysely's migrator.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type Migration, Migrator, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import type { SqlTables } from '../sql/schema.js';
import { createUsageHours } from '../sql/usage-schema.js';

/**
 * The shared tables (../sql/schema.ts), as the stores' queries see them. The embedded engine's own
 * `key_changes` (one row: a number every change of a cached key moves, see migration 0002) is read
 * with plain SQL (./index.ts), so it stays out of this type and the shared stores take it as it is.
 */
export type Database = SqlTables;

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
  // A running server caches verified keys; a change made by another process (`pricepoint keys
  // revoke`) reaches it when it sees this number move, which it reads every second. Triggers move
  // it whoever writes, and last-used times (written all the time) leave it alone.
  '0002_key_changes': {
    async up(db: Kysely<unknown>) {
      await sql`create table key_changes (id integer primary key check (id = 1), version integer not null)`.execute(
        db,
      );
      await sql`insert into key_changes (id, version) values (1, 0)`.execute(db);
      const bump = sql.raw('begin update key_changes set version = version + 1; end');
      await sql`create trigger api_keys_inserted after insert on api_keys ${bump}`.execute(db);
      await sql`create trigger api_keys_deleted after delete on api_keys ${bump}`.execute(db);
      await sql`create trigger api_keys_changed after update of hash, tier, scopes, expires_at, revoked_at on api_keys ${bump}`.execute(
        db,
      );
    },
  },
  // Where each stored day of a series came from and whether it is whole (docs/sources.md). Days
  // written before this migration have no row: they are served as of unknown source.
  '0003_day_provenance': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('day_provenance')
        .addColumn('series_id', 'integer', (c) => c.notNull().references('series.id').onDelete('cascade'))
        .addColumn('date', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('fetched_at', 'integer', (c) => c.notNull())
        .addColumn('complete', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('day_provenance_pk', ['series_id', 'date'])
        .modifyEnd(sql`without rowid`)
        .execute();
    },
  },
  // The outbox of price events, written with the prices that caused them (docs/events.md).
  '0004_events': {
    async up(db: Kysely<unknown>) {
      await sql`create table events (seq integer primary key autoincrement, type text not null, time integer not null, series_id integer not null, symbol text not null, date text not null, timezone text not null, intervals integer not null, etag text not null)`.execute(
        db,
      );
      await db.schema.createIndex('events_day').on('events').columns(['series_id', 'date', 'seq']).execute();
    },
  },
  // Webhook endpoints, each with its cursor in the event log, and one delivery row per (endpoint,
  // event): its state, attempts and last outcome (docs/webhooks.md).
  '0005_webhooks': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('symbols', 'text')
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('disabled_reason', 'text')
        .addColumn('cursor', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('endpoint_id', 'text', (c) =>
          c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
        )
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_seq', 'integer', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'integer')
        .addColumn('last_attempt_at', 'integer')
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
  '0006_webhook_endpoint_due': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('webhook_deliveries_endpoint_due')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'state', 'next_attempt_at'])
        .execute();
    },
  },
  // Per-key limits, allowed addresses and owner fields (docs/keys-and-tiers.md), and the audit log
  // (docs/audit.md). A cached key must be forgotten when its limits or addresses change, so the
  // trigger of 0002 is made again with them.
  '0007_key_fields_and_audit': {
    async up(db: Kysely<unknown>) {
      for (const column of ['limits', 'allowed_addresses', 'customer_ref', 'contact']) {
        await db.schema.alterTable('api_keys').addColumn(column, 'text').execute();
      }
      await sql`drop trigger api_keys_changed`.execute(db);
      await sql`create trigger api_keys_changed after update of hash, tier, scopes, expires_at, revoked_at, limits, allowed_addresses on api_keys ${sql.raw('begin update key_changes set version = version + 1; end')}`.execute(
        db,
      );
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('time', 'integer', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('address', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('status', 'integer')
        .addColumn('code', 'text')
        .execute();
      await db.schema.createIndex('audit_log_time').on('audit_log').columns(['time']).execute();
    },
  },
  // Counted requests per key and UTC hour, added to by every instance (docs/usage-history.md).
  '0008_usage_history': { up: (db: Kysely<unknown>) => createUsageHours(db, 'text', 'integer') },
  // Invitations to claim a key (docs/invitations.md), and the key a claim or sign-up made in its
  // audit entry (docs/audit.md).
  '0009_invitations': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('invitations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'integer', (c) => c.notNull())
        .addColumn('uses', 'integer', (c) => c.notNull())
        .addColumn('claimed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('key_expires_at', 'integer')
        .addColumn('note', 'text')
        .addColumn('revoked_at', 'integer')
        .execute();
      await db.schema.alterTable('audit_log').addColumn('key_id', 'text').execute();
    },
  },
};

/** Owner-only: the database holds key hashes, which no other local user may read. */
const FILE_MODE = 0o600;
const FOLDER_MODE = 0o700;

/**
 * Creates the folder and the database file owner-only, whatever the umask, and tightens ones that
 * exist. SQLite gives `-wal` and `-shm` the mode of the database file; existing ones are tightened
 * here too. What is not the process' own, and a shared folder (sticky, like /tmp), is left as it is.
 */
function ownerOnly(path: string): void {
  const folder = dirname(path);
  mkdirSync(folder, { recursive: true, mode: FOLDER_MODE });
  const own = (uid: number) => process.getuid === undefined || uid === process.getuid();
  const stat = statSync(folder);
  if (own(stat.uid) && (stat.mode & 0o1000) === 0 && (stat.mode & 0o777) !== FOLDER_MODE) {
    chmodSync(folder, FOLDER_MODE);
  }
  closeSync(openSync(path, 'a', FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      const { mode, uid } = statSync(file);
      if (own(uid) && (mode & 0o777) !== FILE_MODE) chmodSync(file, FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** Opens (creating it and its folder owner-only if need be) the SQLite file at `path`, or `:memory:`. */
export function openSqlite(path: string): { db: Kysely<Database>; raw: SQLite.Database } {
  if (path !== ':memory:') ownerOnly(path);
  const raw = new SQLite(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('busy_timeout = 5000');
  raw.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: preparedOnce(raw) }) });
  return { db, raw };
}

/** Statements kept prepared: the queries are parameterised, so a few dozen texts cover them all. */
const PREPARED_KEPT = 256;

/**
 * `raw` as Kysely's SQLite dialect uses it, with each statement text prepared once: the dialect
 * prepares a statement for every query, and preparing (parsing and planning the SQL) cost more than
 * running a day's read (bench/README.md "Uncached reads"). A statement still iterating (`busy`) is
 * not shared; a new one is prepared for that query.
 */
function preparedOnce(raw: SQLite.Database): SqliteDatabase {
  const kept = new Map<string, SQLite.Statement>();
  return {
    prepare(text) {
      const statement = kept.get(text);
      if (statement !== undefined && !statement.busy) return statement;
      const fresh = raw.prepare(text);
      if (statement === undefined) {
        if (kept.size >= PREPARED_KEPT) kept.clear();
        kept.set(text, fresh);
      }
      return fresh;
    },
    close: () => raw.close(),
  };
}

/**
 * Brings the schema up to date, or up to the migration named `upTo` (tests build a database as an
 * older release left it); returns the names of the migrations it applied.
 */
export async function migrateSqlite(db: Kysely<Database>, upTo?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await (upTo === undefined
    ? migrator.migrateToLatest()
    : migrator.migrateTo(upTo));
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
