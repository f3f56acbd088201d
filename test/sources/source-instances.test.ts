/**
 * Three instances on one PostgreSQL database, each with its own connections and lease holder, all
 * with the same source on the same schedule: the fake upstream is asked once per scheduled run, not
 * three times, and when the instance running the source dies mid-run, another one takes the source
 * over once its lease has run out.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { parseSources } from '../../src/sources/source-config.js';
import { migrateLeases, postgresLease, type SourceLease } from '../../src/sources/source-lease.js';
import { SourceRunner } from '../../src/sources/source-runner.js';
import { createPool } from '../../src/stores/postgres/database.js';
import { openPostgresStores, type PostgresStores } from '../../src/stores/postgres/index.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeScheduler } from './fake-scheduler.js';
import { FakeUpstream, fixture } from './fake-upstream.js';

const target = await postgresSchemaUrl();
const TEN_MINUTES = 10 * 60_000;
const ref = (name: string) => `\${${name}}`;

interface Instance {
  readonly name: string;
  readonly stores: PostgresStores;
  readonly pool: pg.Pool;
  readonly runner: SourceRunner;
  readonly lease: SourceLease;
}

describe('one instance runs a source at a time', { skip: 'skip' in target && target.skip }, () => {
  if ('skip' in target) return;
  let upstream: FakeUpstream;
  let clock: FakeScheduler;
  const instances: Instance[] = [];
  const calls = () => upstream.requests.filter((url) => url.pathname === '/api').length;

  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    // 11:55 in Brussels; tomorrow never completes, so the source runs every 10 minutes from noon.
    clock = new FakeScheduler(Date.parse('2026-11-23T10:55Z'));
    const [source] = parseSources(
      { 'entsoe-no1': { type: 'entsoe', zone: 'NO1', token: ref('T'), baseUrl: upstream.url('/api') } },
      { T: 'token-31c0e5' },
    );
    assert.ok(source);
    for (const name of ['a', 'b', 'c']) {
      const stores = await openPostgresStores(target.url, { schema: target.schema });
      const pool = createPool(target.url, { schema: target.schema, max: 2 });
      await migrateLeases(pool);
      const lease = postgresLease(pool, { ttlMs: 1_000, holder: name });
      const runner = new SourceRunner(source, {
        prices: stores.prices,
        scheduler: clock,
        lease,
        random: () => 0.5,
      });
      runner.start();
      instances.push({ name, stores, pool, runner, lease });
    }
  });

  after(async () => {
    await upstream.close();
    for (const { stores, pool } of instances) {
      await pool.end().catch(() => {});
      await stores.close().catch(() => {});
    }
    await target.drop();
  });

  test('three instances, four scheduled runs: four upstream calls, and the points stored once', async () => {
    await clock.advanceTo(Date.parse('2026-11-23T11:35Z'));
    assert.equal(calls(), 4);
    const ran = instances.filter((i) => i.runner.status().lastSuccessAt !== undefined);
    assert.ok(ran.length >= 1);
    const stored = await instances[0]?.stores.prices.pricesBetween(
      'NO1',
      Date.parse('2026-11-22T23:00Z'),
      Date.parse('2026-11-23T23:00Z'),
    );
    assert.equal(stored?.length, 22);
    // Every instance shows the last run, whichever ran it.
    for (const { runner, lease } of instances) {
      const status = runner.status((await lease.recorded()).get('entsoe-no1'));
      assert.equal(status.lastSuccessAt, Date.parse('2026-11-23T11:30Z'));
      assert.equal(status.pointsWritten, 22);
    }
  });

  test('killing the instance that runs the source moves the work to another', async () => {
    upstream.answer('/api', { hang: true });
    const before = calls();
    // 12:40 in Brussels: one instance claims the run and waits on the upstream. The other two are
    // running too until their claim comes back refused, so the holder is the one left running.
    const fired = clock.advanceTo(Date.parse('2026-11-23T11:40Z'));
    const running = () => instances.filter((i) => i.runner.status().running);
    while (!(calls() > before && running().length === 1)) await sleep(20);
    const [runner] = running();
    assert.ok(runner);
    assert.equal(calls(), before + 1);
    // It dies: its schedule stops, its connections go, its lease is never renewed nor released.
    void runner.runner.stop();
    await runner.pool.end();
    await fired;
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    const survivors = instances.filter((i) => i !== runner);
    // Every following scheduled run asks the upstream at most once; once the lease runs out, a survivor does.
    for (let slot = 0; ; slot++) {
      assert.ok(slot < 100, 'no survivor took the source over');
      const seen = calls();
      await clock.advanceBy(TEN_MINUTES);
      assert.ok(calls() - seen <= 1, 'a scheduled run asked the upstream more than once');
      if (calls() > seen) break;
      await sleep(200);
    }
    assert.ok(survivors.some((i) => i.runner.status().lastSuccessAt === clock.now()));
  });
});
