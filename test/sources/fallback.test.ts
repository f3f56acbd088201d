/**
 * Fallback across sources, by zone (docs/sources.md "Several sources for one series"): DE-LU filled
 * by ENTSO-E, ranked first, and Energy-Charts, second. ENTSO-E down: Energy-Charts fills the day and
 * the day says so, with its licence; ENTSO-E back: its run replaces what the fallback wrote, and a
 * later Energy-Charts run leaves the day alone. Both upstreams are local stand-ins answering
 * documents in their real formats for the autumn DST day of 2025 (100 quarter hours in Berlin).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { createMetrics } from '../../src/http/metrics.js';
import { composeApp } from '../../src/server/compose.js';
import { openSources, type Sources } from '../../src/sources/sources.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeScheduler } from './fake-scheduler.js';
import { FakeUpstream, fixture } from './fake-upstream.js';

const DAY = '2025-10-26';

describe('fallback from ENTSO-E to Energy-Charts and back', () => {
  let upstream: FakeUpstream;
  let stores: Stores;
  let sources: Sources;
  let app: FastifyInstance;
  let admin: string;
  let reader: string;

  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
    const dir = mkdtempSync(join(tmpdir(), 'pp-fallback-'));
    // The order of `sources:` ranks them: ENTSO-E first.
    writeFileSync(
      join(dir, 'pricepoint.yaml'),
      [
        'sources:',
        '  entsoe-de:',
        '    type: entsoe',
        '    zone: DE-LU',
        `    token: \${ENTSOE_TOKEN}`,
        `    baseUrl: ${upstream.url('/entsoe')}`,
        '    minSpacingSeconds: 0',
        '  energycharts-de:',
        '    type: energycharts',
        '    zone: DE-LU',
        `    baseUrl: ${upstream.url('/ec/')}`,
        '    minSpacingSeconds: 0',
        '',
      ].join('\n'),
    );
    const config = loadConfig(
      {
        PRICEPOINT_CONFIG: join(dir, 'pricepoint.yaml'),
        ENTSOE_TOKEN: 'tok-fallback-1',
        PRICEPOINT_LOG_LEVEL: 'warn',
      },
      { databasePath: ':memory:', devData: false },
    );
    stores = await openEmbeddedStores(':memory:');
    const metrics = createMetrics();
    sources = await openSources(config.sources, {
      prices: stores.prices,
      registry: metrics.registry,
      scheduler: new FakeScheduler(Date.parse('2025-10-27T10:00Z')),
      random: () => 0.5,
    });
    const composed = await composeApp(config, { stores, metrics, sources });
    app = composed.app;
    await app.ready();
    const key = (scopes: ('read' | 'admin')[]) =>
      composed.services.keys.create({ name: 'fallback', tier: 'enterprise', scopes });
    admin = (await key(['admin'])).key;
    reader = (await key(['read'])).key;
  });

  after(async () => {
    await sources.close();
    await app.close();
    await stores.close();
    await upstream.close();
  });

  const run = async (name: string) => {
    const answer = await app.inject({
      method: 'POST',
      url: `/api/v1/sources/${name}/run?from=${DAY}&to=${DAY}`,
      headers: { 'x-api-key': admin },
    });
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json() as { outcome: string; message: string; pointsWritten: number };
  };
  const day = async () => {
    const answer = await app.inject({
      url: `/api/v1/prices/${DAY}?symbols=DE-LU`,
      headers: { 'x-api-key': reader },
    });
    assert.equal(answer.statusCode, 200, answer.body);
    const [entry] = answer.json().series as {
      source: string | null;
      complete: boolean;
      license: string | null;
      prices: { start: string; price: number }[];
    }[];
    assert.ok(entry !== undefined);
    return entry;
  };

  test('ENTSO-E down: Energy-Charts fills the day, and the day names it and its licence', async () => {
    upstream.answer('/entsoe', { status: 503, body: 'Service Unavailable' });
    assert.equal((await run('entsoe-de')).outcome, 'failed');
    upstream.answer('/ec/price', {
      headers: { 'content-type': 'application/json' },
      body: fixture('energycharts/de-lu-autumn-dst.json'),
    });
    const filled = await run('energycharts-de');
    assert.equal(filled.outcome, 'written', filled.message);
    const entry = await day();
    assert.equal(entry.source, 'energycharts-de');
    assert.equal(entry.license, 'CC-BY-4.0');
    // One interval Energy-Charts left null: the day is there, but not complete.
    assert.equal(entry.prices.length, 99);
    assert.equal(entry.complete, false);
  });

  test('ENTSO-E back: its run replaces what the fallback wrote, and the day names it', async () => {
    upstream.answer('/entsoe', {
      headers: { 'content-type': 'text/xml' },
      body: fixture('entsoe/de-lu-dst-100.xml'),
    });
    const back = await run('entsoe-de');
    assert.equal(back.outcome, 'written', back.message);
    const entry = await day();
    assert.equal(entry.source, 'entsoe-de');
    assert.equal(entry.complete, true);
    assert.equal(entry.prices.length, 100);
    assert.notEqual(entry.license, 'CC-BY-4.0');
  });

  test('a later run of the fallback leaves the day of the higher-ranked source alone', async () => {
    const before = await day();
    assert.equal((await run('energycharts-de')).outcome, 'written');
    assert.deepEqual(await day(), before);
  });
});
