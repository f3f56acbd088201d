/** The SQLite site of the crash-safety tests: a data folder, its WAL and its write lock. */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { tempDir } from '../helpers/process.js';
import { COUNT_SQL, type Engine, FAR_FROM_WHOLE, IMPORT_SPAN } from './crash-safety-plan.js';

export const sqliteEngine: Engine = {
  name: 'SQLite',
  // 3,125 days, a WAL of 7 MB: several times the server's page cache (2 MB), so that its transaction
  // spills into the WAL long before its COMMIT writes the rest.
  rows: 300_000,
  async site() {
    const dir = await tempDir('pricepoint-crash-');
    const file = join(dir, 'pricepoint.db');
    const walSize = () => {
      try {
        return statSync(`${file}-wal`).size;
      } catch {
        return 0;
      }
    };
    let base = 0;
    // The connections here are opened only while a server runs, so none is ever the last one:
    // closing it cannot checkpoint the WAL and so tidy up before the restarted server has to.
    return {
      settings: { PRICEPOINT_DATA_DIR: dir },
      stagesOutsideLock: true,
      dir,
      certFile: join(dir, 'tls', 'localhost-cert.pem'),
      async prepare() {},
      async mark() {
        // An emptied WAL grows with the next transaction's pages from zero; one that was only
        // checkpointed would be written over from its start without growing.
        const db = new SQLite(file);
        try {
          const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
          assert.equal(result?.busy, 0, 'the WAL is emptied before the import');
        } finally {
          db.close();
        }
        base = walSize();
      },
      async grown() {
        return walSize() - base;
      },
      async importer() {
        const probe = new SQLite(file, { timeout: 0 });
        try {
          probe.exec('BEGIN IMMEDIATE');
          probe.exec('ROLLBACK');
          return { locked: false, wrote: undefined };
        } catch (error) {
          if ((error as { code?: string }).code === 'SQLITE_BUSY') return { locked: true, wrote: undefined };
          throw error;
        } finally {
          probe.close();
        }
      },
      async aimAtCommit(whole) {
        // The importer's transaction fits its page cache, so its COMMIT writes all of it into the
        // WAL, the commit record last: killed half-way through that, it is not committed.
        const atEnd = walSize() - base;
        let seen = atEnd;
        return {
          committing: async () => {
            seen = walSize() - base;
            return seen - atEnd >= (whole - atEnd) / 2;
          },
          decided: () => (seen - atEnd < (whole - atEnd) * FAR_FROM_WHOLE ? 'none' : undefined),
        };
      },
      async settle() {
        // A dead process holds no SQLite lock; the next connection recovers the WAL.
      },
      async inspect(symbol) {
        const db = new SQLite(file, { readonly: true, fileMustExist: true });
        try {
          const check = db.pragma('quick_check', { simple: true });
          const row = db
            .prepare<[string, number, number], { n: number }>(COUNT_SQL)
            .get(symbol, ...IMPORT_SPAN);
          return { points: row?.n ?? -1, problems: check === 'ok' ? [] : [`quick_check: ${String(check)}`] };
        } finally {
          db.close();
        }
      },
    };
  },
};
