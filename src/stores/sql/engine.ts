/**
 * What one SQL engine does its own way, for the stores both engines share (./price-store.ts,
 * ./key-store.ts). Reads are the same Kysely queries on both and need nothing from here; writes
 * differ in how they reach the database (SQLite: on the server's one connection, under a write lock
 * that never blocks the event loop; PostgreSQL: a pooled client, with deadlines), and so do imports
 * and last-used times, which each engine writes in its own fastest safe way.
 */
import type { Compilable } from 'kysely';
import type { PriceWriteSession, WriteProvenance } from '../types.js';

export interface SqlEngine {
  /**
   * Runs `statements` in order, in one transaction. When one of them changes no row, or
   * `stillWanted()` answers false after one, stops and rolls every one back. Resolves to whether
   * all of them ran and were kept.
   * @example await engine.writeAll([db.updateTable('api_keys').set({ tier }).where('id', '=', id)])
   */
  writeAll(statements: readonly Compilable[], stillWanted?: () => boolean): Promise<boolean>;
  /** Opens an import (`PriceStore.beginPriceWrites`) that records `provenance` for the days it writes. */
  openPriceWrites(small: boolean, provenance: WriteProvenance): Promise<PriceWriteSession>;
  /** Writes last-used times (`KeyStore.recordLastUsed`). */
  recordLastUsed(batch: ReadonlyMap<string, number>): Promise<void>;
}

/** Thrown inside a transaction of `writeAll` to roll it back; never leaves it. */
export class RolledBack extends Error {}
