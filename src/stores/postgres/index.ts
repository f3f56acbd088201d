/**
 * The scale-out engine for keys and prices: PostgreSQL (DESIGN section 7).
 *
 * It opens only what lives in PostgreSQL. Rate-limit counters and notices belong to another engine
 * (Redis when scaled out, in-process in tests), so the caller puts `Stores` together:
 *
 * @example
 * const pg = await openPostgresStores(process.env.PRICEPOINT_DATABASE_URL!)
 * const stores: Stores = { ...pg, rateLimits, notices, close: async () => { await pg.close(); await redis.quit() } }
 */
import type { Stores } from '../types.js';
import { createDb, createPool, migratePostgres } from './database.js';
import { PostgresKeyStore } from './key-store.js';
import { PostgresPriceStore } from './price-store.js';

/** The PostgreSQL part of `Stores`. */
export type PostgresStores = Pick<Stores, 'prices' | 'keys' | 'close'>;

export interface PostgresStoreOptions {
  /** Every table lives in this schema, created if missing (default: the connection's current schema). */
  readonly schema?: string;
}

/**
 * Connects, creates the schema if need be and brings it up to date (safe with several instances
 * starting at once; see `migratePostgres`). Rejects, leaving no pool behind, when PostgreSQL cannot
 * be reached within a few seconds.
 */
export async function openPostgresStores(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresStores> {
  await migrate(url, options.schema);
  const pool = createPool(url, options);
  const db = createDb(pool);
  return {
    prices: new PostgresPriceStore(db, pool),
    keys: new PostgresKeyStore(db),
    // Kysely's destroy ends the pool.
    close: () => db.destroy(),
  };
}

/**
 * Migrates over a pool of its own with a long statement timeout: waiting for another instance's
 * migration lock is one statement, and it may well take longer than the 10 s a request may.
 */
export async function migrate(url: string, schema?: string): Promise<string[]> {
  const db = createDb(
    createPool(url, { ...(schema !== undefined && { schema }), max: 2, statementTimeoutMs: 300_000 }),
  );
  try {
    return await migratePostgres(db, schema);
  } finally {
    await db.destroy();
  }
}
