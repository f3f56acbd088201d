/**
 * Build threads (src/server/build-threads.ts): a heavy read built in a worker thread, over its own
 * connection to the same SQLite file, is the same answer byte for byte as one built on the event
 * loop; an API error crosses as the same problem; a change written by the server reaches the
 * thread's answers; and a thread that cannot open the database fails its reads with 503 and is
 * replaced, never leaving a read without an answer.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Config, loadConfig } from '../config/config.js';
import { loadDevData } from '../dev-data/dev-data.js';
import { ApiError } from '../domain/errors/api-error.js';
import { DEFAULT_TIERS } from '../domain/limits/tiers.js';
import { addDays, localDate } from '../domain/time/days.js';
import type { AnswerContent } from '../http/pipeline/answer-cache.js';
import { buildOnLoop, type DayJob } from '../http/render/day-content.js';
import type { DayName, DayQuery, PriceService } from '../services/price-service.js';
import { type EmbeddedStores, openEmbeddedStores } from '../stores/sqlite/index.js';
import { type BuildThreads, startBuildThreads } from './build-threads.js';
import { composeServices } from './compose.js';
import { priceServiceOf } from './price-reads.js';

const TARIFFS = {
  household: {
    currency: 'NOK',
    unit: 'kWh',
    timezone: 'Europe/Oslo',
    vat: [{ from: '2020-01-01', percent: 25 }],
    fixed: [{ from: '2020-01-01', amount: '0.0713' }],
    fees: [{ from: '2020-01-01', rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }] }],
  },
};

/** Everything but `generatedAt`, the one member that says when the answer was built. */
const withoutGeneratedAt = (content: AnswerContent) => ({
  ...content,
  body: content.body.toString('utf8').replace(/"generatedAt":"[^"]+"/, '"generatedAt":"-"'),
});

describe('build threads over SQLite', () => {
  let dir: string;
  let config: Config;
  let stores: EmbeddedStores;
  let prices: PriceService;
  let threads: BuildThreads;
  const threadErrors: unknown[] = [];
  const today = localDate(Date.now(), 'Europe/Oslo');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pp-build-threads-'));
    const file = join(dir, 'config.json');
    // A configured source: its connector holds functions and secrets, which a thread is never given.
    const sources = {
      'eds-dk1': { type: 'energidataservice', area: 'DK1', currency: 'EUR', baseUrl: 'http://127.0.0.1:9/' },
    };
    await writeFile(file, JSON.stringify({ fx: { EUR: { NOK: 'EURNOK' } }, tariffs: TARIFFS, sources }));
    config = loadConfig(
      { PRICEPOINT_CONFIG: file, PRICEPOINT_DATA_DIR: join(dir, 'data') },
      { devData: true },
    );
    await mkdir(join(dir, 'data'));
    stores = await openEmbeddedStores(config.databasePath);
    const services = composeServices(config, stores);
    await loadDevData({ prices: stores.prices, keys: services.keys, now: Date.now() });
    prices = priceServiceOf(config, stores.prices, Date.now);
    threads = startBuildThreads(config, 2, { onThreadError: (error) => threadErrors.push(error) });
  });
  after(async () => {
    await threads.close();
    await stores.close();
    await rm(dir, { recursive: true, force: true });
  });

  const job = async (query: DayQuery, from: DayName, to: DayName, format: 'json' | 'csv' = 'json') =>
    ({
      plan: await prices.plan(DEFAULT_TIERS['enterprise']!, query, from, to),
      format,
      until: Date.now() + 60_000,
      route: '/api/v1/prices',
      csv: { include: query.rank ? 'rank' : undefined, currency: query.currency, tariff: query.tariff },
    }) satisfies DayJob;

  test('a heavy read is the same answer, byte for byte, in a thread and on the event loop', {
    timeout: 60_000,
  }, async () => {
    const jobs = [
      await job(
        { symbols: ['NO1', 'DE-LU'], tariff: 'household', rank: true },
        { date: addDays(today, -30) },
        {
          offset: 0,
        },
      ),
      await job(
        {
          symbols: ['DE-LU', 'NO1'],
          tz: 'America/New_York',
          resolution: 'PT1H',
          tariff: 'household',
          rank: true,
        },
        { date: addDays(today, -10) },
        { offset: 0 },
      ),
      await job({ symbols: ['NO1'], currency: 'NOK', unit: 'kWh' }, { offset: -3 }, { offset: 0 }, 'csv'),
      await job({ rank: true }, { offset: 0 }, { offset: 0 }),
    ];
    const onLoop = buildOnLoop(prices);
    for (const one of jobs) {
      const [inThread, looped] = await Promise.all([threads.build(one), onLoop(one)]);
      assert.ok(inThread.body.length > 1_000, `an answer of ${inThread.body.length} bytes`);
      assert.deepEqual(withoutGeneratedAt(inThread), withoutGeneratedAt(looped));
    }
  });

  test('an API error in a thread reaches the server as the same problem', { timeout: 60_000 }, async () => {
    const one = await job({ symbols: ['NO1'], tariff: 'household' }, { offset: 0 }, { offset: 0 });
    // A plan naming a tariff the configuration does not have: refused where it is read.
    const unknown = { ...one, plan: { ...one.plan, query: { ...one.plan.query, tariff: 'nope' } } };
    const [inThread, looped] = await Promise.allSettled([
      threads.build(unknown),
      buildOnLoop(prices)(unknown),
    ]);
    assert.equal(inThread.status, 'rejected');
    assert.equal(looped.status, 'rejected');
    const error = (inThread as PromiseRejectedResult).reason as ApiError;
    assert.ok(error instanceof ApiError, String(error));
    const expected = (looped as PromiseRejectedResult).reason as ApiError;
    assert.equal(error.code, expected.code);
    assert.equal(error.detail, expected.detail);
  });

  test('prices the server writes are in the next answer a thread builds', { timeout: 60_000 }, async () => {
    const one = await job({ symbols: ['NO1'], tariff: 'household' }, { offset: -2 }, { offset: -2 });
    const before = await threads.build(one);
    const first = one.plan.wanted[0]!;
    const stored = await stores.prices.pricesBetween('NO1', 0, Number.MAX_SAFE_INTEGER);
    const point = stored.find((p) => localDate(p.start, 'Europe/Oslo') === first.date)!;
    await stores.prices.upsertPrices('NO1', [{ start: point.start, price: '1234.5' }]);
    threads.forget(['NO1']);
    const afterWrite = await threads.build(one);
    assert.notEqual(afterWrite.etag, before.etag);
    assert.deepEqual(withoutGeneratedAt(afterWrite), withoutGeneratedAt(await buildOnLoop(prices)(one)));
  });

  test('a thread that cannot open the database fails its reads with 503 and is replaced', {
    timeout: 60_000,
  }, async () => {
    // Under a file, not a folder: no database can be opened there.
    const broken = startBuildThreads({ ...config, databasePath: join(dir, 'config.json', 'x.db') }, 1, {
      onThreadError: (error) => threadErrors.push(error),
    });
    try {
      const one = await job({ symbols: ['NO1'], rank: true }, { offset: 0 }, { offset: 0 });
      for (let attempt = 0; attempt < 2; attempt++) {
        await assert.rejects(broken.build(one), (error: unknown) => {
          assert.ok(error instanceof ApiError, String(error));
          assert.equal(error.code, 'service_unavailable');
          return true;
        });
      }
      assert.ok(threadErrors.length >= 2, `${threadErrors.length} thread errors reported`);
    } finally {
      await broken.close();
    }
  });
});
