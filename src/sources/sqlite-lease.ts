/**
 * Source leases and run records in the embedded database (docs/sources.md "Many instances"): the
 * server and a `pricepoint sources run` command are two processes on one SQLite file, and each run
 * of either first reads what the other recorded, so the spacing of manual runs and an upstream's
 * `Retry-After` hold for both, as the lease table does on PostgreSQL; a run under way in one makes a
 * run of the same source in the other answer `busy`.
 *
 * The table sits in the stores' database file, on a connection of its own. A write never waits
 * inside SQLite for the file's write lock (another process may hold it for seconds while it imports):
 * it is tried again after a short pause, so the server's event loop is never held.
 */
import { randomUUID } from 'node:crypto';
import SQLite from 'better-sqlite3';
import type { RecordedRun, SourceLease } from './source-lease.js';

const TABLE = 'pricepoint_source_leases';
/** How long a write is tried again while another process holds the write lock. */
const BUSY_FOR_MS = 10_000;
const BUSY_PAUSE_MS = 25;

/**
 * Leases over the SQLite file at `path`, created if need be; expiry is read on this machine's clock,
 * the one clock both processes share.
 */
export function sqliteLease(
  path: string,
  options: { ttlMs?: number; holder?: string; now?: () => number } = {},
): SourceLease {
  const ttl = options.ttlMs ?? 45_000;
  const holder = options.holder ?? randomUUID();
  const now = options.now ?? Date.now;
  const db = new SQLite(path);
  db.pragma('busy_timeout = 0');
  const ready = whenFree(() =>
    db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (
      source text PRIMARY KEY,
      holder text NOT NULL,
      expires_at integer NOT NULL,
      slot integer,
      last text
    )`),
  );
  const statements = ready.then(() => ({
    claim: db.prepare<[Record<string, string | number | null>], { holder: string }>(
      `INSERT INTO ${TABLE} AS l (source, holder, expires_at, slot) VALUES (@source, @holder, @expires, @slot)
     ON CONFLICT (source) DO UPDATE
       SET holder = excluded.holder, expires_at = excluded.expires_at, slot = coalesce(excluded.slot, l.slot)
     WHERE (l.holder = excluded.holder OR l.expires_at <= @now)
       AND (excluded.slot IS NULL OR l.slot IS NULL OR l.slot < excluded.slot
            OR (l.slot = excluded.slot AND l.holder = excluded.holder))
     RETURNING holder`,
    ),
    renew: db.prepare(`UPDATE ${TABLE} SET expires_at = ? WHERE source = ? AND holder = ?`),
    record: db.prepare(
      `INSERT INTO ${TABLE} (source, holder, expires_at, last) VALUES (?, ?, ?, ?)
       ON CONFLICT (source) DO UPDATE SET last = excluded.last`,
    ),
    recorded: db.prepare<[], { source: string; last: string }>(
      `SELECT source, last FROM ${TABLE} WHERE last IS NOT NULL`,
    ),
  }));
  return {
    holder,
    ttlMs: ttl,
    async claim(source, slot) {
      const { claim } = await statements;
      const at = now();
      return (
        (await whenFree(() => claim.all({ source, holder, expires: at + ttl, slot: slot ?? null, now: at })))
          .length === 1
      );
    },
    async renew(source) {
      const { renew } = await statements;
      await whenFree(() => renew.run(now() + ttl, source, holder));
    },
    async release(source) {
      // Free from this millisecond on: a claim in the same millisecond finds it expired (`<=`).
      const { renew } = await statements;
      await whenFree(() => renew.run(now(), source, holder));
    },
    async record(source, outcome) {
      const { record } = await statements;
      await whenFree(() => record.run(source, holder, now(), JSON.stringify(outcome)));
    },
    async recorded() {
      const { recorded } = await statements;
      const rows = await whenFree(() => recorded.all());
      return new Map(rows.map((row) => [row.source, JSON.parse(row.last) as RecordedRun]));
    },
    async close() {
      await ready.catch(() => {});
      db.close();
    },
  };
}

/** `write` once the file's write lock is free: tried again after a pause while it is busy. */
async function whenFree<T>(write: () => T): Promise<T> {
  const until = Date.now() + BUSY_FOR_MS;
  for (;;) {
    try {
      return write();
    } catch (error) {
      const busy = (error as { code?: string }).code === 'SQLITE_BUSY';
      if (!busy || Date.now() >= until) throw error;
      await new Promise((resolve) => setTimeout(resolve, BUSY_PAUSE_MS));
    }
  }
}
