/**
 * Usage history over real HTTPS (docs/usage-history.md), on SQLite and on PostgreSQL: requests land
 * in their key's hour with their outcome and the units their limit headers showed; hours add up to
 * days, in UTC or a zone; each answer is JSON or CSV; what an instance counted survives a clean
 * shutdown; two instances on one database sum exactly; bad input is a problem naming the parameter.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
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
/** One large limit, so each answer's `X-RateLimit-Remaining` says how many units it took; and a tiny one. */
const TIERS = { ...DEFAULT_TIERS, metered: tier('metered', 100_000, 86_400), tiny: tier('tiny', 2, 60) };

/** One database the instances of a test share: a SQLite file or a PostgreSQL schema. */
interface Site {
  open(): Promise<Stores>;
  drop(): Promise<void>;
}

async function sqliteSite(): Promise<Site> {
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-usage-'));
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
      // A loaded machine (the suite runs two files at a time) must not turn a slow query into a 503.
      const stores = await openPostgresStores(target.url, { schema: target.schema, timeoutMs: 10_000 });
      return { ...stores, rateLimits: new MemoryRateLimitStore(), notices: new MemoryNoticeBus() };
    },
    drop: () => target.drop(),
  };
}

interface Instance {
  readonly app: FastifyInstance;
  readonly services: Services;
  close(): Promise<void>;
}

/** An app over the site's database on the fake clock; `close` flushes (the app's onClose) and closes the stores. */
async function instance(site: Site, clock: FakeClock, https = false): Promise<Instance> {
  const config: Config = loadConfig(
    { PRICEPOINT_LOG_LEVEL: 'silent' },
    { databasePath: ':memory:', devData: true, tiers: TIERS },
  );
  const stores = await site.open();
  const tls = https ? await testTls() : undefined;
  const { app, services } = await composeApp(config, {
    stores,
    clock: clock.read,
    ...(tls && { https: tls }),
  });
  await app.ready();
  return {
    app,
    services,
    async close() {
      await app.close();
      await stores.close();
    },
  };
}

