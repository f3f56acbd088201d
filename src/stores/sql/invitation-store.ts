/**
 * Invitations in SQL (docs/invitations.md): the same queries on SQLite and PostgreSQL. A claim takes
 * a use and stores its key in one transaction, the use taken by a conditional update: on SQLite the
 * write lock orders claims, on PostgreSQL the second of two claims of a last use waits for the first's
 * row lock and then finds no use left, so it changes no row and stores nothing.
 */
import { type Kysely, sql } from 'kysely';
import {
  type ClaimResult,
  type InvitationRecord,
  type InvitationStore,
  type KeyRecord,
  SCOPES,
  type Scope,
} from '../types.js';
import type { SqlEngine } from './engine.js';
import { keyInsert } from './key-store.js';
import type { InvitationsTable, SqlTables } from './schema.js';

function toRecord(row: InvitationsTable): InvitationRecord {
  return {
    id: row.id,
    hash: row.hash,
    tier: row.tier,
    scopes: row.scopes.split(',').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    uses: row.uses,
    claimed: row.claimed,
    keyExpiresAt: row.key_expires_at,
    note: row.note,
    revokedAt: row.revoked_at,
  };
}

/** @example const invitations = new SqlInvitationStore(db, engine) */
export class SqlInvitationStore implements InvitationStore {
  constructor(
    private readonly db: Kysely<SqlTables>,
    private readonly engine: SqlEngine,
  ) {}

  async insert(record: InvitationRecord): Promise<void> {
    await this.engine.writeAll([
      this.db.insertInto('invitations').values({
        id: record.id,
        hash: record.hash,
        tier: record.tier,
        scopes: record.scopes.join(','),
        created_at: record.createdAt,
        expires_at: record.expiresAt,
        uses: record.uses,
        claimed: record.claimed,
        key_expires_at: record.keyExpiresAt,
        note: record.note,
        revoked_at: record.revokedAt,
      }),
    ]);
  }

  async get(id: string): Promise<InvitationRecord | undefined> {
    const row = await this.db.selectFrom('invitations').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async findByHash(hash: string): Promise<InvitationRecord | undefined> {
    const row = await this.db
      .selectFrom('invitations')
      .selectAll()
      .where('hash', '=', hash)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(): Promise<InvitationRecord[]> {
    // Ties on created_at break by id, so the order is the same on both engines.
    const rows = await this.db
      .selectFrom('invitations')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toRecord);
  }

  async revoke(id: string, at: number): Promise<boolean> {
    return this.engine.writeAll([
      this.db
        .updateTable('invitations')
        .set({ revoked_at: sql`coalesce(revoked_at, cast(${at} as bigint))` })
        .where('id', '=', id),
    ]);
  }

  async claim(id: string, now: number, key: KeyRecord): Promise<ClaimResult> {
    const take = this.db
      .updateTable('invitations')
      .set({ claimed: sql`claimed + 1` })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', sql<number>`cast(${now} as bigint)`)
      .where('claimed', '<', sql<number>`uses`);
    return (await this.engine.writeAll([take, keyInsert(this.db, key)])) ? 'claimed' : 'refused';
  }
}
