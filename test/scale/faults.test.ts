/**
 * Faults (issue 5, item 4): real servers reach Redis and PostgreSQL through TCP proxies inside this
 * test, which cuts and restores them while requests keep coming.
 * - Redis cut: under `local` answers keep coming, fast, with limits per instance; `open` allows,
 *   `closed` refuses with 503; after the restore, shared counting resumes by itself.
 * - PostgreSQL cut: cached keys and days keep being served; what needs the database is 503, never
 *   401 or 500; `/readyz` says so; nothing written before the cut is lost.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dayIntervals, formatInstant, localDate } from '../../src/domain/time/days.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import {
  cleanUp,
  httpsClient,
  onlyJson,
  runCli,
  type ServerProcess,
  startServer,
  tempDir,
} from '../helpers/process.js';
import { REDIS_TEST_PORT } from '../helpers/redis.js';
import { type ScaleEnvironment, scaleEnvironment, scaleSkipReason, within } from '../helpers/scale.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const LIMIT = 20;
const POLICIES = ['local', 'open', 'closed'] as const;
type Policy = (typeof POLICIES)[number];

const skip = await scaleSkipReason('the fault tests');

describe('faults: Redis and PostgreSQL cut and restored under load', { skip }, () => {
  const servers = new Map<Policy, { server: ServerProcess; client: ReturnType<typeof httpsClient> }>();
  let redisProxy: TcpProxy;
  let pgProxy: TcpProxy;
  let env: ScaleEnvironment;
  let settings: Record<string, string>;
  let writer: string;

  const newKey = async (tier: string, scopes = 'read') =>
    (
      onlyJson(
        await runCli(
          ['keys', 'create', '--tier', tier, '--name', 'fault', '--scopes', scopes, '--json'],
          settings,
        ),
      ) as { key: string }
    ).key;
  const get = (policy: Policy, path: string, key?: string) => {
    const { server, client } = servers.get(policy)!;
    return client.get(`${server.url}${path}`, key === undefined ? {} : { 'x-api-key': key });
  };

  before(async () => {
    env = await scaleEnvironment('faults', { limit: LIMIT });
    redisProxy = await startTcpProxy(REDIS_TEST_PORT);
    pgProxy = await startTcpProxy(Number(new URL(TEST_DATABASE_URL).port || 5432));
    // Every process reaches Redis and PostgreSQL through a proxy the tests cut.
    settings = {
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
    writer = await newKey('enterprise', 'write');
    for (const policy of POLICIES) {
      const own = await tempDir(`pricepoint-faults-${policy}-`);
      const server = await startServer(['serve'], {
        ...settings,
        PRICEPOINT_DATA_DIR: own,
        PRICEPOINT_REDIS_FALLBACK: policy,
      });
      servers.set(policy, { server, client: httpsClient(join(own, 'tls', 'localhost-cert.pem')) });
    }
  });

  after(async () => {
    await cleanUp();
    await redisProxy?.close();
    await pgProxy?.close();
    await env?.drop();
  });

  test('Redis cut: local keeps answering fast with limits per instance, open allows, closed is 503; counting resumes', async () => {
    const key = await newKey('exact');
    // Five requests counted in Redis before the cut.
    for (let i = 0; i < 5; i++) assert.equal((await get('local', '/api/v1/series', key)).status, 200);

    await redisProxy.cut();
    const statuses: number[] = [];
    const latencies: number[] = [];
    for (let i = 0; i < LIMIT * 2; i++) {
      const started = performance.now();
      statuses.push((await get('local', '/api/v1/series', key)).status);
      latencies.push(performance.now() - started);
    }
    // The instance counts on its own from zero: exactly its limit, then 429, never an error.
    assert.deepEqual(
      { ok: statuses.filter((s) => s === 200).length, limited: statuses.filter((s) => s === 429).length },
      { ok: LIMIT, limited: LIMIT },
    );
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1] ?? Number.POSITIVE_INFINITY;
    console.log(`# Redis cut, local policy: p99 ${p99.toFixed(1)} ms over ${latencies.length} requests`);
    assert.ok(p99 < 50, `answers stay fast without Redis: p99 ${p99.toFixed(1)} ms`);
    const degraded = await get('local', '/readyz');
    assert.equal(degraded.status, 200, degraded.text);
    assert.deepEqual(
      { status: JSON.parse(degraded.text).status, redis: JSON.parse(degraded.text).checks.redis },
      { status: 'degraded', redis: 'unreachable' },
    );

    const metrics = (await get('local', '/metrics')).text;
    const fallbacks = /^pricepoint_rate_limit_fallbacks_total\{policy="local"\} (\d+)/m.exec(metrics)?.[1];
    assert.ok(Number(fallbacks) >= LIMIT * 2, `fallback decisions are counted: ${fallbacks}`);
    assert.ok(
      /^pricepoint_store_errors_total\{store="redis"\} [1-9]/m.test(metrics),
      'Redis errors are counted',
    );

    const openKey = key; // used up in Redis? no: 5 of 20; under open nothing is counted at all
    const open = await Promise.all(
      Array.from({ length: LIMIT * 2 }, () => get('open', '/api/v1/series', openKey)),
    );
    assert.ok(
      open.every((a) => a.status === 200),
      `open allows everything: ${open.map((a) => a.status).join(',')}`,
    );
    const closed = await get('closed', '/api/v1/series', key);
    assert.equal(closed.status, 503, closed.text);
    assert.equal(JSON.parse(closed.text).code, 'service_unavailable');
    assert.equal((await get('closed', '/readyz')).status, 503, 'closed is not ready without Redis');

    await redisProxy.restore();
    // Shared counting resumes by itself: Redis still holds the 5 from before the cut, so the next
    // request is the 6th (14 left), which local counters (used up) could never say.
    await within(5_000, 'shared counting resuming', async () => {
      const answer = await get('local', '/api/v1/series', key);
      return answer.status === 200 && answer.headers['x-ratelimit-remaining'] !== undefined;
    });
    const after = await get('local', '/api/v1/series', key);
    assert.equal(after.status, 200, after.text);
    assert.ok(
      Number(after.headers['x-ratelimit-remaining']) < LIMIT - 5,
      `counted in Redis again: ${String(after.headers['x-ratelimit-remaining'])} left`,
    );
    assert.equal(JSON.parse((await get('local', '/readyz')).text).status, 'ready');
  });

  test('PostgreSQL cut: cached keys and days are served, the rest is 503 (never 401 or 500), nothing is lost', async () => {
    const reader = await newKey('pro');
    const unseen = await newKey('pro');
    const today = localDate(Date.now(), 'UTC');
    const hours = dayIntervals(today, 'UTC', 'PT1H').slice(0, 4);
    const csv = `start,price\n${hours.map((h, i) => `${formatInstant(h.start, 'UTC')},4${i}.5`).join('\n')}\n`;
    const { server, client } = servers.get('local')!;
    const put = await client.send(
      'PUT',
      `${server.url}/api/v1/series/SPOT/prices`,
      { 'x-api-key': writer, 'content-type': 'text/csv' },
      csv,
    );
    assert.equal(put.status, 200, put.text);
    const before = await get('local', '/api/v1/prices/today?symbols=SPOT', reader);
    assert.equal(before.status, 200, before.text);

    await pgProxy.cut();
    // Past the key cache (2 s) and the day cache (5 s): both are served from what was cached.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const cached = await get('local', '/api/v1/prices/today?symbols=SPOT', reader);
    assert.equal(cached.status, 200, cached.text);
    assert.deepEqual(JSON.parse(cached.text).series, JSON.parse(before.text).series);

    const unknownKey = await get('local', '/api/v1/prices/today?symbols=SPOT', unseen);
    const uncachedDay = await get('local', '/api/v1/prices/yesterday?symbols=SPOT', reader);
    const write = await client.send(
      'PUT',
      `${server.url}/api/v1/series/SPOT/prices`,
      { 'x-api-key': writer, 'content-type': 'text/csv' },
      csv,
    );
    for (const [what, answer] of [
      ['an unknown key', unknownKey],
      ['a day never read', uncachedDay],
      ['an import', write],
    ] as const) {
      assert.equal(answer.status, 503, `${what}: ${answer.text}`);
      assert.equal(JSON.parse(answer.text).code, 'service_unavailable', what);
    }
    const ready = await get('local', '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(JSON.parse(ready.text).checks.prices, 'unreachable');

    await pgProxy.restore();
    await within(10_000, 'PostgreSQL back', async () => (await get('local', '/readyz')).status === 200);
    const again = await get('local', '/api/v1/prices/today?symbols=SPOT', unseen);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(
      JSON.parse(again.text).series[0].prices.map((p: { price: number }) => p.price),
      [40.5, 41.5, 42.5, 43.5],
      'what was written before the cut is all there',
    );
  });
});
