/**
 * A scale environment whose processes reach Redis and PostgreSQL through TCP proxies that a test
 * cuts or stalls (test/helpers/tcp-proxy.ts), with one hourly UTC series, SPOT, already created:
 * the set-up of the fault tests (test/scale/faults.test.ts, test/scale/frozen-stores.test.ts).
 *
 * @example
 * before(async () => { ({ env, redisProxy, pgProxy, settings } = await proxiedScaleEnvironment('faults', { limit: 20 })); });
 */
import assert from 'node:assert/strict';
import { TEST_DATABASE_URL } from './postgres.js';
import { runCli } from './process.js';
import { REDIS_TEST_PORT } from './redis.js';
import { type ScaleEnvironment, scaleEnvironment } from './scale.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface ProxiedScaleEnvironment {
  readonly env: ScaleEnvironment;
  readonly redisProxy: TcpProxy;
  readonly pgProxy: TcpProxy;
  /** `env.settings` with the database and Redis reached through the proxies. */
  readonly settings: Record<string, string>;
}

export async function proxiedScaleEnvironment(
  name: string,
  options: { limit: number },
): Promise<ProxiedScaleEnvironment> {
  const env = await scaleEnvironment(name, options);
  const redisProxy = await startTcpProxy(REDIS_TEST_PORT);
  const pgProxy = await startTcpProxy(Number(new URL(TEST_DATABASE_URL).port || 5432));
  const settings = {
    ...env.settings,
    PRICEPOINT_DATABASE_URL: env.databaseUrl(pgProxy.port),
    PRICEPOINT_REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
  };
  const series = await runCli(
    ['series', 'upsert', 'SPOT', '--name', 'Spot', '--kind', 'electricity', '--currency', 'EUR'].concat([
      '--unit',
      'MWh',
      '--timezone',
      'UTC',
      '--resolution',
      'PT1H',
    ]),
    settings,
  );
  assert.equal(series.code, 0, series.stderr);
  return { env, redisProxy, pgProxy, settings };
}
