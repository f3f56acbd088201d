/** API keys in SQLite: hashes and metadata only. */
import { type Kysely, sql } from 'kysely';
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

export class SqliteKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(record: KeyRecord): Promise<void> {
    await this.db
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

  async findByHash(hash: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row && toRecord(row);
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(): Promise<KeyRecord[]> {
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
      .set({ revoked_at: sql`coalesce(revoked_at, ${at})` })
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
      const result = await trx
        .updateTable('api_keys')
        .set({ expires_at: sql`min(coalesce(expires_at, ${expiresBy}), ${expiresBy})` })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await new SqliteKeyStore(trx).insert(replacement);
      return true;
    });
  }

  async recordLastUsed(batch: ReadonlyMap<string, number>): Promise<void> {
    if (batch.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of batch) {
        await trx
          .updateTable('api_keys')
          .set({ last_used_at: sql`max(coalesce(last_used_at, ${at}), ${at})` })
          .where('id', '=', id)
          .execute();
      }
    });
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
