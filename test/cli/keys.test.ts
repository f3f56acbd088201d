/**
 * The operator's CLI as a real process (docs/operating.md "The pricepoint command", docs/keys-and-tiers.md): migrate,
 * dev-data, keys and tiers, their --json output, their errors, and keys created or revoked while a
 * server runs on the same data folder.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  cleanUp,
  cliEnv,
  httpsClient,
  onlyJson,
  REPO,
  runCli,
  runCommand,
  type ServerProcess,
  type Settings,
  startServer,
  tempDir,
} from '../helpers/process.js';

after(cleanUp);

const TODAY = '/api/v1/prices/today';
const KEY_LIKE = /pp_(?:live|test|demo)_[0-9A-Za-z]+/;
/** A SHA-256 or HMAC-SHA-256 in hex: what a stored key hash looks like. */
const HASH_LIKE = /[0-9a-f]{64}/;

interface KeyView {
  readonly id: string;
  readonly name: string;
  readonly tier: string;
  readonly scopes: string[];
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
}
type Created = KeyView & { readonly key: string };

function cliIn(settings: Settings) {
  return (...args: string[]) => runCli(args, settings);
}

describe('CLI commands on a data folder', () => {
  let dataDir: string;
  let cli: ReturnType<typeof cliIn>;
  const created: Created[] = [];

  async function create(...args: string[]): Promise<Created> {
    const output = await cli('keys', 'create', ...args, '--json');
    assert.equal(output.code, 0, output.stderr);
    const key = onlyJson(output) as Created;
    created.push(key);
    return key;
  }

  async function listed(): Promise<KeyView[]> {
    const output = await cli('keys', 'list', '--json');
    assert.equal(output.code, 0, output.stderr);
    return onlyJson(output) as KeyView[];
  }

  before(async () => {
    dataDir = await tempDir();
    cli = cliIn({ PRICEPOINT_DATA_DIR: dataDir });
  });

  test('migrate --json creates the database and its schema once, then has nothing to apply', async () => {
    const first = await cli('migrate', '--json');
    assert.equal(first.code, 0, first.stderr);
    const { applied } = onlyJson(first) as { applied: string[] };
    assert.ok(applied.length > 0, `applied ${applied}`);
    assert.ok(existsSync(join(dataDir, 'pricepoint.db')), 'the SQLite file exists');
    const again = await cli('migrate', '--json');
    assert.deepEqual(onlyJson(again), { applied: [] });
    const text = await cli('migrate');
    assert.equal(text.stdout, 'schema is up to date\n');
  });

  test('dev-data --json loads the development series and one demo key, also when run twice', async () => {
    const first = await cli('dev-data', '--json');
    assert.equal(first.code, 0, first.stderr);
    const loaded = onlyJson(first) as { series: string[]; points: number };
    for (const symbol of ['NO1', 'DE-LU', 'JP-TK', 'NYISO-J', 'EURUSD', 'BTC-USD']) {
      assert.ok(loaded.series.includes(symbol), `${symbol} in ${loaded.series}`);
    }
    assert.ok(loaded.points > 0, `${loaded.points} points`);
    const second = onlyJson(await cli('dev-data', '--json')) as { points: number };
    assert.equal(second.points, loaded.points, 'the same points again, in place');
    const demo = (await listed()).filter((k) => k.tier === 'demo');
    assert.equal(demo.length, 1, 'one demo key, not one per load');
  });

  test('keys create --json prints one object with the id and the key, and no hash', async () => {
    const output = await cli('keys', 'create', '--tier', 'free', '--name', 'home dashboard', '--json');
    assert.equal(output.code, 0, output.stderr);
    const key = onlyJson(output) as Created & Record<string, unknown>;
    created.push(key);
    assert.match(key.id, /^key_[0-9A-Za-z]+$/);
    assert.match(key.key, /^pp_live_[0-9A-Za-z]{28,}$/);
    assert.equal(key.tier, 'free');
    assert.equal(key.name, 'home dashboard');
    assert.deepEqual(key.scopes, ['read']);
    assert.equal(key.expiresAt, null);
    assert.equal(key.revokedAt, null);
    assert.equal('hash' in key, false, 'no hash property');
    assert.doesNotMatch(output.stdout, HASH_LIKE);
    assert.equal(output.stderr, '');

    const text = await cli('keys', 'create', '--tier', 'pro', '--name', 'text form');
    assert.equal(text.code, 0, text.stderr);
    const [clear, , info] = text.stdout.split('\n');
    assert.match(clear ?? '', /^pp_live_[0-9A-Za-z]+$/, 'the key alone on the first line');
    assert.match(info ?? '', /^id key_[0-9A-Za-z]+, tier pro\. /);
    created.push({ ...(await listed()).find((k) => k.name === 'text form')!, key: clear! });
  });

  test('--scopes read,write and --expires are stored as given', async () => {
    const writer = await create('--tier', 'pro', '--name', 'importer', '--scopes', 'read,write');
    assert.deepEqual(writer.scopes, ['read', 'write']);
    const expiring = await create('--tier', 'free', '--name', 'trial', '--expires', '2030-01-01');
    assert.equal(expiring.expiresAt, Date.UTC(2030, 0, 1), 'YYYY-MM-DD is 00:00 UTC that day');
    const timestamp = await create(
      '--tier',
      'free',
      '--name',
      'trial 2',
      '--expires',
      '2030-06-01T12:00:00+02:00',
    );
    assert.equal(timestamp.expiresAt, Date.UTC(2030, 5, 1, 10), 'an RFC 3339 timestamp keeps its offset');
    const stored = await listed();
    assert.deepEqual(stored.find((k) => k.id === writer.id)?.scopes, ['read', 'write']);
    assert.equal(stored.find((k) => k.id === expiring.id)?.expiresAt, Date.UTC(2030, 0, 1));
  });

  test('a bad tier, scopes or expiry exits 1 with a message that names it, and creates nothing', async () => {
    const before = (await listed()).length;
    const cases: [string[], RegExp][] = [
      [['--tier', 'gold'], /tier must be one of demo, free, pro, enterprise/],
      [['--tier', 'free', '--scopes', 'read,delete'], /--scopes: "delete" is not one of read, write, admin/],
      [['--tier', 'free', '--expires', 'tomorrow'], /--expires: "tomorrow" is not a date/],
      [['--tier', 'free', '--expires', '2030-02-30'], /--expires: "2030-02-30" is not a date/],
      [['--tier', 'free', '--expires', '2020-01-01'], /expires must lie in the future/],
    ];
    for (const [args, message] of cases) {
      const text = await cli('keys', 'create', '--name', 'bad', ...args);
      assert.equal(text.code, 1, `${args.join(' ')}: ${text.stderr}`);
      assert.equal(text.stdout, '');
      assert.match(text.stderr, /^pricepoint: /);
      assert.match(text.stderr, message);
      assert.doesNotMatch(text.stderr, /^\s+at /m, 'no stack trace');

      const json = await cli('keys', 'create', '--name', 'bad', ...args, '--json');
      assert.equal(json.code, 1, `${args.join(' ')} --json: ${json.stderr}`);
      assert.equal(json.stdout, '');
      const { error } = JSON.parse(json.stderr) as { error: { code: string; message: string } };
      assert.equal(error.code, 'invalid_parameter');
      assert.match(error.message, message);
    }
    assert.equal((await listed()).length, before, 'no key was created');
  });

  test('keys list, in JSON and as text, shows every key but never a key or a hash', async () => {
    const json = await cli('keys', 'list', '--json');
    const text = await cli('keys', 'list');
    assert.equal(text.code, 0, text.stderr);
    const [header, ...rows] = text.stdout.trimEnd().split('\n');
    assert.deepEqual(header?.split('\t'), ['id', 'key', 'tier', 'scopes', 'state', 'expires', 'name']);
    for (const row of rows) assert.equal(row.split('\t').length, 7, `a row under the header: ${row}`);
    const keys = onlyJson(json) as (KeyView & Record<string, unknown>)[];
    for (const mine of created) {
      assert.ok(
        keys.some((k) => k.id === mine.id),
        `${mine.id} is listed`,
      );
      assert.ok(text.stdout.includes(mine.id), `${mine.id} is listed as text`);
      assert.ok(text.stdout.includes(`…${mine.key.slice(-4)}`), 'the text shows the last four characters');
    }
    for (const output of [json.stdout, text.stdout]) {
      assert.doesNotMatch(output, KEY_LIKE);
      assert.doesNotMatch(output, HASH_LIKE);
      for (const mine of created) assert.equal(output.includes(mine.key), false);
    }
    assert.ok(
      keys.every((k) => !('hash' in k)),
      'no hash property',
    );
  });

  test('keys revoke ID --json marks the key revoked; an unknown id exits 1', async () => {
    const victim = created[0]!;
    const output = await cli('keys', 'revoke', victim.id, '--json');
    assert.equal(output.code, 0, output.stderr);
    const revoked = onlyJson(output) as KeyView & Record<string, unknown>;
    assert.equal(revoked.id, victim.id);
    assert.equal(typeof revoked.revokedAt, 'number');
    assert.equal('hash' in revoked, false);
    assert.doesNotMatch(output.stdout, KEY_LIKE);
    assert.equal((await listed()).find((k) => k.id === victim.id)?.revokedAt, revoked.revokedAt);
    const line = (await cli('keys', 'list')).stdout.split('\n').find((l) => l.startsWith(victim.id));
    assert.match(line ?? '', /\trevoked\t/);

    const unknown = await cli('keys', 'revoke', 'key_doesNotExist', '--json');
    assert.equal(unknown.code, 1);
    assert.equal((JSON.parse(unknown.stderr) as { error: { code: string } }).error.code, 'not_found');
    const text = await cli('keys', 'revoke', 'key_doesNotExist');
    assert.equal(text.code, 1);
    assert.match(text.stderr, /^pricepoint: There is no key with id key_doesNotExist\./);
  });

  test('tiers list shows the default tiers of docs/keys-and-tiers.md, in JSON and as text', async () => {
    const output = await cli('tiers', 'list', '--json');
    assert.equal(output.code, 0, output.stderr);
    const tiers = onlyJson(output) as {
      name: string;
      limits: unknown[];
      countPer: string;
      historyDays: unknown;
      streams: number;
    }[];
    const byName = Object.fromEntries(tiers.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName), ['demo', 'free', 'pro', 'enterprise']);
    assert.deepEqual(byName.demo?.limits, [
      { name: 'minute', limit: 30, windowSeconds: 60 },
      { name: 'day', limit: 1000, windowSeconds: 86_400 },
    ]);
    assert.equal(byName.demo?.countPer, 'key+ip');
    assert.deepEqual(byName.free?.limits, [
      { name: 'minute', limit: 60, windowSeconds: 60 },
      { name: 'day', limit: 5000, windowSeconds: 86_400 },
    ]);
    assert.deepEqual(byName.pro?.limits, [
      { name: 'second', limit: 20, windowSeconds: 1 },
      { name: 'minute', limit: 1200, windowSeconds: 60 },
    ]);
    assert.deepEqual(byName.enterprise?.limits, [{ name: 'second', limit: 200, windowSeconds: 1 }]);
    assert.equal(byName.enterprise?.historyDays, null);
    assert.deepEqual(
      tiers.map((t) => t.streams),
      [50, 3, 20, 200],
    );

    const text = await cli('tiers', 'list');
    const lines = text.stdout.trim().split('\n');
    assert.deepEqual(
      lines.map((l) => l.split('\t')[0]),
      ['demo', 'free', 'pro', 'enterprise'],
    );
    assert.match(lines[0] ?? '', /30 per 60 s \(minute\), 1000 per 86400 s \(day\); counted per key\+ip/);
    assert.match(lines[0] ?? '', /; 50 open event streams$/);
  });

  test('tiers list and keys create read the same PRICEPOINT_CONFIG as the server', async () => {
    const dir = await tempDir();
    const config = join(dir, 'pricepoint.json');
    writeFileSync(
      config,
      JSON.stringify({
        tiers: {
          partner: { limits: [{ name: 'minute', limit: 300, windowSeconds: 60 }], kinds: ['electricity'] },
        },
      }),
    );
    const withConfig = cliIn({ PRICEPOINT_DATA_DIR: dataDir, PRICEPOINT_CONFIG: config });
    const tiers = onlyJson(await withConfig('tiers', 'list', '--json')) as { name: string; kinds: unknown }[];
    assert.deepEqual(tiers.find((t) => t.name === 'partner')?.kinds, ['electricity']);
    const partner = await withConfig('keys', 'create', '--tier', 'partner', '--name', 'partner', '--json');
    assert.equal(partner.code, 0, partner.stderr);
    assert.equal((onlyJson(partner) as Created).tier, 'partner');
    const without = await cli('keys', 'create', '--tier', 'partner', '--name', 'partner');
    assert.equal(without.code, 1, 'without the config file there is no partner tier');
  });
});

