/**
 * Three instances, one truth (docs/scale-out.md): three real server processes on one PostgreSQL
 * database and one Redis. Limits are exact across them (a tier's, and a key's own limits counted once
 * across two of them), a key revoked through one is refused by all within 5 seconds, and prices
 * imported through one are served by all within 5 seconds.
 * Each run has its own database and Redis prefix and removes both afterwards.
 *
 * The instances cache verified keys and read days for ten minutes, far past the 5 s: only the
 * notices through Redis can make a revocation or an import reach them in time, so these tests fail
 * when the notices do not work. Their Redis command timeout is generous, so a loaded test machine
 * cannot make an instance fall back to its local counters in the middle of the burst.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { dayIntervals, formatInstant, localDate } from '../../src/domain/time/days.js';
import {
  cleanUp,
  httpsClient,
  onlyJson,
  runCli,
  type ServerProcess,
  startServer,
  tempDir,
} from '../helpers/process.js';
import { allWithin, type ScaleEnvironment, scaleEnvironment, scaleSkipReason } from '../helpers/scale.js';
import { describeOrSkip } from '../helpers/skip.js';

const LIMIT = 40;
const SPOT = 'SPOT';
/** Far past the 5 s of the promise: a cache time that ran out cannot pass the tests. */
const LONG_CACHE_MS = '600000';

const skip = await scaleSkipReason('the three-instance test');

