/**
 * Real Redis for tests. `redisSkipReason()` answers why Redis tests cannot run here (or undefined
 * when they can); in CI (`CI=true`) an unreachable Redis is a failure, never a skip, so a broken CI
 * service cannot turn the suite green by skipping it. Each test file works under its own random
 * key prefix and deletes its keys afterwards, so runs never see each other's counters.
 */
import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';

/** `PRICEPOINT_TEST_REDIS_URL`, or the local default. */
export const REDIS_TEST_URL = process.env['PRICEPOINT_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** The port of `REDIS_TEST_URL`, for a `startTcpProxy` in front of it. */
export const REDIS_TEST_PORT = Number(new URL(REDIS_TEST_URL).port || 6379);

/** @example describe('RedisRateLimitStore', { skip: await redisSkipReason() }, () => { ... }) */
export async function redisSkipReason(url: string = REDIS_TEST_URL): Promise<string | undefined> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let cause: unknown;
  client.on('error', (error) => {
    cause ??= error;
  });
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (failure) {
    // The connection error says more ("ECONNREFUSED") than the command's ("Connection is closed").
    const error = cause ?? failure;
    const reason = `Redis is not reachable at ${url} (${error instanceof Error ? error.message : String(error)})`;
    if (process.env['CI'] === 'true') throw new Error(`${reason}; CI must run the Redis tests`);
    console.log(`# skipping Redis tests: ${reason}`);
    return reason;
  } finally {
    client.disconnect();
  }
}

/** A prefix no other run uses: `pp-test:<uuid>:`. */
export function testPrefix(): string {
  return `pp-test:${randomUUID()}:`;
}

/** A plain client for looking at keys; close it with `quit()`. */
export function inspectClient(url: string = REDIS_TEST_URL, options: RedisOptions = {}): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, ...options });
  client.on('error', () => {});
  return client;
}

/** Every key under `prefix`. */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/** Deletes every key under `prefix`: the cleanup of a test run. */
export async function deleteKeysUnder(client: Redis, prefix: string): Promise<void> {
  const keys = await keysUnder(client, prefix);
  if (keys.length > 0) await client.del(...keys);
}

/** Resolves when `client` is connected and ready (a fail-fast client refuses commands before). */
export function whenReady(client: Redis): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}
