/**
 * PostgreSQL for tests: one fresh schema per caller, dropped afterwards, so test files can run side
 * by side on one database.
 *
 * The database is `PRICEPOINT_TEST_DATABASE_URL` (default: the local trust-auth server,
 * postgres://postgres@127.0.0.1:5432/test). When it cannot be reached, tests skip with the reason,
 * except on CI (`CI=true`), where PostgreSQL is part of the job and its absence is a failure.
 *
 * @example
 * const target = await postgresSchemaUrl()
 * describe('on PostgreSQL', { skip: 'skip' in target && target.skip }, () => { ... })
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStores, type PostgresStores } from '../../src/stores/postgres/index.js';

export const TEST_DATABASE_URL =
  process.env['PRICEPOINT_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface PostgresSchema {
  readonly url: string;
  /** `pp_test_<random>`: not created yet; `openPostgresStores(url, { schema })` creates it. */
  readonly schema: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

let reachable: Promise<string | undefined> | undefined;

/** Why PostgreSQL cannot be used, or undefined when it answers. Asked once per process. */
function unreachableReason(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return undefined;
    } catch (error) {
      return `PostgreSQL at ${redact(TEST_DATABASE_URL)} is unreachable (${(error as Error).message})`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return reachable;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

/**
 * A fresh schema name on the test database, or why to skip. On CI an unreachable database throws,
 * so the test file fails instead of passing by skipping everything.
 */
export async function postgresSchemaUrl(): Promise<PostgresSchema | { skip: string }> {
  const reason = await unreachableReason();
  if (reason !== undefined) {
    if (process.env['CI'] === 'true') throw new Error(`${reason}; on CI PostgreSQL tests must run`);
    console.log(`# skipping PostgreSQL tests: ${reason}`);
    return { skip: reason };
  }
  const schema = `pp_test_${randomBytes(6).toString('hex')}`;
  return {
    url: TEST_DATABASE_URL,
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2_000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await client.end().catch(() => {});
      }
    },
  };
}

/**
 * The PostgreSQL stores in a fresh schema of the test database; their `close` also drops the schema.
 * Throws when PostgreSQL cannot be used (callers skip before, with `postgresSchemaUrl`).
 */
export async function openPostgresStoresInFreshSchema(): Promise<PostgresStores> {
  const target = await postgresSchemaUrl();
  if ('skip' in target) throw new Error(target.skip);
  try {
    const stores = await openPostgresStores(target.url, { schema: target.schema });
    return {
      ...stores,
      async close() {
        try {
          await stores.close();
        } finally {
          await target.drop();
        }
      },
    };
  } catch (error) {
    await target.drop();
    throw error;
  }
}
