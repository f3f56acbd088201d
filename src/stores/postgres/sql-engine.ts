/**
 * What PostgreSQL does its own way for the shared SQL stores (../sql/engine.ts): writes as Kysely's
 * own statements and transactions on the guarded pool, imports on a client of their own
 * (./price-write-session.ts), and last-used times in one locked, ordered update.
 */
import { type Compilable, type Kysely, sql } from 'kysely';
import { RolledBack, type SqlEngine } from '../sql/engine.js';
import type { Database } from './database.js';
import type { GuardedPool } from './guarded-pool.js';
import { openPostgresWriteSession } from './price-write-session.js';

/** @example new SqlPriceStore(db, postgresEngine(db, pool)) */
export function postgresEngine(db: Kysely<Database>, pool: GuardedPool): SqlEngine {
  const changed = async (run: Kysely<Database>, statement: Compilable) => {
    const { numAffectedRows } = await run.executeQuery(statement.compile());
    return numAffectedRows !== undefined && numAffectedRows > 0n;
  };
  return {
    async writeAll(statements, stillWanted) {
      const [only] = statements;
      // One statement is a transaction of its own: no BEGIN and COMMIT round trips for it.
      if (statements.length === 1 && only !== undefined && stillWanted === undefined)
        return changed(db, only);
      try {
        return await db.transaction().execute(async (trx) => {
          for (const statement of statements) {
            if (!(await changed(trx, statement)) || stillWanted?.() === false) throw new RolledBack();
          }
          return true;
        });
      } catch (error) {
        if (error instanceof RolledBack) return false;
        throw error;
      }
    },

    openPriceWrites: (small, provenance) => openPostgresWriteSession(pool, small, provenance),

    async recordLastUsed(batch) {
      if (batch.size === 0) return;
      const ids = [...batch.keys()];
      const times = [...batch.values()];
      await db.transaction().execute(async (trx) => {
        // Rows are locked in one order (by id) first, so two instances flushing overlapping batches
        // wait for each other instead of deadlocking.
        await sql`select id from api_keys where id = any(${ids}::text[]) order by id for update`.execute(trx);
        // GREATEST ignores NULL, and a time never moves a last use backwards.
        await sql`
          update api_keys set last_used_at = greatest(api_keys.last_used_at, batch.at)
          from unnest(${ids}::text[], ${times}::bigint[]) as batch(id, at)
          where api_keys.id = batch.id`.execute(trx);
      });
    },
  };
}
