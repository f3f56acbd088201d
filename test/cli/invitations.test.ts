/**
 * `pricepoint invitations ...` as a real process (docs/invitations.md): an operator makes an
 * invitation on the command line, a customer claims a key with its link from a running server, the
 * operator lists, shows and revokes it; bad options are refused with a message and no invitation;
 * the token is printed by `create` only, and the audit log holds the actions with actor `cli`.
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

interface Invitation {
  id: string;
  tier: string;
  scopes: string[];
  expiresAt: number;
  uses: number;
  claimed: number;
  keyExpiresAt: number | null;
  note: string | null;
  state: string;
}
type Created = Invitation & { token: string; claimUrl: string };

describe('pricepoint invitations', () => {
  let settings: Settings;
  let server: ServerProcess;
  let client: ReturnType<typeof httpsClient>;
  const cli = (...args: string[]) => runCli(args, settings);
  const tokens: string[] = [];

  async function create(...args: string[]): Promise<Created> {
    const output = await cli('invitations', 'create', ...args, '--json');
    assert.equal(output.code, 0, output.stderr);
    const created = onlyJson(output) as Created;
    tokens.push(created.token);
    return created;
  }

  before(async () => {
    const dataDir = await tempDir();
    settings = { PRICEPOINT_DATA_DIR: dataDir };
    const loaded = await cli('dev-data');
    assert.equal(loaded.code, 0, loaded.stderr);
    server = await startServer(['serve'], settings);
    client = httpsClient(join(dataDir, 'tls', 'localhost-cert.pem'));
  });

  after(async () => {
    await client?.close();
    const output = await server?.stop();
    assert.equal(output?.code, 0, output?.stderr);
    for (const token of tokens)
      assert.equal(output?.stdout.includes(token), false, 'no token in the server log');
  });

  test('create prints the link and token once; the customer claims a key with it from the running server', async () => {
    const created = await create(
      '--tier',
      'pro',
      '--scopes',
      'read,write',
      '--uses',
      '2',
      '--expires',
      '3d',
      '--note',
      'Acme',
    );
    assert.match(created.token, /^ppi_[0-9A-Za-z]{32}$/);
    // No public URL set: the address `serve` prints on this machine, with the port it is configured for.
    assert.equal(created.claimUrl, `https://localhost:0/portal/claim#${created.token}`);
    assert.deepEqual(
      {
        tier: created.tier,
        scopes: created.scopes,
        uses: created.uses,
        claimed: created.claimed,
        note: created.note,
        state: created.state,
      },
      { tier: 'pro', scopes: ['read', 'write'], uses: 2, claimed: 0, note: 'Acme', state: 'active' },
    );
    const days = (created.expiresAt - Date.now()) / 86_400_000;
    assert.ok(days > 2.99 && days <= 3, `expires in 3 days (${days})`);

    const claimed = await client.send(
      'POST',
      `${server.url}/api/v1/invitations/claim`,
      { 'content-type': 'application/json' },
      JSON.stringify({ token: created.token, name: 'Acme dashboard' }),
    );
    assert.equal(claimed.status, 201, claimed.text);
    const key = JSON.parse(claimed.text) as { key: string; tier: string };
    assert.equal(key.tier, 'pro');
    const prices = await client.get(`${server.url}/api/v1/prices/today?symbols=NO1`, {
      'x-api-key': key.key,
    });
    assert.equal(prices.status, 200, prices.text);

    const shown = await cli('invitations', 'show', created.id);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^claimed\s+1 of 2$/m);
    assert.match(shown.stdout, /^state\s+active$/m);
    assert.equal(shown.stdout.includes(created.token), false, 'show never prints the token');
  });

  test('the text output names the link first and says it is shown once', async () => {
    const output = await cli('invitations', 'create', '--tier', 'free', '--public-url-is-not-an-option');
    assert.notEqual(output.code, 0, 'an unknown option is refused');
    const text = await cli('invitations', 'create', '--tier', 'free');
    assert.equal(text.code, 0, text.stderr);
    const [link] = text.stdout.split('\n');
    assert.match(link ?? '', /^https:\/\/localhost:0\/portal\/claim#ppi_[0-9A-Za-z]{32}$/);
    assert.match(text.stdout, /not shown again/);
    tokens.push((link ?? '').split('#')[1] ?? '');
  });

  test('list shows every invitation newest first, with state and uses, never a token', async () => {
    const made = await create('--tier', 'free', '--key-expires', '2030-01-01');
    assert.equal(made.keyExpiresAt, Date.parse('2030-01-01T00:00:00Z'));
    const json = await cli('invitations', 'list', '--json');
    assert.equal(json.code, 0, json.stderr);
    const list = onlyJson(json) as Invitation[];
    assert.equal(list[0]?.id, made.id, 'newest first');
    const text = await cli('invitations', 'list');
    const [header, first] = text.stdout.trim().split('\n');
    assert.equal(header, 'id\ttier\tscopes\tstate\tclaimed\texpires\tnote');
    assert.match(first ?? '', new RegExp(`^${made.id}\\tfree\\tread\\tactive\\t0/1\\t`));
    for (const token of tokens) {
      assert.equal(json.stdout.includes(token), false);
      assert.equal(text.stdout.includes(token), false);
    }
    assert.doesNotMatch(json.stdout, /"hash"|[0-9a-f]{64}/);
  });

  test('revoke stops claims at once, on the running server too', async () => {
    const made = await create('--tier', 'free', '--uses', '5');
    const revoked = await cli('invitations', 'revoke', made.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout.trim(), `revoked ${made.id}`);
    const refused = await client.send(
      'POST',
      `${server.url}/api/v1/invitations/claim`,
      { 'content-type': 'application/json' },
      JSON.stringify({ token: made.token, name: 'too late' }),
    );
    assert.equal(refused.status, 410, refused.text);
    assert.equal((JSON.parse(refused.text) as { code: string }).code, 'invitation_revoked');
    const unknown = await cli('invitations', 'revoke', 'inv_nope', '--json');
    assert.equal(unknown.code, 1);
    assert.equal((JSON.parse(unknown.stderr) as { error: { code: string } }).error.code, 'not_found');
  });

  test('bad options are refused with a message that names them, and make nothing', async () => {
    const before = (onlyJson(await cli('invitations', 'list', '--json')) as Invitation[]).length;
    for (const [args, names] of [
      [['--tier', 'gold'], /tier must be one of/],
      [['--tier', 'free', '--scopes', 'root'], /--scopes: "root"/],
      [['--tier', 'free', '--uses', 'many'], /--uses/],
      [['--tier', 'free', '--uses', '0'], /uses must be a whole number from 1 to 1000/],
      [['--tier', 'free', '--expires', 'soon'], /--expires: "soon"/],
      [['--tier', 'free', '--expires', '365d'], /expiresAt must lie in the future, at most 90 days/],
      [['--tier', 'free', '--key-expires', '2020-01-01'], /keyExpiresAt must lie in the future/],
      [['--tier', 'free', '--note', 'line\nfeed'], /note must be/],
    ] as const) {
      const output = await cli('invitations', 'create', ...args);
      assert.notEqual(output.code, 0, args.join(' '));
      assert.match(output.stderr, names, args.join(' '));
    }
    const after = (onlyJson(await cli('invitations', 'list', '--json')) as Invitation[]).length;
    assert.equal(after, before, 'no invitation made');
  });

  test('the audit log holds creates and revokes with actor cli, and the claim; never a token', async () => {
    const output = await cli('audit', 'list', '--json', '--limit', '1000');
    assert.equal(output.code, 0, output.stderr);
    const entries = onlyJson(output) as {
      actor: string;
      action: string;
      target: string | null;
      code: string | null;
    }[];
    assert.ok(
      entries.some(
        (e) => e.action === 'invitations.create' && e.actor === 'cli' && e.target?.startsWith('inv_'),
      ),
    );
    assert.ok(
      entries.some(
        (e) => e.action === 'invitations.revoke' && e.actor === 'cli' && e.target?.startsWith('inv_'),
      ),
    );
    assert.ok(entries.some((e) => e.action === 'invitations.revoke' && e.code === 'not_found'));
    assert.ok(entries.some((e) => e.action === 'invitations.claim' && e.actor === 'anonymous'));
    assert.ok(entries.some((e) => e.action === 'invitations.create' && e.code === 'invalid_parameter'));
    for (const token of tokens) assert.equal(output.stdout.includes(token), false);
  });
});
