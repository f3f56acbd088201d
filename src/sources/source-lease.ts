/**
 * Which instance runs a source (docs/sources.md "Many instances"): a lease per source. On
 * PostgreSQL it is a row in `pricepoint_source_leases`, shared by every instance; in the embedded
 * default it lives in the process, which is the only one.
 *
 * A scheduled run claims its slot (the cron instant, the same on every instance): the claim
 * succeeds only if nobody holds a live lease and the slot was not claimed before, so every
 * scheduled run happens once, however many instances' timers fire. A lease lasts `ttlMs` and is
 * renewed while its run lasts; when its holder dies, it runs out and the next run goes elsewhere.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';

export interface SourceLease {
  /** This instance's name in the lease table. */
  readonly holder: string;
  /** How long a claim lasts unless renewed. */
  readonly ttlMs: number;
  /**
   * Takes the lease of `source` for a run. `slot` is the scheduled instant (a retry passes its
   * run's slot again), or undefined for a run asked for by an operator.
   */
  claim(source: string, slot: number | undefined): Promise<boolean>;
  /** Keeps the lease alive while the run lasts. */
  renew(source: string): Promise<void>;
  release(source: string): Promise<void>;
  /** Keeps what the last run of `source` did, for every instance (and the CLI) to show. */
  record(source: string, outcome: RecordedRun): Promise<void>;
  /** What was recorded, by source. */
  recorded(): Promise<Map<string, RecordedRun>>;
  close(): Promise<void>;
}

/** What a source's runs did, as `SourceStatus` shows it (epoch ms). */
export interface RecordedRun {
  readonly lastRunAt?: number | undefined;
  readonly lastSuccessAt?: number | undefined;
  readonly lastError?: { readonly at: number; readonly message: string } | undefined;
  readonly pointsWritten?: number | undefined;
  /** The last run whose upstream had published nothing for its window (docs/sources.md "Not published"). */
  readonly lastNotPublishedAt?: number | undefined;
  readonly failuresInARow: number;
  /** The start of the newest local day complete in every series the source fills. */
  readonly newestCompleteDayAt?: number | undefined;
  /** The upstream's `Retry-After` of the last run: no run asks it again before this instant. */
  readonly retryAfterUntil?: number | undefined;
}

/** The embedded default: one process, so one holder. */
export function memoryLease(): SourceLease {
  const held = new Set<string>();
  const slots = new Map<string, number>();
  const runs = new Map<string, RecordedRun>();
  return {
    holder: 'this process',
    ttlMs: 45_000,
    async claim(source, slot) {
      if (held.has(source)) return false;
      const last = slots.get(source);
      // A retry claims its run's slot again; an earlier slot is over.
      if (slot !== undefined && last !== undefined && last > slot) return false;
      held.add(source);
      if (slot !== undefined) slots.set(source, slot);
      return true;
    },
    async renew() {},
    async release(source) {
      held.delete(source);
    },
    async record(source, outcome) {
      runs.set(source, outcome);
    },
    async recorded() {
      return new Map(runs);
    },
    async close() {},
  };
}

const TABLE = 'pricepoint_source_leases';

/** The table, created if need be (in the pool's schema, beside the stores' tables). */
export async function migrateLeases(pool: pg.Pool): Promise<void> {
  await pool.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (
    source text PRIMARY KEY,
    holder text NOT NULL,
    expires_at timestamptz NOT NULL,
    slot bigint,
    last jsonb
  )`);
}

/** Leases in PostgreSQL; expiry is read on the database's clock, the one clock all instances share. */
export function postgresLease(pool: pg.Pool, options: { ttlMs?: number; holder?: string } = {}): SourceLease {
  const ttl = options.ttlMs ?? 45_000;
  const holder = options.holder ?? randomUUID();
  return {
    holder,
    ttlMs: ttl,
    async claim(source, slot) {
      // A retry of its own slot is the holder's; a new slot is anyone's once the lease ran out.
      const { rows } = await pool.query(
        `INSERT INTO ${TABLE} AS l (source, holder, expires_at, slot)
         VALUES ($1, $2, now() + $3 * interval '1 millisecond', $4)
         ON CONFLICT (source) DO UPDATE
           SET holder = excluded.holder, expires_at = excluded.expires_at,
               slot = coalesce(excluded.slot, l.slot)
         WHERE (l.holder = excluded.holder OR l.expires_at < now())
           AND (excluded.slot IS NULL OR l.slot IS NULL OR l.slot < excluded.slot
                OR (l.slot = excluded.slot AND l.holder = excluded.holder))
         RETURNING holder`,
        [source, holder, ttl, slot ?? null],
      );
      return rows.length === 1;
    },
    async renew(source) {
      await pool.query(
        `UPDATE ${TABLE} SET expires_at = now() + $3 * interval '1 millisecond' WHERE source = $1 AND holder = $2`,
        [source, holder, ttl],
      );
    },
    async release(source) {
      await pool.query(`UPDATE ${TABLE} SET expires_at = now() WHERE source = $1 AND holder = $2`, [
        source,
        holder,
      ]);
    },
    async record(source, outcome) {
      await pool.query(
        `INSERT INTO ${TABLE} (source, holder, expires_at, last) VALUES ($1, $2, now(), $3)
         ON CONFLICT (source) DO UPDATE SET last = excluded.last`,
        [source, holder, JSON.stringify(outcome)],
      );
    },
    async recorded() {
      const { rows } = await pool.query(`SELECT source, last FROM ${TABLE} WHERE last IS NOT NULL`);
      return new Map(rows.map((row: { source: string; last: RecordedRun }) => [row.source, row.last]));
    },
    async close() {
      await pool.end();
    },
  };
}
