/**
 * `pricepoint sources list|status|zones|run` as a real process over a data folder: settings listed
 * as written (a token by its variable's name) with the upstream's terms, the zones found by an
 * alias, a backfill of given days written and written again the same, a failed run that exits 1
 * with the upstream's words and without the token, every run in the audit log.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { cleanUp, runCli, tempDir } from '../helpers/process.js';
import { FakeUpstream, fixture } from './fake-upstream.js';

const TOKEN = 'tok-cli-3e4f5a6b';
let upstream: FakeUpstream;
let settings: Record<string, string>;
let dataDir: string;

async function sources(...args: string[]) {
  const output = await runCli(['sources', ...args], settings);
  assert.ok(!output.stdout.includes(TOKEN) && !output.stderr.includes(TOKEN), 'the token leaked');
  return output;
}

describe('pricepoint sources', () => {
  before(async () => {
    upstream = await new FakeUpstream().start();
    dataDir = await tempDir();
    const file = join(dataDir, 'pricepoint.yaml');
    writeFileSync(
      file,
      `sources:\n  entsoe-no1:\n    type: entsoe\n    zone: NO1\n    token: \${ENTSOE_TOKEN}\n    baseUrl: ${upstream.url('/api')}\n    minSpacingSeconds: 0\n`,
    );
    settings = { PRICEPOINT_CONFIG: file, PRICEPOINT_DATA_DIR: dataDir, ENTSOE_TOKEN: TOKEN };
  });
  after(async () => {
    await upstream.close();
    await cleanUp();
  });

  test('list: the source, its schedule, the token by its variable name', async () => {
    const output = await sources('list', '--json');
    assert.equal(output.code, 0, output.stderr);
    const [source] = JSON.parse(output.stdout);
    assert.equal(source.name, 'entsoe-no1');
    assert.equal(source.settings.token, `\${ENTSOE_TOKEN}`);
    assert.deepEqual(source.schedule[1], { cron: '0 * * * *', zone: 'Europe/Brussels' });
    assert.equal(source.terms.license, 'ENTSO-E Transparency Platform Terms and Conditions of Use');
    const plain = await sources('list');
    assert.match(
      plain.stdout,
      /^entsoe-no1\tentsoe\t.*\tENTSO-E Transparency Platform Terms and Conditions of Use; credit: Source: ENTSO-E Transparency Platform; https:/m,
    );
  });

  test('zones: those of the configured types, one found by an alias, every type with --all', async () => {
    const oslo = await sources('zones', '--q', 'oslo');
    assert.equal(oslo.code, 0, oslo.stderr);
    assert.equal(oslo.stdout.trim(), 'entsoe\tNO1\t10YNO-1--------2\tOslo');
    const all = await sources('zones', '--all', '--q', 'East Denmark', '--json');
    assert.deepEqual(
      JSON.parse(all.stdout).map((t: { type: string; zones: { zone: string }[] }) => [
        t.type,
        t.zones[0]?.zone,
      ]),
      [
        ['entsoe', 'DK2'],
        ['energidataservice', 'DK2'],
        ['energycharts', 'DK2'],
        ['nordpool', 'DK2'],
      ],
    );
  });

  test('run --from --to: a backfill of local days, idempotent', async () => {
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    for (let i = 0; i < 2; i++) {
      const output = await sources(
        'run',
        'entsoe-no1',
        '--from',
        '2026-11-23',
        '--to',
        '2026-11-23',
        '--json',
      );
      assert.equal(output.code, 0, output.stderr);
      assert.equal(JSON.parse(output.stdout).pointsWritten, 22);
    }
    const asked = upstream.requests.at(-1)?.searchParams;
    assert.equal(asked?.get('periodStart'), '202611222300');
    const stores = await openEmbeddedStores(join(dataDir, 'pricepoint.db'));
    try {
      const stored = await stores.prices.pricesBetween(
        'NO1',
        Date.parse('2026-11-22T23:00Z'),
        Date.parse('2026-11-23T23:00Z'),
      );
      assert.equal(stored.length, 22);
    } finally {
      await stores.close();
    }
  });

  test('a failed run exits 1 with the upstream’s words; status shows when it runs next', async () => {
    upstream.answer('/api', { status: 401, body: `securityToken=${TOKEN} is not valid` });
    const failed = await sources('run', 'entsoe-no1');
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /answered HTTP 401/);
    const status = await sources('status', '--json');
    assert.equal(status.code, 0, status.stderr);
    const [source] = JSON.parse(status.stdout);
    assert.match(source.nextRun, /^\d{4}-\d\d-\d\dT\d\d:\d0:00\.000Z$/);
    const unknown = await sources('run', 'nordpool');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no source is named "nordpool"; the sources are: entsoe-no1/);
  });

  test('every run is in the audit log like the API’s, with actor cli and how it ended; never the token', async () => {
    const stores = await openEmbeddedStores(join(dataDir, 'pricepoint.db'));
    try {
      const entries = (await stores.audit?.list({ action: 'sources.run', limit: 100 })) ?? [];
      assert.deepEqual(entries.map((e) => [e.actor, e.address, e.target, e.status, e.code]).reverse(), [
        ['cli', null, 'entsoe-no1', null, null],
        ['cli', null, 'entsoe-no1', null, null],
        ['cli', null, 'entsoe-no1', null, 'source_failed'],
      ]);
      const all = JSON.stringify(await stores.audit?.list({ limit: 1000 }));
      assert.ok(!all.includes(TOKEN), 'the token is not in the audit log');
    } finally {
      await stores.close();
    }
  });
});
