/**
 * API keys in SQLite: the shared SQL store (../sql/key-store.ts), plus revocations that take effect
 * the moment they are asked, even while another process holds the write lock.
 */
import type { Kysely } from 'kysely';
import type { SqlEngine } from '../sql/engine.js';
import { SqlKeyStore } from '../sql/key-store.js';
import type { ApiKeysTable } from '../sql/schema.js';
import type { KeyRecord } from '../types.js';
import type { Database } from './database.js';

/** How often a revocation that could not be written yet is tried again, in the background. */
const REVOCATION_RETRY_MS = 1_000;

export class SqliteKeyStore extends SqlKeyStore {
  /**
   * Revocations accepted but not written yet (the lock is held by an import): the key is refused
   * from the moment it is asked, and every record read carries the revocation until it is written.
   */
  private readonly revoking = new Map<string, number>();
  private readonly changeListeners: ((keyIds: readonly string[]) => void)[] = [];

  /** `engine`: `sqliteEngine` of the connection under `db`. */
  constructor(db: Kysely<Database>, engine: SqlEngine) {
    super(db, engine);
  }

  /**
   * Calls `listener` with key ids the moment this process accepts a change that cached
   * verifications must not outlive (a revocation), before it is written.
   */
  onChange(listener: (keyIds: readonly string[]) => void): void {
    this.changeListeners.push(listener);
  }

  /** `row` as a record, with a revocation accepted but not written yet. */
  protected override record(row: ApiKeysTable): KeyRecord {
    const record = super.record(row);
    const revokedAt = this.revoking.get(record.id);
    return revokedAt === undefined || record.revokedAt !== null ? record : { ...record, revokedAt };
  }

  /** A revocation accepted but not written yet wins over the rotation, as a written one does. */
  protected override mayRotate(id: string): boolean {
    return !this.revoking.has(id);
  }

  /**
   * Refuses the key at once, then writes the revocation once the write lock is free. When that
   * takes longer than the writer waits, the caller gets the error (a 503: not confirmed), and the
   * key stays refused here while the write is tried again in the background until it lands.
   */
  override async revoke(id: string, at: number): Promise<boolean> {
    if (!this.revoking.has(id)) this.revoking.set(id, at);
    for (const listener of this.changeListeners) listener([id]);
    const write = () => super.revoke(id, this.revoking.get(id) ?? at);
    try {
      const revoked = await write();
      this.revoking.delete(id);
      return revoked;
    } catch (error) {
      const retry = setInterval(() => {
        write().then(
          () => {
            clearInterval(retry);
            this.revoking.delete(id);
          },
          () => {},
        );
      }, REVOCATION_RETRY_MS);
      retry.unref();
      throw error;
    }
  }
}
