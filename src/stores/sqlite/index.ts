/** The embedded default: SQLite for keys and prices, in-process rate-limit counters. */
import { MemoryNoticeBus } from '../memory/notice-bus.js';
import { MemoryRateLimitStore } from '../memory/rate-limit-store.js';
import { SqlAuditStore } from '../sql/audit-store.js';
import { EMBEDDED_POLL_MS, SqlEventLog } from '../sql/event-log.js';
import { SqlInvitationStore } from '../sql/invitation-store.js';
import { SqlUsageStore } from '../sql/usage-store.js';
import { SqlWebhookStore } from '../sql/webhook-store.js';
import type { Stores } from '../types.js';
import { migrateSqlite, openSqlite } from './database.js';
import { SqliteKeyStore } from './key-store.js';
import { SqlitePriceStore } from './price-store.js';
import { sqliteEngine, sqliteStatementWrites } from './sql-engine.js';
import { sqliteWriter } from './write-lock.js';

/** How often a server looks whether another process changed a key (`pricepoint keys revoke`). */
export const KEY_WATCH_MS = 1_000;

export interface EmbeddedStores extends Stores {
  readonly rateLimits: MemoryRateLimitStore;
  readonly keys: SqliteKeyStore;
  readonly prices: SqlitePriceStore;
  readonly events: SqlEventLog;
  readonly usage: SqlUsageStore;
  readonly audit: SqlAuditStore;
  readonly invitations: SqlInvitationStore;
  /**
   * Calls `listener` when a key may have changed: at once when this process accepts a revocation,
   * and within `KEY_WATCH_MS` of a change any other process wrote. Servers then forget the keys
   * they verified, whatever their key cache time.
   */
  onKeyChanges(listener: (keyIds: readonly string[]) => void): void;
}

/**
 * Opens the SQLite file (`:memory:` in tests) and brings its schema up to date.
 * @example const stores = await openEmbeddedStores('.pricepoint/pricepoint.db')
 */
export async function openEmbeddedStores(path: string): Promise<EmbeddedStores> {
  const { db, raw } = openSqlite(path);
  await migrateSqlite(db);
  const writer = sqliteWriter(raw);
  // The queries are the scale-out engine's (../sql/); only writes, imports and last-used times differ.
  const engine = sqliteEngine(raw, writer);
  const keys = new SqliteKeyStore(db, engine);
  // A few microseconds a second: one row, read by its primary key.
  const version = raw.prepare<[], number>('select version from key_changes where id = 1').pluck();
  const listeners: ((keyIds: readonly string[]) => void)[] = [];
  let seen = version.get();
  const watch = setInterval(() => {
    let now: number | undefined;
    try {
      now = version.get();
    } catch {
      return; // a read that fails now (the disk, a lock during recovery) is tried again in a second
    }
    if (now === seen) return;
    seen = now;
    for (const listener of listeners) listener([]);
  }, KEY_WATCH_MS);
  watch.unref();
  const prices = new SqlitePriceStore(db, engine, raw, writer);
  // Events are written only with prices, so the table is looked at only once the token has moved.
  const events = new SqlEventLog(db, EMBEDDED_POLL_MS, () => prices.changeToken());
  return {
    events,
    // Its writes wait for the write lock on a timer, as the key and price writes do (docs/webhooks.md).
    webhooks: SqlWebhookStore.over(db, sqliteStatementWrites(raw, writer)),
    prices,
    keys,
    usage: SqlUsageStore.over(db, engine),
    audit: new SqlAuditStore(db, engine),
    invitations: new SqlInvitationStore(db, engine),
    rateLimits: new MemoryRateLimitStore(),
    notices: new MemoryNoticeBus(),
    onKeyChanges(listener) {
      listeners.push(listener);
      keys.onChange(listener);
    },
    close: async () => {
      clearInterval(watch);
      events.stop();
      await db.destroy();
    },
  };
}
