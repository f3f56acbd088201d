/** The PostgreSQL site of the crash-safety tests: a schema of its own, its heap and its locks. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/process.js';
import { COUNT_SQL, type Engine, IMPORT_SPAN } from './crash-safety-plan.js';

const postgresTarget = await postgresSchemaUrl();
export const skipPostgres = 'skip' in postgresTarget ? postgresTarget.skip : false;
/** Schemas and connections of the PostgreSQL deployment, dropped and closed after the file. */
export const postgresCleanUps: (() => Promise<void>)[] = [];

export const postgresEngine: Engine = {
  name: 'PostgreSQL',
  // 1,000 days: every insert statement reaches the heap at once, and PostgreSQL's are the slower.
  rows: 96_000,
  async site() {
    const target = await postgresSchemaUrl();
    if ('skip' in target) throw new Error(target.skip);
    const dir = await tempDir('pricepoint-crash-pg-');
    // The server takes one URL; the schema travels in it as the connections' search_path. The
    // server migrates into the current schema, which has to exist for that.
    const url = new URL(target.url);
    url.searchParams.set('options', `-c search_path=${target.schema}`);
    const probe = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 2_000 });
    probe.on('error', () => {});
    await probe.connect();
    postgresCleanUps.push(async () => {
      await probe.end().catch(() => {});
      await target.drop();
    });
    await probe.query(`create schema ${target.schema}`);
    const heap = async () =>
      Number(
        (await probe.query<{ size: string }>("select pg_relation_size('prices') as size")).rows[0]?.size,
      );
    // The holder of the imports' own lock (src/stores/postgres/price-write-session.ts): an advisory
    // lock on a bigint key shows in pg_locks as its high and low 32 bits. A backend gets a
    // transaction id with its first write.
    const holder = `
      with k as (select hashtext(current_schema() || '.price_writes')::bigint as key)
      select a.pid, a.backend_xid is not null as wrote
      from pg_locks l join pg_stat_activity a on a.pid = l.pid, k
      where l.locktype = 'advisory' and l.granted and l.objsubid = 1
        and l.database = (select oid from pg_database where datname = current_database())
        and l.classid::bigint = (k.key >> 32) & 4294967295 and l.objid::bigint = k.key & 4294967295`;
    const importer = async () => {
      const { rows } = await probe.query<{ pid: number; wrote: boolean }>(holder);
      return { locked: rows.length > 0, wrote: rows.some((r) => r.wrote), pid: rows[0]?.pid };
    };
    let base = 0;
    return {
      settings: { PRICEPOINT_DATA_DIR: dir, PRICEPOINT_DATABASE_URL: url.toString() },
      dir,
      certFile: join(dir, 'tls', 'localhost-cert.pem'),
      async prepare() {
        // Rows of a killed import stay dead where they are, so the heap grows with the next one
        // instead of filling the space a vacuum would free.
        await probe.query('alter table prices set (autovacuum_enabled = false)');
      },
      async mark() {
        base = await heap();
      },
      async grown() {
        return (await heap()) - base;
      },
      importer,
      async aimAtCommit() {
        // The COMMIT is one message: once the importer's backend runs it, PostgreSQL finishes it
        // whatever becomes of the client, which is killed right then.
        const { pid } = await importer();
        assert.ok(pid !== undefined, 'the import holds its lock until it commits');
        return {
          committing: async () => {
            const { rows } = await probe.query<{ query: string }>(
              'select query from pg_stat_activity where pid = $1',
              [pid],
            );
            return rows[0]?.query.trim().toLowerCase() === 'commit';
          },
          decided: () => 'whole',
        };
      },
      async settle() {
        // A killed client's backend rolls back when it next reads from the closed connection, after
        // the statement it was running, if any.
        const deadline = Date.now() + 30_000;
        while ((await importer()).locked) {
          assert.ok(Date.now() < deadline, 'the killed import released its lock within 30 s');
          await sleep(20);
        }
      },
      async inspect(symbol) {
        let n = 0;
        const { rows } = await probe.query<{ n: string }>(
          COUNT_SQL.replace(/\?/g, () => `$${++n}`),
          [symbol, ...IMPORT_SPAN],
        );
        return { points: Number(rows[0]?.n ?? -1), problems: [] };
      },
    };
  },
};
