/** API keys in SQLite: hashes and metadata only. */
import type SQLite from 'better-sqlite3';
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
  /** Last-used times not written yet because another process held the write lock. */
  private pending = new Map<string, number>();

  /** `raw`: the connection under `db`, for last-used writes that must never wait for the lock. */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw?: SQLite.Database,
  ) {}

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

  /**
   * Writes the times at once or not now: while another process holds the write lock (`pricepoint
   * import` on the same file), better-sqlite3 would block the event loop, and so every request,
   * for the whole busy timeout. The times are then kept and written with the next batch.
   */
  async recordLastUsed(batch: ReadonlyMap<string, number>): Promise<void> {
    const all = this.pending;
    for (const [id, at] of batch) all.set(id, Math.max(at, all.get(id) ?? at));
    if (all.size === 0) return;
    const raw = this.raw;
    if (raw === undefined) {
      this.pending = new Map();
      await this.db.transaction().execute(async (trx) => {
        for (const [id, at] of all) {
          await trx
            .updateTable('api_keys')
            .set({ last_used_at: sql`max(coalesce(last_used_at, ${at}), ${at})` })
            .where('id', '=', id)
            .execute();
        }
      });
      return;
    }
    // Kysely's hold on the connection: no transaction of its own is open while this one runs.
    await this.db.connection().execute(async () => {
      const update = raw.prepare(
        'update api_keys set last_used_at = max(coalesce(last_used_at, ?), ?) where id = ?',
      );
      const waited = raw.pragma('busy_timeout', { simple: true }) as number;
      raw.pragma('busy_timeout = 0');
      try {
        raw.transaction(() => {
          for (const [id, at] of all) update.run(at, at, id);
        })();
        this.pending = new Map();
      } catch (error) {
        if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      } finally {
        raw.pragma(`busy_timeout = ${waited}`);
      }
    });
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
