/**
 * Upstream quotas are the operator's (docs/sources.md "Schedules"): manual runs of one source are
 * spaced by `minSpacingSeconds` (default 60), and inside it a run request answers `too_soon` with
 * the last run's result instead of asking the upstream; no run, scheduled or manual, asks an
 * upstream before its `Retry-After` (seconds or an HTTP date). Before, 50 admin runs in a row made
 * 50 upstream requests, and a scheduled run came 6 minutes into a 429's hour-long Retry-After.
 * Also across instances on PostgreSQL, through the run records they share.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { composeApp } from '../../src/server/compose.js';
import { parseSources } from '../../src/sources/source-config.js';
import { memoryLease, migrateLeases, postgresLease } from '../../src/sources/source-lease.js';
import { SourceRunner } from '../../src/sources/source-runner.js';
import { runView } from '../../src/sources/source-view.js';
import { openSources } from '../../src/sources/sources.js';
import { createPool } from '../../src/stores/postgres/database.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeScheduler } from './fake-scheduler.js';
import { FakeUpstream, fixture } from './fake-upstream.js';
import { assertSpacingShared } from './shared-spacing.js';

// Asked before any test is declared: a top-level await after them would let the file's after() run first.
const target = await postgresSchemaUrl();
const ref = (name: string) => `\${${name}}`;
const ENV = { T: 'token-5be1c0' };
let upstream: FakeUpstream;
let stores: Stores;
const calls = () => upstream.requests.filter((url) => url.pathname === '/api').length;
const entsoe = (more: Record<string, unknown> = {}) => {
  const [config] = parseSources(
    {
      'entsoe-no1': { type: 'entsoe', zone: 'NO1', token: ref('T'), baseUrl: upstream.url('/api'), ...more },
    },
    ENV,
  );
  assert.ok(config);
  return config;
};

before(async () => {
  usePinnedTzdata(join(REPO, 'tzdata'));
  upstream = await new FakeUpstream().start();
});
after(() => upstream.close());
beforeEach(async () => {
  upstream.requests.length = 0;
  upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
  stores = await openEmbeddedStores(':memory:');
});
afterEach(() => stores.close());

describe('manual runs are spaced', () => {
  let close: () => Promise<void>;
  let clock: FakeScheduler;
  let runNow: () => Promise<LightMyRequestResponse>;

  beforeEach(async () => {
    clock = new FakeScheduler(Date.parse('2026-11-23T09:00Z'));
    const config = loadConfig({}, { databasePath: ':memory:', devData: false, sources: [entsoe()] });
    const sources = await openSources(config.sources, { prices: stores.prices, scheduler: clock });
    const { app, services } = await composeApp(config, { stores, sources });
    await app.ready();
    const { key } = await services.keys.create({ name: 'ops', tier: 'enterprise', scopes: ['admin'] });
    runNow = () =>
      app.inject({ method: 'POST', url: '/api/v1/sources/entsoe-no1/run', headers: { 'x-api-key': key } });
    close = async () => {
      await sources.close();
      await app.close();
    };
  });
  afterEach(() => close());

  test('50 runs through the admin API one after another ask the upstream once', async () => {
    const first = await runNow();
    assert.equal(first.json().outcome, 'written', first.body);
    for (let i = 0; i < 49; i++) {
      await clock.advanceBy(1000);
      const again = await runNow();
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().outcome, 'too_soon');
    }
    assert.equal(calls(), 1);
    const last = (await runNow()).json();
    assert.deepEqual(
      { nextRunAllowedAt: last.nextRunAllowedAt, lastRun: last.lastRun, pointsWritten: last.pointsWritten },
      {
        nextRunAllowedAt: '2026-11-23T09:01:00.000Z',
        lastRun: {
          at: '2026-11-23T09:00:00.000Z',
          outcome: 'written',
          message: 'wrote 22 points',
          pointsWritten: 22,
        },
        pointsWritten: 0,
      },
    );
    assert.match(last.message, /^entsoe-no1 was not run again: runs of entsoe-no1 are at least 60 s apart/);
    await clock.advanceTo(Date.parse('2026-11-23T09:01Z'));
    assert.equal((await runNow()).json().outcome, 'written', 'once the spacing is over, a run asks again');
    assert.equal(calls(), 2);
  });
});

describe('Retry-After', () => {
  let runner: SourceRunner | undefined;
  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
  });
  const start = (clock: FakeScheduler, config = entsoe()) => {
    runner = new SourceRunner(config, {
      prices: stores.prices,
      scheduler: clock,
      lease: memoryLease(),
      random: () => 0.5,
    });
    runner.start();
    return runner;
  };

  test('a 429 asking for 3,600 s at 12:44: the scheduled runs inside it ask nothing, and say so', async () => {
    // A schedule every 2 minutes in the noon hour, as in the report (12:44, then 12:50 asked again).
    const clock = new FakeScheduler(Date.parse('2026-11-23T11:43Z'));
    const running = start(clock, entsoe({ schedule: '*/2 * * * *', scheduleZone: 'Europe/Brussels' }));
    upstream.answer('/api', { status: 429, headers: { 'retry-after': '3600' }, body: 'Too many requests' });
    await clock.advanceTo(Date.parse('2026-11-23T11:44:01Z'));
    assert.equal(calls(), 1);
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    await clock.advanceTo(Date.parse('2026-11-23T12:43:59Z'));
    assert.equal(calls(), 1, 'no request inside the Retry-After');
    const status = runner?.status();
    assert.equal(status?.retryAfterUntil, Date.parse('2026-11-23T12:44:00Z'));
    assert.match(status?.lastSkipped?.message ?? '', /not to be called before 2026-11-23T12:44:00.000Z/);
    // A manual run inside it answers with the last result, too.
    const manual = runView('entsoe-no1', await running.run());
    assert.equal(manual.outcome, 'too_soon');
    assert.equal(manual.nextRunAllowedAt, '2026-11-23T12:44:00.000Z');
    assert.equal(manual.lastRun?.outcome, 'failed');
    assert.match(manual.lastRun?.message ?? '', /answered HTTP 429/);
    assert.equal(calls(), 1);
    await clock.advanceTo(Date.parse('2026-11-23T12:44:01Z'));
    assert.equal(calls(), 2, 'the first run after it asks again');
    assert.equal(running.status().lastSuccessAt, Date.parse('2026-11-23T12:44:00Z'));
  });

  test('a Retry-After written as an HTTP date holds a manual run off until then', async () => {
    const clock = new FakeScheduler(Date.parse('2026-11-23T09:00Z'));
    const running = start(clock, entsoe({ minSpacingSeconds: 0 }));
    upstream.answer('/api', { status: 503, headers: { 'retry-after': 'Mon, 23 Nov 2026 09:30:00 GMT' } });
    assert.ok((await running.run()).ran);
    await clock.advanceTo(Date.parse('2026-11-23T09:29:59Z'));
    const held = await running.run();
    assert.ok(!held.ran && held.reason === 'too-soon' && held.wait.why === 'retry-after');
    assert.equal(calls(), 1);
    await clock.advanceTo(Date.parse('2026-11-23T09:30Z'));
    assert.ok((await running.run()).ran);
    assert.equal(calls(), 2);
  });
});

describe('across instances on PostgreSQL', { skip: 'skip' in target && target.skip }, () => {
  test('a run on one instance spaces a manual run on another, and its Retry-After holds both', async () => {
    if ('skip' in target) return;
    const pool = createPool(target.url, { schema: target.schema, max: 2 });
    try {
      await pool.query(`create schema if not exists ${target.schema}`);
      await migrateLeases(pool);
      const clock = new FakeScheduler(Date.parse('2026-11-23T09:00Z'));
      const [a, b] = ['a', 'b'].map(
        (holder) =>
          new SourceRunner(entsoe(), {
            prices: stores.prices,
            scheduler: clock,
            lease: postgresLease(pool, { holder }),
          }),
      ) as [SourceRunner, SourceRunner];
      await assertSpacingShared([a, b], clock, upstream, calls);
    } finally {
      await pool.end();
      await target.drop();
    }
  });
});
