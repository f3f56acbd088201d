/**
 * The key lifecycle from the command line: keys show, rotate [--grace] and
 * set-tier, as text and as --json, their errors, and a rotation seen by a running server.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  cleanUp,
  httpsClient,
  onlyJson,
  runCli,
  type ServerProcess,
  type Settings,
  startServer,
  tempDir,
} from '../helpers/process.js';

after(cleanUp);

const TODAY = '/api/v1/prices/today?symbols=NO1';
const KEY_LIKE = /pp_(?:live|test|demo)_[0-9A-Za-z]+/;
const HASH_LIKE = /[0-9a-f]{64}/;
const HOUR = 3_600_000;

interface KeyView {
  readonly id: string;
  readonly last4: string;
  readonly name: string;
  readonly tier: string;
  readonly scopes: string[];
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  readonly lastUsedAt: number | null;
}
type Created = KeyView & { readonly key: string };
type Rotated = Created & { readonly previous: KeyView };

function cliIn(settings: Settings) {
  return (...args: string[]) => runCli(args, settings);
}

/** Nothing printed may contain a key or a hash. */
function assertNoSecrets(text: string, what: string): void {
  assert.doesNotMatch(text, KEY_LIKE, `${what}: no key`);
  assert.doesNotMatch(text, HASH_LIKE, `${what}: no hash`);
}

describe('keys show, rotate and set-tier on a data folder', () => {
  let cli: ReturnType<typeof cliIn>;

  async function create(...args: string[]): Promise<Created> {
    const output = await cli('keys', 'create', ...args, '--json');
    assert.equal(output.code, 0, output.stderr);
    return onlyJson(output) as Created;
  }

  before(async () => {
    cli = cliIn({ PRICEPOINT_DATA_DIR: await tempDir() });
  });

  test('keys show ID prints one key without its secret, as JSON and as text', async () => {
    const created = await create('--tier', 'pro', '--name', 'shown', '--scopes', 'read,write');
    const json = await cli('keys', 'show', created.id, '--json');
    assert.equal(json.code, 0, json.stderr);
    const { key: _key, ...view } = created;
    assert.deepEqual(onlyJson(json), view);
    assertNoSecrets(json.stdout, 'show --json');

    const text = await cli('keys', 'show', created.id);
    assert.equal(text.code, 0, text.stderr);
    assertNoSecrets(text.stdout, 'show');
    assert.match(text.stdout, new RegExp(`^id +${created.id}$`, 'm'));
    assert.match(text.stdout, new RegExp(`^key +…${created.key.slice(-4)}$`, 'm'));
    assert.match(text.stdout, /^tier +pro$/m);
    assert.match(text.stdout, /^scopes +read,write$/m);
    assert.match(text.stdout, /^state +active$/m);
    assert.match(text.stdout, /^last used +-$/m);

    const unknown = await cli('keys', 'show', 'key_doesNotExist', '--json');
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stdout, '');
    assert.equal((JSON.parse(unknown.stderr) as { error: { code: string } }).error.code, 'not_found');
  });

  test('keys rotate ID --grace 2h --json prints the new key once and the old key expiring in 2 h', async () => {
    const old = await create(
      '--tier',
      'pro',
      '--name',
      'importer',
      '--scopes',
      'read,write',
      '--expires',
      '2030-01-01',
    );
    const before = Date.now();
    const output = await cli('keys', 'rotate', old.id, '--grace', '2h', '--json');
    const afterwards = Date.now();
    assert.equal(output.code, 0, output.stderr);
    const rotated = onlyJson(output) as Rotated & Record<string, unknown>;
    assert.match(rotated.key, /^pp_live_[0-9A-Za-z]{28,}$/);
    assert.notEqual(rotated.id, old.id);
    assert.equal(output.stdout.includes(old.key), false, 'the old key is not printed again');
    assert.equal('hash' in rotated, false, 'no hash');
    assert.doesNotMatch(output.stdout, HASH_LIKE);
    assert.deepEqual(
      { name: rotated.name, tier: rotated.tier, scopes: rotated.scopes, expiresAt: rotated.expiresAt },
      { name: 'importer', tier: 'pro', scopes: ['read', 'write'], expiresAt: Date.UTC(2030, 0, 1) },
    );
    assert.equal(rotated.previous.id, old.id);
    const end = rotated.previous.expiresAt ?? 0;
    assert.ok(
      end >= before + 2 * HOUR && end <= afterwards + 2 * HOUR,
      `old key ends 2 h after the rotation: ${end}`,
    );

    const shown = onlyJson(await cli('keys', 'show', old.id, '--json')) as KeyView;
    assert.equal(shown.expiresAt, end, 'the new expiry is stored');
  });

  test('keys rotate without --grace gives 24 hours; the text form prints the key alone on the first line', async () => {
    const old = await create('--tier', 'free', '--name', 'text rotation');
    const before = Date.now();
    const output = await cli('keys', 'rotate', old.id);
    assert.equal(output.code, 0, output.stderr);
    const [clear, blank, info, expiry] = output.stdout.split('\n');
    assert.match(clear ?? '', /^pp_live_[0-9A-Za-z]+$/, 'the key alone on the first line');
    assert.equal(blank, '');
    assert.match(info ?? '', /^id key_[0-9A-Za-z]+, tier free\. Store the key now: it is not shown again\.$/);
    assert.match(
      expiry ?? '',
      new RegExp(`^The old key ${old.id} \\(…${old.key.slice(-4)}\\) stops working at \\S+Z\\.$`),
    );
    const shown = onlyJson(await cli('keys', 'show', old.id, '--json')) as KeyView;
    const end = shown.expiresAt ?? 0;
    assert.ok(end >= before + 24 * HOUR && end <= Date.now() + 24 * HOUR, `24 h grace: ${end - before} ms`);
  });

  test('keys rotate refuses a bad grace, a revoked key and an unknown id, and issues nothing', async () => {
    const live = await create('--tier', 'free', '--name', 'rotation errors');
    const revoked = await create('--tier', 'free', '--name', 'revoked');
    assert.equal((await cli('keys', 'revoke', revoked.id)).code, 0);
    const count = async () => (onlyJson(await cli('keys', 'list', '--json')) as KeyView[]).length;
    const before = await count();
    const cases: [string[], string, RegExp][] = [
      [[live.id, '--grace', '2 hours'], 'invalid_parameter', /--grace: "2 hours" is not a duration/],
      [[live.id, '--grace', '1w'], 'invalid_parameter', /--grace: "1w" is not a duration/],
      [[live.id, '--grace', '31d'], 'invalid_parameter', /grace must be 0 to 30 days/],
      [[revoked.id], 'invalid_parameter', /is revoked; only a live key can be rotated/],
      [['key_doesNotExist'], 'not_found', /There is no key with id key_doesNotExist/],
    ];
    for (const [args, code, message] of cases) {
      const text = await cli('keys', 'rotate', ...args);
      assert.equal(text.code, 1, `${args.join(' ')}: ${text.stderr}`);
      assert.equal(text.stdout, '');
      assert.match(text.stderr, /^pricepoint: /);
      assert.match(text.stderr, message);
      const json = await cli('keys', 'rotate', ...args, '--json');
      assert.equal(json.code, 1);
      const { error } = JSON.parse(json.stderr) as { error: { code: string; message: string } };
      assert.equal(error.code, code);
      assert.match(error.message, message);
    }
    assert.equal(await count(), before, 'no key was issued');
  });

  test('keys set-tier ID TIER moves a key; an unknown tier or id exits 1 and changes nothing', async () => {
    const key = await create('--tier', 'free', '--name', 'upgrade me');
    const json = await cli('keys', 'set-tier', key.id, 'pro', '--json');
    assert.equal(json.code, 0, json.stderr);
    const { key: _key, ...view } = key;
    assert.deepEqual(onlyJson(json), { ...view, tier: 'pro' });
    assertNoSecrets(json.stdout, 'set-tier --json');

    const text = await cli('keys', 'set-tier', key.id, 'enterprise');
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, `${key.id} (…${key.last4}) is now in tier enterprise\n`);

    const gold = await cli('keys', 'set-tier', key.id, 'gold', '--json');
    assert.equal(gold.code, 1);
    const { error } = JSON.parse(gold.stderr) as { error: { code: string; message: string } };
    assert.equal(error.code, 'invalid_parameter');
    assert.match(error.message, /tier must be one of demo, free, pro, enterprise/);
    const unknown = await cli('keys', 'set-tier', 'key_doesNotExist', 'pro');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^pricepoint: There is no key with id key_doesNotExist\./);
    assert.equal((onlyJson(await cli('keys', 'show', key.id, '--json')) as KeyView).tier, 'enterprise');
  });
});

