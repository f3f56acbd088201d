/**
 * On the embedded default the server and a `pricepoint sources run` command are two processes on one
 * SQLite file (docs/sources.md "Many instances"): each run first reads what the other recorded, so a
 * 429's Retry-After and the spacing of manual runs hold for both, and for a restarted server.
 * Before, the run records lived in the server's memory, and the command asked the upstream again.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { parseSources } from '../../src/sources/source-config.js';
import { SourceRunner } from '../../src/sources/source-runner.js';
import { sqliteLease } from '../../src/sources/sqlite-lease.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { cleanUp, httpsClient, operatorKey, REPO, runCli, startServer, tempDir } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import { FakeScheduler } from './fake-scheduler.js';
import { FakeUpstream, fixture } from './fake-upstream.js';
import { assertSpacingShared } from './shared-spacing.js';

let upstream: FakeUpstream;
/** The token as a config file names it, `${T}`: read from the environment. */
const TOKEN_REF = `\${T}`;
const calls = () => upstream.requests.filter((url) => url.pathname === '/api').length;

before(async () => {
  usePinnedTzdata(join(REPO, 'tzdata'));
  upstream = await new FakeUpstream().start();
});
after(async () => {
  await upstream.close();
  await cleanUp();
});

describe('run records shared through the SQLite file', () => {
  test('two leases on one file: a run spaces the other holder’s manual run, and its Retry-After holds both', async () => {
    upstream.requests.length = 0;
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    const path = join(await tempDir('pricepoint-sqlite-lease-'), 'pricepoint.db');
    const stores = await openEmbeddedStores(path);
    const [config] = parseSources(
      { 'entsoe-no1': { type: 'entsoe', zone: 'NO1', token: TOKEN_REF, baseUrl: upstream.url('/api') } },
      { T: 'token-5be1c0' },
    );
    assert.ok(config);
    const clock = new FakeScheduler(Date.parse('2026-11-23T09:00Z'));
    const leases = ['server', 'command'].map((holder) => sqliteLease(path, { holder }));
    const [a, b] = leases.map(
      (lease) => new SourceRunner(config, { prices: stores.prices, scheduler: clock, lease }),
    ) as [SourceRunner, SourceRunner];
    try {
      await assertSpacingShared([a, b], clock, upstream, calls);
    } finally {
      await Promise.all(leases.map((lease) => lease.close()));
      await stores.close();
    }
  });

  test('a 429 the server got holds off a `pricepoint sources run` command and a restarted server', async () => {
    upstream.requests.length = 0;
    upstream.answer('/api', { status: 429, headers: { 'retry-after': '3600' }, body: 'slow down' });
    const dataDir = await tempDir('pricepoint-sqlite-records-');
    const file = join(dataDir, 'pricepoint.yaml');
    writeFileSync(
      file,
      stringify({
        sources: {
          'entsoe-no1': { type: 'entsoe', zone: 'NO1', token: TOKEN_REF, baseUrl: upstream.url('/api') },
        },
      }),
    );
    const settings = { PRICEPOINT_DATA_DIR: dataDir, PRICEPOINT_CONFIG: file, T: 'token-5be1c0' };
    const key = await operatorKey(settings);
    const runThroughServer = async () => {
      const server = await startServer(['serve'], settings);
      try {
        const client = httpsClient(join(dataDir, 'tls', 'localhost-cert.pem'));
        const answer = await client.send('POST', `${server.url}/api/v1/sources/entsoe-no1/run`, {
          'x-api-key': key,
        });
        return JSON.parse(answer.text) as { outcome: string };
      } finally {
        await server.stop();
      }
    };

    assert.equal((await runThroughServer()).outcome, 'failed', 'the server asked and got the 429');
    assert.equal(calls(), 1);
    const command = await runCli(['sources', 'run', 'entsoe-no1', '--json'], settings);
    assert.equal(command.code, 1, command.stderr);
    assert.equal(calls(), 1, 'the command did not ask the upstream again');
    assert.match(command.stderr, /source_too_soon/);
    assert.equal((await runThroughServer()).outcome, 'too_soon', 'nor did a restarted server');
    assert.equal(calls(), 1);
  });
});
