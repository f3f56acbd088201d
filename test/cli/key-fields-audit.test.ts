/**
 * `pricepoint keys update`, the new options of `keys create`, and `pricepoint audit list` as a real
 * process (docs/operating.md, docs/audit.md): key commands are admin actions too, recorded with
 * actor `cli`, and the audit log never holds the key a command printed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanUp, onlyJson, runCli, tempDir } from '../helpers/process.js';

after(cleanUp);

interface View {
  id: string;
  key?: string;
  limits: { name: string; limit: number; windowSeconds: number }[] | null;
  allowedAddresses: string[] | null;
  customerRef: string | null;
  contact: string | null;
  expiresAt: number | null;
}
interface Entry {
  actor: string;
  address: string | null;
  action: string;
  target: string | null;
  status: number | null;
  code: string | null;
}

describe('key fields and the audit log from the command line', () => {
  let cli: (...args: string[]) => ReturnType<typeof runCli>;
  let made: View;

  before(async () => {
    const dataDir = await tempDir();
    cli = (...args) => runCli(args, { PRICEPOINT_DATA_DIR: dataDir });
    const output = await cli(
      'keys',
      'create',
      '--tier',
      'free',
      '--name',
      'partner',
      '--limits',
      'minute=600/60,day=100000/86400',
      '--allow',
      '192.0.2.0/24, 2001:db8::/32',
      '--customer',
      'CUST-7',
      '--json',
    );
    assert.equal(output.code, 0, output.stderr);
    made = onlyJson(output) as View;
  });

  test('keys create takes own limits, an allow-list and owner fields; keys show prints them', async () => {
    assert.deepEqual(made.limits, [
      { name: 'minute', limit: 600, windowSeconds: 60 },
      { name: 'day', limit: 100000, windowSeconds: 86400 },
    ]);
    assert.deepEqual(made.allowedAddresses, ['192.0.2.0/24', '2001:db8::/32']);
    assert.equal(made.customerRef, 'CUST-7');
    const shown = await cli('keys', 'show', made.id);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /limits\s+minute=600\/60,day=100000\/86400/);
    assert.match(shown.stdout, /allowed\s+192\.0\.2\.0\/24,2001:db8::\/32/);
    assert.match(shown.stdout, /customer\s+CUST-7/);
  });

  test('keys update changes what it names and clears with tier, any, never and ""', async () => {
    const changed = await cli(
      'keys',
      'update',
      made.id,
      '--limits',
      'tier',
      '--allow',
      'any',
      '--contact',
      'ops@x.example',
      '--expires',
      '2031-01-01',
      '--json',
    );
    assert.equal(changed.code, 0, changed.stderr);
    const view = onlyJson(changed) as View;
    assert.equal(view.limits, null);
    assert.equal(view.allowedAddresses, null);
    assert.equal(view.customerRef, 'CUST-7', 'left out, so kept');
    assert.equal(view.contact, 'ops@x.example');
    assert.equal(view.expiresAt, Date.parse('2031-01-01T00:00:00Z'));
    const cleared = onlyJson(
      await cli('keys', 'update', made.id, '--customer', '', '--expires', 'never', '--json'),
    ) as View;
    assert.equal(cleared.customerRef, null);
    assert.equal(cleared.expiresAt, null);
  });

  test('bad values are refused with the field named, exit 1, and nothing changes', async () => {
    for (const args of [
      ['--limits', 'minute=0/60'],
      ['--limits', 'minute'],
      ['--allow', '300.0.0.1'],
      ['--expires', 'soon'],
      [],
    ]) {
      const refused = await cli('keys', 'update', made.id, ...args);
      assert.equal(refused.code, 1, `${args.join(' ')}: ${refused.stdout}`);
      assert.match(refused.stderr, /limits|allow|expires|at least one/i, args.join(' '));
    }
    const unknown = await cli('keys', 'update', 'key_nope', '--contact', 'x');
    assert.notEqual(unknown.code, 0);
  });

  test('audit list shows the commands with actor cli, filters them, and never holds a key', async () => {
    const revoked = await cli('keys', 'revoke', made.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    const output = await cli('audit', 'list', '--json');
    assert.equal(output.code, 0, output.stderr);
    const entries = onlyJson(output) as Entry[];
    const actions = entries.map((e) => `${e.action} ${e.code ?? 'ok'}`);
    assert.deepEqual(actions.slice(0, 3), [
      'keys.revoke ok',
      'keys.update not_found',
      'keys.update invalid_parameter',
    ]);
    assert.ok(actions.includes('keys.create ok'));
    for (const entry of entries) {
      assert.equal(entry.actor, 'cli');
      assert.equal(entry.address, null);
      assert.equal(entry.status, null);
    }
    assert.equal(entries.find((e) => e.action === 'keys.create')?.target, made.id);
    assert.equal(output.stdout.includes(made.key ?? 'no key'), false, 'the printed key is not in the log');
    assert.doesNotMatch(output.stdout, /pp_live_/);

    const creates = onlyJson(await cli('audit', 'list', '--action', 'keys.create', '--json')) as Entry[];
    assert.deepEqual(
      creates.map((e) => e.action),
      ['keys.create'],
    );
    const text = await cli('audit', 'list', '--limit', '1');
    assert.equal(text.code, 0, text.stderr);
    const [header, line, more] = text.stdout.trim().split('\n');
    assert.equal(header, 'id\ttime\tactor\taddress\taction\ttarget\tstatus\tcode\tkey');
    assert.match(line ?? '', /\tcli\t-\tkeys\.revoke\tkey_[0-9A-Za-z]+\t-\t-\t-$/);
    assert.equal(more, undefined);
    const bad = await cli('audit', 'list', '--action', 'keys.nope');
    assert.notEqual(bad.code, 0);
  });
});