describe('a rotation by the CLI next to a running server', () => {
  let settings: Settings;
  let server: ServerProcess;
  let client: ReturnType<typeof httpsClient>;

  before(async () => {
    const dataDir = await tempDir();
    settings = { PRICEPOINT_DATA_DIR: dataDir };
    const loaded = await runCli(['dev-data', '--json'], settings);
    assert.equal(loaded.code, 0, loaded.stderr);
    server = await startServer(['serve'], settings);
    client = httpsClient(join(dataDir, 'tls', 'localhost-cert.pem'));
  });

  after(async () => {
    await client?.close();
    const output = await server?.stop();
    assert.equal(output?.code, 0, output?.stderr);
  });

  test('the new key works at once and the old one keeps working during its grace', async () => {
    const created = await runCli(
      ['keys', 'create', '--tier', 'free', '--name', 'rolling', '--json'],
      settings,
    );
    assert.equal(created.code, 0, created.stderr);
    const old = onlyJson(created) as Created;
    const url = `${server.url}${TODAY}`;
    assert.equal((await client.get(url, { 'x-api-key': old.key })).status, 200, 'the old key works before');

    const output = await runCli(['keys', 'rotate', old.id, '--grace', '1h', '--json'], settings);
    assert.equal(output.code, 0, output.stderr);
    const rotated = onlyJson(output) as Rotated;
    const fresh = await client.get(url, { 'x-api-key': rotated.key });
    assert.equal(fresh.status, 200, fresh.text);
    const during = await client.get(url, { 'x-api-key': old.key });
    assert.equal(during.status, 200, `the old key in its grace: ${during.text}`);
  });
});