const COUNTS = ['requests', 'served', 'notModified', 'rateLimited', 'clientErrors', 'units'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;
const counts = (...values: number[]): Counts =>
  Object.fromEntries(COUNTS.map((name, i) => [name, values[i] ?? 0])) as Counts;
const only = (row: Record<string, unknown>): Counts =>
  Object.fromEntries(COUNTS.map((name) => [name, row[name]])) as Counts;

interface Report {
  keyId: string;
  granularity: string;
  timezone: string;
  from: string;
  to: string;
  totals: Counts;
  intervals: (Counts & { start: string; end: string })[];
}

const probe = await postgresSchemaUrl();
const SITES: [string, () => Promise<Site>, string | false][] = [
  ['SQLite', sqliteSite, false],
  ['PostgreSQL', postgresSite, 'skip' in probe ? probe.skip : false],
];

for (const [engine, makeSite, skip] of SITES) {
  describeOrSkip(`usage history on ${engine}`, { skip }, () => {
    describe('one instance over HTTPS', () => {
      const clock = new FakeClock(Date.parse('2026-11-22T10:15:03Z'));
      let site: Site;
      let one: Instance;
      let client: Awaited<ReturnType<typeof listenHttps>>;
      let metered: { key: string; id: string };
      let tiny: { key: string; id: string };
      let admin: string;
      /** Units each request took by its limit headers, summed per hour of the fake clock. */
      const shown = new Map<string, number>();
      let remaining = 100_000;

      const make = async (tierName: string, scopes: ('read' | 'admin')[] = ['read']) => {
        const { key, record } = await one.services.keys.create({
          name: `${tierName} key`,
          tier: tierName,
          scopes,
        });
        return { key, id: record.id };
      };
      /** A GET with the metered key, noting the units its limit headers show it took. */
      const get = async (path: string, headers: Record<string, string> = {}) => {
        const answer = await client.get(path, { 'x-api-key': metered.key, ...headers });
        const left = Number(answer.headers['x-ratelimit-remaining']);
        const hour = new Date(clock.now).toISOString().slice(0, 13);
        shown.set(hour, (shown.get(hour) ?? 0) + (remaining - left));
        remaining = left;
        return answer;
      };

      before(async () => {
        site = await makeSite();
        one = await instance(site, clock, true);
        await loadDevData({ prices: one.services.stores.prices, keys: one.services.keys, now: clock.now });
        client = await listenHttps({ app: one.app } as Harness, 4);
        metered = await make('metered');
        tiny = await make('tiny');
        admin = (await make('enterprise', ['admin'])).key;
      });
      after(async () => {
        await client.close();
        await one.close();
        await site.drop();
      });

      test('requests land in their hour with their outcome and the units their limit headers showed', async () => {
        const first = await get('/api/v1/prices/today?symbols=NO1');
        assert.equal(first.status, 200);
        // The same read again is answered by the fast entry point; then as a 304.
        assert.equal((await get('/api/v1/prices/today?symbols=NO1')).status, 200);
        const etag = String(first.headers.etag);
        assert.equal((await get('/api/v1/prices/today?symbols=NO1', { 'if-none-match': etag })).status, 304);
        assert.equal((await get('/api/v1/prices/today?symbols=NOPE')).status, 404);
        // 51 days of a quarter-hour series: a heavy read of several units.
        assert.equal((await get('/api/v1/prices?from=2026-10-01&to=2026-11-20&symbols=NO1')).status, 200);
        // Keyed but not counted: a request, no unit.
        assert.equal((await get('/api/v1/usage')).status, 200);
        const statuses = [];
        for (let n = 0; n < 3; n++) {
          statuses.push((await client.get('/api/v1/prices/today', { 'x-api-key': tiny.key })).status);
        }
        assert.deepEqual(statuses, [200, 200, 429]);
        // Without a valid key nothing is anyone's usage.
        assert.equal((await client.get('/api/v1/prices/today', { 'x-api-key': 'pp_live_nope' })).status, 401);
        clock.set('2026-11-22T11:20:00Z');
        assert.equal((await get('/api/v1/prices/today?symbols=NO1')).status, 200);
        clock.set('2026-11-23T00:30:00Z');
        assert.equal((await get('/api/v1/prices/today?symbols=NO1')).status, 200);

        const answer = await client.get('/api/v1/usage/history?from=2026-11-22&to=2026-11-22', {
          'x-api-key': metered.key,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers['cache-control'], 'no-store');
        const report = JSON.parse(answer.text) as Report;
        assert.equal(report.keyId, metered.id);
        assert.equal(report.granularity, 'PT1H');
        assert.equal(report.from, '2026-11-22T00:00:00+00:00');
        assert.equal(report.to, '2026-11-23T00:00:00+00:00');
        assert.equal(report.intervals.length, 24);
        const ten = report.intervals[10];
        assert.equal(ten?.start, '2026-11-22T10:00:00+00:00');
        assert.equal(ten?.end, '2026-11-22T11:00:00+00:00');
        const heavy = (shown.get('2026-11-22T10') ?? 0) - 4;
        assert.ok(heavy >= 2, `the range read took ${heavy} units`);
        assert.deepEqual(only(ten as Counts), counts(6, 4, 1, 0, 1, shown.get('2026-11-22T10') ?? -1));
        assert.deepEqual(only(report.intervals[11] as Counts), counts(1, 1, 0, 0, 0, 1));
        const others = report.intervals.filter((_, n) => n !== 10 && n !== 11);
        assert.ok(others.every((i) => i.requests === 0 && i.units === 0));
        assert.deepEqual(report.totals, counts(7, 5, 1, 0, 1, (shown.get('2026-11-22T10') ?? 0) + 1));
      });

      test('days sum their hours, in UTC or in the zone asked for, and the read itself was counted', async () => {
        const utc = await client.get('/api/v1/usage/history?from=2026-11-22&to=2026-11-23&granularity=P1D', {
          'x-api-key': metered.key,
        });
        const days = JSON.parse(utc.text) as Report;
        assert.deepEqual(
          days.intervals.map((i) => [i.start, i.requests]),
          [
            ['2026-11-22T00:00:00+00:00', 7],
            // The 00:30 read, and the history read of the test before.
            ['2026-11-23T00:00:00+00:00', 2],
          ],
        );
        const oslo = await client.get(
          '/api/v1/usage/history?from=2026-11-22&to=2026-11-23&granularity=p1d&tz=europe/oslo',
          { 'x-api-key': metered.key },
        );
        const local = JSON.parse(oslo.text) as Report;
        assert.equal(local.timezone, 'Europe/Oslo');
        assert.deepEqual(
          local.intervals.map((i) => [i.start, i.end, i.requests]),
          [
            // 00:30 UTC is 01:30 in Oslo: the next local day.
            ['2026-11-22T00:00:00+01:00', '2026-11-23T00:00:00+01:00', 7],
            ['2026-11-23T00:00:00+01:00', '2026-11-24T00:00:00+01:00', 3],
          ],
        );
      });

      test("an admin reads any key's hours, as CSV too; a read key may not", async () => {
        const url = `/api/v1/keys/${tiny.id}/usage?from=2026-11-22T10:00:00Z&to=2026-11-22T12:00:00Z`;
        const json = await client.get(url, { 'x-api-key': admin });
        assert.equal(json.status, 200, json.text);
        const report = JSON.parse(json.text) as Report;
        assert.equal(report.keyId, tiny.id);
        assert.deepEqual(only(report.intervals[0] as Counts), counts(3, 2, 0, 1, 0, 2));
        const csv = await client.get(url, { 'x-api-key': admin, accept: 'text/csv' });
        assert.equal(csv.status, 200);
        assert.match(String(csv.headers['content-type']), /^text\/csv/);
        assert.equal(
          csv.text,
          [
            'start,end,requests,served,notModified,rateLimited,clientErrors,units',
            '2026-11-22T10:00:00+00:00,2026-11-22T11:00:00+00:00,3,2,0,1,0,2',
            '2026-11-22T11:00:00+00:00,2026-11-22T12:00:00+00:00,0,0,0,0,0,0',
            '',
          ].join('\r\n'),
        );
        assert.equal((await client.get(`${url}&format=csv`, { 'x-api-key': admin })).text, csv.text);
        const refused = await client.get(url, { 'x-api-key': metered.key });
        assert.equal(refused.status, 403);
        assert.equal(JSON.parse(refused.text).code, 'insufficient_scope');
        const unknown = await client.get('/api/v1/keys/key_none/usage', { 'x-api-key': admin });
        assert.equal(unknown.status, 404);
        assert.equal(JSON.parse(unknown.text).code, 'not_found');
      });

      test('bad input is a 400 problem naming the parameter', async () => {
        const cases: [string, string, RegExp][] = [
          ['from=last-week', 'from', /must be a date/],
          ['to=2026-11-31', 'to', /November 2026 has 30 days/],
          ['from=2026-11-22&to=2026-11-21', 'to', /must come after from/],
          ['from=2026-01-01&to=2026-03-01', 'from', /at most 744 hours/],
          ['from=2024-01-01&to=2026-01-01&granularity=P1D', 'from', /at most 400 days/],
          ['granularity=PT15M', 'granularity', /PT1H, P1D/],
          ['tz=Mars/Olympus', 'tz', /IANA time zone/],
          ['granularity=P1D&tz=Asia/Kolkata', 'tz', /whole hour/],
          ['format=xml', 'format', /json, csv/],
          ['limit=5', 'limit', /./],
        ];
        for (const [query, parameter, detail] of cases) {
          const answer = await client.get(`/api/v1/usage/history?${query}`, { 'x-api-key': metered.key });
          assert.equal(answer.status, 400, `${query}: ${answer.text}`);
          assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
          const problem = JSON.parse(answer.text);
          assert.equal(problem.code, 'invalid_parameter', query);
          assert.equal(problem.parameter, parameter, query);
          assert.match(problem.detail, detail, query);
        }
        const missing = await client.get('/api/v1/usage/history');
        assert.equal(missing.status, 401);
      });
    });

    describe('several instances on one database', () => {
      let site: Site;
      before(async () => {
        site = await makeSite();
      });
      after(() => site.drop());

      test('what an instance counted is written when it closes, and read by the next one', async () => {
        const clock = new FakeClock(Date.parse('2026-11-22T10:15:03Z'));
        const first = await instance(site, clock);
        await loadDevData({
          prices: first.services.stores.prices,
          keys: first.services.keys,
          now: clock.now,
        });
        const { key, record } = await first.services.keys.create({ name: 'kept', tier: 'metered' });
        for (let n = 0; n < 5; n++) {
          const answer = await first.app.inject({ url: '/api/v1/series', headers: { 'x-api-key': key } });
          assert.equal(answer.statusCode, 200);
        }
        // Nothing read it, so it is all still in memory until the close.
        await first.close();
        const second = await instance(site, clock);
        try {
          const answer = await second.app.inject({
            url: `/api/v1/usage/history?from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z`,
            headers: { 'x-api-key': key },
          });
          assert.equal(answer.statusCode, 200, answer.body);
          assert.deepEqual((answer.json() as Report).totals, counts(5, 5, 0, 0, 0, 5));
          assert.equal((answer.json() as Report).keyId, record.id);
        } finally {
          await second.close();
        }
      });

      test('two instances counting one key in one hour, flushing at the same time, sum exactly', async () => {
        const clock = new FakeClock(Date.parse('2026-11-22T13:05:00Z'));
        const [a, b] = [await instance(site, clock), await instance(site, clock)];
        try {
          const { key, record } = await a.services.keys.create({ name: 'shared', tier: 'metered' });
          const { key: other } = await a.services.keys.create({ name: 'other', tier: 'metered' });
          let expected = 0;
          for (let round = 0; round < 5; round++) {
            const requests = [a, b].flatMap((app) =>
              Array.from({ length: 20 }, (_, n) =>
                app.app.inject({
                  url: '/api/v1/series',
                  headers: { 'x-api-key': n % 4 === 0 ? other : key },
                }),
              ),
            );
            const answers = await Promise.all(requests);
            assert.deepEqual(
              answers.filter((answer) => answer.statusCode !== 200).map((answer) => answer.body),
              [],
            );
            expected += 30;
            // Both write the same rows at once: each adds, neither overwrites.
            await Promise.all([a.services.usage?.flush(), b.services.usage?.flush()]);
          }
          const answer = await a.app.inject({
            url: `/api/v1/keys/${record.id}/usage?from=2026-11-22T13:00:00Z&to=2026-11-22T14:00:00Z`,
            headers: {
              'x-api-key': (
                await a.services.keys.create({ name: 'a', tier: 'enterprise', scopes: ['admin'] })
              ).key,
            },
          });
          assert.equal(answer.statusCode, 200, answer.body);
          assert.deepEqual((answer.json() as Report).totals, counts(expected, expected, 0, 0, 0, expected));
        } finally {
          await b.close();
          await a.close();
        }
      });
    });
  });
}
