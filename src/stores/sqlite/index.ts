/** The embedded default: SQLite for keys and prices, in-process rate-limit counters. */
import { MemoryNoticeBus } from '../memory/notice-bus.js';
import { MemoryRateLimitStore } from '../memory/rate-limit-store.js';
import type { Stores } from '../types.js';
import { migrateSqlite, openSqlite } from './database.js';
import { SqliteKeyStore } from './key-store.js';
import { SqlitePriceStore } from './price-store.js';

/**
 * Opens the SQLite file (`:memory:` in tests) and brings its schema up to date.
 * @example const stores = await openEmbeddedStores('.pricepoint/pricepoint.db')
 */
export async function openEmbeddedStores(
  path: string,
): Promise<Stores & { rateLimits: MemoryRateLimitStore }> {
  const { db, raw } = openSqlite(path);
  await migrateSqlite(db);
  return {
    prices: new SqlitePriceStore(db, raw),
    keys: new SqliteKeyStore(db, raw),
    rateLimits: new MemoryRateLimitStore(),
    notices: new MemoryNoticeBus(),
    close: () => db.destroy(),
  };
}