describe('the CLI next to a running server on the same data folder', () => {
  let settings: Settings;
  let cli: ReturnType<typeof cliIn>;
  let server: ServerProcess;
  let client: ReturnType<typeof httpsClient>;

  before(async () => {
    const dataDir = await tempDir();
    settings = { PRICEPOINT_DATA_DIR: dataDir, PRICEPOINT_KEY_SECRET: 'the operator secret 2026' };
    cli = cliIn(settings);
    const loaded = await cli('dev-data', '--json');
    assert.equal(loaded.code, 0, loaded.stderr);
    server = await startServer(['serve'], settings);
    client = httpsClient(join(dataDir, 'tls', 'localhost-cert.pem'));
  });

  after(async () => {
    await client?.close();
    const output = await server?.stop();
    assert.equal(output?.code, 0, output?.stderr);
  });

  async function createKey(env: Settings = settings): Promise<Created> {
    const output = await runCli(['keys', 'create', '--tier', 'free', '--name', 'live', '--json'], env);
    assert.equal(output.code, 0, output.stderr);
    return onlyJson(output) as Created;
  }

  test('a key created by the CLI is accepted at once, with the data the CLI loaded', async () => {
    const { key } = await createKey();
    const answer = await client.get(`${server.url}${TODAY}?symbols=NO1`, { 'x-api-key': key });
    assert.equal(answer.status, 200, answer.text);
    const [no1] = (JSON.parse(answer.text) as { series: { prices: unknown[] }[] }).series;
    assert.ok(no1 && no1.prices.length > 0, answer.text);
  });

  test('a key revoked by the CLI is refused within 5 seconds', async () => {
    const { id, key } = await createKey();
    const url = `${server.url}${TODAY}?symbols=NO1`;
    // Used once first, so the server holds it in its key cache when the revocation comes.
    assert.equal((await client.get(url, { 'x-api-key': key })).status, 200);

    const output = await cli('keys', 'revoke', id, '--json');
    assert.equal(output.code, 0, output.stderr);
    const { revokedAt } = onlyJson(output) as { revokedAt: number };
    const deadline = revokedAt + 5_000;
    let answer = await client.get(url, { 'x-api-key': key });
    while (answer.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answer = await client.get(url, { 'x-api-key': key });
    }
    const refusedAt = Date.now();
    assert.equal(
      answer.status,
      401,
      `still ${answer.status} ${refusedAt - revokedAt} ms after the revocation`,
    );
    assert.equal((JSON.parse(answer.text) as { code: string }).code, 'invalid_api_key');
    assert.ok(refusedAt <= deadline, `refused ${refusedAt - revokedAt} ms after the revocation`);
  });

  test('the CLI and the server share PRICEPOINT_KEY_SECRET: a key made under another secret is refused', async () => {
    const { key } = await createKey({ ...settings, PRICEPOINT_KEY_SECRET: 'some other secret 2026' });
    const answer = await client.get(`${server.url}${TODAY}`, { 'x-api-key': key });
    assert.equal(answer.status, 401, answer.text);
  });
});

test('npx pricepoint --help works from the repository', async () => {
  // A cache of its own, so no earlier npx run can decide the outcome; no scripts, so npx does not
  // rebuild dist/ under the other test files (pretest built it); offline, as nothing is fetched.
  const cache = await tempDir('pricepoint-npx-');
  const env = {
    ...cliEnv(),
    npm_config_cache: cache,
    npm_config_ignore_scripts: 'true',
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  const output = await runCommand('npx', ['pricepoint', '--help'], env, { cwd: REPO, timeoutMs: 60_000 });
  assert.equal(output.code, 0, output.stderr);
  assert.match(output.stdout, /^Usage: pricepoint /);
  for (const command of ['serve', 'migrate', 'dev-data', 'keys', 'tiers']) {
    assert.match(output.stdout, new RegExp(`^  ${command} `, 'm'));
  }
});
