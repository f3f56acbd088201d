/**
 * Cached answers on PostgreSQL + Redis live until their data changes (docs/scale-out.md "Notices"):
 * three apps in this process on one database and one Redis prefix, as three instances would be.
 * Every statement the apps send is counted at `pg`'s own `Client#query`, so the test sees what
 * PostgreSQL is asked, not what the code means to ask.
 *
 * Instances 1 and 2 read the change counter only once in ten minutes, so only a change notice can
 * show them a write in time; instance 3 reads it every 200 ms, the safety net for a lost notice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { loadConfig } from '../../src/config/config.js';
import { DEV_SERIES, loadDevData } from '../../src/dev-data/dev-data.js';
import { dayIntervals, formatInstant, localDate } from '../../src/domain/time/days.js';
import { composeApp } from '../../src/server/compose.js';
import { openStores } from '../../src/server/open-stores.js';
import { openPostgresStores } from '../../src/stores/postgres/index.js';
import type { Stores } from '../../src/stores/types.js';
import { type ScaleEnvironment, scaleEnvironment, scaleSkipReason, within } from '../helpers/scale.js';

const skip = await scaleSkipReason('the cached-answer test');

/** Statements that read or write prices, series or their days, and reads of the change counter. */
const counted = { prices: 0, checks: 0 };
const PRICE_SQL = /\b(prices|series|day_provenance)\b/;
const query = pg.Client.prototype.query;
// biome-ignore lint/suspicious/noExplicitAny: pg's query has many overloads; this only looks at the text.
pg.Client.prototype.query = function (this: pg.Client, ...args: any[]) {
  const text: unknown = typeof args[0] === 'string' ? args[0] : args[0]?.text;
  if (typeof text === 'string') {
    if (text.includes('price_changes')) counted.checks += 1;
    else if (PRICE_SQL.test(text)) counted.prices += 1;
  }
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

/** The app clock: real time passing, from a Sunday morning far from any zone's midnight. */
const START = Date.parse('2026-11-22T10:15:03.120Z');
const began = Date.now();
const clock = () => START + (Date.now() - began);

const URLS = [
  '/api/v1/prices/today',
  '/api/v1/prices/today?symbols=NO1',
  '/api/v1/prices/yesterday?symbols=NO1,DE-LU&resolution=PT1H',
  '/api/v1/prices?from=yesterday&to=tomorrow&symbols=NO1',
  '/api/v1/prices/cheapest?symbols=NO1&duration=PT3H&from=today&to=tomorrow',
];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cached answers on PostgreSQL + Redis', { skip }, () => {
  let env: ScaleEnvironment;
  const apps: FastifyInstance[] = [];
  const opened: Stores[] = [];
  let key: string;

  before(async () => {
    env = await scaleEnvironment('answers', { limit: 10 });
    for (const checkMs of ['600000', '600000', '200']) {
      const config = loadConfig(
        { ...env.settings, PRICEPOINT_LOG_LEVEL: 'silent', PRICEPOINT_CHANGE_CHECK_MS: checkMs },
        { devData: false },
      );
      const stores = await openStores(config);
      opened.push(stores);
      const { app, services } = await composeApp(config, { stores, clock });
      await app.ready();
      apps.push(app);
      if (apps.length === 1) {
        await loadDevData({ prices: stores.prices, keys: services.keys, now: START });
        key = (await services.keys.create({ name: 'reader', tier: 'load', scopes: ['read', 'write'] })).key;
      }
    }
  });

  after(async () => {
    for (const app of apps) await app.close();
    for (const stores of opened) await stores.close();
    await env?.drop();
  });

  const get = async (i: number, url: string) => {
    const answer = await apps[i]!.inject({ url, headers: { 'x-api-key': key } });
    assert.equal(answer.statusCode, 200, `${url} on instance ${i + 1}: ${answer.body}`);
    return answer.body;
  };

  test('reads repeated for longer than the old 5 s cache time send no price SQL after the first', async () => {
    const first = new Map<string, string>();
    for (let i = 0; i < apps.length; i++) for (const url of URLS) first.set(`${i} ${url}`, await get(i, url));
    counted.prices = 0;
    counted.checks = 0;
    const startedAt = Date.now();
    let reads = 0;
    while (Date.now() - startedAt < 6_000) {
      for (let i = 0; i < apps.length; i++) {
        for (const url of URLS) {
          // The same bytes, `generatedAt` included: the answer was not built again.
          assert.equal(await get(i, url), first.get(`${i} ${url}`), `${url} on instance ${i + 1}`);
          reads += 1;
        }
      }
      await pause(250);
    }
    assert.equal(counted.prices, 0, `no price SQL in ${reads} reads`);
    assert.ok(counted.checks > 5, `instance 3 read the change counter meanwhile (${counted.checks} times)`);
  });

  test('a write through one instance is served by the others at once, by its notice', async () => {
    const today = localDate(clock(), 'Europe/Oslo');
    const start = formatInstant(dayIntervals(today, 'Europe/Oslo', 'PT15M')[5]!.start, 'Europe/Oslo');
    const url = '/api/v1/prices/today?symbols=NO1';
    assert.ok(!(await get(1, url)).includes('"price":-12.345'), 'not there before');
    const put = await apps[0]!.inject({
      method: 'PUT',
      url: '/api/v1/series/NO1/prices',
      headers: { 'x-api-key': key, 'content-type': 'text/csv' },
      payload: `start,price\n${start},-12.345\n`,
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.ok((await get(0, url)).includes(`"start":"${start}"`), 'the writer serves it at once');
    // The notice crosses Redis; instances 1 and 2 do not read the counter for ten minutes.
    await within(5_000, 'instances 2 and 3 serving the new price', async () => {
      const bodies = await Promise.all([get(1, url), get(2, url)]);
      return bodies.every((b) => b.includes('"price":-12.345'));
    });
  });

  test('a write whose notice is lost is served once the change counter is read again', async () => {
    // Another process writing straight to the database, as `pricepoint import` with Redis away.
    const elsewhere = await openPostgresStores(env.settings.PRICEPOINT_DATABASE_URL!);
    const spec = DEV_SERIES.find((s) => s.symbol === 'DE-LU')!;
    const url = '/api/v1/prices/today?symbols=DE-LU';
    const before = await get(2, url);
    const today = localDate(clock(), spec.timezone);
    const first = dayIntervals(today, spec.timezone, spec.resolution)[0]!.start;
    try {
      await elsewhere.prices.upsertPrices('DE-LU', [{ start: first, price: '-98.765' }]);
    } finally {
      await elsewhere.close();
    }
    assert.ok(!before.includes('"price":-98.765'));
    await within(5_000, 'instance 3 serving the price written elsewhere', async () =>
      (await get(2, url)).includes('"price":-98.765'),
    );
  });
});
