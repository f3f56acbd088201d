/**
 * The usage overview over real HTTPS (docs/usage-history.md, "Every key by tier"), on SQLite and on
 * PostgreSQL: every key's counted requests summed per interval and tier, with how many keys made
 * any; the same parameters and bounds as a key's history; JSON or CSV; admin keys only; bad input
 * a problem naming the parameter.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { type Config, loadConfig } from '../../src/config/config.js';
import { loadDevData } from '../../src/dev-data/dev-data.js';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { composeApp, type Services } from '../../src/server/compose.js';
import { MemoryNoticeBus } from '../../src/stores/memory/notice-bus.js';
import { MemoryRateLimitStore } from '../../src/stores/memory/rate-limit-store.js';
import { openPostgresStores } from '../../src/stores/postgres/index.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import { FakeClock, type Harness, listenHttps, testTls } from '../helpers/harness.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';

const tier = (name: string, limit: number, windowSeconds: number): Tier => ({
  name,
  limits: [{ name: 'window', limit, windowSeconds }],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 3,
});
const TIERS = { ...DEFAULT_TIERS, metered: tier('metered', 100_000, 86_400), tiny: tier('tiny', 2, 60) };

const FIELDS = ['requests', 'served', 'notModified', 'rateLimited', 'clientErrors', 'units', 'keys'] as const;
type TierCounts = Record<(typeof FIELDS)[number], number>;
const counts = (...values: number[]): TierCounts =>
  Object.fromEntries(FIELDS.map((name, i) => [name, values[i] ?? 0])) as TierCounts;
const ZERO = counts();

interface Overview {
  granularity: string;
  timezone: string;
  from: string;
  to: string;
  tiers: string[];
  totals: Record<string, TierCounts>;
  intervals: { start: string; end: string; tiers: Record<string, TierCounts> }[];
}

interface Site {
  open(): Promise<Stores>;
  drop(): Promise<void>;
}

async function sqliteSite(): Promise<Site> {
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-overview-'));
  return {
    open: () => openEmbeddedStores(join(dir, 'pricepoint.db')),
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}

async function postgresSite(): Promise<Site> {
  const target = await postgresSchemaUrl();
  if ('skip' in target) throw new Error(target.skip);
  return {
    async open() {
      const stores = await openPostgresStores(target.url, { schema: target.schema, timeoutMs: 10_000 });
      return { ...stores, rateLimits: new MemoryRateLimitStore(), notices: new MemoryNoticeBus() };
    },
    drop: () => target.drop(),
  };
}

const probe = await postgresSchemaUrl();
const SITES: [string, () => Promise<Site>, string | false][] = [
  ['SQLite', sqliteSite, false],
  ['PostgreSQL', postgresSite, 'skip' in probe ? probe.skip : false],
];

for (const [engine, makeSite, skip] of SITES) {
  describeOrSkip(`usage overview on ${engine}`, { skip }, () => {
    const clock = new FakeClock(Date.parse('2026-11-22T10:15:03Z'));
    let site: Site;
    let stores: Stores;
    let app: FastifyInstance;
    let services: Services;
    let client: Awaited<ReturnType<typeof listenHttps>>;
    let admin: string;
    let reader: string;
    const keys: Record<string, { key: string; id: string }> = {};

    const make = async (name: string, tierName: string, scopes: ('read' | 'admin')[] = ['read']) => {
      const { key, record } = await services.keys.create({ name, tier: tierName, scopes });
      return { key, id: record.id };
    };
    const overview = async (query: string) => {
      const answer = await client.get(`/api/v1/usage/overview${query}`, { 'x-api-key': admin });
      assert.equal(answer.status, 200, answer.text);
      return JSON.parse(answer.text) as Overview;
    };

    before(async () => {
      site = await makeSite();
      stores = await site.open();
      const config: Config = loadConfig(
        { PRICEPOINT_LOG_LEVEL: 'silent' },
        { databasePath: ':memory:', devData: true, tiers: TIERS },
      );
      ({ app, services } = await composeApp(config, { stores, clock: clock.read, https: await testTls() }));
      await app.ready();
      await loadDevData({ prices: services.stores.prices, keys: services.keys, now: clock.now });
      client = await listenHttps({ app } as Harness, 4);
      keys.a = await make('a', 'metered');
      keys.b = await make('b', 'metered');
      keys.tiny = await make('tiny', 'tiny');
      admin = (await make('operator', 'enterprise', ['admin'])).key;
      reader = (await make('reader', 'pro')).key;

      const statuses: number[] = [];
      const get = async (path: string, key: string) =>
        statuses.push((await client.get(path, { 'x-api-key': key })).status);
      for (let n = 0; n < 3; n++) await get('/api/v1/series', keys.a.key);
      await get('/api/v1/series', keys.b.key);
      await get('/api/v1/series/NOPE', keys.b.key);
      for (let n = 0; n < 3; n++) await get('/api/v1/series', keys.tiny.key);
      clock.set('2026-11-22T11:20:00Z');
      await get('/api/v1/series', keys.a.key);
      assert.deepEqual(statuses, [200, 200, 200, 200, 404, 200, 200, 429, 200]);
    });
    after(async () => {
      await client.close();
      await app.close();
      await stores.close();
      await site.drop();
    });

    test('each hour sums every key of each tier, with how many keys made any request', async () => {
      const report = await overview('?from=2026-11-22T10:00:00Z&to=2026-11-22T12:00:00Z');
      assert.equal(report.granularity, 'PT1H');
      assert.equal(report.timezone, 'UTC');
      assert.equal(report.from, '2026-11-22T10:00:00+00:00');
      assert.equal(report.to, '2026-11-22T12:00:00+00:00');
      // Every configured tier, in the config's order, zeros included, so a chart's series stay put.
      assert.deepEqual(report.tiers, ['demo', 'free', 'pro', 'enterprise', 'metered', 'tiny']);
      const [ten, eleven] = report.intervals;
      assert.equal(report.intervals.length, 2);
      assert.equal(ten?.start, '2026-11-22T10:00:00+00:00');
      assert.deepEqual(ten?.tiers.metered, counts(5, 4, 0, 0, 1, 5, 2));
      assert.deepEqual(ten?.tiers.tiny, counts(3, 2, 0, 1, 0, 2, 1));
      assert.deepEqual(ten?.tiers.free, ZERO);
      assert.deepEqual(eleven?.tiers.metered, counts(1, 1, 0, 0, 0, 1, 1));
      assert.deepEqual(eleven?.tiers.tiny, ZERO);
      // Key a made requests in both hours: the totals count it once.
      assert.deepEqual(report.totals.metered, counts(6, 5, 0, 0, 1, 6, 2));
      assert.deepEqual(report.totals.tiny, counts(3, 2, 0, 1, 0, 2, 1));
    });

    test('without parameters: the last 24 hours, hourly; the overview reads themselves are counted', async () => {
      const report = await overview('');
      assert.equal(report.intervals.length, 24);
      assert.equal(report.from, '2026-11-21T12:00:00+00:00');
      assert.equal(report.to, '2026-11-22T12:00:00+00:00');
      // The admin's reads of the tests before are enterprise usage of this hour.
      const enterprise = report.intervals.at(-1)?.tiers.enterprise;
      assert.ok(enterprise !== undefined && enterprise.requests >= 1 && enterprise.keys === 1);
      assert.equal(report.totals.metered?.requests, 6);
    });

    test('days in a zone, and CSV with one row per interval and tier', async () => {
      const days = await overview('?from=2026-11-22&to=2026-11-23&granularity=P1D&tz=Europe/Oslo');
      assert.equal(days.timezone, 'Europe/Oslo');
      assert.deepEqual(
        days.intervals.map((i) => [i.start, i.tiers.metered?.requests, i.tiers.metered?.keys]),
        [
          ['2026-11-22T00:00:00+01:00', 6, 2],
          ['2026-11-23T00:00:00+01:00', 0, 0],
        ],
      );
      const url = '/api/v1/usage/overview?from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z';
      const csv = await client.get(url, { 'x-api-key': admin, accept: 'text/csv' });
      assert.equal(csv.status, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      assert.match(
        String(csv.headers['content-disposition']),
        /filename="usage-overview-2026-11-22_2026-11-22\.csv"/,
      );
      const hour = '2026-11-22T10:00:00+00:00,2026-11-22T11:00:00+00:00';
      assert.equal(
        csv.text,
        [
          'start,end,tier,requests,served,notModified,rateLimited,clientErrors,units,keys',
          `${hour},demo,0,0,0,0,0,0,0`,
          `${hour},free,0,0,0,0,0,0,0`,
          `${hour},pro,0,0,0,0,0,0,0`,
          `${hour},enterprise,0,0,0,0,0,0,0`,
          `${hour},metered,5,4,0,0,1,5,2`,
          `${hour},tiny,3,2,0,1,0,2,1`,
          '',
        ].join('\r\n'),
      );
      assert.equal((await client.get(`${url}&format=csv`, { 'x-api-key': admin })).text, csv.text);
    });

    test("a key's hours follow it to the tier it is in now", async () => {
      await services.keys.setTier(keys.b!.id, 'tiny');
      const report = await overview('?from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z');
      assert.deepEqual(report.intervals[0]?.tiers.metered, counts(3, 3, 0, 0, 0, 3, 1));
      assert.deepEqual(report.intervals[0]?.tiers.tiny, counts(5, 3, 0, 1, 1, 4, 2));
      await services.keys.setTier(keys.b!.id, 'metered');
    });

    test('only admin keys; bad input is a 400 problem naming the parameter', async () => {
      const refused = await client.get('/api/v1/usage/overview', { 'x-api-key': reader });
      assert.equal(refused.status, 403);
      assert.equal(JSON.parse(refused.text).code, 'insufficient_scope');
      assert.equal((await client.get('/api/v1/usage/overview')).status, 401);
      const cases: [string, string, RegExp][] = [
        ['from=last-week', 'from', /must be a date/],
        ['from=2026-11-22&to=2026-11-21', 'to', /must come after from/],
        ['from=2026-01-01&to=2026-03-01', 'from', /at most 744 hours/],
        ['from=2024-01-01&to=2026-01-01&granularity=P1D', 'from', /at most 400 days/],
        ['granularity=PT15M', 'granularity', /PT1H, P1D/],
        ['tz=Mars/Olympus', 'tz', /IANA time zone/],
        ['format=xml', 'format', /json, csv/],
        ['tier=free', 'tier', /./],
      ];
      for (const [query, parameter, detail] of cases) {
        const answer = await client.get(`/api/v1/usage/overview?${query}`, { 'x-api-key': admin });
        assert.equal(answer.status, 400, `${query}: ${answer.text}`);
        assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
        const problem = JSON.parse(answer.text);
        assert.equal(problem.code, 'invalid_parameter', query);
        assert.equal(problem.parameter, parameter, query);
        assert.match(problem.detail, detail, query);
      }
    });
  });
}