describeOrSkip('three instances on one PostgreSQL and one Redis', { skip }, () => {
  const servers: ServerProcess[] = [];
  const clients: ReturnType<typeof httpsClient>[] = [];
  let env: ScaleEnvironment;
  let settings: Record<string, string>;
  let adminKey: string;

  const newKey = async (tier: string, name: string, scopes = 'read') =>
    onlyJson(
      await runCli(
        ['keys', 'create', '--tier', tier, '--name', name, '--scopes', scopes, '--json'],
        settings,
      ),
    ) as { key: string; id: string };
  const get = (i: number, path: string, key: string) =>
    clients[i]!.get(`${servers[i]!.url}${path}`, { 'x-api-key': key });
  /** 401 once the instance refuses the key, 200 while it accepts it; anything else fails the test. */
  const refuses = async (i: number, key: string) => {
    const answer = await get(i, '/api/v1/series', key);
    assert.ok([200, 401].includes(answer.status), `instance ${i + 1}: ${answer.status} ${answer.text}`);
    return answer.status === 401;
  };

  before(async () => {
    env = await scaleEnvironment('scale', { limit: LIMIT });
    settings = env.settings;
    const migrated = onlyJson(await runCli(['migrate', '--json'], settings)) as { applied: string[] };
    // Every migration, in order, from the first: the schema is created from nothing.
    assert.equal(
      migrated.applied[0],
      '0001_initial',
      '`pricepoint migrate` creates the schema on PostgreSQL',
    );
    assert.deepEqual(migrated.applied, [...migrated.applied].sort(), 'in order');
    const series = await runCli(
      [
        'series',
        'upsert',
        SPOT,
        '--name',
        'Spot',
        '--kind',
        'electricity',
        '--currency',
        'EUR',
        '--unit',
        'MWh',
      ].concat(['--timezone', 'UTC', '--resolution', 'PT1H']),
      settings,
    );
    assert.equal(series.code, 0, series.stderr);
    adminKey = (await newKey('enterprise', 'ops', 'admin')).key;
    for (let i = 0; i < 3; i++) {
      // Each instance its own folder (certificate), all on the same database and Redis.
      const own = await tempDir(`pricepoint-scale-${i}-`);
      servers.push(
        await startServer(['serve'], {
          ...settings,
          PRICEPOINT_DATA_DIR: own,
          PRICEPOINT_KEY_CACHE_MS: LONG_CACHE_MS,
          PRICEPOINT_READ_CACHE_MS: LONG_CACHE_MS,
          PRICEPOINT_CHANGE_CHECK_MS: LONG_CACHE_MS,
          PRICEPOINT_REDIS_TIMEOUT_MS: '5000',
        }),
      );
      clients.push(httpsClient(join(own, 'tls', 'localhost-cert.pem')));
    }
  });

  after(async () => {
    await cleanUp();
    await env?.drop();
  });

  test('ten times the limit, spread over the three at once: exactly the limit succeeds', async () => {
    const { key } = await newKey('exact', 'burst');
    const statuses = await Promise.all(
      Array.from({ length: LIMIT * 10 }, (_, i) => get(i % 3, '/api/v1/series', key).then((a) => a.status)),
    );
    const ok = statuses.filter((s) => s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    // Said first, so a failure below names its cause: a decision taken without Redis.
    for (let i = 0; i < 3; i++) {
      const metrics = (await clients[i]!.get(`${servers[i]!.url}/metrics`)).text;
      const fallbacks = /^pricepoint_rate_limit_fallbacks_total\{[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? '0';
      assert.equal(fallbacks, '0', `instance ${i + 1} counted every request in Redis (no fallback decision)`);
    }
    assert.deepEqual(
      { ok, limited, other: statuses.length - ok - limited },
      { ok: LIMIT, limited: LIMIT * 9, other: 0 },
      'exactly the limit succeeds across the three instances',
    );
  });

  test("a key's own limit is counted once across two instances, and a change through one reaches the other", async () => {
    // The load tier allows a billion a day; the key's own limit replaces it (docs/keys-and-tiers.md).
    const created = onlyJson(
      await runCli(
        ['keys', 'create', '--tier', 'load', '--name', 'own-limit', '--limits', 'own=15/86400', '--json'],
        settings,
      ),
    ) as { key: string; id: string };
    const burst = async (count: number) => {
      const answers = await Promise.all(
        Array.from({ length: count }, (_, i) => get(i % 2, '/api/v1/series', created.key)),
      );
      const statuses = answers.map((a) => a.status);
      const ok = statuses.filter((s) => s === 200).length;
      const limited = answers.filter((a) => a.status === 429);
      assert.equal(ok + limited.length, count, `only 200 and 429: ${statuses.join(',')}`);
      for (const refusal of limited) assert.match(JSON.parse(refusal.text).detail, /of this key/);
      return ok;
    };
    assert.equal(await burst(150), 15, "exactly the key's own limit succeeds across the two instances");
    const left = async (i: number) => {
      const answer = await get(i, '/api/v1/usage', created.key);
      assert.equal(answer.status, 200, answer.text);
      return (JSON.parse(answer.text) as { limits: { limit: number; remaining: number }[] }).limits[0];
    };
    for (const i of [0, 1]) {
      const own = await left(i);
      assert.deepEqual([own?.limit, own?.remaining], [15, 0], `instance ${i + 1} tells the key's own limit`);
    }

    // Raised through instance 1: instance 2 applies it within 5 s, and goes on from the 15 counted.
    const changedAt = Date.now();
    const raised = await clients[0]!.send(
      'PATCH',
      `${servers[0]!.url}/api/v1/keys/${created.id}`,
      { 'x-api-key': adminKey, 'content-type': 'application/json' },
      JSON.stringify({ limits: [{ name: 'own', limit: 30, windowSeconds: 86_400 }] }),
    );
    assert.equal(raised.status, 200, raised.text);
    await allWithin(
      5_000,
      'applying the raised limit',
      2,
      async (i) => (await left(i))?.limit === 30,
      changedAt,
    );
    for (const i of [0, 1]) assert.equal((await left(i))?.remaining, 15);
    assert.equal(await burst(60), 15, 'the other 15 of the raised limit, counted once across both');
  });

  test('a key revoked through one instance is refused by all three within 5 seconds', async () => {
    const created = await newKey('pro', 'doomed');
    // Every instance has verified (and cached, for ten minutes) the key.
    for (let i = 0; i < 3; i++) {
      assert.equal(await refuses(i, created.key), false, `instance ${i + 1} accepts the key first`);
    }
    const changedAt = Date.now();
    const revoked = await clients[0]!.send('DELETE', `${servers[0]!.url}/api/v1/keys/${created.id}`, {
      'x-api-key': adminKey,
    });
    assert.equal(revoked.status, 200, revoked.text);
    await allWithin(
      5_000,
      'refusing the key revoked through instance 1',
      3,
      (i) => refuses(i, created.key),
      changedAt,
    );
  });

  test('a key revoked with the CLI is refused by all three within 5 seconds', async () => {
    const created = await newKey('pro', 'cli-doomed');
    for (let i = 0; i < 3; i++) {
      assert.equal(await refuses(i, created.key), false, `instance ${i + 1} accepts the key first`);
    }
    const revoked = await runCli(['keys', 'revoke', created.id], settings);
    assert.equal(revoked.code, 0, revoked.stderr);
    // The revocation is written (and announced) by the time the command exits.
    await allWithin(5_000, 'refusing the key revoked by the CLI', 3, (i) => refuses(i, created.key));
  });

  test('prices imported through one instance are served by all three within 5 seconds', async () => {
    const writer = (await newKey('enterprise', 'feed', 'write')).key;
    const reader = (await newKey('enterprise', 'reader')).key;
    const today = localDate(Date.now(), 'UTC');
    const hours = dayIntervals(today, 'UTC', 'PT1H').slice(0, 3);
    const price = `${100 + Math.floor(Math.random() * 800)}.25`;
    const path = `/api/v1/prices/today?symbols=${SPOT}`;
    const served = async (i: number) => {
      const answer = await get(i, path, reader);
      assert.equal(answer.status, 200, `instance ${i + 1}: ${answer.text}`);
      return (JSON.parse(answer.text) as { series: { prices: { price: string }[] }[] }).series[0]?.prices;
    };
    // Every instance reads the day first, and so holds it in its cache.
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await served(i), [], `instance ${i + 1} has read (and cached) the empty day`);
    }
    const csv = `start,price\n${hours.map((h) => `${formatInstant(h.start, 'UTC')},${price}`).join('\n')}\n`;
    const changedAt = Date.now();
    const put = await clients[1]!.send(
      'PUT',
      `${servers[1]!.url}/api/v1/series/${SPOT}/prices`,
      { 'x-api-key': writer, 'content-type': 'text/csv' },
      csv,
    );
    assert.equal(put.status, 200, put.text);
    await allWithin(
      5_000,
      'serving the prices imported through instance 2',
      3,
      async (i) => {
        const prices = await served(i);
        return prices?.length === 3 && prices.every((p) => Number(p.price) === Number(price));
      },
      changedAt,
    );
  });
});
