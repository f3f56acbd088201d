/** API keys in PostgreSQL: hashes and metadata only, with the semantics of src/stores/sqlite/key-store.ts. */
import { type Kysely, sql, type Transaction } from 'kysely';
import { type KeyRecord, type KeyStore, SCOPES, type Scope } from '../types.js';
import type { ApiKeysTable, Database } from './database.js';

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
  };
}

async function insertKey(db: Kysely<Database> | Transaction<Database>, record: KeyRecord): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
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
    })
    .execute();
}

export class PostgresKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  insert(record: KeyRecord): Promise<void> {
    return insertKey(this.db, record);
  }

  async findByHash(hash: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row && toRecord(row);
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(): Promise<KeyRecord[]> {
    // `id` has the "C" collation: ties on created_at break in code-point order, as in SQLite.
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  async revoke(id: string, at: number): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: sql`coalesce(revoked_at, ${at}::bigint)` })
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async setTier(id: string, tier: string): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ tier })
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async rotate(id: string, replacement: KeyRecord, expiresBy: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // LEAST ignores NULL: a key without an expiry gets `expiresBy`, an earlier expiry stays.
      const result = await trx
        .updateTable('api_keys')
        .set({ expires_at: sql`least(expires_at, ${expiresBy}::bigint)` })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await insertKey(trx, replacement);
      return true;
    });
  }

  async recordLastUsed(batch: ReadonlyMap<string, number>): Promise<void> {
    if (batch.size === 0) return;
    const ids = [...batch.keys()];
    const times = [...batch.values()];
    await this.db.transaction().execute(async (trx) => {
      // Rows are locked in one order (by id) first, so two instances flushing overlapping batches
      // wait for each other instead of deadlocking.
      await sql`select id from api_keys where id = any(${ids}::text[]) order by id for update`.execute(trx);
      // GREATEST ignores NULL, and a time never moves a last use backwards.
      await sql`
        update api_keys set last_used_at = greatest(api_keys.last_used_at, batch.at)
        from unnest(${ids}::text[], ${times}::bigint[]) as batch(id, at)
        where api_keys.id = batch.id`.execute(trx);
    });
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
