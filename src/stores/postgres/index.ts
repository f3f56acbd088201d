/**
 * The scale-out engine for keys and prices: PostgreSQL (docs/scale-out.md).
 *
 * It opens only what lives in PostgreSQL. Rate-limit counters and notices belong to another engine
 * (Redis when scaled out, in-process in tests), so the caller puts `Stores` together:
 *
 * @example
 * const pg = await openPostgresStores(process.env.PRICEPOINT_DATABASE_URL!)
 * const stores: Stores = { ...pg, rateLimits, notices, close: async () => { await pg.close(); await redis.quit() } }
 */

import { SqlAuditStore } from '../sql/audit-store.js';
import { SHARED_POLL_MS, SqlEventLog } from '../sql/event-log.js';
import { SqlInvitationStore } from '../sql/invitation-store.js';
import { SqlKeyStore } from '../sql/key-store.js';
import { SqlUsageStore } from '../sql/usage-store.js';
import { SqlWebhookStore } from '../sql/webhook-store.js';
import type { Stores } from '../types.js';
import { createDb, createPool, migratePostgres } from './database.js';
import { DEFAULT_DATABASE_TIMEOUT_MS, guardPool } from './guarded-pool.js';
import { PostgresPriceStore } from './price-store.js';
import { postgresEngine } from './sql-engine.js';

/** The PostgreSQL part of `Stores`. */
export type PostgresStores = Pick<Stores, 'prices' | 'keys' | 'close'> & {
  readonly events: SqlEventLog;
  readonly webhooks: SqlWebhookStore;
  readonly usage: SqlUsageStore;
  readonly audit: SqlAuditStore;
  readonly invitations: SqlInvitationStore;
};

export interface PostgresStoreOptions {
  /** Every table lives in this schema, created if missing (default: the connection's current schema). */
  readonly schema?: string;
  /**
   * The client-side deadline of connecting, waiting for a connection and every query a request
   * makes (`PRICEPOINT_DATABASE_TIMEOUT_MS`, default 1000 ms); past it PostgreSQL counts as away.
   */
  readonly timeoutMs?: number;
  /**
   * How often, at most, the change counter is read while requests ask for the change token
   * (`PRICEPOINT_CHANGE_CHECK_MS`, default 5000 ms; ./price-store.ts).
   */
  readonly changeCheckMs?: number;
  /** Pause between probes while PostgreSQL is away (default 500 ms). */
  readonly probeEveryMs?: number;
  /** Told when PostgreSQL stops answering (with the error that showed it) and when it answers again. */
  readonly onAvailabilityChange?: (away: boolean, error: unknown) => void;
}

/**
 * Connects, creates the schema if need be and brings it up to date (safe with several instances
 * starting at once; see `migratePostgres`). Rejects, leaving no pool behind, when PostgreSQL cannot
 * be reached within a few seconds. Every later call has a deadline and a circuit breaker
 * (./guarded-pool.ts): while PostgreSQL does not answer, calls fail at once.
 */
export async function openPostgresStores(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresStores> {
  await migrate(url, options.schema);
  const timeoutMs = options.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
  const pool = guardPool(createPool(url, { ...options, connectTimeoutMs: timeoutMs }), {
    timeoutMs,
    ...(options.probeEveryMs !== undefined && { probeEveryMs: options.probeEveryMs }),
    ...(options.onAvailabilityChange && { onChange: options.onAvailabilityChange }),
  });
  const db = createDb(pool);
  // The queries are the embedded engine's (../sql/); only writes, imports and last-used times differ.
  const engine = postgresEngine(db, pool);
  const events = new SqlEventLog(db, SHARED_POLL_MS);
  const prices = new PostgresPriceStore(db, engine, options.changeCheckMs);
  await prices.check();
  return {
    events,
    webhooks: SqlWebhookStore.over(db),
    prices,
    keys: new SqlKeyStore(db, engine),
    usage: SqlUsageStore.over(db, engine),
    audit: new SqlAuditStore(db, engine),
    invitations: new SqlInvitationStore(db, engine),
    // Kysely's destroy ends the pool.
    close: () => {
      events.stop();
      return db.destroy();
    },
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
