/**
 * Sources on their schedules, on a fake clock: the day-ahead default (every 10 minutes at noon
 * until tomorrow is complete, then hourly), the ECB on weekday afternoons, retries with backoff that
 * honour `Retry-After`, bounded timeouts, and a run that never overlaps itself.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { parseSources } from '../../src/sources/source-config.js';
import { memoryLease } from '../../src/sources/source-lease.js';
import { createSourceMetrics } from '../../src/sources/source-metrics.js';
import { SourceRunner, type SourceRunnerDeps } from '../../src/sources/source-runner.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeScheduler } from './fake-scheduler.js';
import { FakeUpstream, fixture } from './fake-upstream.js';

const TOKEN = 'token-7d2e90ab';
const ref = (name: string) => `\${${name}}`;
let upstream: FakeUpstream;
let stores: Stores;
let runner: SourceRunner | undefined;

function source(settings: Record<string, unknown>) {
  const [config] = parseSources({ src: settings }, { T: TOKEN });
  assert.ok(config);
  return config;
}

function entsoe(zone: string) {
  return source({ type: 'entsoe', zone, token: ref('T'), baseUrl: upstream.url('/api') });
}

function ecb() {
  return source({ type: 'ecb', currencies: ['NOK'], feed: 'history', baseUrl: upstream.url('/ecb') });
}

function start(
  config: ReturnType<typeof source>,
  scheduler: FakeScheduler,
  more: Partial<SourceRunnerDeps> = {},
) {
  runner = new SourceRunner(config, {
    prices: stores.prices,
    scheduler,
    lease: memoryLease(),
    random: () => 0.5,
    ...more,
  });
  runner.start();
  return runner;
}

const calls = (path: string) => upstream.requests.filter((url) => url.pathname === path).length;

describe('sources on a schedule', () => {
  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
  });
  after(async () => {
    await upstream.close();
  });
  beforeEach(async () => {
    upstream.requests.length = 0;
    stores = await openEmbeddedStores(':memory:');
  });
  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await stores.close();
  });

  test('day-ahead: once tomorrow is complete, only hourly runs follow', async () => {
    upstream.answer('/api', { body: fixture('entsoe/de-lu-dst-100.xml') });
    // 11:55 in Brussels, the day before the autumn DST day the document covers.
    const clock = new FakeScheduler(Date.parse('2025-10-25T09:55Z'));
    const running = start(entsoe('DE-LU'), clock);
    await clock.advanceTo(Date.parse('2025-10-25T14:05Z'));
    // 12:00 (both crons, one run), then 13:00, 14:00, 15:00 and 16:00.
    assert.equal(calls('/api'), 5);
    const first = upstream.requests[0]?.searchParams;
    // Yesterday to tomorrow, local days in Brussels.
    assert.equal(first?.get('periodStart'), '202510232200');
    assert.equal(first?.get('periodEnd'), '202510262300');
    assert.equal(
      (
        await stores.prices.pricesBetween(
          'DE-LU',
          Date.parse('2025-10-25T22:00Z'),
          Date.parse('2025-10-26T23:00Z'),
        )
      ).length,
      100,
    );
    const status = running.status();
    assert.equal(status.pointsWritten, 100);
    assert.equal(status.lastError, undefined);
    assert.equal(status.nextRunAt, Date.parse('2025-10-25T15:00Z'));
    // The DST day of DE-LU (Europe/Berlin) is complete: its age is negative, a day ahead.
    assert.equal(status.newestCompleteDayAt, Date.parse('2025-10-25T22:00Z'));
    const registry = new Registry();
    createSourceMetrics(registry, async () => [running.status()], clock.now);
    assert.match(
      await registry.metrics(),
      /pricepoint_source_newest_complete_day_age_seconds\{source="src"\} -28500\n/,
    );
  });

  test('day-ahead: while tomorrow is incomplete, every 10 minutes from 12:00 to 16:00 Brussels time', async () => {
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    const clock = new FakeScheduler(Date.parse('2026-11-23T10:55Z'));
    const running = start(entsoe('NO1'), clock);
    await clock.advanceTo(Date.parse('2026-11-23T15:05Z'));
    assert.equal(calls('/api'), 25);
    assert.equal(running.status().nextRunAt, Date.parse('2026-11-23T16:00Z'));
  });

  test('a failure is retried after Retry-After, then with backoff, until a run succeeds', async () => {
    upstream.answer('/ecb/eurofxref-hist.zip', { status: 503, headers: { 'retry-after': '120' } });
    // Monday 4 May 2026, 16:00 in Frankfurt.
    const clock = new FakeScheduler(Date.parse('2026-05-04T14:00Z'));
    const running = start(ecb(), clock);
    await clock.advanceTo(Date.parse('2026-05-04T14:30:01Z'));
    assert.equal(calls('/ecb/eurofxref-hist.zip'), 1);
    assert.match(running.status().lastError?.message ?? '', /answered HTTP 503/);
    assert.equal(running.status().nextRunAt, Date.parse('2026-05-04T14:32:00Z'));

    upstream.answer('/ecb/eurofxref-hist.zip', { status: 500 });
    await clock.advanceTo(Date.parse('2026-05-04T14:32:01Z'));
    assert.equal(calls('/ecb/eurofxref-hist.zip'), 2);
    // Second failure in a row: up to 2 minutes, half of it fixed; the test's jitter is the middle.
    assert.equal(running.status().nextRunAt, Date.parse('2026-05-04T14:33:30Z'));
    assert.equal(running.status().failuresInARow, 2);

    upstream.answer('/ecb/eurofxref-hist.zip', { body: fixture('ecb/eurofxref-hist.csv') });
    await clock.advanceTo(Date.parse('2026-05-04T14:40Z'));
    assert.equal(calls('/ecb/eurofxref-hist.zip'), 3);
    const status = running.status();
    assert.equal(status.lastSuccessAt, Date.parse('2026-05-04T14:33:30Z'));
    assert.equal(status.lastError, undefined);
    assert.ok((status.pointsWritten ?? 0) > 0);
    // The next weekday at 16:30 in Frankfurt.
    assert.equal(status.nextRunAt, Date.parse('2026-05-05T14:30Z'));
  });

  test('a run never overlaps itself, and a silent upstream fails at the time limit', async () => {
    upstream.answer('/api', { hang: true });
    const clock = new FakeScheduler(Date.parse('2026-11-23T10:55Z'));
    const running = start(entsoe('NO1'), clock, { upstream: { timeoutMs: 300 } });
    const first = running.run();
    assert.deepEqual(await running.run(), { ran: false, reason: 'running' });
    assert.equal(running.status().running, true);
    const outcome = await first;
    assert.ok(outcome.ran && !outcome.run.ok && outcome.run.failure?.kind === 'timeout');
    assert.equal(calls('/api'), 1);
    assert.equal(running.status().running, false);
  });

  test('a backfill of a given window writes it, and again gives the same', async () => {
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    const clock = new FakeScheduler(Date.parse('2026-11-30T10:00Z'));
    const running = start(entsoe('NO1'), clock);
    const window = { from: Date.parse('2026-11-22T23:00Z'), to: Date.parse('2026-11-23T23:00Z') };
    const once = await running.run(window);
    // Manual runs of one source are at least a minute apart (source-spacing.test.ts).
    await clock.advanceBy(60_000);
    const twice = await running.run(window);
    assert.ok(once.ran && once.run.ok, JSON.stringify(once));
    // Two of the day's hours have no price in the document (a NaN, and one left out of an A01 curve).
    assert.equal(once.run.written, 22);
    assert.deepEqual(twice, {
      ...once,
      run: { ...once.run, series: [{ symbol: 'NO1', points: 22, created: false }] },
    });
    assert.equal(upstream.requests[0]?.searchParams.get('periodStart'), '202611222300');
  });
});
