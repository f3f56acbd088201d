/**
 * API keys in SQL, hashes and metadata only: the same queries on SQLite and PostgreSQL. How writes
 * reach the database, and how last-used times are written, comes in as a `SqlEngine`.
 */
import { type Kysely, sql } from 'kysely';
import type { LimitRule } from '../../domain/limits/tiers.js';
import { type KeyChanges, type KeyRecord, type KeyStore, SCOPES, type Scope } from '../types.js';
import type { SqlEngine } from './engine.js';
import type { ApiKeysTable, SqlTables } from './schema.js';

function toRecord(row: ApiKeysTable): KeyRecord {
  return {
    id: row.id,
    hash: row.hash,
    last4: row.last4,
    name: row.name,
    tier: row.tier,
    scopes: row.scopes.split(',').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    limits: row.limits === null ? null : (JSON.parse(row.limits) as LimitRule[]),
    allowedAddresses: row.allowed_addresses === null ? null : (JSON.parse(row.allowed_addresses) as string[]),
    customerRef: row.customer_ref,
    contact: row.contact,
  };
}

/** A list as its JSON column, `null` as NULL. */
const json = (value: readonly unknown[] | null | undefined) => (value == null ? null : JSON.stringify(value));

/** The columns `changes` names, and only those. */
function changedColumns(changes: KeyChanges): Partial<ApiKeysTable> {
  const columns: Partial<ApiKeysTable> = {};
  if (changes.name !== undefined) columns.name = changes.name;
  if (changes.tier !== undefined) columns.tier = changes.tier;
  if (changes.expiresAt !== undefined) columns.expires_at = changes.expiresAt;
  if (changes.limits !== undefined) columns.limits = json(changes.limits);
  if (changes.allowedAddresses !== undefined) columns.allowed_addresses = json(changes.allowedAddresses);
  if (changes.customerRef !== undefined) columns.customer_ref = changes.customerRef;
  if (changes.contact !== undefined) columns.contact = changes.contact;
  return columns;
}

/** The statement that stores `record`, for the key store and for a claim that stores a key with its use. */
export function keyInsert(db: Kysely<SqlTables>, record: KeyRecord) {
  return db.insertInto('api_keys').values({
    id: record.id,
    hash: record.hash,
    last4: record.last4,
    name: record.name,
    tier: record.tier,
    scopes: record.scopes.join(','),
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    revoked_at: record.revokedAt,
    last_used_at: record.lastUsedAt,
    limits: json(record.limits),
    allowed_addresses: json(record.allowedAddresses),
    customer_ref: record.customerRef ?? null,
    contact: record.contact ?? null,
  });
}

/** @example const keys = new SqlKeyStore(db, engine) */
export class SqlKeyStore implements KeyStore {
  constructor(
    protected readonly db: Kysely<SqlTables>,
    protected readonly engine: SqlEngine,
  ) {}

  /** `row` as a record; an engine may add what it knows and has not written yet. */
  protected record(row: ApiKeysTable): KeyRecord {
    return toRecord(row);
  }

  /** Whether a rotation that found its key unrevoked may still go on (checked inside its transaction). */
  protected mayRotate(_id: string): boolean {
    return true;
  }

  private insertQuery(record: KeyRecord) {
    return keyInsert(this.db, record);
  }

  async insert(record: KeyRecord): Promise<void> {
    await this.engine.writeAll([this.insertQuery(record)]);
  }

  async findByHash(hash: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row && this.record(row);
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && this.record(row);
  }

  async list(): Promise<KeyRecord[]> {
    // Ties on created_at break by id in code-point order: SQLite's BINARY, PostgreSQL's "C" collation.
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => this.record(row));
  }

  async revoke(id: string, at: number): Promise<boolean> {
    // The cast types the parameter for PostgreSQL; SQLite reads `bigint` as an integer column type.
    return this.engine.writeAll([
      this.db
        .updateTable('api_keys')
        .set({ revoked_at: sql`coalesce(revoked_at, cast(${at} as bigint))` })
        .where('id', '=', id),
    ]);
  }

  async setTier(id: string, tier: string): Promise<boolean> {
    return this.engine.writeAll([this.db.updateTable('api_keys').set({ tier }).where('id', '=', id)]);
  }

  async update(id: string, changes: KeyChanges): Promise<boolean> {
    const columns = changedColumns(changes);
    if (Object.keys(columns).length === 0) return (await this.get(id)) !== undefined;
    return this.engine.writeAll([this.db.updateTable('api_keys').set(columns).where('id', '=', id)]);
  }

  async rotate(id: string, replacement: KeyRecord, expiresBy: number): Promise<boolean> {
    const by = sql<number>`cast(${expiresBy} as bigint)`;
    // A missing expiry compares as NULL, so it gets `expiresBy`; an earlier expiry stays.
    const expire = this.db
      .updateTable('api_keys')
      .set({ expires_at: sql`case when expires_at < ${by} then expires_at else ${by} end` })
      .where('id', '=', id)
      .where('revoked_at', 'is', null);
    return this.engine.writeAll([expire, this.insertQuery(replacement)], () => this.mayRotate(id));
  }

  recordLastUsed(batch: ReadonlyMap<string, number>): Promise<void> {
    return this.engine.recordLastUsed(batch);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
