/**
 * Three instances, one truth (issue 5, item 3): three real server processes on one PostgreSQL
 * database and one Redis. Limits are exact across them, a key revoked through one is refused by
 * all within 5 seconds, and prices imported through one are served by all within 5 seconds.
 * Each run has its own database and Redis prefix and removes both afterwards.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
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
import { type ScaleEnvironment, scaleEnvironment, scaleSkipReason, within } from '../helpers/scale.js';

const LIMIT = 40;
const SPOT = 'SPOT';

const skip = await scaleSkipReason('the three-instance test');

describe('three instances on one PostgreSQL and one Redis', { skip }, () => {
  const servers: ServerProcess[] = [];
  const clients: ReturnType<typeof httpsClient>[] = [];
  let env: ScaleEnvironment;
  let settings: Record<string, string>;
  let adminKey: string;

  before(async () => {
    env = await scaleEnvironment('scale', { limit: LIMIT });
    settings = env.settings;
    const migrated = onlyJson(await runCli(['migrate', '--json'], settings)) as { applied: string[] };
    assert.deepEqual(
      migrated.applied,
      ['0001_initial'],
      '`pricepoint migrate` creates the schema on PostgreSQL',
    );
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
    adminKey = (
      onlyJson(
        await runCli(
          ['keys', 'create', '--tier', 'enterprise', '--name', 'ops', '--scopes', 'admin', '--json'],
          settings,
        ),
      ) as { key: string }
    ).key;
    for (let i = 0; i < 3; i++) {
      // Each instance its own folder (certificate), all on the same database and Redis.
      const own = await tempDir(`pricepoint-scale-${i}-`);
      servers.push(await startServer(['serve'], { ...settings, PRICEPOINT_DATA_DIR: own }));
      clients.push(httpsClient(join(own, 'tls', 'localhost-cert.pem')));
    }
  });

  after(async () => {
    await cleanUp();
    await env?.drop();
  });

  test('ten times the limit, spread over the three at once: exactly the limit succeeds', async () => {
    const key = (
      onlyJson(
        await runCli(['keys', 'create', '--tier', 'exact', '--name', 'burst', '--json'], settings),
      ) as { key: string }
    ).key;
    const statuses = await Promise.all(
      Array.from({ length: LIMIT * 10 }, (_, i) =>
        clients[i % 3]!.get(`${servers[i % 3]!.url}/api/v1/series`, { 'x-api-key': key }).then(
          (a) => a.status,
        ),
      ),
    );
    const ok = statuses.filter((s) => s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    assert.deepEqual(
      { ok, limited, other: statuses.length - ok - limited },
      { ok: LIMIT, limited: LIMIT * 9, other: 0 },
    );
  });

  test('a key revoked through one instance is refused by all three within 5 seconds', async () => {
    const created = onlyJson(
      await runCli(['keys', 'create', '--tier', 'pro', '--name', 'doomed', '--json'], settings),
    ) as {
      key: string;
      id: string;
    };
    // Every instance has verified (and cached) the key.
    for (let i = 0; i < 3; i++) {
      const answer = await clients[i]!.get(`${servers[i]!.url}/api/v1/series`, { 'x-api-key': created.key });
      assert.equal(answer.status, 200, answer.text);
    }
    const revoked = await clients[0]!.send('DELETE', `${servers[0]!.url}/api/v1/keys/${created.id}`, {
      'x-api-key': adminKey,
    });
    assert.equal(revoked.status, 200, revoked.text);
    for (let i = 0; i < 3; i++) {
      await within(5_000, `instance ${i + 1} refusing the revoked key`, async () => {
        const answer = await clients[i]!.get(`${servers[i]!.url}/api/v1/series`, {
          'x-api-key': created.key,
        });
        return answer.status === 401;
      });
    }
  });

  test('a key revoked with the CLI is refused by all three within 5 seconds', async () => {
    const created = onlyJson(
      await runCli(['keys', 'create', '--tier', 'pro', '--name', 'cli-doomed', '--json'], settings),
    ) as { key: string; id: string };
    for (let i = 0; i < 3; i++) {
      const answer = await clients[i]!.get(`${servers[i]!.url}/api/v1/series`, { 'x-api-key': created.key });
      assert.equal(answer.status, 200, answer.text);
    }
    const revoked = await runCli(['keys', 'revoke', created.id], settings);
    assert.equal(revoked.code, 0, revoked.stderr);
    for (let i = 0; i < 3; i++) {
      await within(5_000, `instance ${i + 1} refusing the key revoked by the CLI`, async () => {
        const answer = await clients[i]!.get(`${servers[i]!.url}/api/v1/series`, {
          'x-api-key': created.key,
        });
        return answer.status === 401;
      });
    }
  });

  test('prices imported through one instance are served by all three within 5 seconds', async () => {
    const writer = (
      onlyJson(
        await runCli(
          ['keys', 'create', '--tier', 'enterprise', '--name', 'feed', '--scopes', 'write', '--json'],
          settings,
        ),
      ) as { key: string }
    ).key;
    const reader = (
      onlyJson(
        await runCli(['keys', 'create', '--tier', 'enterprise', '--name', 'reader', '--json'], settings),
      ) as { key: string }
    ).key;
    const today = localDate(Date.now(), 'UTC');
    const hours = dayIntervals(today, 'UTC', 'PT1H').slice(0, 3);
    const price = `${100 + Math.floor(Math.random() * 800)}.25`;
    const csv = `start,price\n${hours.map((h) => `${formatInstant(h.start, 'UTC')},${price}`).join('\n')}\n`;
    const put = await clients[1]!.send(
      'PUT',
      `${servers[1]!.url}/api/v1/series/${SPOT}/prices`,
      { 'x-api-key': writer, 'content-type': 'text/csv' },
      csv,
    );
    assert.equal(put.status, 200, put.text);
    for (let i = 0; i < 3; i++) {
      await within(5_000, `instance ${i + 1} serving the import`, async () => {
        const answer = await clients[i]!.get(`${servers[i]!.url}/api/v1/prices/today?symbols=${SPOT}`, {
          'x-api-key': reader,
        });
        const prices = (JSON.parse(answer.text) as { series: { prices: { price: number }[] }[] }).series[0]
          ?.prices;
        return prices?.length === 3 && prices.every((p) => String(p.price) === String(Number(price)));
      });
    }
  });
});
