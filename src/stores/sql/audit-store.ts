/**
 * The audit log in SQL (docs/audit.md): the same queries on SQLite and PostgreSQL. Entries are only
 * appended, read newest first, and deleted whole once older than the keeping time; nothing updates one.
 */
import type { Kysely } from 'kysely';
import type { AuditEntry, AuditQuery, AuditStore } from '../types.js';
import type { SqlEngine } from './engine.js';
import type { SqlTables } from './schema.js';

/** @example const audit = new SqlAuditStore(db, engine) */
export class SqlAuditStore implements AuditStore {
  constructor(
    private readonly db: Kysely<SqlTables>,
    private readonly engine: SqlEngine,
  ) {}

  async append(entry: Omit<AuditEntry, 'id'>): Promise<void> {
    const { keyId, ...rest } = entry;
    await this.engine.writeAll([this.db.insertInto('audit_log').values({ ...rest, key_id: keyId ?? null })]);
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    let select = this.db.selectFrom('audit_log').selectAll();
    if (query.from !== undefined) select = select.where('time', '>=', query.from);
    if (query.to !== undefined) select = select.where('time', '<', query.to);
    if (query.action !== undefined) select = select.where('action', '=', query.action);
    if (query.actor !== undefined) select = select.where('actor', '=', query.actor);
    if (query.before !== undefined) select = select.where('id', '<', query.before);
    const rows = await select.orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map(({ key_id, ...row }) => ({ ...row, id: Number(row.id), keyId: key_id }));
  }

  async prune(before: number): Promise<void> {
    // Through the engine: on SQLite it waits for the write lock without blocking the event loop.
    await this.engine.writeAll([this.db.deleteFrom('audit_log').where('time', '<', before)]);
  }
}
