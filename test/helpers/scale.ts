/**
 * Scale-out tests with real server processes: a database of their own on the test PostgreSQL, a
 * Redis prefix of their own, a tier with one exact limit (`exact`) and one no test can use up
 * (`load`, for steady background traffic), and the settings every process of the test shares.
 * `drop()` removes the database and every Redis key under the prefix.
 *
 * @example
 * const skip = await scaleSkipReason('the three-instance test');
 * before(async () => { env = await scaleEnvironment('scale', { limit: 40 }); });
 * after(() => env.drop());
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { TEST_DATABASE_URL } from './postgres.js';
import { tempDir } from './process.js';
import { deleteKeysUnder, inspectClient, REDIS_TEST_URL, redisSkipReason } from './redis.js';

/** Runs one statement on the test server's maintenance database (create and drop databases). */
export async function adminSql(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Why `what` cannot run here (PostgreSQL or Redis unreachable, or a reason of the caller's), or
 * undefined. On CI (`CI=true`) a missing service fails the file instead of skipping it.
 */
export async function scaleSkipReason(
  what: string,
  extra: readonly string[] = [],
): Promise<string | undefined> {
  const reasons = [...extra];
  try {
    const redis = await redisSkipReason();
    if (redis) reasons.push(redis);
    await adminSql('select 1');
  } catch (error) {
    reasons.push(`PostgreSQL or Redis unreachable: ${(error as Error).message}`);
  }
  if (reasons.length === 0) return undefined;
  if (process.env.CI === 'true') throw new Error(`${reasons.join('; ')}; CI must run ${what}`);
  console.log(`# skipping ${what}: ${reasons.join('; ')}`);
  return reasons.join('; ');
}

export interface ScaleEnvironment {
  /** `PRICEPOINT_*` settings for every process of the test. */
  readonly settings: Record<string, string>;
  /** The database's own name, and the URL of the test server with a port of the caller's. */
  readonly database: string;
  readonly dir: string;
  databaseUrl(port?: number): string;
  drop(): Promise<void>;
}

/**
 * A fresh database, Redis prefix, `exact` tier (`limit` a day: a burst cannot straddle a window
 * unless it runs at 00:00 UTC) and `load` tier (a billion a day, every kind, unlimited history).
 */
export async function scaleEnvironment(name: string, options: { limit: number }): Promise<ScaleEnvironment> {
  const suffix = randomBytes(5).toString('hex');
  const database = `pp_${name}_${suffix}`;
  const prefix = `pp-${name}-${suffix}`;
  await adminSql(`create database ${database}`);
  const dir = await tempDir(`pricepoint-${name}-`);
  const config = join(dir, 'tiers.json');
  writeFileSync(
    config,
    JSON.stringify({
      tiers: {
        exact: { limits: [{ name: 'day', limit: options.limit, windowSeconds: 86_400 }] },
        load: { limits: [{ name: 'day', limit: 1_000_000_000, windowSeconds: 86_400 }] },
      },
    }),
  );
  const databaseUrl = (port?: number) => {
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/${database}`;
    if (port !== undefined) url.port = String(port);
    return url.toString();
  };
  return {
    settings: {
      PRICEPOINT_DATABASE_URL: databaseUrl(),
      PRICEPOINT_REDIS_URL: REDIS_TEST_URL,
      PRICEPOINT_REDIS_PREFIX: prefix,
      PRICEPOINT_CONFIG: config,
      PRICEPOINT_DATA_DIR: dir,
    },
    database,
    dir,
    databaseUrl,
    async drop() {
      // The database is dropped even when Redis cannot be cleaned (a test may leave it unreachable).
      const redis = inspectClient(REDIS_TEST_URL, { connectTimeout: 2_000, commandTimeout: 5_000 });
      try {
        await deleteKeysUnder(redis, `${prefix}:`);
      } catch (error) {
        console.log(`# could not delete the Redis keys under ${prefix}: ${(error as Error).message}`);
      } finally {
        redis.disconnect();
        await adminSql(`drop database if exists ${database} with (force)`);
      }
    },
  };
}

/** Polls `check` until it holds, failing after `ms`: for what must happen "within N seconds". */
export async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * One deadline for several instances: polls `check(i)` for each of `count` instances (together)
 * until every one has held once, failing when `ms` have passed since `since` (`Date.now()` of the
 * change) with the instances that had not.
 * @example await allWithin(5_000, 'refusing the revoked key', 3, async (i) => (await get(i)).status === 401, changedAt)
 */
export async function allWithin(
  ms: number,
  what: string,
  count: number,
  check: (index: number) => Promise<boolean>,
  since: number = Date.now(),
): Promise<void> {
  const deadline = since + ms;
  const waiting = new Set(Array.from({ length: count }, (_, i) => i));
  for (;;) {
    // A round counts when it was sent before the deadline.
    if (Date.now() > deadline) {
      const names = [...waiting].map((i) => `instance ${i + 1}`).join(', ');
      assert.fail(`${what}: ${names} did not within ${ms} ms of the change`);
    }
    const results = await Promise.all([...waiting].map(async (i) => [i, await check(i)] as const));
    for (const [i, held] of results) if (held) waiting.delete(i);
    if (waiting.size === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
