/**
 * What a request costs in Redis (docs/scale-out.md): on PostgreSQL and Redis, a keyed read of an
 * answer already built makes one Redis call, the script that checks the address' failed-login
 * budget and takes from every limit of the tier, with the fast entry point on and off. Redis'
 * `MONITOR` on a side connection sees every command of the instance's own (named) connections.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, request } from 'undici';
import { loadConfig } from '../../src/config/config.js';
import { DEMO_API_KEY, loadDevData } from '../../src/dev-data/dev-data.js';
import { composeApp } from '../../src/server/compose.js';
import { openPostgresStores } from '../../src/stores/postgres/index.js';
import { openRedis } from '../../src/stores/redis/index.js';
import { testTls } from '../helpers/harness.js';
import { type PostgresSchema, postgresSchemaUrl } from '../helpers/postgres.js';
import { deleteKeysUnder, inspectClient, keysUnder, REDIS_TEST_URL, testPrefix } from '../helpers/redis.js';
import { scaleSkipReason } from '../helpers/scale.js';
import { describeOrSkip } from '../helpers/skip.js';

const TODAY = '/api/v1/prices/today?symbols=NO1';
const READS = 5;

const skip = await scaleSkipReason('the Redis round-trip count');

describeOrSkip('Redis round trips per request', { skip }, () => {
  const prefix = testPrefix();
  const inspect = inspectClient(REDIS_TEST_URL);
  let target: PostgresSchema;

  before(async () => {
    const found = await postgresSchemaUrl();
    if ('skip' in found) throw new Error(found.skip);
    target = found;
  });
  after(async () => {
    await deleteKeysUnder(inspect, prefix);
    await inspect.quit();
    await target.drop();
  });

  for (const fastPath of ['true', 'false']) {
    test(`one keyed read of a cached day costs one Redis call (fast entry point ${fastPath === 'true' ? 'on' : 'off'})`, async () => {
      const own = `${prefix}${fastPath}:`;
      const data = await openPostgresStores(target.url, { schema: target.schema });
      // `closed`: were Redis away, a request would be refused, not counted quietly in process.
      const redis = openRedis(REDIS_TEST_URL, { prefix: own, fallback: 'closed', commandTimeoutMs: 5_000 });
      await redis.ready();
      const stores = {
        prices: data.prices,
        keys: data.keys,
        rateLimits: redis.rateLimits,
        notices: redis.notices,
        async close() {
          await Promise.all([data.close(), redis.close()]);
        },
      };
      const config = loadConfig(
        { PRICEPOINT_LOG_LEVEL: 'silent', PRICEPOINT_FAST_PATH: fastPath },
        { databasePath: ':memory:', devData: true },
      );
      const tls = await testTls();
      const { app, services } = await composeApp(config, { stores, https: tls });
      const agent = new Agent({ connect: { ca: tls.cert, servername: 'localhost' }, pipelining: 0 });
      const watcher = inspectClient(REDIS_TEST_URL);
      const monitor = await watcher.monitor();
      try {
        await loadDevData({ prices: data.prices, keys: services.keys, now: Date.now() });
        await app.listen({ host: '127.0.0.1', port: 0 });
        const { port } = app.server.address() as { port: number };
        const read = async () => {
          const response = await request(`https://localhost:${port}${TODAY}`, {
            headers: { 'x-api-key': DEMO_API_KEY },
            dispatcher: agent,
          });
          const body = await response.body.text();
          assert.equal(response.statusCode, 200, body);
        };
        // The first reads verify the key and build the answer; from then on both are cached.
        await read();
        await read();

        const sources = await connectionsNamed(inspect, own);
        assert.equal(sources.size, 2, 'the command and notice connections, by name');
        const seen: string[] = [];
        const marker = `${own}marker`;
        let marked: () => void = () => {};
        const markerSeen = new Promise<void>((resolve) => {
          marked = resolve;
        });
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          if (args[0]?.toLowerCase() === 'echo' && args[1] === marker) marked();
          else if (sources.has(source)) seen.push(args.slice(0, 3).join(' '));
        });
        for (let i = 0; i < READS; i++) await read();
        // MONITOR hands commands on in the order Redis ran them: once the marker is seen, so are the reads'.
        await inspect.echo(marker);
        await markerSeen;

        assert.equal(seen.length, READS, `Redis commands for ${READS} reads:\n${seen.join('\n')}`);
        for (const command of seen) assert.match(command, /^evalsha /i);
        // And the call counted them, in Redis: the demo tier's day counter holds every read.
        const days = (await keysUnder(inspect, own)).filter((key) => key.endsWith(':day'));
        const counted = await Promise.all(days.map(async (key) => Number(await inspect.get(key))));
        assert.equal(
          counted.reduce((a, b) => a + b, 0),
          2 + READS,
        );
      } finally {
        monitor.disconnect();
        watcher.disconnect();
        await agent.close();
        await app.close();
        await stores.close();
      }
    });
  }
});

/** `ip:port` of every connection whose name starts with `prefix`. */
async function connectionsNamed(
  client: ReturnType<typeof inspectClient>,
  prefix: string,
): Promise<Set<string>> {
  const list = String(await client.client('LIST'));
  const found = new Set<string>();
  for (const line of list.split('\n')) {
    const fields = new Map(line.split(' ').map((field) => field.split('=', 2) as [string, string]));
    if (fields.get('name')?.startsWith(prefix)) found.add(fields.get('addr') ?? '');
  }
  return found;
}
