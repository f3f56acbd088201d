/**
 * Sources through the API, on a server composed as `pricepoint serve` composes it: the admin
 * listing and a run now (a backfill of given days), a failure in plain words in the listing and the
 * metrics while /readyz stays ready, and a token that appears in no answer, log line or metric,
 * even when the upstream's error repeats it. The upstream's terms in the listing and beside the
 * prices the source wrote, and the zones its type can fill, found by any name.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
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

const TOKEN = 'tok-9f8e7d6c5b4a';
const SEEN: string[] = [];
let upstream: FakeUpstream;
let stores: Stores;
let sources: Sources;
let app: FastifyInstance;
let admin: string;
let clock: FakeScheduler;
let keys: Awaited<ReturnType<typeof composeApp>>['services']['keys'];

async function keyWith(scopes: ('read' | 'write' | 'admin')[]) {
  return keys.create({ name: 'test', tier: 'enterprise', scopes });
}

function remember(text: string): string {
  SEEN.push(text);
  return text;
}

async function ask(method: 'GET' | 'POST', url: string, key = admin) {
  const answer = await app.inject({ method, url, headers: { 'x-api-key': key } });
  remember(answer.body);
  remember(JSON.stringify(answer.headers));
  return answer;
}

describe('sources through the API', () => {
  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    upstream = await new FakeUpstream().start();
    const dir = mkdtempSync(join(tmpdir(), 'pp-source-routes-'));
    writeFileSync(
      join(dir, 'pricepoint.yaml'),
      `sources:\n  entsoe-no1:\n    type: entsoe\n    zone: NO1\n    token: \${ENTSOE_TOKEN}\n    baseUrl: ${upstream.url('/api')}\n    minSpacingSeconds: 0\n`,
    );
    const config = loadConfig(
      { PRICEPOINT_CONFIG: join(dir, 'pricepoint.yaml'), ENTSOE_TOKEN: TOKEN, PRICEPOINT_LOG_LEVEL: 'info' },
      { databasePath: ':memory:', devData: false },
    );
    stores = await openEmbeddedStores(':memory:');
    const metrics = createMetrics();
    clock = new FakeScheduler(Date.parse('2026-11-23T10:55Z'));
    sources = await openSources(config.sources, {
      prices: stores.prices,
      registry: metrics.registry,
      scheduler: clock,
      random: () => 0.5,
      log: { info: (f, m) => app.log.info(f, m), warn: (f, m) => app.log.warn(f, m) },
    });
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        remember(String(chunk));
        done();
      },
    });
    const composed = await composeApp(config, { stores, metrics, sources, logStream });
    app = composed.app;
    await app.ready();
    keys = composed.services.keys;
    admin = (await keyWith(['admin'])).key;
    sources.start();
  });

  after(async () => {
    await sources.close();
    await app.close();
    await stores.close();
    await upstream.close();
  });

  test('the listing shows the source as configured, the token by its variable name', async () => {
    const answer = await ask('GET', '/api/v1/sources');
    assert.equal(answer.statusCode, 200);
    const [source] = answer.json().sources;
    assert.equal(source.name, 'entsoe-no1');
    assert.equal(source.settings.token, `\${ENTSOE_TOKEN}`);
    assert.equal(source.lastRun, null);
    assert.equal(source.nextRun, '2026-11-23T11:00:00.000Z');
    assert.equal((await ask('GET', '/api/v1/sources', (await keyWith(['write'])).key)).statusCode, 403);
  });

  test("the listing shows the upstream's terms: licence, attribution, where they are and what they say of resale", async () => {
    const [source] = (await ask('GET', '/api/v1/sources')).json().sources;
    assert.equal(source.terms.license, 'ENTSO-E Transparency Platform Terms and Conditions of Use');
    assert.equal(source.terms.attribution, 'Source: ENTSO-E Transparency Platform');
    assert.match(source.terms.termsUrl, /^https:\/\/transparency\.entsoe\.eu\//);
    assert.match(source.terms.redistribution, /Free Re-use/);
  });

  test('the zones of the configured types, found by name, alias or EIC code in any letter case', async () => {
    const zones = async (query: string, key = admin) => {
      const answer = await ask('GET', `/api/v1/sources/zones${query}`, key);
      assert.equal(answer.statusCode, 200, answer.body);
      return answer.json().types as {
        type: string;
        sources: string[];
        zones: { zone: string; eic?: string; aliases: string[] }[];
      }[];
    };
    const configured = await zones('');
    assert.deepEqual(
      configured.map((t) => [t.type, t.sources]),
      [['entsoe', ['entsoe-no1']]],
    );
    assert.ok(
      configured[0]?.zones.some((z) => z.zone === 'IE-SEM'),
      'every zone of the type',
    );
    const oslo = { zone: 'NO1', eic: '10YNO-1--------2', aliases: ['Oslo'] };
    assert.deepEqual(await zones('?q=oslo'), [{ type: 'entsoe', sources: ['entsoe-no1'], zones: [oslo] }]);
    assert.deepEqual(await zones('?q=10yno-1--------2'), [
      { type: 'entsoe', sources: ['entsoe-no1'], zones: [oslo] },
    ]);
    assert.deepEqual(
      (await zones('?q=DE'))[0]?.zones.map((z) => z.zone),
      ['DE-LU'],
      'DE is DE-LU',
    );
    assert.deepEqual(await zones('?q=Atlantis'), [], 'a name no zone has finds nothing');
    const everywhere = await zones('?all=true&q=de-lu');
    assert.deepEqual(
      everywhere.map((t) => [t.type, t.sources, t.zones.map((z) => z.zone)]),
      [
        ['entsoe', ['entsoe-no1'], ['DE-LU']],
        ['energycharts', [], ['DE-LU']],
        ['awattar', [], ['DE-LU']],
        ['nordpool', [], ['GER']],
      ],
      "every type that fills DE-LU, under each one's own name for it",
    );
    assert.deepEqual(
      (await zones('?all=true&q=London')).map((t) => [t.type, t.zones[0]?.zone]),
      [['octopus', 'C']],
    );
  });

  test('the zones refuse a parameter they do not take, a blank or unreadable one, and keys without admin', async () => {
    for (const [query, parameter] of [
      ['?zone=NO1', 'zone'],
      ['?all=yes', 'all'],
      ['?q=', 'q'],
      ['?q=%20%20', 'q'],
    ] as const) {
      const answer = await ask('GET', `/api/v1/sources/zones${query}`);
      assert.equal(answer.statusCode, 400, query);
      assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
      assert.equal(answer.json().code, 'invalid_parameter', query);
      assert.equal(answer.json().parameter, parameter, query);
    }
    const reader = await ask('GET', '/api/v1/sources/zones', (await keyWith(['read'])).key);
    assert.equal(reader.statusCode, 403);
    assert.equal(reader.json().code, 'insufficient_scope');
  });

  test('a run of given days writes them, and the listing says so', async () => {
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    const answer = await ask('POST', '/api/v1/sources/entsoe-no1/run?from=2026-11-23&to=2026-11-23');
    assert.equal(answer.statusCode, 200, answer.body);
    assert.deepEqual(answer.json(), {
      source: 'entsoe-no1',
      outcome: 'written',
      message: 'entsoe-no1 wrote 22 points',
      from: '2026-11-22T23:00:00.000Z',
      to: '2026-11-23T23:00:00.000Z',
      pointsWritten: 22,
      series: [{ symbol: 'NO1', points: 22, created: true }],
      nextRunAllowedAt: null,
      lastRun: null,
    });
    const [source] = (await ask('GET', '/api/v1/sources')).json().sources;
    assert.equal(source.pointsWritten, 22);
    assert.equal(source.lastError, null);
    assert.equal((await ask('POST', '/api/v1/sources/entsoe-no1/run?from=2026-11-23&to=x')).statusCode, 400);
  });

  test("the prices the source wrote, and the catalogue, carry its upstream's licence and attribution", async () => {
    const reader = (await keyWith(['read'])).key;
    const day = await ask('GET', '/api/v1/prices/2026-11-23?symbols=NO1', reader);
    assert.equal(day.statusCode, 200, day.body);
    const [entry] = day.json().series;
    assert.equal(entry.source, 'entsoe-no1');
    assert.equal(entry.license, 'ENTSO-E Transparency Platform Terms and Conditions of Use');
    assert.equal(entry.attribution, 'Source: ENTSO-E Transparency Platform');
    const info = (await ask('GET', '/api/v1/series/NO1', reader)).json();
    assert.deepEqual([info.license, info.attribution], [entry.license, entry.attribution]);
  });

  test('a failing scheduled run shows in the listing and the metrics; /readyz stays ready', async () => {
    // An upstream that repeats the request, token and all, in its error.
    upstream.answer('/api', { status: 401, body: `Unauthorized: securityToken=${TOKEN} is not valid` });
    await clock.advanceTo(Date.parse('2026-11-23T11:00:01Z'));
    const [source] = (await ask('GET', '/api/v1/sources')).json().sources;
    assert.match(source.lastError.message, /answered HTTP 401/);
    assert.equal(source.failuresInARow, 1);
    assert.equal(source.lastSuccess !== null, true);
    const ready = await ask('GET', '/readyz');
    assert.equal(ready.statusCode, 200);
    const metrics = await ask('GET', '/metrics');
    assert.match(metrics.body, /pricepoint_source_failures_total\{source="entsoe-no1"\} 1/);
    assert.match(metrics.body, /pricepoint_source_points_written_total\{source="entsoe-no1"\} 22/);
    assert.match(metrics.body, /pricepoint_source_runs_total\{source="entsoe-no1",outcome="fetch"\} 1/);
  });

  test('an upstream with nothing for the window yet is not_published: no failure, nothing written, one status', async () => {
    upstream.answer('/api', { body: fixture('entsoe/acknowledgement-999.xml') });
    const answer = await ask('POST', '/api/v1/sources/entsoe-no1/run?from=2026-11-25&to=2026-11-25');
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(answer.json().outcome, 'not_published');
    assert.equal(answer.json().pointsWritten, 0);
    assert.match(answer.json().message, /published nothing for the window yet/);
    const [source] = (await ask('GET', '/api/v1/sources')).json().sources;
    assert.equal(source.lastOutcome, 'not_published');
    assert.equal(source.lastNotPublished, new Date(clock.now()).toISOString());
    // Not a failure: the one before it (the 401) no longer counts in a row; the last write stays.
    assert.equal(source.failuresInARow, 0);
    assert.equal(source.pointsWritten, 22);
    const metrics = await ask('GET', '/metrics');
    assert.match(
      metrics.body,
      /pricepoint_source_runs_total\{source="entsoe-no1",outcome="not_published"\} 1/,
    );
    assert.match(metrics.body, /pricepoint_source_failures_total\{source="entsoe-no1"\} 1/);
  });

  test('the token appears in no answer, log line or metric', () => {
    assert.ok(upstream.requests.some((url) => url.searchParams.get('securityToken') === TOKEN));
    const everything = SEEN.join('\n');
    assert.match(everything, /source entsoe-no1 failed/, 'the failure was logged');
    assert.ok(!everything.includes(TOKEN), 'the token leaked');
  });
});
